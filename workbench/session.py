"""The engine the command line and the terminal UI share: a Case in, a Run out.

A `Case` is everything needed to dispatch a kernel once — kernel, spec (if one matches by name AND
binding signature), dims, buffer shapes, inputs, uniform values, grid — and is built without touching
the GPU. `Session.run` checks features and limits, compiles, dispatches, reads back, compares with the
float64 reference and times. Kernels without a spec run "ad hoc": one size `n`, every runtime-sized
array `n` elements, a uniform named n/size/len/count set to `n`, grid ceil(n / workgroup_size.x).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from workbench.checks.compare import Comparison, compare
from workbench.checks.result import jsonable
from workbench.errors import (
    CompileError,
    SpecMismatchError,
    UserError,
    WorkbenchError,
)
from workbench.gpu.adapters import AdapterInfo, choose_adapter
from workbench.gpu.device import Bound, BufferPlan, DeviceBuffer, GpuContext
from workbench.gpu.roofline import Roofline, roofline
from workbench.gpu.timing import Budget, ClockCheck, Timing
from workbench.gpu.uniforms import default_value, pack_uniform, set_field
from workbench.recipes import make_input
from workbench.specs.base import Buffer, Cost, KernelSpec
from workbench.specs.described import load_descriptions
from workbench.specs.registry import spec_for
from workbench.wgsl.corpus import SHIPPED, Corpus, Kernel, load_corpus
from workbench.wgsl.reflect import Binding, subgroup_width_constants
from workbench.wgsl.types import NUMPY_DTYPE, WType, round_up

ADHOC_N = 1024
ADHOC_SIZE_NAMES = ("n", "size", "len", "count")


@dataclass(frozen=True)
class BindingPlan:
    """One binding of a case: its role, host shape/dtype and byte size."""

    binding: Binding
    name: str  # the spec's name for it (the kernel's own name for ad-hoc kernels)
    role: str  # "input", "output", "inout", "scratch" (zeroed, not compared) or "uniform"
    shape: tuple[int, ...]
    axes: tuple[str, ...]
    dtype: str
    nbytes: int
    source: str = ""  # how its contents were made (recipe, spec generator, zeros)


@dataclass
class Case:
    """A kernel ready to dispatch: no GPU work has happened yet."""

    kernel: Kernel
    spec: KernelSpec | None
    dims: dict[str, int]
    seed: int
    bindings: list[BindingPlan]
    inputs: dict[str, np.ndarray]
    uniforms: dict[str, Any]
    grid: tuple[int, int, int]
    notes: list[str] = field(default_factory=list)
    overrides: dict[str, float] = field(default_factory=dict)  # pipeline constants, by name

    @property
    def name(self) -> str:
        return self.kernel.name

    def plan(self, name: str) -> BindingPlan:
        return next(p for p in self.bindings if p.name == name)

    @property
    def outputs(self) -> list[str]:
        return [p.name for p in self.bindings if p.role in ("output", "inout", "scratch")]

    @property
    def workgroups(self) -> int:
        return math.prod(self.grid)

    @property
    def cost(self) -> Cost | None:
        return self.spec.cost(self.dims) if self.spec else None


@dataclass
class Run:
    """What one dispatch produced, and how it compares."""

    case: Case
    adapter: AdapterInfo
    grid: tuple[int, int, int]  # as dispatched (folded when over the per-dimension limit)
    outputs: dict[str, np.ndarray]
    reference: dict[str, np.ndarray] | None
    compare: dict[str, Comparison]
    timing: Timing | None
    wall_s: float

    @property
    def ok(self) -> bool | None:
        """True/False when compared with a reference, None for ad-hoc runs."""
        if not self.compare:
            return None
        return all(c.ok for c in self.compare.values())

    @property
    def inputs(self) -> dict[str, np.ndarray]:
        return self.case.inputs

    def stats(self, name: str) -> dict[str, float | int]:
        return array_stats(self.outputs[name])

    def throughput(self) -> dict[str, float] | None:
        """GB/s and GFLOP/s from the spec's cost model and the median time."""
        cost = self.case.cost
        if (
            cost is None
            or self.timing is None
            or not self.timing.reps
            or self.timing.median_ms <= 0
        ):
            return None
        s = self.timing.median_ms / 1e3
        return {"gb_per_s": cost.bytes / s / 1e9, "gflop_per_s": cost.flops / s / 1e9}

    def to_json(self, corpus: str) -> dict[str, Any]:
        case = self.case
        return {
            "kernel": case.name,
            "file": case.kernel.file,
            "corpus": corpus,
            "spec": case.spec is not None,
            "adapter": self.adapter.to_json() | {"limits": None},
            "dims": case.dims,
            "seed": case.seed,
            "grid": list(self.grid),
            "workgroup_size": list(case.kernel.entry_point.workgroup_size)
            if case.kernel.entry_point
            else None,
            "bindings": {
                p.name: {
                    "binding": p.binding.binding,
                    "group": p.binding.group,
                    "role": p.role,
                    "shape": list(p.shape),
                    "dtype": p.dtype,
                    "bytes": p.nbytes,
                    "source": p.source,
                }
                for p in case.bindings
            },
            "uniforms": jsonable(case.uniforms),
            "outputs": {name: self.stats(name) for name in self.outputs},
            "compare": {k: c.to_json() for k, c in self.compare.items()},
            "ok": self.ok,
            "timing": self.timing.to_json() if self.timing else None,
            "throughput": self.throughput(),
            "notes": case.notes,
        }


