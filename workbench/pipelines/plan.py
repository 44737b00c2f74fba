"""A pipeline checked against a corpus and made concrete, with no GPU work: dims resolved, each
step's kernel, spec, dims, uniforms, grid and binding → buffer map, every buffer's size, and the
buffers' starting contents.

For a kernel with a spec, a step's uniforms and grid come from the spec at the pipeline's dims
(a spec dim the pipeline does not name takes the spec's default) unless the step overrides them;
an ad-hoc kernel's step writes them. Every mistake is one `PipelineError` naming file, step and
field, raised before anything touches the GPU.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from workbench.errors import UserError
from workbench.gpu.uniforms import pack_uniform
from workbench.pipelines import SHIPPED
from workbench.pipelines.model import Branch, Pipeline, PipelineError, StepDef
from workbench.planning import shipped_corpus
from workbench.recipes import make_input
from workbench.session import Session
from workbench.specs import expr
from workbench.specs.base import Buffer, KernelSpec
from workbench.units import fmt_bytes
from workbench.wgsl.corpus import Kernel


@dataclass(frozen=True)
class PlannedBuffer:
    name: str
    shape: tuple[int, ...]
    axes: tuple[str, ...]
    dtype: str

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * np.dtype(self.dtype).itemsize


@dataclass(frozen=True)
class View:
    """How a step's spec sees one buffer: the leading elements in the spec's shape."""

    buffer: str
    shape: tuple[int, ...]
    axes: tuple[str, ...]

    def of(self, array: np.ndarray) -> np.ndarray:
        count = int(np.prod(self.shape, dtype=np.int64))
        return array.reshape(-1)[:count].reshape(self.shape)


@dataclass(frozen=True)
class PlannedStep:
    index: int  # 1-based position in the stepped sequence
    where: str
    kernel: Kernel
    spec: KernelSpec | None
    dims: dict[str, int]  # the spec's dims at this step ({} for an ad-hoc kernel)
    uniforms: dict[str, Any]  # by the kernel's binding name
    grid: tuple[int, int, int]
    bind: dict[str, str]  # kernel binding name -> buffer
    views: dict[str, View]  # spec binding name -> view (spec kernels only)
    writes: tuple[str, ...]  # buffers bound read_write
    zero: tuple[str, ...]  # buffers the spec wants zero-filled before the step
    name: str  # the kernel as the step names it (`unary.wgsl:main` where entries share a name)


@dataclass(frozen=True)
class PipelinePlan:
    pipeline: Pipeline
    branch: str | None
    dims: dict[str, int]
    buffers: dict[str, PlannedBuffer]
    steps: tuple[PlannedStep, ...]
    # Every buffer's starting contents (deterministic: seeds come from the recipes or the
    # buffer's position in the file); never written to.
    initial: dict[str, np.ndarray]
    # The corpus the steps' kernels were found in: the session's, or the shipped one for a
    # shipped pipeline whose kernels the session's corpus lacks (`kernel_session`).
    corpus: Path

    @property
    def name(self) -> str:
        return self.pipeline.name


def plan(
    pipeline: Pipeline,
    session: Session,
    dims: Mapping[str, int] | None = None,
    branch: str | None = None,
) -> PipelinePlan:
    """Check the whole file (every branch, every buffer's recipe) and plan the chosen path; the
    steps' kernels are found in `kernel_session(pipeline, session)`'s corpus."""
    file = pipeline.file
    session = kernel_session(pipeline, session)
    if branch is not None and branch not in pipeline.branches:
        names = ", ".join(pipeline.branches) or "none"
        raise UserError(f"{file}: no branch {branch!r}; branches: {names}")
    resolved = resolve_dims(pipeline, dims or {})
    cap = session.adapter.limits.get("max-buffer-size", 1 << 28)
    buffers = {
        name: _buffer(pipeline, b.name, resolved, cap) for name, b in pipeline.buffers.items()
    }
    initial = _initial_contents(pipeline, buffers, resolved)
    for a in pipeline.agree:
        if a.pair is not None:
            x, y = (buffers[n] for n in a.pair)
            if x.shape != y.shape:
                raise PipelineError(
                    file,
                    f"agree {a.index} pair",
                    f"{x.name} is {_shape(x.shape)} and {y.name} is {_shape(y.shape)}; "
                    "a pair must have one shape",
                )
    paths = {None: _sequence(pipeline, None)} | {
        name: _sequence(pipeline, pipeline.branches[name]) for name in pipeline.branches
    }
    planned: dict[str | None, tuple[PlannedStep, ...]] = {}
    for key, defs in paths.items():
        planned[key] = tuple(
            _step(pipeline, session, d, i + 1, resolved, buffers) for i, d in enumerate(defs)
        )
    return PipelinePlan(
        pipeline, branch, resolved, buffers, planned[branch], initial, session.corpus.root
    )


def kernel_session(pipeline: Pipeline, session: Session) -> Session:
    """Where the pipeline's kernels are looked up: the session's corpus (a user's pipeline names
    the kernels of the folder it is opened with); for a shipped pipeline whose kernels that
    corpus does not all hold (a user's folder is open), the shipped corpus on the same device."""
    if Path(pipeline.file).resolve().parent != SHIPPED:
        return session
    steps = [*pipeline.steps, *(s for b in pipeline.branches.values() for s in b.steps)]
    try:
        for d in steps:
            session.kernel(d.kernel)
    except UserError:
        return session.with_corpus(shipped_corpus())
    return session


def resolve_dims(pipeline: Pipeline, given: Mapping[str, int]) -> dict[str, int]:
    """The pipeline's dims with `given` overriding them, limits checked."""
    file = pipeline.file
    unknown = sorted(set(given) - set(pipeline.dims))
    if unknown:
        raise UserError(
            f"{file}: no dim {unknown[0]!r} in this pipeline; its dims are "
            f"{', '.join(pipeline.dims) or 'none'}"
        )
    out: dict[str, int] = {k: int(v) for k, v in given.items()}

    def value(name: str) -> int:
        if name not in out:
            d = pipeline.dims[name]
            deps = expr.parse(d.default).names if isinstance(d.default, str) else set()
            env = {dep: value(dep) for dep in deps}
            try:
                out[name] = expr.evaluate(d.default, env)
            except expr.ExprError as exc:
                raise PipelineError(file, f"dims.{name}", str(exc)) from None
        return out[name]

    for name, d in pipeline.dims.items():
        v = value(name)
        lo = d.lo if d.lo is not None else 0
        if v < lo or (d.hi is not None and v > d.hi):
            hi = d.hi if d.hi is not None else "any"
            raise PipelineError(
                file,
                f"dims.{name}",
                f"{v} is outside [{lo}, {hi}]" + (f" ({d.doc})" if d.doc else ""),
            )
    return {name: out[name] for name in pipeline.dims}


def _sequence(pipeline: Pipeline, branch: Branch | None) -> list[StepDef]:
    steps = list(pipeline.steps)
    if branch is None:
        return steps
    ids = [s.id for s in steps]
    start = ids.index(branch.replaces[0])
    return steps[:start] + list(branch.steps) + steps[start + len(branch.replaces) :]


def _buffer(pipeline: Pipeline, name: str, dims: Mapping[str, int], cap: int) -> PlannedBuffer:
    """Buffer `name` at `dims`: refused when it holds nothing (a step over empty buffers runs and
    compares nothing) or more than the adapter's max-buffer-size `cap`."""
    b = pipeline.buffers[name]
    where = f"buffers.{name}.shape"
    shape = []
    for s in b.shape:
        try:
            v = expr.evaluate(s, dims)
        except expr.ExprError as exc:
            raise PipelineError(pipeline.file, where, str(exc)) from None
        if v < 0:
            raise PipelineError(pipeline.file, where, f"{s!r} is {v}, below 0")
        shape.append(v)
    at = ", ".join(f"{k}={v}" for k, v in dims.items())
    nbytes = math.prod(shape) * np.dtype(b.dtype).itemsize
    if nbytes == 0:
        raise PipelineError(
            pipeline.file,
            where,
            f"{_shape(tuple(shape))} holds no elements at {at}; give dims that make every "
            "buffer at least one element",
        )
    if nbytes > cap:
        raise PipelineError(
            pipeline.file,
            where,
            f"{_shape(tuple(shape))} {b.dtype} needs {fmt_bytes(nbytes)} at {at}, over the "
            f"adapter's max-buffer-size of {fmt_bytes(cap)}; use smaller dims",
        )
    axes = tuple(
        s if isinstance(s, str) and s.isidentifier() else f"i{k}" for k, s in enumerate(b.shape)
    )
    return PlannedBuffer(name, tuple(shape), axes, b.dtype)


def _initial_contents(
    pipeline: Pipeline, buffers: Mapping[str, PlannedBuffer], dims: Mapping[str, int]
) -> dict[str, np.ndarray]:
    out: dict[str, np.ndarray] = {}
    for idx, (name, b) in enumerate(pipeline.buffers.items()):
        if b.init.startswith("copy:"):
            continue
        where = f"buffers.{name}.init"
        recipe = _with_dims(b.init, dims, functools.partial(PipelineError, pipeline.file, where))
        p = buffers[name]
        try:
            out[name] = np.ascontiguousarray(make_input(recipe, p.shape, p.dtype, idx, where))
        except UserError as exc:
            message = str(exc).removeprefix(f"{where}: ")
            raise PipelineError(pipeline.file, where, message) from None
    for name, b in pipeline.buffers.items():
        if b.init.startswith("copy:"):
            out[name] = out[b.init[5:].strip()].copy()
    return {name: out[name] for name in pipeline.buffers}


_DIM_REF = re.compile(r"\{([^{}]*)\}")


def _with_dims(init: str, dims: Mapping[str, int], fail: Callable[[str], Exception]) -> str:
    """`init` with each `{DIM}` replaced by that dim's value; any other use of braces is refused
    (only a dim's name may stand between them, nothing is looked up on it)."""

    def value(m: re.Match[str]) -> str:
        name = m.group(1).strip()
        if name not in dims:
            raise fail(
                f"{init!r}: {{{m.group(1)}}} must name a dim; dims: {', '.join(dims) or 'none'}"
            )
        return str(dims[name])

    out = _DIM_REF.sub(value, init)
    if "{" in out or "}" in out:
        raise fail(f"{init!r}: a brace without its pair; write {{DIM}} to use a dim's value")
    return out


def _step(
    pipeline: Pipeline,
    session: Session,
    d: StepDef,
    index: int,
    dims: Mapping[str, int],
    buffers: Mapping[str, PlannedBuffer],
) -> PlannedStep:
    def fail(field: str, message: str) -> PipelineError:
        return PipelineError(pipeline.file, f"{d.where} {field}", message)

    try:
        kernel = session.kernel(d.kernel)
        if kernel.problem or kernel.entry_point is None:
            raise UserError(kernel.problem or "no @compute entry point could be reflected")
        spec = session.spec(kernel)
    except UserError as exc:
        raise fail("kernel", str(exc)) from None
    bindings = kernel.entry_point.bindings
    names = _spec_names(kernel, spec)
    storage = [b for b in bindings if b.space != "uniform"]
    uniform_bindings = [b for b in bindings if b.space == "uniform"]
    known = {names[b.name]: b for b in bindings}
    for key, buf in d.bind.items():
        if key not in known:
            raise fail(
                f"bind.{key}", f"{d.kernel} has no binding {key!r}; bindings: {', '.join(known)}"
            )
        if known[key].space == "uniform":
            raise fail(f"bind.{key}", f"{key} is a uniform: set it under uniforms, not bind")
        if buf not in buffers:
            raise fail(f"bind.{key}", f"no buffer {buf!r}; buffers: {', '.join(buffers)}")
    for b in storage:
        if names[b.name] not in d.bind:
            raise fail(
                f"bind.{names[b.name]}",
                f"binding {names[b.name]!r} of {d.kernel} is not bound; bind it to a buffer",
            )
    bind = {b.name: d.bind[names[b.name]] for b in storage}
    _check_aliasing(storage, bind, names, fail)
    env = dict(dims)
    views: dict[str, View] = {}
    zero: tuple[str, ...] = ()
    uniforms: dict[str, Any] = {}
    grid: tuple[int, int, int] | None = None
    step_dims: dict[str, int] = {}
    if spec is not None:
        consts = kernel.module.consts if kernel.module else {}
        step_dims, spec_uniforms, grid, spec_buffers = _spec_parts(d, spec, dims, consts, fail)
        env |= step_dims
        uniforms = {
            b.name: spec_uniforms[names[b.name]]
            for b in uniform_bindings
            if names[b.name] in spec_uniforms
        }
        for b in storage:
            key, have = names[b.name], buffers[bind[b.name]]
            want = spec_buffers[key]
            want_bytes = want.count * np.dtype(want.dtype).itemsize
            if have.dtype != np.dtype(want.dtype).name:
                raise fail(
                    f"bind.{key}",
                    f"buffer {have.name} holds {have.dtype}, {d.kernel} expects {want.dtype}",
                )
            if have.nbytes < want_bytes:
                raise fail(
                    f"bind.{key}",
                    f"buffer {have.name} ({_shape(have.shape)} {have.dtype}, {have.nbytes:,} bytes) "
                    f"is too small: {d.kernel} expects {_shape(want.shape)} ({want_bytes:,} bytes) "
                    f"at {', '.join(f'{k}={v}' for k, v in step_dims.items())}",
                )
            views[key] = View(have.name, want.shape, tuple(a for a, _ in want.axes))
        zero = tuple(bind[b.name] for b in storage if names[b.name] in spec.zeroed)
    else:
        if d.dims:
            raise fail(f"dims.{next(iter(d.dims))}", f"{d.kernel} has no spec, so no dims to set")
        for b in storage:
            have, need = buffers[bind[b.name]], b.fixed_size or b.element_stride
            if have.nbytes < need:
                raise fail(
                    f"bind.{b.name}",
                    f"buffer {have.name} ({have.nbytes:,} bytes) is too small for {b.type.text} "
                    f"({need:,} bytes at least)",
                )
    for key, value in d.uniforms.items():
        uniform = known.get(key)
        if uniform is None or uniform.space != "uniform":
            raise fail(f"uniforms.{key}", f"{d.kernel} has no uniform {key!r}")
        uniforms[uniform.name] = _uniform_value(
            value, env, functools.partial(fail, f"uniforms.{key}")
        )
    for b in uniform_bindings:
        key = names[b.name]
        if b.name not in uniforms:
            raise fail(
                f"uniforms.{key}", f"uniform {key!r} of {d.kernel} is not set; write uniforms.{key}"
            )
        try:
            pack_uniform(b.type, uniforms[b.name], key)
        except UserError as exc:
            raise fail(f"uniforms.{key}", str(exc)) from None
    if d.grid is not None:
        try:
            x, y, z = ([expr.evaluate(g, env) for g in d.grid] + [1, 1])[:3]
            grid = (x, y, z)
        except expr.ExprError as exc:
            raise fail("grid", str(exc)) from None
    if grid is None:
        raise fail("grid", f"{d.kernel} has no spec: write grid = [X, Y, Z] (expressions of dims)")
    if any(g < 0 for g in grid):
        raise fail("grid", f"{list(grid)} has a negative size")
    writes = tuple(dict.fromkeys(bind[b.name] for b in storage if b.access == "read_write"))
    return PlannedStep(
        index,
        d.where,
        kernel,
        spec,
        step_dims,
        uniforms,
        grid,
        bind,
        views,
        writes,
        zero,
        d.kernel,
    )


def _check_aliasing(
    storage: list[Any],
    bind: Mapping[str, str],
    names: Mapping[str, str],
    fail: Callable[[str, str], PipelineError],
) -> None:
    """WebGPU refuses a dispatch that reads a buffer through a read-only binding while a
    read_write binding of the same dispatch writes it; say so by step, before the GPU does."""
    by_buffer: dict[str, list[Any]] = {}
    for b in storage:
        by_buffer.setdefault(bind[b.name], []).append(b)
    for buf, bs in by_buffer.items():
        readers = [names[b.name] for b in bs if b.access != "read_write"]
        writers = [names[b.name] for b in bs if b.access == "read_write"]
        if readers and writers:
            raise fail(
                f"bind.{readers[0]}",
                f"buffer {buf} is bound to {readers[0]} (read) and {writers[0]} (read_write) in "
                "one dispatch, which WebGPU refuses; bind a second buffer (init = "
                f'"copy:{buf}") to one of them',
            )


def _spec_names(kernel: Kernel, spec: KernelSpec | None) -> dict[str, str]:
    """Kernel binding name -> the spec's name for it (a shipped spec's names are the shipped
    kernel's, matched by group and binding)."""
    bindings = kernel.runnable_entry_point().bindings
    own = {b.name: b.name for b in bindings}
    if spec is None or spec.described:  # a workbench.toml description uses the kernel's names
        return own
    shipped = next(k for k in shipped_corpus().kernels if k.name == spec.name)
    by_slot = {(b.group, b.binding): b.name for b in shipped.runnable_entry_point().bindings}
    return {b.name: by_slot.get((b.group, b.binding), b.name) for b in bindings}


def _spec_parts(
    d: StepDef,
    spec: KernelSpec,
    dims: Mapping[str, int],
    consts: Mapping[str, float | int],
    fail: Callable[[str, str], Exception],
) -> tuple[dict[str, int], dict[str, Any], tuple[int, int, int], dict[str, Buffer]]:
    """The step's spec dims (pipeline dims by name, step overrides), uniforms, grid (for a kernel
    with module-scope constants `consts`) and buffers."""
    known = [x.name for x in spec.dims]
    given = {k: v for k, v in dims.items() if k in known}
    for key, value in d.dims.items():
        if key not in known:
            raise fail(
                f"dims.{key}", f"{spec.name} has no dim {key!r}; its dims: {', '.join(known)}"
            )
        try:
            given[key] = expr.evaluate(value, dims)
        except expr.ExprError as exc:
            raise fail(f"dims.{key}", str(exc)) from None
    try:
        resolved = spec.resolve_dims(given)
        buffers = spec.buffers(resolved)
        uniforms = dict(spec.uniforms(resolved))
        grid = spec.launch_grid(resolved, consts)
    except UserError as exc:
        raise fail("dims", str(exc)) from None
    return resolved, uniforms, grid, buffers


def _uniform_value(value: Any, env: Mapping[str, int], fail: Callable[[str], Exception]) -> Any:
    """Numbers as written; strings are expressions of dims; lists and tables element by element."""
    if isinstance(value, list):
        return [_uniform_value(v, env, fail) for v in value]
    if isinstance(value, dict):
        return {k: _uniform_value(v, env, fail) for k, v in value.items()}
    if isinstance(value, str):
        try:
            return expr.evaluate(value, env)
        except expr.ExprError as exc:
            raise fail(str(exc)) from None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise fail(f"{value!r} is not a number")
    return value


def _shape(shape: tuple[int, ...]) -> str:
    return "x".join(map(str, shape)) or "scalar"
