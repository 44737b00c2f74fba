"""A starting description of a kernel, in the `workbench.toml` format, that says what reflection
can tell about its meaning rather than freezing one case's values.

`workbench describe KERNEL` prints it: every integer field (or vector lane) of a uniform feeds a dim
named after it (`ne`, `offset_src`, `params_x`), so the uniforms are the dims by name; the size-like
one (n, ne, size, len, count, numel, the first otherwise) sizes every runtime array and the grid
(`ceil(ne / 64)` for a workgroup of 64); offsets default to 0, other dims to 1; float fields keep a
value of their own, which a comment names as the fields a run may set (`--set`, the UI's form).
Each storage buffer gets a role: `in` when the kernel never stores to it (`read_write` or not),
`out` when it does. The reference is the library's (`std:NAME`) when the
kernel's name names one, its arrays mapped to the inputs in order; otherwise a `refs.py` stub to
write. Saved unchanged, it loads and runs; the comments say what to check.

The UI's describe command writes the same description from the case on screen (`AsRun`): the
dims' defaults are the values the case gave the uniform fields, the size is the dim whose value is
the case's element count (`n` when none is), a binding of another count and a grid the expression
does not give are written as run, float fields and override values as run, and the recipes and
in-out bindings the case was given are kept.


`describe_into` writes a kernel's tables into a user's workbench.toml in place. Both are written
with tomlkit, which quotes every string and key (a `doc` holding `"`, a `"unary.wgsl:main"`
kernel) and keeps what the file holds besides (comments, order, inline tables).
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

import tomlkit
from tomlkit.container import Container
from tomlkit.items import InlineTable, Table

from workbench.errors import ReflectionError, UserError
from workbench.specs import std
from workbench.specs.described import DIM_HI, host_dtype
from workbench.wgsl.corpus import Kernel
from workbench.wgsl.reflect import Binding
from workbench.wgsl.stores import stored_bindings
from workbench.wgsl.types import WType

DEFAULT_N = 1024
OVERRIDE_GUESS = 64
SUBTABLES = ("uniforms", "buffers", "reference", "gradient")
SIZE_NAMES = ("n", "ne", "size", "len", "count", "numel", "n_elements", "total")
_LANES = "xyzw"


@dataclass(frozen=True)
class AsRun:
    """What a case ran with, for a description started from it (the UI's describe command)."""

    uniforms: Mapping[str, Any]  # each uniform binding's value, by name
    n: int  # the elements of a runtime-sized binding not sized otherwise
    counts: Mapping[str, int]  # each storage binding's leading count
    recipes: Mapping[str, str]  # the recipe of each binding the case filled by one
    inout: Collection[str]  # bindings the kernel writes that the case gave contents to
    grid: tuple[int, int, int]
    overrides: Mapping[str, float]


def starter_description(
    kernel: Kernel, label: str | None = None, stored: Collection[str] | None = None
) -> str:
    """TOML text describing `kernel` under the name `label` (default: its own). `stored` names
    the buffers the kernel stores to (None: read from the kernel's syntax tree)."""
    name = label or kernel.name
    doc = tomlkit.document()
    for line in (
        f"A starting description of {name} ({kernel.file}): dims named after the uniform fields",
        "they feed, the grid and shapes in terms of them, roles from what the kernel stores to.",
        "Check each against the kernel's source (docs/describing-kernels.md).",
    ):
        doc.add(tomlkit.comment(line))
    kernels = tomlkit.table(is_super_table=True)
    kernels.add(name, starter_table(kernel, name, stored))
    doc.add("kernels", kernels)
    return tomlkit.dumps(doc)


def starter_table(
    kernel: Kernel, name: str, stored: Collection[str] | None = None, run: AsRun | None = None
) -> Table:
    """The `[kernels.NAME]` table of `starter_description`, with its comments; from `run`, the
    values a case ran with where it gives them."""
    overrides = kernel.module.overrides if kernel.module else {}
    # An override without a default gets a guess, so the description runs as written.
    values: dict[str, Any] = {
        o.name: o.default if o.default is not None else OVERRIDE_GUESS for o in overrides.values()
    }
    if run is not None:
        values.update({k: v for k, v in run.overrides.items() if k in values})
    ep = kernel.resolved(values) or kernel.entry_point
    if ep is None:
        raise UserError(f"{kernel.file}:{kernel.name}: no @compute entry point to describe")
    storage = [b for b in ep.bindings if b.space == "storage"]
    if stored is None:
        try:
            stored = stored_bindings(
                kernel.text, ep.functions, {b.name for b in storage}, kernel.file
            )
        except ReflectionError:
            stored = None  # an unreadable body: every read_write buffer is taken as an output
    uniforms = [b for b in ep.bindings if b.space == "uniform"]
    dims = _Dims({b.name for b in storage})
    given = run.uniforms if run is not None else {}
    trees = {b.name: dims.feed(b.type, b.name, b.name, given.get(b.name)) for b in uniforms}
    size = dims.size(run.n if run is not None else None)
    wx, wy, wz = ep.workgroup_size
    table = tomlkit.table()
    table.add("doc", name)
    table.add("dims", inline(dims.table()))
    grid: list[Any] = [f"ceil({size} / {wx})"]
    if run is not None and run.grid != (math.ceil(dims.defaults[size] / wx), 1, 1):
        table.add(tomlkit.comment("the grid as it ran: write it in terms of the dims"))
        grid = list(run.grid)
    else:
        table.add(
            tomlkit.comment(
                f"workgroup size {wx}x{wy}x{wz}: one invocation per element of {size}, guessed"
            )
        )
    table.add("grid", inline(grid))
    if values:
        table.add("overrides", inline(values))
    if uniforms:
        sub = tomlkit.table()
        valued = [p for b in uniforms for p in _valued(b.type, b.name, trees[b.name])]
        if valued:
            sub.add(
                tomlkit.comment(
                    f"{', '.join(valued)}: values, not dims: --set {valued[0]}=V or the UI "
                    "form sets one for a run (the reference sees it)"
                )
            )
        for b in uniforms:
            sub.add(b.name, inline(trees[b.name]).comment(b.type.text))
        table.add("uniforms", sub)
    roles: dict[str, str] = {}
    buffers = tomlkit.table()
    for index, b in enumerate(storage):
        writes = b.access == "read_write" and (stored is None or b.name in stored)
        roles[b.name] = "out" if writes else "in"
        if run is not None and writes and b.name in run.inout:
            roles[b.name] = "inout"
        fields = _buffer_fields(b, index, size, roles[b.name])
        if run is not None:
            if b.runtime_sized and run.counts.get(b.name) != dims.defaults[size]:
                fields["shape"][0] = run.counts.get(b.name, 1)
            if "input" in fields and b.name in run.recipes:
                fields["input"] = run.recipes[b.name]
        buffers.add(b.name, inline(fields).comment(f"{b.access} {b.type.text}"))
    table.add("buffers", buffers)
    comments, reference = _reference(kernel, name, roles)
    for line in comments:
        table.add(tomlkit.comment(line))
    if reference is not None:
        table.add("reference", inline(reference))
    return table


class _Dims:
    """The dims a kernel's uniforms feed, named after their fields, in order."""

    def __init__(self, taken: set[str]) -> None:
        self.taken = taken
        self.defaults: dict[str, int] = {}

    def feed(self, t: WType, path: str, leaf: str, value: Any = None) -> Any:
        """The uniform's value: each integer scalar a dim of its name, floats a value (`value`,
        the value a case gave it, where there is one)."""
        if t.kind in ("scalar", "atomic"):
            if t.scalar in ("f32", "f16"):
                return float(value) if isinstance(value, int | float) else 0.0
            given = int(value) if isinstance(value, int | float) else None
            if given is not None and not 0 <= given <= DIM_HI:
                return given  # a bit pattern or a negative offset, not a size: kept as it ran
            return self.dim(leaf if leaf.isidentifier() else path.replace(".", "_"), given)
        parts = value if isinstance(value, list | tuple) else []
        if t.kind == "vector":
            return [
                self.feed(
                    WType("scalar", t.scalar or "f32", t.scalar),
                    f"{path}_{_LANES[i]}",
                    f"{path}_{_LANES[i]}",
                    parts[i] if i < len(parts) else None,
                )
                for i in range(t.count or 4)
            ]
        if t.kind == "matrix":
            count = (t.count or 4) * (t.rows or 4)
            return [float(parts[i]) if i < len(parts) else 0.0 for i in range(count)]
        if t.kind == "array" and t.element is not None:
            return [
                self.feed(
                    t.element, f"{path}_{i}", f"{path}_{i}", parts[i] if i < len(parts) else None
                )
                for i in range(t.count or 1)
            ]
        if t.kind == "struct":
            fields = value if isinstance(value, Mapping) else {}
            return {
                m.name: self.feed(m.type, f"{path}_{m.name}", m.name, fields.get(m.name))
                for m in t.members
            }
        return 0

    def dim(self, name: str, given: int | None = None) -> str:
        if name in self.taken or name in ("ceil", "min", "max"):
            name = f"{name}_dim"
        while name in self.defaults:
            name += "_"
        low = name.lower()
        self.defaults[name] = 0 if low.startswith("offset") else 1
        if given is not None:
            self.defaults[name] = given
        return name

    def size(self, n: int | None = None) -> str:
        """The size-like dim (added as `n` when the uniforms feed none), set to DEFAULT_N; with
        `n`, a case's element count, the size-like dim the case gave that value (added as `n`
        with it when none has it)."""
        if n is not None:
            same = [
                d for d in self.defaults if n > 0 and self.defaults[d] == n and self._rank(d) < 3
            ]
            return min(same, key=self._rank) if same else self.dim(self._free("n"), n)

        ranked = sorted(self.defaults, key=self._rank)
        pick = ranked[0] if ranked and self._rank(ranked[0]) < 3 else None
        if pick is None:
            pick = self.dim(self._free("n"))
        self.defaults[pick] = DEFAULT_N
        return pick

    @staticmethod
    def _rank(d: str) -> int:
        low = d.lower()
        if low in SIZE_NAMES:
            return 0
        if re.match(r"^(ne|n_|num_?)|(size|count|len)$", low):
            return 1
        return 2 if not low.startswith(("offset", "stride", "nb")) else 3

    def _free(self, name: str) -> str:
        return name if name not in self.taken else "size"

    def table(self) -> dict[str, Any]:
        return {n: v if v >= 1 else {"default": v, "lo": 0} for n, v in self.defaults.items()}


def _valued(t: WType, path: str, tree: Any) -> list[str]:
    """The paths (`params.eps`, `dims.w`) of the scalar fields and lanes `tree` gives a value
    rather than a dim's name: those a run may set (`KernelSpec.settable` once loaded)."""
    if t.kind in ("scalar", "atomic"):
        return [] if isinstance(tree, str) else [path]
    if t.kind == "vector" and isinstance(tree, list):
        lane = WType("scalar", t.scalar or "f32", t.scalar)
        return [p for i, v in enumerate(tree) for p in _valued(lane, f"{path}.{_LANES[i]}", v)]
    if t.kind == "struct" and isinstance(tree, Mapping):
        return [p for m in t.members for p in _valued(m.type, f"{path}.{m.name}", tree[m.name])]
    return []


def _buffer_fields(b: Binding, index: int, size: str, role: str) -> dict[str, Any]:
    el = b.element
    lanes: list[int] = []
    if el.kind == "vector":
        lanes = [4 if el.count == 3 else el.count or 4]
    elif el.kind == "matrix":
        lanes = [el.count or 4, 4 if el.rows == 3 else el.rows]
    if b.runtime_sized:
        lead: list[Any] = [size]
    elif b.type.kind == "array":
        lead = [b.type.count or 1]
    else:
        lead = [1]
    shape = [*lead, *lanes]
    if role == "out":
        return {"shape": shape, "role": "out"}
    floats = host_dtype(el).startswith("float")
    recipe = f"randn:{index}" if floats else f"randint:0:{DEFAULT_N}:{index}"
    return {"shape": shape, "role": role, "input": recipe}


def _std_match(kernel: Kernel, name: str) -> std.StdReference | None:
    """The library entry the kernel's names name, looked for in its own name, then its entry's,
    then its file's: the longest entry that is a word there (the generic `unary` and `binary`,
    which need an op, never)."""
    for text in (name, kernel.name, kernel.file):
        words = re.sub(r"[^a-z0-9]+", " ", text.lower())
        found = [
            e
            for n, e in std.LIBRARY.items()
            if n not in ("unary", "binary")
            and re.search(rf"\b{re.escape(n.replace('_', ' '))}\b", words)
        ]
        if found:
            return max(found, key=lambda e: len(e.name))
    return None


def _reference(
    kernel: Kernel, name: str, roles: Mapping[str, str]
) -> tuple[list[str], dict[str, Any] | None]:
    """Comments and the reference table: the library's entry the names match (enabled for an
    elementwise op or a row reduction, which read any shape; suggested for the others, whose
    buffers need their axes first), or a refs.py stub to write."""
    entry = _std_match(kernel, name)
    inputs = [n for n, r in roles.items() if r == "in"]
    outputs = [n for n, r in roles.items() if r == "out"]
    if entry is None or not outputs or len(inputs) < len(entry.required):
        stub = re.sub(r"\W", "_", name)
        return [
            "To compare with a float64 reference, write it in refs.py beside the kernels",
            "(it takes the inputs and dims by name) and add:",
            f'reference = {{ function = "refs.py:{stub}" }}',
        ], None
    mapping: dict[str, Any] = {"function": f"std:{entry.name}"}
    for arg, binding in zip(entry.required, inputs, strict=False):
        if arg in entry.arrays:
            mapping[arg] = binding
    mapping[entry.outputs[0]] = outputs[0]
    comments = [f"{entry.name} from the reference library: {entry.doc}"]
    if entry.fn.__module__.rsplit(".", 1)[-1] in ("elementwise", "norms", "reduce"):
        return comments, mapping
    text = ", ".join(f"{k} = {v!r}".replace("'", '"') for k, v in mapping.items())
    return [*comments, f"give the buffers their axes, then: reference = {{ {text} }}"], None


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
        # A table tomlkit made (`starter_table`) goes in as it is, its comments with it.
        kernels[name] = table if isinstance(table, Table) else _new_table(table)
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