def array_stats(a: np.ndarray) -> dict[str, float | int]:
    """min, max, mean over finite values, and counts of NaN and ±Inf."""
    if a.dtype.names:
        return {"count": int(a.size)}
    f = a.astype(np.float64, copy=False)
    fin = np.isfinite(f)
    finite = f[fin]
    return {
        "count": int(a.size),
        "min": float(finite.min()) if finite.size else math.nan,
        "max": float(finite.max()) if finite.size else math.nan,
        "mean": float(finite.mean()) if finite.size else math.nan,
        "nan": int(np.isnan(f).sum()),
        "inf": int(np.isinf(f).sum()),
    }


@cache
def shipped_corpus() -> Corpus:
    return load_corpus(SHIPPED)


def spec_signature_problem(kernel: Kernel, spec: KernelSpec) -> str | None:
    """Why `kernel` does not have the binding signature of the shipped kernel `spec` describes."""
    shipped = next((k for k in shipped_corpus().kernels if k.name == spec.name), None)
    if shipped is None or shipped.entry_point is None:
        return None
    if kernel.entry_point is None:
        return "it has no entry point to compare"
    want = [b.signature for b in shipped.entry_point.bindings]
    have = [b.signature for b in kernel.entry_point.bindings]
    if want == have:
        return None
    fmt = lambda s: f"@group({s[0]}) @binding({s[1]}) {s[2]}{', ' + s[3] if s[3] else ''} {s[4]}"  # noqa: E731
    lines = []
    for i in range(max(len(want), len(have))):
        w = want[i] if i < len(want) else None
        h = have[i] if i < len(have) else None
        if w != h:
            lines.append(
                f"expected {fmt(w) if w else 'nothing'}, found {fmt(h) if h else 'nothing'}"
            )
    return "; ".join(lines[:4])


