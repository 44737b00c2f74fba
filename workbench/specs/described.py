"""Kernel descriptions: a corpus's `workbench.toml`, parsed into the `KernelSpec`s shipped kernels use.

A user gives a kernel of their own a meaning in a few lines (the format is in
docs/describing-kernels.md): `[kernels.NAME]` with `dims`, `grid`, `special`, `doc`, `overrides`,
and the tables `uniforms`, `buffers`, `reference` (a float64 function in the corpus's own
`refs.py`) and `gradient` (the forward it differentiates). Sizes are expressions of the dims
(`workbench.specs.expr`). Everything is validated when the file is loaded, with the kernel's
reflected bindings and the default dims: a mistake is one `DescriptionError` line naming the file,
the kernel and the key. A uniform field written as a value (`eps = 1e-5`) rather than an expression
of the dims is one a run may set (`KernelSpec.settable`, `with_values`): the kernel and the
reference both take the value set. Loading imports the corpus's `refs.py` (as pytest imports conftest.py).

A description wins over a shipped spec of the same name; its gradient link may name a described or
a shipped forward, and a forward that cannot be used leaves the gradient check a reason to skip.
"""

from __future__ import annotations

import inspect
import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from workbench.errors import UserError
from workbench.gpu.uniforms import pack_uniform, set_field
from workbench.recipes import make_input
from workbench.specs import std
from workbench.specs.base import (
    Arrays,
    Buffer,
    Cost,
    Dim,
    Dims,
    GradLink,
    KernelSpec,
    Reference,
    Tol,
    Uniforms,
)
from workbench.specs.expr import Expr, ExprError, parse
from workbench.specs.refargs import Arg, Binder, evaluate, flatten, parse_arg, uniform_paths
from workbench.specs.refworker import RefWorker, worker_for
from workbench.specs.registry import spec_for
from workbench.userfiles import read_toml
from workbench.wgsl.corpus import Corpus, Kernel
from workbench.wgsl.reflect import Binding
from workbench.wgsl.types import NUMPY_DTYPE, WType

FILE = "workbench.toml"
SPECIAL_POLICIES = ("ieee", "finite", "skip")
DIM_HI = 1 << 24
KERNEL_KEYS = (
    "doc",
    "dims",
    "grid",
    "special",
    "uniforms",
    "buffers",
    "reference",
    "gradient",
    "overrides",
    "cost",
)
BUFFER_KEYS = ("shape", "input", "output", "role", "words", "decode", "encode")
PACKED_KEYS = ("words", "decode", "encode")
ROLES = ("in", "out", "inout")
COST_KEYS = ("bytes", "flops")
REFERENCE_KEYS = ("function", "rtol", "atol")
GRADIENT_KEYS = ("forward", "upstream", "wrt")
_FUNCTION_NAMES = frozenset({"ceil", "min", "max"})
_LANES = "xyzw"
EnvOf = Callable[[Dims], dict[str, float | int]]


class DescriptionError(UserError):
    """A `workbench.toml` that cannot be used; the message names the file, kernel and key."""


@dataclass(frozen=True)
class _Where:
    """Where in the file a value lives, for error messages."""

    path: Path
    kernel: str

    def error(self, key: str, msg: str) -> DescriptionError:
        at = f"kernels.{self.kernel}" + (f".{key}" if key else "")
        return DescriptionError(f"{self.path}: {at}: {msg}")


@dataclass(frozen=True)
class _BufferDesc:
    binding: Binding
    shape: tuple[Expr, ...]
    axes: tuple[str, ...]
    dtype: str
    input: str | None  # a recipe; None for outputs and scratch
    output: bool
    role: str  # in | out | inout | scratch: what the buffer means (its access, what it may do)
    packed: _Packed | None = None  # raw 32-bit words with decode/encode functions


@dataclass(frozen=True)
class _Packed:
    """A buffer of packed elements (quantized blocks, structs) seen as raw u32 words: the input
    recipe makes `values` (the decoded shape), `encode` packs them, `decode` gives the reference
    the values the words hold."""

    values: tuple[Expr, ...]
    decode: tuple[str, str]  # (file, function) in the corpus's reference worker
    encode: tuple[str, str] | None  # None for an output (the kernel packs it)
    worker: RefWorker


def load_descriptions(corpus: Corpus) -> dict[str, KernelSpec]:
    """The specs `workbench.toml` in the corpus folder describes, by kernel name ({} without one)."""
    path = corpus.root / FILE
    if not os.path.lexists(path):
        return {}
    data = read_toml(path, DescriptionError)
    extra = sorted(set(data) - {"kernels", "variants", "generate"})
    if extra:
        raise DescriptionError(
            f"{path}: unknown top-level key {', '.join(extra)}; kernels are described in "
            "[kernels.NAME] tables (and templates expanded by [variants.NAME] and [generate])"
        )
    kernels = data.get("kernels", {})
    if not isinstance(kernels, dict):
        raise DescriptionError(f"{path}: kernels must be tables: [kernels.NAME]")
    refs = _RefsModule(corpus.root)
    specs: dict[str, KernelSpec] = {}
    gradients: dict[str, tuple[_Where, Any]] = {}
    for name, table in kernels.items():
        where = _Where(path, name)
        if not isinstance(table, dict):
            raise where.error("", "must be a table: [kernels." + name + "]")
        specs[name] = _describe(corpus, name, table, where, refs)
        if "gradient" in table:
            gradients[name] = (where, table["gradient"])
    for name, (where, table) in gradients.items():
        specs[name] = _with_gradient(specs[name], table, where, specs)
    return specs


