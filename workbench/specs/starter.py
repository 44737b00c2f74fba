"""A starting description of a kernel, from reflection alone, in the `workbench.toml` format.

`workbench describe KERNEL` prints it for the user to edit: one dim `n`, every runtime-sized array
`n` elements (vector and matrix elements add their lanes), read-only buffers filled by a seeded
recipe, read_write ones outputs, uniforms with each field named (a field called n/size/len/count is
`n`, the rest 0), the workgroup size and a 1-D grid guessed from it, and the reference table to
write. Saved unchanged, it loads and runs; the comments say what to change to give it a meaning.

`describe_into` writes a kernel's tables into a user's workbench.toml in place. Both are written
with tomlkit, which quotes every string (a `doc` holding `"` stays valid) and keeps what the file
holds besides (comments, order, inline tables).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import tomlkit
from tomlkit.container import Container
from tomlkit.items import InlineTable, Table

from workbench.errors import UserError
from workbench.specs.described import host_dtype
from workbench.wgsl.corpus import Kernel
from workbench.wgsl.reflect import Binding
from workbench.wgsl.types import WType

DEFAULT_N = 1024
OVERRIDE_GUESS = 64
SUBTABLES = ("uniforms", "buffers", "reference", "gradient")
SIZE_NAMES = ("n", "size", "len", "count")


def starter_description(kernel: Kernel) -> str:
    """TOML text describing `kernel` as reflection sees it."""
    overrides = kernel.module.overrides if kernel.module else {}
    # An override without a default gets a guess, so the description runs as written.
    values = {
        o.name: o.default if o.default is not None else OVERRIDE_GUESS for o in overrides.values()
    }
    ep = kernel.resolved(values) or kernel.entry_point
    if ep is None:
        raise UserError(f"{kernel.file}:{kernel.name}: no @compute entry point to describe")
    name = kernel.name
    wx, wy, wz = ep.workgroup_size
    doc = tomlkit.document()
    doc.add(
        tomlkit.comment(
            f"A starting description of {name} ({kernel.file}), from reflection: edit the dims, the"
        )
    )
    doc.add(
        tomlkit.comment(
            "grid, the shapes and the uniforms until they say what the kernel computes, and add the"
        )
    )
    doc.add(tomlkit.comment("float64 reference (docs/describing-kernels.md)."))
    table = tomlkit.table()
    table.add("doc", name)
    table.add("dims", inline({"n": DEFAULT_N}))
    table.add(
        tomlkit.comment(
            f"workgroup size {wx}x{wy}x{wz}: one workgroup per {wx} elements of n, guessed"
        )
    )
    table.add("grid", inline([f"ceil(n / {wx})", 1, 1]))
    table.add("special", "ieee")
    if values:
        table.add("overrides", inline(values))
    uniforms = [b for b in ep.bindings if b.space == "uniform"]
    if uniforms:
        sub = tomlkit.table()
        for b in uniforms:
            sub.add(tomlkit.comment(f"{b.name}: {b.type.text}"))
            sub.add(b.name, inline(_uniform_guess(b.type, b.name)))
        table.add("uniforms", sub)
    buffers = tomlkit.table()
    for index, b in enumerate(ep.bindings):
        if b.space == "storage":
            buffers.add(
                b.name, inline(_buffer_fields(b, index)).comment(f"{b.access} {b.type.text}")
            )
    table.add("buffers", buffers)
    kernels = tomlkit.table(is_super_table=True)
    kernels.add(name, table)
    doc.add("kernels", kernels)
    doc.add(tomlkit.nl())
    for line in (
        "To compare with a float64 reference, write it in refs.py beside the kernels and add:",
        f"[kernels.{name}.reference]",
        f'function = "refs.py:{name}"',
        "rtol = 1e-5",
        "atol = 1e-5",
    ):
        doc.add(tomlkit.comment(line))
    return tomlkit.dumps(doc)


def _buffer_fields(b: Binding, index: int) -> dict[str, Any]:
    el = b.element
    lanes: list[int] = []
    if el.kind == "vector":
        lanes = [4 if el.count == 3 else el.count or 4]
    elif el.kind == "matrix":
        lanes = [el.count or 4, 4 if el.rows == 3 else el.rows]
    if b.runtime_sized:
        lead: list[Any] = ["n"]
    elif b.type.kind == "array":
        lead = [b.type.count or 1]
    else:
        lead = [1]
    shape = [*lead, *lanes]
    if b.access == "read_write":
        return {"shape": shape, "output": True}
    floats = host_dtype(el).startswith("float")
    recipe = f"randn:{index}" if floats else f"randint:0:{DEFAULT_N}:{index}"
    return {"shape": shape, "input": recipe}


def _uniform_guess(t: WType, name: str) -> Any:
    if t.kind in ("scalar", "atomic"):
        return "n" if name in SIZE_NAMES and t.scalar in ("u32", "i32") else 0
    if t.kind == "vector":
        return [0] * (t.count or 4)
    if t.kind == "matrix":
        return [0] * ((t.count or 4) * t.rows)
    if t.kind == "array" and t.element is not None:
        return [_uniform_guess(t.element, "") for _ in range(t.count or 1)]
    if t.kind == "struct":
        return {m.name: _uniform_guess(m.type, m.name) for m in t.members}
    return 0


def inline(value: Any) -> Any:
    """`value` as TOML items written on one line: tables inline, arrays on one line."""
    if isinstance(value, Mapping):
        table = tomlkit.inline_table()
        for k, v in value.items():
            table.append(k, inline(v))
        return table
    if isinstance(value, list | tuple):
        array = tomlkit.array()
        array.extend(inline(v) for v in value)
        return array
    return value


def describe_into(text: str, name: str, table: Mapping[str, Any]) -> str:
    """`text` (a workbench.toml) with kernel `name` described by `table`, edited in place.

    A kernel described already keeps its place and its form (a `[kernels.NAME]` table, or an
    inline table): only the values that changed are written, so comments and order stay. A new
    kernel is added at the end as `[kernels.NAME]` with its sub-tables (uniforms, buffers,
    reference, gradient) under `[kernels.NAME.KEY]`. Raises TOMLKitError when `text` is not TOML.
    """
    doc = tomlkit.parse(text)
    kernels = doc.get("kernels")
    if kernels is None:
        kernels = tomlkit.table(is_super_table=True)
        doc.add("kernels", kernels)
    existing = kernels.get(name)
    if isinstance(existing, Container | Table | InlineTable):
        _update(existing, table)
    else:
        kernels[name] = _new_table(table)
    return tomlkit.dumps(doc)


def _update(existing: Any, table: Mapping[str, Any]) -> None:
    for key in [k for k in existing if k not in table]:
        del existing[key]
    for key, value in table.items():
        old = existing.get(key)
        if isinstance(old, Table) and isinstance(value, Mapping):
            _update(old, value)  # a [kernels.NAME.KEY] table stays one
        elif old is None or _plain(old) != value:
            existing[key] = inline(value)


def _plain(item: Any) -> Any:
    return item.unwrap() if hasattr(item, "unwrap") else item


def _new_table(table: Mapping[str, Any]) -> Table:
    new = tomlkit.table()
    subtables = [k for k in SUBTABLES if isinstance(table.get(k), Mapping)]
    for key, value in table.items():
        if key not in subtables:
            new.add(key, inline(value))
    for key in subtables:
        sub = tomlkit.table()
        for k, v in table[key].items():
            sub.add(k, inline(v))
        new.add(key, sub)
    return new