class Session:
    """A corpus and an adapter, and the one way to turn a Case into a Run."""

    def __init__(self, corpus: Corpus, gpu: GpuContext) -> None:
        self.corpus = corpus
        self.gpu = gpu
        self._described: dict[str, KernelSpec] | None = None

    @classmethod
    def open(cls, adapter: str | int | None = None, corpus: str | Path | None = None) -> Session:
        return cls(load_corpus(corpus), GpuContext(choose_adapter(adapter)))

    @property
    def adapter(self) -> AdapterInfo:
        return self.gpu.adapter

    def with_adapter(self, adapter: str | int | None) -> Session:
        """Same corpus on another adapter."""
        return Session(self.corpus, GpuContext(choose_adapter(adapter)))

    def with_corpus(self, corpus: Corpus) -> Session:
        """Another corpus on the same device, so cases of both can be timed together."""
        return Session(corpus, self.gpu)

    def reload(self) -> None:
        """Re-read the corpus from disk (live reload)."""
        self.corpus = load_corpus(self.corpus.root)
        self._described = None

    @property
    def described(self) -> dict[str, KernelSpec]:
        """The specs the corpus's workbench.toml describes (loaded, and checked, on first use)."""
        if self._described is None:
            self._described = load_descriptions(self.corpus)
        return self._described

    def kernel(self, name: str) -> Kernel:
        return self.corpus.find(name)

    def spec(self, kernel: Kernel, adhoc: bool = False) -> KernelSpec | None:
        """The matching spec, None for ad-hoc; a signature mismatch is an error, never guessed."""
        if adhoc:
            return None
        described = self.described.get(kernel.name)
        if described is not None and described.file == kernel.file:
            return described
        spec = spec_for(kernel.name)
        if spec is None:
            return None
        problem = spec_signature_problem(kernel, spec)
        if problem:
            raise SpecMismatchError(
                f"{kernel.file}:{kernel.name} has the name of a shipped kernel but not its binding "
                f"signature: {problem}. Match the ABI, or run it ad hoc with --adhoc"
            )
        return spec

    def status(self, kernel: Kernel) -> str:
        """`ok`, `needs <feature>`, `compile error: …` or a reflection problem."""
        if kernel.problem:
            return f"error: {kernel.problem}"
        if kernel.entry_point is None:
            return "error: no entry point"
        missing = self.gpu.missing_features(kernel.features)
        if missing:
            return "needs " + ", ".join(missing)
        try:
            self._compile(kernel)
        except CompileError as exc:
            return f"compile error: {exc}"
        except WorkbenchError as exc:
            return f"error: {exc}"
        return "ok"

    def warnings(self, kernel: Kernel) -> list[str]:
        """What may make a kernel that compiles and runs give wrong results on this adapter."""
        module = kernel.module
        width = self.gpu.subgroup_size if module is not None and module.uses_subgroups else None
        if module is None or width is None:
            return []
        return [
            f"{name} = {value} but this adapter's subgroups are {width} wide: code that assumes "
            f"{value} lanes computes wrong results here (read @builtin(subgroup_size) instead)"
            for name, value in subgroup_width_constants(module).items()
            if value != width
        ]

    # -- planning (no GPU) -----------------------------------------------------------------------
    def case(
        self,
        kernel: str | Kernel,
        dims: Mapping[str, int] | None = None,
        inputs: Mapping[str, np.ndarray | str] | None = None,
        sizes: Mapping[str, int] | None = None,
        sets: Mapping[str, float] | None = None,
        seed: int = 0,
        adhoc: bool = False,
    ) -> Case:
        k = kernel if isinstance(kernel, Kernel) else self.kernel(kernel)
        if k.problem:
            raise UserError(f"{k.file}:{k.name}: {k.problem}")
        ep = k.entry_point
        if ep is None:
            raise UserError(f"{k.file}:{k.name}: no @compute entry point could be reflected")
        if seed < 0:
            raise UserError(f"seed must be >= 0, got {seed}")
        spec = self.spec(k, adhoc)
        if spec is not None:
            case = self._spec_case(k, spec, dims or {}, sizes or {}, seed)
        else:
            case = self._adhoc_case(k, dims or {}, sizes or {}, seed)
        for key, value in (inputs or {}).items():
            self._give_input(case, key, value)
        for key, value in (sets or {}).items():
            self._set_uniform(case, key, value)
        case.notes += [f"warning: {w}" for w in self.warnings(k)]
        return case

    def _spec_case(
        self,
        k: Kernel,
        spec: KernelSpec,
        dims: Mapping[str, int],
        sizes: Mapping[str, int],
        seed: int,
    ) -> Case:
        if sizes:
            raise UserError(
                f"{k.name} has a spec: binding sizes follow its dims ({', '.join(d.name for d in spec.dims)}); "
                "change --dim, or run it ad hoc with --adhoc to size bindings yourself"
            )
        d = spec.resolve_dims(dims)
        buffers: dict[str, Buffer] = spec.buffers(d)
        uniforms = spec.uniforms(d)
        spec_names = {}
        if not spec.described:
            shipped = next(s for s in shipped_corpus().kernels if s.name == spec.name)
            spec_names = {(b.group, b.binding): b.name for b in shipped.entry_point.bindings}
        grid = tuple(int(v) for v in spec.grid(d))
        sized = []
        for b in k.entry_point.bindings:
            if b.space == "uniform":
                sized.append((b, b.type.size(True)))
            else:
                buf = buffers[spec_names.get((b.group, b.binding), b.name)]
                sized.append((b, buf.count * np.dtype(buf.dtype).itemsize))
        self._check_fits(k, sized, grid)
        gen = None
        plans, arrays = [], {}
        for b in k.entry_point.bindings:
            name = spec_names.get((b.group, b.binding), b.name)
            if b.space == "uniform":
                plans.append(BindingPlan(b, name, "uniform", (), (), "", b.type.size(True), "spec"))
                continue
            buf = buffers[name]
            if name in spec.outputs:
                role = "output" if name in spec.zeroed else "inout"
            else:
                role = "scratch" if name in spec.zeroed else "input"
            nbytes = buf.count * np.dtype(buf.dtype).itemsize
            if role in ("input", "inout"):
                if gen is None:
                    gen = spec.inputs(d, seed)
                if name not in gen:
                    if role == "input":
                        raise RuntimeError(f"spec {spec.name}: inputs() gave no {name!r}")
                    role = "output"  # an output the spec neither zeroes nor fills: zeros
            if role in ("input", "inout"):
                arr = np.ascontiguousarray(
                    np.asarray(gen[name], dtype=buf.dtype).reshape(buf.shape)
                )
                arrays[name] = arr
                source = f"spec generator (seed {seed})"
            else:
                source = "zeros"
            plans.append(
                BindingPlan(
                    b,
                    name,
                    role,
                    buf.shape,
                    tuple(a for a, _ in buf.axes),
                    buf.dtype,
                    nbytes,
                    source,
                )
            )
        return Case(k, spec, d, seed, plans, arrays, dict(uniforms), grid)  # type: ignore[arg-type]

    def _adhoc_case(
        self, k: Kernel, dims: Mapping[str, int], sizes: Mapping[str, int], seed: int
    ) -> Case:
        unknown = sorted(set(dims) - {"n"})
        if unknown:
            raise UserError(
                f"{k.name} has no spec, so its only dim is n (the element count); got {', '.join(unknown)}"
            )
        n = int(dims.get("n", ADHOC_N))
        if n < 0:
            raise UserError(f"n must be >= 0, got {n}")
        names = {b.name for b in k.entry_point.bindings}
        uniform_sized = sorted(
            b.name for b in k.entry_point.bindings if b.space == "uniform" and b.name in sizes
        )
        if uniform_sized:
            raise UserError(
                f"--size {uniform_sized[0]}: a uniform has a fixed size; set its value with --set"
            )
        bad = sorted(set(sizes) - names)
        if bad:
            raise UserError(
                f"{k.name} has no binding {', '.join(bad)}; bindings: {', '.join(sorted(names))}"
            )
        plans, arrays, uniforms, recipes = [], {}, {}, []
        for idx, b in enumerate(k.entry_point.bindings):
            if b.space == "uniform":
                uniforms[b.name] = _adhoc_uniform(b.type, b.name, n)
                plans.append(
                    BindingPlan(b, b.name, "uniform", (), (), "", b.type.size(True), "ad hoc")
                )
                continue
            count = int(sizes.get(b.name, n)) if b.runtime_sized else (b.type.count or 1)
            if b.runtime_sized and count < 0:
                raise UserError(f"--size {b.name}={count}: sizes must be >= 0")
            if not b.runtime_sized and b.name in sizes:
                raise UserError(f"{b.name} is a fixed-size {b.type.text}; it cannot be resized")
            dtype, inner = _host_view(b.element)
            shape = (count, *inner) if b.type.kind == "array" else inner or (1,)
            # A lone vec3 (12 bytes) is shown with its padding lane, like vec3 array elements.
            nbytes = (
                count * b.element_stride
                if b.type.kind == "array"
                else round_up(b.type.align(), b.type.size())
            )
            role = "input" if b.access == "read" else "output"
            source = "zeros"
            if role == "input":
                recipe = _adhoc_recipe(dtype, n)
                if np.dtype(dtype).names is None:
                    recipes.append((b.name, recipe, shape, dtype, seed + idx))
                    source = f"{recipe} (seed {seed + idx})"
            plans.append(BindingPlan(b, b.name, role, shape, (), dtype, nbytes, source))
        wg = k.entry_point.workgroup_size[0]
        grid = (math.ceil(n / wg), 1, 1)
        self._check_fits(k, [(p.binding, p.nbytes) for p in plans], grid)
        for name, recipe, shape, dtype, bseed in recipes:
            arrays[name] = make_input(recipe, shape, dtype, bseed, name)
        return Case(k, None, {"n": n}, seed, plans, arrays, uniforms, grid)

    def _check_fits(
        self, k: Kernel, sized: list[tuple[Binding, int]], grid: tuple[int, ...]
    ) -> None:
        """Refuse a case over the adapter's limits before its inputs are made (they may be huge)."""
        plans = [BufferPlan(b, nbytes) for b, nbytes in sized]
        self.gpu.check_limits(
            plans, k.entry_point.workgroup_size, grid, k.name, entry=k.entry_point
        )

    def _give_input(self, case: Case, name: str, value: np.ndarray | str) -> None:
        try:
            plan = case.plan(name)
        except StopIteration:
            names = ", ".join(p.name for p in case.bindings if p.role != "uniform")
            raise UserError(
                f"{case.name} has no storage binding {name!r}; bindings: {names}"
            ) from None
        if plan.role == "uniform":
            raise UserError(f"{name} is a uniform; set its fields with --set {name}.FIELD=V")
        idx = case.bindings.index(plan)
        if isinstance(value, str):
            arr = make_input(value, plan.shape, plan.dtype, case.seed + idx, name)
            source = value
        else:
            arr = np.asarray(value)
            if arr.size != int(np.prod(plan.shape, dtype=np.int64)):
                raise UserError(
                    f"{name}: {arr.size} elements given, the binding holds {int(np.prod(plan.shape))} "
                    f"{plan.shape}"
                )
            arr = arr.reshape(plan.shape).astype(plan.dtype)
            source = "array"
        case.inputs[name] = np.ascontiguousarray(arr)
        role = plan.role
        if role == "output":
            role = "inout" if case.spec is None else "output"
        case.bindings[idx] = BindingPlan(
            plan.binding, plan.name, role, plan.shape, plan.axes, plan.dtype, plan.nbytes, source
        )

    def _set_uniform(self, case: Case, key: str, value: float) -> None:
        head, *path = key.split(".")
        plan = next((p for p in case.bindings if p.name == head and p.role == "uniform"), None)
        if plan is None:
            names = ", ".join(p.name for p in case.bindings if p.role == "uniform") or "none"
            raise UserError(f"{case.name} has no uniform {head!r}; uniforms: {names}")
        t = plan.binding.type
        current = case.uniforms.get(head, default_value(t))
        case.uniforms[head] = set_field(t, current, path, value, head)
        if case.spec is not None:
            case.notes.append(
                f"--set {key}={value} overrides the spec's uniform; the reference does not see it"
            )

    # -- running -------------------------------------------------------------------------------
    def _compile(self, kernel: Kernel, overrides: Mapping[str, float] | None = None) -> Any:
        text, smap = kernel.assemble(self.adapter.features)
        ep = kernel.entry_point
        return self.gpu.compile(
            text, smap, ep.name, ep.bindings, kernel.file, dict(overrides or {})
        )

    def _buffer_plans(self, case: Case) -> tuple[list[BufferPlan], tuple[int, int, int]]:
        """What to upload for each binding, and the grid as it will be dispatched."""
        k = case.kernel
        self.gpu.require_features(k.features, k.name)
        plans = []
        for p in case.bindings:
            if p.role == "uniform":
                data = pack_uniform(p.binding.type, case.uniforms.get(p.name), p.name)
                plans.append(BufferPlan(p.binding, len(data), data, False))
            else:
                arr = case.inputs.get(p.name)
                # A byte view, not a copy: big inputs would otherwise be copied on every run.
                data = (
                    memoryview(np.ascontiguousarray(arr).reshape(-1).view(np.uint8))
                    if arr is not None
                    else None
                )
                plans.append(BufferPlan(p.binding, p.nbytes, data, p.role != "input"))
        grid = self.gpu.check_limits(
            plans, k.entry_point.workgroup_size, case.grid, k.name, entry=k.entry_point
        )
        return plans, grid

    def _bind(self, case: Case) -> Bound:
        plans, grid = self._buffer_plans(case)
        return self.gpu.bind(self._compile(case.kernel, case.overrides), plans, grid)

    def time_cases(
        self,
        cases: Sequence[Case],
        budget: Budget,
        progress: Callable[[int, int], None] | None = None,
        cancelled: Callable[[], bool] | None = None,
    ) -> list[Timing]:
        """Time cases interleaved (A B A B …) within a budget, one Timing each (no read-back)."""
        bounds: list[Bound] = []
        try:
            for case in cases:
                bounds.append(self._bind(case))
            return self.gpu.time(bounds, budget, progress, cancelled)
        finally:
            for b in bounds:
                b.release()

    def clock_check(self, case: Case, pass_ms: float) -> ClockCheck | None:
        """The timestamp clock against the host clock on `case` (None: no timestamps)."""
        bound = self._bind(case)
        try:
            return self.gpu.clock_check(bound, pass_ms)
        finally:
            bound.release()

    @property
    def flush_size(self) -> tuple[int, str]:
        """Bytes of the cache-flush buffer on this adapter, and why that size."""
        return self.gpu.flush_bytes

    @property
    def has_timestamps(self) -> bool:
        return self.gpu.has_timestamps

    def roofline(self, budget: Budget | None = None) -> Roofline:
        """This adapter's measured roofline (measured once per process)."""
        return roofline(self.gpu, budget)

    def run(
        self,
        case: Case | str,
        reps: int = 0,
        warmup: int = 1,
        rtol: float | None = None,
        atol: float | None = None,
        reference: bool = True,
        progress: Callable[[str, float], None] | None = None,
        cancelled: Callable[[], bool] | None = None,
        **case_args: Any,
    ) -> Run:
        """Dispatch `case` (or build one from a kernel name and `case_args`) and compare it."""
        if isinstance(case, str):
            case = self.case(case, **case_args)
        t0 = time.perf_counter()
        say = progress or (lambda _msg, _frac: None)
        k = case.kernel
        plans, grid = self._buffer_plans(case)
        say("compiling", 0.05)
        program = self._compile(k, case.overrides)
        say("dispatching", 0.15)
        result = self.gpu.dispatch(
            program,
            plans,
            grid,
            reps=reps,
            warmup=warmup if reps else 0,
            progress=(lambda done, total: say(f"timing {done}/{total}", 0.3 + 0.6 * done / total)),
            cancelled=cancelled,
        )
        outputs = {}
        for p in case.bindings:
            if p.name in result.outputs or p.binding.name in result.outputs:
                raw = result.outputs.get(p.binding.name, b"")
                # `raw` is a private writable copy: the array can own it without copying again.
                outputs[p.name] = np.frombuffer(raw, dtype=p.dtype).reshape(p.shape)
        ref, comparisons = None, {}
        if reference and case.spec is not None and case.spec.has_reference:
            say("reference", 0.92)
            ref = case.spec.reference(case.dims, {k_: v.copy() for k_, v in case.inputs.items()})
            for name in case.spec.outputs:
                if name not in ref or name not in outputs:
                    continue
                tol = case.spec.tolerance(name, case.dims)
                comparisons[name] = compare(
                    name,
                    outputs[name],
                    ref[name],
                    axes=case.plan(name).axes,
                    rtol=rtol if rtol is not None else (tol.rtol if tol else None),
                    atol=atol if atol is not None else (tol.atol if tol else None),
                    why="given on the command line"
                    if (rtol is not None or atol is not None)
                    else (tol.why if tol else ""),
                )
        say("done", 1.0)
        return Run(
            case,
            self.adapter,
            result.grid,
            outputs,
            ref,
            comparisons,
            result.timing,
            time.perf_counter() - t0,
        )

    # -- buffers that stay on the device (pipelines) -------------------------------------------
    def allocate(self, nbytes: int) -> DeviceBuffer:
        """A zero-filled device buffer that outlives single dispatches."""
        return self.gpu.new_buffer(nbytes)

    def upload(self, buf: DeviceBuffer, array: np.ndarray | None) -> None:
        """Replace a device buffer's contents with `array`'s bytes (None: zeros)."""
        data = (
            None
            if array is None
            else memoryview(np.ascontiguousarray(array).reshape(-1).view(np.uint8))
        )
        self.gpu.write(buf, data)

    def download(self, bufs: Mapping[str, DeviceBuffer]) -> dict[str, memoryview]:
        """The bytes of each device buffer."""
        return self.gpu.read(dict(bufs))

    def dispatch_on(
        self,
        kernel: Kernel,
        uniforms: Mapping[str, Any],
        storage: Mapping[str, DeviceBuffer],
        grid: tuple[int, int, int],
    ) -> tuple[float, str]:
        """Dispatch `kernel` once over device buffers (by the kernel's binding names) with
        `uniforms` packed by its declared types; returns (ms, "timestamp" or "wall")."""
        self.gpu.require_features(kernel.features, kernel.name)
        ep = kernel.entry_point
        uniform_plans = []
        for b in ep.bindings:
            if b.space == "uniform":
                data = pack_uniform(b.type, uniforms.get(b.name), b.name)
                uniform_plans.append(BufferPlan(b, len(data), data))
        sized = uniform_plans + [
            BufferPlan(b, storage[b.name].nbytes) for b in ep.bindings if b.space != "uniform"
        ]
        folded = self.gpu.check_limits(sized, ep.workgroup_size, grid, kernel.name, entry=ep)
        program = self._compile(kernel)
        return self.gpu.dispatch_on(program, uniform_plans, dict(storage), folded)