def _kernel(corpus: Corpus, name: str, where: _Where) -> Kernel:
    try:
        k = corpus.find(name)  # NAME, FILE:NAME or VARIANT:ENTRY, as everywhere a kernel is named
    except UserError as exc:
        raise where.error("", str(exc)) from None
    if k.problem or k.entry_point is None:
        raise where.error("", f"the kernel cannot be used: {k.problem or 'no entry point'}")
    return k


def described_for(described: Mapping[str, KernelSpec], kernel: Kernel) -> KernelSpec | None:
    """The description of `kernel`, written under its name or as `FILE:NAME`."""
    for key in (kernel.name, f"{kernel.file}:{kernel.name}"):
        spec = described.get(key)
        if spec is not None and spec.file == kernel.file:
            return spec
    return None


def _check_keys(table: dict[str, Any], allowed: tuple[str, ...], where: _Where, key: str) -> None:
    unknown = sorted(set(table) - set(allowed))
    if unknown:
        at = f"{key}.{unknown[0]}" if key else unknown[0]
        raise where.error(at, f"unknown key; the keys here are {', '.join(allowed)}")


def _describe(
    corpus: Corpus, name: str, table: dict[str, Any], where: _Where, refs: _RefsModule
) -> KernelSpec:
    kernel = _kernel(corpus, name, where)
    _check_keys(table, KERNEL_KEYS, where, "")
    ep = kernel.entry_point
    if ep is None:
        raise where.error("", "the kernel has no entry point")
    dims = _dims(table.get("dims", {}), where)
    known = frozenset(d.name for d in dims)
    defaults = {d.name: d.default for d in dims}
    doc = table.get("doc", "")
    if not isinstance(doc, str):
        raise where.error("doc", "must be a string")
    special = table.get("special", "ieee")
    if special not in SPECIAL_POLICIES:
        raise where.error("special", f"{special!r} is not one of {', '.join(SPECIAL_POLICIES)}")
    grid = _grid(table, known, defaults, where)
    uniforms = _uniforms(ep.bindings, table.get("uniforms", {}), known, defaults, where)
    buffers = _buffers(
        ep.f32_bits, ep.bindings, table.get("buffers", {}), known, defaults, where, refs
    )
    overrides = _overrides(kernel, table.get("overrides", {}), where)
    outputs = tuple(n for n, b in buffers.items() if b.role in ("out", "inout"))
    zeroed = tuple(n for n, b in buffers.items() if b.role in ("out", "scratch"))
    uniform_types = {n: b.type for n, b in ep_uniforms(ep.bindings).items()}
    refer, tolerances, has_ref = _reference(
        table.get("reference"), buffers, outputs, known, uniform_types, refs, where
    )

    def valued(trees: dict[str, Any]) -> tuple[Uniforms, Reference]:
        """The uniforms' values and the reference (which takes them by name) for `trees`."""

        def uniform_values(d: Dims) -> dict[str, object]:
            return {n: _uniform_value(v, d, where, f"uniforms.{n}") for n, v in trees.items()}

        def env_of(d: Dims) -> dict[str, float | int]:
            values = uniform_values(d)
            out: dict[str, float | int] = {}
            for n, t in uniform_types.items():
                out.update(flatten(n, t, values[n]))
            return out

        return uniform_values, lambda d, a: refer(d, a, env_of)

    def values_for(values: Mapping[str, float]) -> tuple[Uniforms, Reference]:
        trees = dict(uniforms)
        for path, value in values.items():
            head, *rest = path.split(".")
            trees[head] = set_field(uniform_types[head], trees[head], rest, value, head)
        return valued(trees)

    uniform_values, reference = valued(uniforms)
    cost_exprs = _cost(table.get("cost"), known, where)
    index = {b.name: i for i, b in enumerate(ep.bindings)}

    def host_buffers(d: Dims) -> dict[str, Buffer]:
        return {
            n: Buffer(tuple(zip(b.axes, _shape(b, d, where), strict=True)), b.dtype)
            for n, b in buffers.items()
        }

    def inputs(d: Dims, seed: int) -> dict[str, np.ndarray]:
        out = {}
        for n, b in buffers.items():
            if b.packed is not None and b.input is not None:
                out[n] = _encoded(b, b.packed, d, seed + index[n], where)
            elif b.input is not None:
                out[n] = make_input(b.input, _shape(b, d, where), b.dtype, seed + index[n], n)
        return out

    def grid_of(d: Dims) -> tuple[int, int, int]:
        x, y, z = (_integer(e, d, where, f"grid[{i}]") for i, e in enumerate(grid))
        return (x, y, z)

    def decode_output(d: Dims, name: str, words: np.ndarray) -> np.ndarray:
        b = buffers[name]
        assert b.packed is not None  # KernelSpec.observed asks for packed outputs only
        return _decoded(b, b.packed, words, d, where)

    def cost(d: Dims) -> Cost:
        moved = sum(b.count * np.dtype(b.dtype).itemsize for b in host_buffers(d).values())
        given = {k: _integer(e, d, where, f"cost.{k}") for k, e in cost_exprs.items()}
        return Cost(bytes=given.get("bytes", moved), flops=given.get("flops", 0))

    spec = KernelSpec(
        name=name,
        file=kernel.file,
        dims=dims,
        buffers=host_buffers,
        inputs=inputs,
        uniforms=uniform_values,
        grid=grid_of,
        outputs=outputs,
        reference=reference,
        tolerances=tolerances,
        cost=cost,
        zeroed=zeroed,
        doc=doc,
        described=str(where.path),
        has_reference=has_ref,
        special_policy=special,
        overrides=overrides,
        decode_output=decode_output,
        packed_outputs=tuple(n for n in outputs if buffers[n].packed is not None),
        settable=tuple(
            p for n, t in uniform_types.items() for p in _valued_paths(n, t, uniforms[n])
        ),
        values_for=values_for,
    )
    # Every expression is evaluated once at the defaults, so a non-integer shows up now.
    host_buffers(defaults)
    grid_of(defaults)
    cost(defaults)
    for n, b in ep_uniforms(ep.bindings).items():
        try:
            pack_uniform(b.type, uniform_values(defaults)[n], n)
        except UserError as exc:
            raise where.error(f"uniforms.{n}", str(exc)) from None
    return spec


