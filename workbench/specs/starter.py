"""A starting description of a kernel, from reflection alone, in the `workbench.toml` format.

`workbench describe KERNEL` prints it for the user to edit: one dim `n`, every runtime-sized array
`n` elements (vector and matrix elements add their lanes), read-only buffers filled by a seeded
recipe, read_write ones outputs, uniforms with each field named (a field called n/size/len/count is
`n`, the rest 0), the workgroup size and a 1-D grid guessed from it, and the reference table to
write. Saved unchanged, it loads and runs; the comments say what to change to give it a meaning.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

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
    lines = [
        f"# A starting description of {name} ({kernel.file}), from reflection: edit the dims, the",
        "# grid, the shapes and the uniforms until they say what the kernel computes, and add the",
        "# float64 reference (docs/describing-kernels.md).",
        f"[kernels.{name}]",
        f'doc = "{name}"',
        f"dims = {{ n = {DEFAULT_N} }}",
        f"# workgroup size {wx}x{wy}x{wz}: one workgroup per {wx} elements of n, guessed",
        f'grid = ["ceil(n / {wx})", 1, 1]',
        'special = "ieee"',
    ]
    if values:
        lines.append(f"overrides = {_toml(values)}")
    uniforms = [b for b in ep.bindings if b.space == "uniform"]
    if uniforms:
        lines.append(f"[kernels.{name}.uniforms]")
        for b in uniforms:
            lines.append(f"# {b.name}: {b.type.text}")
            lines.append(f"{b.name} = {_toml(_uniform_guess(b.type, b.name))}")
    lines.append(f"[kernels.{name}.buffers]")
    for index, b in enumerate(ep.bindings):
        if b.space != "storage":
            continue
        lines.append(f"{b.name} = {{ {_buffer_fields(b, index)} }}  # {b.access} {b.type.text}")
    lines += [
        "# To compare with a float64 reference, write it in refs.py beside the kernels and add:",
        f"# [kernels.{name}.reference]",
        f'# function = "refs.py:{name}"',
        "# rtol = 1e-5",
        "# atol = 1e-5",
    ]
    return "\n".join(lines) + "\n"


def _buffer_fields(b: Binding, index: int) -> str:
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
    shape = _toml([*lead, *lanes])
    if b.access == "read_write":
        return f"shape = {shape}, output = true"
    floats = host_dtype(el).startswith("float")
    recipe = f"randn:{index}" if floats else f"randint:0:{DEFAULT_N}:{index}"
    return f'shape = {shape}, input = "{recipe}"'


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


def _number(v: float | int) -> str:
    return str(int(v)) if float(v).is_integer() else repr(float(v))


def _toml(value: Any) -> str:
    """An inline TOML value: numbers, quoted expressions, arrays and inline tables."""
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{ " + ", ".join(f"{k} = {_toml(v)}" for k, v in value.items()) + " }"
    if isinstance(value, bool):
        return "true" if value else "false"
    return _number(value)


def replace_description(text: str, name: str, block: str) -> str:
    """`text` (a workbench.toml) with the tables of kernel `name` ([kernels.NAME] and
    [kernels.NAME.*]) replaced by `block`, everything else kept as written (comments included);
    the block goes where the kernel's first table was, or at the end."""
    lines = text.splitlines(keepends=True)
    own = re.compile(rf"^\s*\[\s*kernels\s*\.\s*{re.escape(name)}\s*(\.[^\]]*)?\]\s*(#.*)?$")
    header = re.compile(r"^\s*\[")
    out: list[str] = []
    inside, placed = False, False
    for line in lines:
        if header.match(line):
            inside = bool(own.match(line.rstrip("\n")))
            if inside and not placed:
                out.append(block if block.endswith("\n") else block + "\n")
                placed = True
        if not inside:
            out.append(line)
    if not placed:
        if out and not out[-1].endswith("\n"):
            out.append("\n")
        if out and out[-1].strip():
            out.append("\n")
        out.append(block if block.endswith("\n") else block + "\n")
    return "".join(out)


def kernel_block(name: str, table: Mapping[str, Any]) -> str:
    """The tables of kernel `name` as TOML: its plain keys under [kernels.NAME], then each
    sub-table (uniforms, buffers, reference, gradient) under [kernels.NAME.KEY], values inline."""
    lines = [f"[kernels.{name}]"]
    subtables = [k for k in SUBTABLES if isinstance(table.get(k), Mapping)]
    for key, value in table.items():
        if key not in subtables:
            lines.append(f"{key} = {_toml(value)}")
    for key in subtables:
        lines.append(f"[kernels.{name}.{key}]")
        lines += [f"{k} = {_toml(v)}" for k, v in table[key].items()]
    return "\n".join(lines) + "\n"
