"""How a description's reference is called: which binding, dim, uniform value or literal each of
the function's arguments takes, and which binding each of its results is compared with.

`reference = { function = "std:rms_norm", x = "src", y = "dst", eps = "params.eps" }`: every key
besides `function`, `rtol` and `atol` maps one argument (or one result) of the function. A value
is a binding name (its array, shaped as described), a table `{ buffer, shape, strides, offset }`
(a strided view of a binding, in elements, outermost first, as ggml's ne/nb describe tensors), an
expression of the dims and uniform values (`params.eps`, `dims.x`, `params.ne0 * 2`), a list of
those, or a literal (a number, a boolean, or a string for an argument whose default is a string,
such as `mode = "neox"`). An argument left unmapped takes the binding, dim or uniform field of its
own name, or its default. Uniform values reach the reference by their dotted path: struct fields
by name, vector lanes as x, y, z, w, array elements by index.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from workbench.specs.expr import Expr, ExprError, parse
from workbench.wgsl.types import WType

Env = Mapping[str, float | int]
Error = Callable[[str, str], Exception]
_LANES = "xyzw"


def uniform_paths(name: str, t: WType) -> list[str]:
    """The dotted paths of every scalar a uniform of type `t` holds."""
    if t.kind in ("scalar", "atomic"):
        return [name]
    if t.kind == "vector":
        return [f"{name}.{_LANES[i]}" for i in range(t.count or 4)]
    if t.kind == "matrix":
        return [f"{name}.{c}.{_LANES[r]}" for c in range(t.count or 4) for r in range(t.rows or 4)]
    if t.kind == "array" and t.element is not None:
        return [p for i in range(t.count or 0) for p in uniform_paths(f"{name}.{i}", t.element)]
    if t.kind == "struct":
        return [p for m in t.members for p in uniform_paths(f"{name}.{m.name}", m.type)]
    return []


def flatten(name: str, t: WType, value: Any) -> dict[str, float | int]:
    """The scalars of a uniform's value (as the description gives it) by dotted path."""
    if t.kind in ("scalar", "atomic"):
        return {name: value}
    if t.kind == "vector":
        return {f"{name}.{_LANES[i]}": v for i, v in enumerate(value)}
    if t.kind == "matrix":
        rows = t.rows or 4
        return {f"{name}.{i // rows}.{_LANES[i % rows]}": v for i, v in enumerate(value)}
    if t.kind == "array" and t.element is not None:
        out: dict[str, float | int] = {}
        for i, v in enumerate(value):
            out.update(flatten(f"{name}.{i}", t.element, v))
        return out
    if t.kind == "struct":
        out = {}
        for m in t.members:
            out.update(flatten(f"{name}.{m.name}", m.type, value[m.name]))
        return out
    return {}


@dataclass(frozen=True)
class View:
    """A strided view of a binding: shape and strides (elements, outermost first), offset."""

    buffer: str
    shape: tuple[Expr, ...]
    strides: tuple[Expr, ...]
    offset: Expr


# A parsed argument: ("array", name) | ("view", View) | ("expr", Expr) | ("literal", v)
# | ("list", [args]).
Arg = tuple[str, Any]


@dataclass(frozen=True)
class Binder:
    """What the mapping may name: bindings (inputs and outputs), dims, uniform paths."""

    inputs: frozenset[str]
    outputs: frozenset[str]
    dims: frozenset[str]
    uniforms: frozenset[str]

    @property
    def names(self) -> frozenset[str]:
        return self.dims | self.uniforms

    def by_leaf(self, name: str) -> str | None:
        """The one uniform path ending in `.name` (or named `name`), if exactly one does."""
        hits = [p for p in self.uniforms if p == name or p.endswith("." + name)]
        return hits[0] if len(hits) == 1 else None

    def leaves(self) -> dict[str, str]:
        """Every name `by_leaf` finds, with its path: the names a uniform value goes by."""
        names = {p.rsplit(".", 1)[-1] for p in self.uniforms}
        found = {n: self.by_leaf(n) for n in sorted(names) if n.isidentifier()}
        return {n: p for n, p in found.items() if p is not None}


def parse_arg(
    value: Any, param: inspect.Parameter | None, b: Binder, error: Error, key: str
) -> Arg:
    """One mapped value, checked against what the description declares."""
    if isinstance(value, (bool, float)):
        return ("literal", value)
    if isinstance(value, int):
        return ("expr", parse(value))
    if isinstance(value, list):
        return ("list", [parse_arg(v, None, b, error, f"{key}[{i}]") for i, v in enumerate(value)])
    if isinstance(value, dict):
        return ("view", _view(value, b, error, key))
    if not isinstance(value, str):
        raise error(key, f"cannot map {value!r}: give a binding, an expression or a literal")
    if value in b.inputs or value in b.outputs:
        return ("array", value)
    if param is not None and isinstance(param.default, str):
        return ("literal", value)
    try:
        return ("expr", parse(value, b.names))
    except ExprError as exc:
        have = ", ".join(sorted(b.inputs | b.outputs)) or "none"
        raise error(key, f"{exc}; or name a binding ({have})") from None


def _view(value: dict[str, Any], b: Binder, error: Error, key: str) -> View:
    unknown = sorted(set(value) - {"buffer", "shape", "strides", "offset"})
    if unknown:
        raise error(f"{key}.{unknown[0]}", "unknown key; a view has buffer, shape, strides, offset")
    buf = value.get("buffer")
    if buf not in b.inputs:
        raise error(f"{key}.buffer", f"{buf!r} is not an input binding")
    shape, strides = value.get("shape"), value.get("strides")
    if not isinstance(shape, list) or not isinstance(strides, list) or len(shape) != len(strides):
        raise error(key, "a view needs shape and strides, lists of the same length")
    try:
        return View(
            buf,
            tuple(parse(v, b.names) for v in shape),
            tuple(parse(v, b.names) for v in strides),
            parse(value.get("offset", 0), b.names),
        )
    except ExprError as exc:
        raise error(key, str(exc)) from None


def evaluate(arg: Arg, env: Env, arrays: Mapping[str, np.ndarray]) -> Any:
    """The value an argument takes for these dims, uniform values and arrays."""
    kind, v = arg
    if kind == "array":
        return arrays[v]
    if kind == "literal":
        return v
    if kind == "expr":
        return v.value(env)
    if kind == "list":
        return [evaluate(a, env, arrays) for a in v]
    return _strided(v, env, arrays)


def _strided(view: View, env: Env, arrays: Mapping[str, np.ndarray]) -> np.ndarray:
    flat = np.ascontiguousarray(arrays[view.buffer], dtype=np.float64).reshape(-1)
    shape = [int(e.integer(env)) for e in view.shape]
    strides = [int(e.integer(env)) for e in view.strides]
    offset = int(view.offset.integer(env))
    last = offset + sum((n - 1) * s for n, s in zip(shape, strides, strict=True) if n > 0)
    if offset < 0 or min(strides, default=0) < 0 or (0 not in shape and last >= flat.size):
        raise ExprError(
            f"the view of {view.buffer} (shape {shape}, strides {strides}, offset {offset}) "
            f"reaches element {last}, past its {flat.size}"
        )
    itemsize = flat.itemsize
    return np.lib.stride_tricks.as_strided(
        flat[offset:], shape=shape, strides=[s * itemsize for s in strides], writeable=False
    ).copy()