def ep_uniforms(bindings: tuple[Binding, ...]) -> dict[str, Binding]:
    return {b.name: b for b in bindings if b.space == "uniform"}


def _cost(table: Any, known: frozenset[str], where: _Where) -> dict[str, Expr]:
    """`cost = { bytes = "...", flops = "..." }`: what one dispatch moves and computes."""
    if table is None:
        return {}
    if not isinstance(table, dict):
        raise where.error(
            "cost", 'must be a table, e.g. cost = { bytes = "8 * N", flops = "2 * N" }'
        )
    _check_keys(table, COST_KEYS, where, "cost")
    return {k: _expr(v, known, where, f"cost.{k}") for k, v in table.items()}


def _dims(table: Any, where: _Where) -> tuple[Dim, ...]:
    if not isinstance(table, dict):
        raise where.error("dims", "must be a table, e.g. dims = { M = 256, N = 192 }")
    out = []
    for name, value in table.items():
        key = f"dims.{name}"
        if not name.isidentifier() or name in _FUNCTION_NAMES:
            raise where.error(key, "a dim name must be a plain name (and not ceil, min or max)")
        if isinstance(value, dict):
            _check_keys(value, ("default", "lo", "hi"), where, key)
            if "default" not in value:
                raise where.error(key, "a dim table needs default = V (and may give lo, hi)")
            default, lo, hi = value["default"], value.get("lo", 1), value.get("hi", DIM_HI)
        else:
            default, lo, hi = value, 1, DIM_HI
        for what, v in (("default", default), ("lo", lo), ("hi", hi)):
            if isinstance(v, bool) or not isinstance(v, int):
                raise where.error(key, f"{what} must be an integer, got {v!r}")
        if lo < 0 or hi < lo:
            raise where.error(key, f"the range [{lo}, {hi}] is empty or negative")
        if not lo <= default <= hi:
            raise where.error(key, f"{default} is outside [{lo}, {hi}]{_range_hint(name, value)}")
        out.append(Dim(name, default, lo=lo, hi=hi))
    return tuple(out)


def _range_hint(name: str, value: Any) -> str:
    """How to give a plain default outside the plain range a range of its own; the table it
    suggests is one `_dims` accepts (a negative dim has none: dims count things)."""
    if isinstance(value, dict):
        return ""
    if value < 0:
        return "; a dim counts things, so it is a whole number >= 0"
    return (
        "; dims are >= 1 and at most "
        f"{DIM_HI:,} unless a table gives another range: {name} = {{ default = {value}, "
        f"lo = {min(value, 1)}, hi = {max(value, 64)} }}"
    )


def _expr(value: Any, known: frozenset[str], where: _Where, key: str) -> Expr:
    try:
        return parse(value, known)
    except ExprError as exc:
        raise where.error(key, str(exc)) from None


def _integer(e: Expr, dims: Dims, where: _Where, key: str) -> int:
    try:
        v = e.integer(dims)
    except ExprError as exc:
        raise where.error(key, str(exc)) from None
    if v < 0:
        raise where.error(key, f"{e.text!r} gives {v}, below 0")
    return v


def _grid(
    table: dict[str, Any], known: frozenset[str], defaults: Dims, where: _Where
) -> tuple[Expr, ...]:
    if "grid" not in table:
        raise where.error(
            "grid", 'missing: give the workgroups per axis, e.g. grid = ["ceil(N / 16)", 1, 1]'
        )
    grid = table["grid"]
    if not isinstance(grid, list) or not 1 <= len(grid) <= 3:
        raise where.error("grid", "must be a list of 1 to 3 workgroup counts (x, y, z)")
    exprs = [_expr(v, known, where, f"grid[{i}]") for i, v in enumerate(grid)]
    while len(exprs) < 3:
        exprs.append(parse(1))
    return tuple(exprs)


def _uniforms(
    bindings: tuple[Binding, ...], table: Any, known: frozenset[str], defaults: Dims, where: _Where
) -> dict[str, Any]:
    if not isinstance(table, dict):
        raise where.error("uniforms", "must be a table of uniform bindings by name")
    ours = ep_uniforms(bindings)
    for name in table:
        if name not in ours:
            have = ", ".join(ours) or "none"
            raise where.error(
                f"uniforms.{name}", f"no uniform binding of that name (uniforms: {have})"
            )
    out = {}
    for name, b in ours.items():
        if name not in table:
            raise where.error(
                f"uniforms.{name}", f"missing: give its value ({b.type.text}), e.g. {name} = ..."
            )
        out[name] = _uniform_tree(b.type, table[name], known, where, f"uniforms.{name}")
    return out