def _adhoc_uniform(t: WType, name: str, n: int) -> Any:
    if t.kind == "scalar" and name in ADHOC_SIZE_NAMES:
        return n
    value = default_value(t)
    if t.kind == "struct":
        for m in t.members:
            if m.name in ADHOC_SIZE_NAMES and m.type.kind == "scalar":
                value[m.name] = n
    return value


def _adhoc_recipe(dtype: str, n: int) -> str:
    if np.dtype(dtype).kind == "f":
        return "randn"
    return f"randint:0:{max(n, 1)}"


def _host_view(el: WType) -> tuple[str, tuple[int, ...]]:
    """Host dtype and trailing shape for one array element."""
    if el.kind in ("scalar", "atomic"):
        return NUMPY_DTYPE.get(el.scalar or "u32", "uint32"), ()
    if el.kind == "vector":
        # vec3 elements are padded to 16 bytes in arrays: show the padding lane too.
        lanes = 4 if el.count == 3 else (el.count or 4)
        return NUMPY_DTYPE.get(el.scalar or "f32", "float32"), (lanes,)
    if el.kind == "matrix":
        col = 4 if el.rows == 3 else el.rows
        return NUMPY_DTYPE.get(el.scalar or "f32", "float32"), (el.count or 4, col)
    if el.kind == "struct":
        fields = {"names": [], "formats": [], "offsets": [], "itemsize": el.size()}
        for m in el.members:
            dt, inner = _host_view(m.type)
            fields["names"].append(m.name)
            fields["formats"].append((dt, inner) if inner else dt)
            fields["offsets"].append(m.offset)
        return np.dtype(fields), ()  # type: ignore[return-value]
    return "uint32", ()
