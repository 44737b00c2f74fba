"""Packing uniform values into bytes by WGSL's uniform address-space layout rules.

A value is a number (scalar), a sequence (vector, matrix columns flattened, fixed array) or a mapping
of field names (struct). Missing struct fields and vector components are zero. Named edits such as
`dims.x=512` or `params.scale=0.1` are applied by `set_field` before packing.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Mapping, Sequence
from typing import Any

from workbench.errors import UserError
from workbench.units import whole_number
from workbench.wgsl.types import WType

_FMT = {"f32": "<f", "u32": "<I", "i32": "<i", "f16": "<e", "bool": "<I"}
_COMPONENTS = {"x": 0, "y": 1, "z": 2, "w": 3, "r": 0, "g": 1, "b": 2, "a": 3}


def pack_uniform(t: WType, value: Any, name: str = "uniform") -> bytes:
    """Bytes for `value` laid out as type `t` (uniform rules), padded to the type's size."""
    buf = bytearray(max(t.size(uniform=True), 4))
    _write(buf, 0, t, value, name)
    return bytes(buf)


def _write(buf: bytearray, offset: int, t: WType, value: Any, where: str) -> None:
    if value is None:
        return
    if t.kind in ("scalar", "atomic"):
        _write_scalar(buf, offset, t.scalar or "u32", value, where)
    elif t.kind == "vector":
        items = _as_list(value, t.count or 4, where)
        step = 2 if t.scalar == "f16" else 4
        for i, v in enumerate(items):
            _write_scalar(buf, offset + i * step, t.scalar or "f32", v, f"{where}[{i}]")
    elif t.kind == "matrix":
        rows = t.rows
        col_t = WType("vector", "", scalar=t.scalar, count=rows)
        col_stride = max(col_t.align(), col_t.size())
        items = _as_list(value, (t.count or 4) * rows, where)
        for c in range(t.count or 4):
            _write(buf, offset + c * col_stride, col_t, items[c * rows : (c + 1) * rows], where)
    elif t.kind == "array" and t.element is not None:
        n = t.count or 1
        items = _as_list(value, n, where)
        for i, v in enumerate(items):
            _write(buf, offset + i * t.stride(uniform=True), t.element, v, f"{where}[{i}]")
    elif t.kind == "struct":
        if not isinstance(value, Mapping):
            raise UserError(f"{where}: a struct value needs named fields, got {value!r}")
        names = {m.name for m in t.members}
        unknown = sorted(set(value) - names)
        if unknown:
            raise UserError(
                f"{where}: no field {', '.join(unknown)}; fields are {', '.join(sorted(names))}"
            )
        for m in t.members:
            _write(buf, offset + m.offset, m.type, value.get(m.name), f"{where}.{m.name}")
    else:
        raise UserError(f"{where}: cannot pack a value of type {t.text}")


def _as_list(value: Any, n: int, where: str) -> list[Any]:
    if isinstance(value, (int, float)):
        value = [value]
    if not isinstance(value, Sequence) or isinstance(value, (str, bytes)):
        raise UserError(f"{where}: expected up to {n} numbers, got {value!r}")
    items = list(value)
    if len(items) > n:
        raise UserError(f"{where}: {len(items)} values given, the type holds {n}")
    return items + [0] * (n - len(items))


def check_scalar(scalar: str, value: Any, where: str) -> None:
    """Refuse (UserError, one line) a value `scalar` cannot hold exactly: a fraction into an
    integer or a bool, a number out of range. The rule `--set` follows, for override constants."""
    if scalar in _FMT:
        _write_scalar(bytearray(4), 0, scalar, value, where)


def _write_scalar(buf: bytearray, offset: int, scalar: str, value: Any, where: str) -> None:
    if isinstance(value, bool):
        value = int(value)
    if not isinstance(value, (int, float)):
        try:
            value = float(value)
        except (TypeError, ValueError):
            raise UserError(f"{where}: {value!r} is not a number") from None
    fmt = _FMT[scalar]
    try:
        if scalar in ("u32", "i32", "bool"):
            # int() of NaN or Inf raises; say what is wrong instead.
            if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
                raise UserError(f"{where}: {value} is not an integer ({scalar})")
            if float(value) != int(value):
                raise UserError(f"{where}: {value} is not an integer ({scalar})")
            value = int(value)
            if scalar == "bool" and value not in (0, 1):
                raise UserError(f"{where}: {value} is not a bool (give 0 or 1)")
        struct.pack_into(fmt, buf, offset, value)
    except (struct.error, OverflowError):
        raise UserError(f"{where}: {value} does not fit in {scalar}") from None


def default_value(t: WType) -> Any:
    """All-zero value of the right form, for filling in fields by name."""
    if t.kind in ("scalar", "atomic"):
        return 0
    if t.kind == "vector":
        return [0] * (t.count or 4)
    if t.kind == "matrix":
        return [0] * ((t.count or 4) * t.rows)
    if t.kind == "array" and t.element is not None:
        return [default_value(t.element) for _ in range(t.count or 1)]
    if t.kind == "struct":
        return {m.name: default_value(m.type) for m in t.members}
    return 0


def _first_field(t: WType) -> str:
    """The path to `t`'s first scalar, as `set_field` accepts it (a hint must work): `x` for a
    vector, `0` for an array or matrix, a member's name for a struct, nested as deep as needed."""
    if t.kind == "struct" and t.members:
        head, inner = t.members[0].name, t.members[0].type
    elif t.kind == "vector":
        head, inner = "x", WType("scalar", "", t.scalar)
    elif t.kind == "array" and t.element is not None:
        head, inner = "0", t.element
    else:
        head, inner = "0", WType("scalar", "", t.scalar)
    return head if inner.kind in ("scalar", "atomic") else f"{head}.{_first_field(inner)}"


def set_field(t: WType, value: Any, path: Sequence[str], new: float, where: str) -> Any:
    """`value` with the field at `path` (e.g. ['x'] or ['scale'] or ['0']) replaced by `new`."""
    if not path:
        if t.kind not in ("scalar", "atomic"):
            raise UserError(
                f"{where} is a {t.text}: set one field, e.g. {where}.{_first_field(t)}=..."
            )
        return new
    head, rest = path[0], path[1:]
    if t.kind == "struct":
        value = dict(value) if isinstance(value, Mapping) else default_value(t)
        member = next((m for m in t.members if m.name == head), None)
        if member is None:
            names = ", ".join(m.name for m in t.members)
            raise UserError(f"{where} has no field {head!r}; fields are {names}")
        value[head] = set_field(member.type, value.get(head), rest, new, f"{where}.{head}")
        return value
    if t.kind in ("vector", "array", "matrix"):
        n = (t.count or 1) * (t.rows or 1) if t.kind == "matrix" else (t.count or 1)
        idx = _COMPONENTS.get(head) if t.kind == "vector" else None
        if idx is None:
            idx = whole_number(head)
        if idx is None or idx >= n:
            raise UserError(f"{where} ({t.text}) has no component {head!r}")
        items = _as_list(value if value is not None else [], n, where)
        elem = t.element if t.kind == "array" and t.element else WType("scalar", "", t.scalar)
        items[idx] = set_field(elem, items[idx], rest, new, f"{where}.{head}")
        return items
    raise UserError(f"{where} is a scalar; it has no field {head!r}")