def _uniform_tree(t: WType, value: Any, known: frozenset[str], where: _Where, key: str) -> Any:
    """The value's shape checked against the type, expressions parsed (floats kept for floats)."""
    if t.kind in ("scalar", "atomic"):
        if isinstance(value, float):
            if t.scalar not in ("f32", "f16"):
                raise where.error(key, f"{value} is not an integer ({t.text})")
            return value
        return _expr(value, known, where, key)
    if t.kind in ("vector", "matrix") or (t.kind == "array" and t.element is not None):
        n = (t.count or 1) * (t.rows if t.kind == "matrix" else 1)
        if not isinstance(value, list) or len(value) != n:
            raise where.error(key, f"a {t.text} needs a list of {n} values")
        elem = t.element if t.kind == "array" and t.element is not None else None
        if elem is None:
            elem = WType("scalar", t.scalar or "f32", t.scalar)
        return [_uniform_tree(elem, v, known, where, f"{key}[{i}]") for i, v in enumerate(value)]
    if t.kind == "struct":
        if not isinstance(value, dict):
            fields = ", ".join(m.name for m in t.members)
            raise where.error(key, f"a struct {t.text} needs a table of its fields ({fields})")
        names = [m.name for m in t.members]
        extra = sorted(set(value) - set(names))
        if extra:
            raise where.error(
                f"{key}.{extra[0]}", f"{t.text} has no such field ({', '.join(names)})"
            )
        missing = [n for n in names if n not in value]
        if missing:
            raise where.error(f"{key}.{missing[0]}", "missing: every field needs a value")
        return {
            m.name: _uniform_tree(m.type, value[m.name], known, where, f"{key}.{m.name}")
            for m in t.members
        }
    raise where.error(key, f"a uniform of type {t.text} cannot be described")


def _valued_paths(path: str, t: WType, tree: Any) -> list[str]:
    """The paths of the scalars (struct fields, vector lanes) a uniform's tree gives a value of
    its own rather than an expression of the dims: the fields a case may set."""
    if t.kind in ("scalar", "atomic"):
        return [path] if not isinstance(tree, Expr) or not tree.names else []
    if t.kind == "vector" and isinstance(tree, list):
        lane = WType("scalar", t.scalar or "f32", t.scalar)
        return [
            p for i, v in enumerate(tree) for p in _valued_paths(f"{path}.{_LANES[i]}", lane, v)
        ]
    if t.kind == "struct" and isinstance(tree, dict):
        return [
            p for m in t.members for p in _valued_paths(f"{path}.{m.name}", m.type, tree[m.name])
        ]
    return []


def _uniform_value(tree: Any, dims: Dims, where: _Where, key: str) -> Any:
    if isinstance(tree, Expr):
        try:
            return tree.value(dims)
        except ExprError as exc:
            raise where.error(key, str(exc)) from None
    if isinstance(tree, list):
        return [_uniform_value(v, dims, where, f"{key}[{i}]") for i, v in enumerate(tree)]
    if isinstance(tree, dict):
        return {k: _uniform_value(v, dims, where, f"{key}.{k}") for k, v in tree.items()}
    return tree


def _lanes(el: WType) -> tuple[int, ...] | None:
    """The trailing axes one element adds to the host view (vec3 padded to 4); None: unsupported."""
    if el.kind in ("scalar", "atomic"):
        return ()
    if el.kind == "vector":
        return (4 if el.count == 3 else el.count or 4,)
    if el.kind == "matrix":
        return (el.count or 4, 4 if el.rows == 3 else el.rows)
    return None


def host_dtype(el: WType) -> str:
    """The host dtype of an element's scalar (atomics by their inner type)."""
    return NUMPY_DTYPE.get(el.scalar or "u32", "uint32")


def _buffers(
    f32_bits: tuple[str, ...],
    bindings: tuple[Binding, ...],
    table: Any,
    known: frozenset[str],
    defaults: Dims,
    where: _Where,
    refs: _RefsModule,
) -> dict[str, _BufferDesc]:
    if not isinstance(table, dict):
        raise where.error("buffers", "must be a table of storage bindings by name")
    storage = {b.name: b for b in bindings if b.space == "storage"}
    for name in table:
        if name not in storage:
            have = ", ".join(storage) or "none"
            raise where.error(
                f"buffers.{name}", f"no storage binding of that name (bindings: {have})"
            )
    out = {}
    for name, b in storage.items():
        key = f"buffers.{name}"
        if name not in table:
            raise where.error(
                key, f'missing: describe it ({b.type.text}), e.g. {name} = {{ shape = ["N"] }}'
            )
        desc = table[name]
        if not isinstance(desc, dict):
            raise where.error(
                key, "must be a table: { shape = [...], input = RECIPE | output = true }"
            )
        _check_keys(desc, BUFFER_KEYS, where, key)
        if any(k in desc for k in PACKED_KEYS):
            out[name] = _packed(b, desc, known, defaults, where, refs)
            continue
        lanes = _lanes(b.element)
        if lanes is None:
            raise where.error(
                key,
                f"elements of type {b.element.text} are not numbers: describe them as packed words "
                '(words = "COUNT", shape = [values], decode = "refs.py:F", encode = "refs.py:G")',
            )
        shape = desc.get("shape")
        if not isinstance(shape, list) or not shape:
            raise where.error(
                f"{key}.shape",
                "must be a non-empty list of sizes (integers or expressions of the dims)",
            )
        exprs = tuple(_expr(v, known, where, f"{key}.shape[{i}]") for i, v in enumerate(shape))
        axes = tuple(
            e.text
            if e.text.isidentifier()
            else ("lane" if i >= len(exprs) - len(lanes) else e.text)
            for i, e in enumerate(exprs)
        )
        # An array<atomic<u32>> the kernel reads as f32 bits (CAS float adds) holds floats.
        dtype = "float32" if b.name in f32_bits else host_dtype(b.element)
        output = desc.get("output", False)
        if not isinstance(output, bool):
            raise where.error(f"{key}.output", "must be true or false")
        recipe = desc.get("input")
        if recipe is not None and not isinstance(recipe, str):
            raise where.error(f"{key}.input", 'must be a recipe string, e.g. "randn:1"')
        if output and recipe is not None:
            raise where.error(
                key,
                "an output is never an input: drop input, or output = true for an in-out buffer",
            )
        role = desc.get("role")
        if role is not None:
            if role not in ROLES:
                raise where.error(f"{key}.role", f"{role!r} is not one of {', '.join(ROLES)}")
            if "output" in desc:
                raise where.error(key, "role and output say the same thing: keep role")
            if role == "out" and recipe is not None:
                raise where.error(key, 'an output is never an input: drop input, or role = "inout"')
            output = role != "in"
        if b.access != "read_write" and output:
            raise where.error(
                f"{key}.{'role' if role else 'output'}",
                f"{name} is read-only ({b.type.text}); only read_write bindings are outputs",
            )
        if recipe is None and (b.access != "read_write" or role in ("in", "inout")):
            recipe = "randn" if np.dtype(dtype).kind == "f" else "zeros"
        if role is None:
            writable = b.access == "read_write"
            role = "out" if output else ("inout" if writable else "in") if recipe else "scratch"
        if recipe is not None and not recipe.startswith("npy:"):
            try:
                make_input(recipe, (1,), dtype, 0, name)
            except UserError as exc:
                raise where.error(f"{key}.input", str(exc)) from None
        buf = _BufferDesc(b, exprs, axes, dtype, recipe, output, role)
        values = _shape(buf, defaults, where)
        if lanes and values[len(values) - len(lanes) :] != lanes:
            raise where.error(
                f"{key}.shape",
                f"does not match the element type {b.element.text}: the last "
                f"{'axis' if len(lanes) == 1 else f'{len(lanes)} axes'} must be "
                f"{', '.join(map(str, lanes))} (its lanes)",
            )
        if not b.runtime_sized:
            want = b.type.count if b.type.kind == "array" else 1
            got = math.prod(values) // max(1, math.prod(lanes))
            if got != want:
                raise where.error(
                    f"{key}.shape", f"gives {got} elements; the binding {b.type.text} holds {want}"
                )
        out[name] = buf
    return out


def _packed(
    b: Binding,
    desc: dict[str, Any],
    known: frozenset[str],
    defaults: Dims,
    where: _Where,
    refs: _RefsModule,
) -> _BufferDesc:
    """`{ words = EXPR, shape = [...], decode = "refs.py:F", encode = "refs.py:G" }`: a buffer of
    packed elements, held as `words` raw u32 words, meaning values of `shape`: an input (the
    recipe makes the values, `encode` packs them), or with `role = "out"` an output (the kernel
    packs it; `decode` gives the values that are compared with the reference's)."""
    key = f"buffers.{b.name}"
    role = desc.get("role", "out" if desc.get("output") else "in")
    if role not in ("in", "out"):
        raise where.error(
            f"{key}.role", 'a packed buffer is an input (role = "in") or an output (role = "out")'
        )
    needed = (*PACKED_KEYS, "shape") if role == "in" else ("words", "decode", "shape")
    missing = [k for k in needed if k not in desc]
    if missing:
        raise where.error(
            f"{key}.{missing[0]}",
            'missing: a packed buffer gives words = "COUNT", shape = [values], '
            'decode = "refs.py:F" and, as an input, encode = "refs.py:G"',
        )
    if role == "out" and b.access != "read_write":
        raise where.error(
            f"{key}.role", f"{b.name} is read-only; only read_write bindings are outputs"
        )
    if role == "out" and "input" in desc:
        raise where.error(key, "an output is never an input: drop input")
    shape = desc["shape"]
    if not isinstance(shape, list) or not shape:
        raise where.error(f"{key}.shape", "must be a non-empty list: the shape of the values")
    values = tuple(_expr(v, known, where, f"{key}.shape[{i}]") for i, v in enumerate(shape))
    words = _expr(desc["words"], known, where, f"{key}.words")
    recipe = desc.get("input", "randn")
    if not isinstance(recipe, str):
        raise where.error(f"{key}.input", 'must be a recipe string, e.g. "randn:1"')
    decode = refs.function(desc["decode"], where, f"{key}.decode")
    encode = refs.function(desc["encode"], where, f"{key}.encode") if "encode" in desc else None
    buf = _BufferDesc(
        b,
        (words,),
        ("word",),
        "uint32",
        recipe if role == "in" else None,
        role == "out",
        role,
        _Packed(values, decode, encode, refs.worker),
    )
    count = _shape(buf, defaults, where)[0]
    stride = b.element_stride
    if stride and (count * 4) % stride:
        raise where.error(
            f"{key}.words",
            f"{count} words are not a whole number of {b.element.text} ({stride} bytes each)",
        )
    return buf


def _encoded(b: _BufferDesc, p: _Packed, dims: Dims, seed: int, where: _Where) -> np.ndarray:
    """The packed input: values made by the recipe, packed by `encode(values) -> {"words": ...}`
    (run in the corpus's worker)."""
    shape = _values_shape(b, dims, where)
    values = make_input(b.input or "randn", shape, "float64", seed, b.binding.name)
    count = _shape(b, dims, where)[0]
    assert p.encode is not None  # an input's encode is required when it is described
    words = p.worker.call(*p.encode, {"values": values}, {}, {"words": (count,)}).get("words")
    if words is None or not np.all((words >= 0) & (words < 2**32) & (words == np.floor(words))):
        raise UserError(
            f"{':'.join(p.encode)} must return {{'words': array}} of {count} values in 0..2^32-1"
        )
    return words.astype(np.uint32)


def _decoded(
    b: _BufferDesc, p: _Packed, words: np.ndarray, dims: Dims, where: _Where
) -> np.ndarray:
    """The values packed words hold, by `decode(words) -> {"values": ...}`: an input's for the
    reference, an output's to compare."""
    shape = _values_shape(b, dims, where)
    got = p.worker.call(*p.decode, {"words": np.asarray(words).reshape(-1)}, {}, {"values": shape})
    if "values" not in got:
        raise UserError(f"{':'.join(p.decode)} must return {{'values': array of shape {shape}}}")
    return got["values"]


def _values_shape(b: _BufferDesc, dims: Dims, where: _Where) -> tuple[int, ...]:
    """The shape of what a buffer means: its shape, or a packed buffer's values."""
    if b.packed is None:
        return _shape(b, dims, where)
    key = f"buffers.{b.binding.name}.shape"
    return tuple(_integer(e, dims, where, f"{key}[{i}]") for i, e in enumerate(b.packed.values))


def _shape(b: _BufferDesc, dims: Dims, where: _Where) -> tuple[int, ...]:
    key = f"buffers.{b.binding.name}.shape"
    return tuple(_integer(e, dims, where, f"{key}[{i}]") for i, e in enumerate(b.shape))


def _overrides(kernel: Kernel, table: Any, where: _Where) -> dict[str, float]:
    if not isinstance(table, dict):
        raise where.error("overrides", "must be a table, e.g. overrides = { wg_size = 256 }")
    declared = kernel.module.overrides if kernel.module else {}
    out = {}
    for name, value in table.items():
        if name not in declared:
            have = ", ".join(declared) or "none"
            raise where.error(f"overrides.{name}", f"no override of that name (overrides: {have})")
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not math.isfinite(value)
        ):
            raise where.error(f"overrides.{name}", f"must be a number, got {value!r}")
        out[name] = value
    return out


class _RefsModule:
    """The corpus's reference functions (in refs.py and any other file it names), run by the
    corpus's worker process (workbench.specs.refworker), never in this one."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.worker = worker_for(root)

    def function(
        self, text: Any, where: _Where, key: str = "reference.function"
    ) -> tuple[str, str]:
        """(file, function) of a `"FILE.py:FUNCTION"` that imports and names a function."""
        if not isinstance(text, str) or text.count(":") != 1:
            raise where.error(key, 'must be "FILE.py:FUNCTION", e.g. "refs.py:matmul"')
        file, fname = text.split(":")
        path = (self.root / file).resolve()
        if not file.endswith(".py") or not path.is_relative_to(self.root.resolve()):
            raise where.error(key, f"{file} must be a .py file in the corpus folder")
        if not path.is_file():
            raise where.error(key, f"{path} does not exist; write the float64 reference there")
        try:
            problem = self.worker.resolve(file, path, fname)
        except UserError as exc:
            raise where.error(key, str(exc)) from None
        if problem:
            raise where.error(key, problem)
        return file, fname


def _reference(
    table: Any,
    buffers: dict[str, _BufferDesc],
    outputs: tuple[str, ...],
    known: frozenset[str],
    uniform_types: dict[str, WType],
    refs: _RefsModule,
    where: _Where,
) -> tuple[Callable[[Dims, Arrays, EnvOf], dict[str, np.ndarray]], dict[str, Tol], bool]:
    """The reference, which takes the uniforms' values by path from `env_of(dims)` (so a spec
    with other values for them is the same reference given another `env_of`), its tolerances,
    and whether there is one."""
    if table is None:
        return (lambda _d, _a, _e: {}), {}, False
    if isinstance(table, str):
        table = {"function": table}
    if not isinstance(table, dict):
        raise where.error(
            "reference", 'must be "std:NAME", "refs.py:NAME" or a table with function = ...'
        )
    clash = sorted(known & set(buffers))
    if clash:
        raise where.error(
            "dims", f"{clash[0]} is both a dim and a buffer; the reference takes both by name"
        )
    tols: dict[str, Tol] = {}
    if "rtol" in table or "atol" in table:
        pair = []
        for k in ("rtol", "atol"):
            v = table.get(k, 0.0)
            # The range (finite, >= 0, rtol within the ceiling) is the session's to check, with
            # the one validator (workbench.closeness), when it loads the descriptions.
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise where.error(f"reference.{k}", f"must be a number, got {v!r}")
            pair.append(float(v))
        tols = {o: Tol(pair[0], pair[1], f"given in {FILE}") for o in outputs}
    given = [n for n, b in buffers.items() if b.input is not None]
    binder = Binder(
        inputs=frozenset(given),
        outputs=frozenset(outputs),
        dims=known,
        uniforms=frozenset(p for n, t in uniform_types.items() for p in uniform_paths(n, t)),
    )
    mapping = {k: v for k, v in table.items() if k not in REFERENCE_KEYS}
    text = table.get("function")
    if isinstance(text, str) and text.startswith(std.PREFIX):
        call = _std_call(text, mapping, binder, where)
    else:
        call = _refs_call(refs.function(text, where), mapping, binder, refs, where)
    label = call.label

    def reference(dims: Dims, arrays: Arrays, env_of: EnvOf) -> dict[str, np.ndarray]:
        shaped = {
            n: _decoded(b, b.packed, arrays[n], dims, where)
            if (b := buffers[n]).packed is not None
            else np.asarray(arrays[n], dtype=np.float64).reshape(_shape(b, dims, where))
            for n in given
        }
        env = {**env_of(dims), **dims}
        kwargs: dict[str, Any] = {**shaped, **dims} if call.whole else {}
        try:
            kwargs.update({n: evaluate(a, env, shaped) for n, a in call.args.items()})
        except ExprError as exc:
            raise UserError(f"{label}: {exc}") from None
        if call.worker is not None:
            # The corpus's own code runs in its worker process, which checks what it returns.
            arrays = {k: v for k, v in kwargs.items() if isinstance(v, np.ndarray)}
            scalars = {k: v for k, v in kwargs.items() if not isinstance(v, np.ndarray)}
            shapes = {n: _values_shape(buffers[n], dims, where) for n in outputs}
            # A uniform's value by its field's name, for the function that names it (as a std:
            # reference takes it); dims, inputs and mapped arguments of that name come first.
            named = {k: env[p] for k, p in call.by_name.items() if k not in kwargs}
            file, fname = call.worker
            return refs.worker.call(file, fname, arrays, scalars, shapes, named)
        assert call.fn is not None
        try:
            result = call.fn(**kwargs)
        except Exception as exc:
            raise UserError(f"{label} raised {type(exc).__name__}: {exc}") from None
        if not isinstance(result, Mapping):
            raise UserError(
                f"{label} must return a dict of output arrays by name, got {type(result).__name__}"
            )
        out = {}
        for r, v in result.items():
            n = call.results.get(r, r) if call.results is not None else r
            if call.results is not None and r not in call.results:
                continue
            if n not in outputs:
                raise UserError(
                    f"{label} returned {n!r}, which is not an output ({', '.join(outputs) or 'none'})"
                )
            want = _values_shape(buffers[n], dims, where)
            arr = np.asarray(v, dtype=np.float64)
            if arr.shape != want and call.results is not None and arr.size == math.prod(want):
                arr = arr.reshape(want)
            if arr.shape != want:
                raise UserError(f"{label} returned {n} with shape {arr.shape}; {FILE} gives {want}")
            out[n] = arr
        return out

    return reference, tols, True


@dataclass(frozen=True)
class _Call:
    """A reference function with its mapped arguments; `results` maps its results to bindings
    (None: it returns outputs by binding name); `whole`: it also takes every input and dim."""

    label: str
    fn: Callable[..., Any] | None
    args: dict[str, Arg]
    results: dict[str, str] | None
    whole: bool
    worker: tuple[str, str] | None = None  # (file, function) of a refs.py function
    by_name: Mapping[str, str] = field(default_factory=dict)  # field name -> uniform path


def _std_call(text: str, mapping: dict[str, Any], b: Binder, where: _Where) -> _Call:
    try:
        entry = std.lookup(text)
    except UserError as exc:
        raise where.error("reference.function", str(exc)) from None
    params = entry.parameters
    args: dict[str, Arg] = {}
    results: dict[str, str] = {}

    def error(key: str, msg: str) -> DescriptionError:
        return where.error(f"reference.{key}", msg)

    for key, value in mapping.items():
        if key in entry.outputs:
            if not isinstance(value, str) or value not in b.outputs:
                have = ", ".join(sorted(b.outputs)) or "none"
                raise error(key, f"the result {key} is compared with an output binding ({have})")
            results[key] = value
        elif key in params:
            args[key] = parse_arg(value, params[key], b, error, key)
            if key in entry.arrays and args[key][0] not in ("array", "view"):
                raise error(key, f"{key} takes an array: name an input binding")
            if args[key][0] == "array" and args[key][1] not in b.inputs:
                raise error(key, f'{args[key][1]} is not an input (give it role = "inout")')
        else:
            raise error(
                key,
                f"{text} has no argument {key} (arguments: {', '.join(params)}; "
                f"results: {', '.join(entry.outputs)})",
            )
    for name, p in params.items():
        if name in args:
            continue
        if name in b.inputs:
            args[name] = ("array", name)
        elif name in entry.arrays:
            if p.default is inspect.Parameter.empty:
                raise error(name, f'{text} needs the array {name}: map it, e.g. {name} = "src"')
        elif name in b.dims:
            args[name] = ("expr", parse(name))
        elif not isinstance(p.default, str) and (leaf := b.by_leaf(name)) is not None:
            # (a word such as rope's mode is never taken from a number of the same name)
            args[name] = ("expr", parse(leaf, b.names))
        elif p.default is inspect.Parameter.empty:
            raise error(name, f"{text} needs {name}: map it to a dim, a uniform or a value")
    for r in entry.outputs:
        if r not in results and r in b.outputs:
            results[r] = r
    if not results and len(b.outputs) == 1:
        results[entry.outputs[0]] = next(iter(b.outputs))
    if not results:
        raise error(
            entry.outputs[0],
            f"map the result {entry.outputs[0]} to an output binding, e.g. "
            f'{entry.outputs[0]} = "dst" (outputs: {", ".join(sorted(b.outputs)) or "none"})',
        )
    return _Call(text, entry, args, results, whole=False)


def _refs_call(
    found: tuple[str, str], mapping: dict[str, Any], b: Binder, refs: _RefsModule, where: _Where
) -> _Call:
    """A refs.py function, run in the corpus's worker: it takes the inputs and dims by name and
    the mapped arguments (arrays, or numbers such as `eps = "params.eps"`), and a uniform's value
    by its field's name (`eps`) when it has a parameter of that name."""
    file, fname = found

    def error(key: str, msg: str) -> DescriptionError:
        return where.error(f"reference.{key}", msg)

    args: dict[str, Arg] = {}
    for key, value in mapping.items():
        args[key] = parse_arg(value, None, b, error, key)
        if args[key][0] in ("list", "literal") and not isinstance(value, (int, float)):
            raise error(
                key,
                "a refs.py function takes arrays and numbers: a binding, a view or an expression",
            )

    return _Call(
        f"{file}:{fname}", None, args, None, whole=True, worker=(file, fname), by_name=b.leaves()
    )


def _with_gradient(
    spec: KernelSpec, table: Any, where: _Where, described: dict[str, KernelSpec]
) -> KernelSpec:
    """The spec with its gradient link, or with the reason the gradient check cannot run."""
    if not isinstance(table, dict):
        raise where.error("gradient", "must be a table with forward, upstream and wrt")
    _check_keys(table, GRADIENT_KEYS, where, "gradient")
    forward = table.get("forward")
    if not isinstance(forward, str):
        raise where.error("gradient.forward", "must name the forward kernel")
    maps = {}
    for key in ("upstream", "wrt"):
        m = table.get(key)
        if not isinstance(m, dict) or not m or not all(isinstance(v, str) for v in m.values()):
            raise where.error(f"gradient.{key}", 'must be a table of names, e.g. { y = "dy" }')
        maps[key] = dict(m)
    inputs = set(spec.inputs(spec.resolve_dims(), 0))
    for out, arr in maps["upstream"].items():
        if arr not in inputs:
            raise where.error(f"gradient.upstream.{out}", f"{arr} is not an input of {spec.name}")
    for grad in maps["wrt"]:
        if grad not in spec.outputs:
            raise where.error(f"gradient.wrt.{grad}", f"{grad} is not an output of {spec.name}")
    fspec = described.get(forward) or spec_for(forward)
    problem = _forward_problem(spec, fspec, forward, maps)
    if problem or fspec is None:
        return replace(spec, gradient_problem=problem)
    link = GradLink(
        forward_ref=_forward_ref(fspec),
        upstream=maps["upstream"],
        wrt=maps["wrt"],
        primals=_primals(spec, fspec),
        doc=f"L = sum <upstream, {forward}(...)>, from {FILE}",
    )
    return replace(spec, gradient=link)


def _forward_problem(
    spec: KernelSpec, fspec: KernelSpec | None, forward: str, maps: dict[str, dict[str, str]]
) -> str:
    if fspec is None:
        return f"no forward: {forward} is neither described in {FILE} nor shipped"
    if not fspec.has_reference:
        return f"the forward {forward} has no reference to differentiate"
    missing = [d.name for d in fspec.dims if d.name not in {x.name for x in spec.dims}]
    if missing:
        return (
            f"mismatched forward: {forward}'s dims {', '.join(missing)} are not dims of {spec.name}"
        )
    fouts = set(fspec.outputs)
    bad = [o for o in maps["upstream"] if o not in fouts]
    if bad:
        return f"mismatched forward: {forward} has no output {bad[0]}"
    fins = set(fspec.inputs(fspec.resolve_dims(), 0))
    bad = [a for a in maps["wrt"].values() if a not in fins]
    if bad:
        return f"mismatched forward: {forward} has no input {bad[0]} to differentiate"
    return ""


def _forward_dims(fspec: KernelSpec, dims: Dims) -> dict[str, int]:
    return {d.name: dims[d.name] for d in fspec.dims}


def _forward_ref(fspec: KernelSpec) -> Callable[[Dims, Arrays], dict[str, np.ndarray]]:
    def forward(dims: Dims, arrays: Arrays) -> dict[str, np.ndarray]:
        return fspec.reference(_forward_dims(fspec, dims), arrays)

    return forward


def _primals(spec: KernelSpec, fspec: KernelSpec) -> Callable[[Dims, int], dict[str, np.ndarray]]:
    """The forward's inputs the backward does not bind, made by the forward's own recipes."""

    def primals(dims: Dims, seed: int) -> dict[str, np.ndarray]:
        own = set(spec.inputs(dims, seed))
        made = fspec.inputs(_forward_dims(fspec, dims), seed)
        return {k: v for k, v in made.items() if k not in own}

    return primals
