"""The engine the command line and the terminal UI share, and the only door to the GPU.

`Session` holds a corpus and a device on one adapter. Planning a `Case` is pure
(`workbench.planning`: it needs the adapter's limits, not its device); `Session.run` checks
features and limits, compiles, dispatches, reads back, compares with the float64 reference by
`workbench.closeness` and times. Everything above the engine that needs the GPU — the adapters
there are, opening a device, whether a kernel compiles here (`status`, a typed `Status`), what a
case would exceed — asks the session, so the UI never imports wgpu or `workbench.gpu`.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path
from typing import Any, overload

import numpy as np

from workbench.closeness import (
    Comparison,
    Override,
    ToleranceError,
    compare,
    tolerance_for,
    validate_tolerance,
)
from workbench.errors import Cancelled, CompileError, LimitError, UserError, WorkbenchError
from workbench.gpu.adapters import AdapterInfo, choose_adapter, list_adapters
from workbench.gpu.canaries import Canaries, canaries
from workbench.gpu.device import (
    DEFAULT_TIMEOUT_S,
    Bound,
    BufferPlan,
    DeviceBuffer,
    GpuContext,
    abandoned_waits,
)
from workbench.gpu.roofline import Roofline, cached, roofline
from workbench.gpu.timing import DEFAULT_WARMUP_MS, Budget, ClockCheck, Timing
from workbench.gpu.uniforms import pack_uniform
from workbench.jsonable import jsonable
from workbench.planning import (
    ADHOC_N,
    BindingPlan,
    Case,
    check_case_limits,
    limit_refusal,
    match_spec,
    plan_case,
    shipped_corpus,
)
from workbench.recipes import DEFAULT_SEED
from workbench.specs.base import KernelSpec
from workbench.specs.described import DescriptionError, described_for, load_descriptions
from workbench.verdicts import Verdict, decide_comparisons
from workbench.wgsl.corpus import Corpus, Kernel, load_corpus
from workbench.wgsl.hazards import (
    CHAIN_SUSPECT,
    Site,
    else_if_chains,
    loops_without_small_constant_bound,
)
from workbench.wgsl.reflect import EntryPoint, subgroup_width_constants
from workbench.written import sentinel_fill, unchanged, unwritten, watchable

__all__ = [
    "ADHOC_N",
    "DEFAULT_WARMUP_MS",
    "AdapterInfo",
    "BindingPlan",
    "Budget",
    "Case",
    "ClockCheck",
    "Roofline",
    "Run",
    "Session",
    "Status",
    "StatusKind",
    "Timing",
    "Verdict",
    "array_stats",
    "shipped_corpus",
]

# Shared devices, one per adapter index (`Session.with_adapter(..., shared=True)`).
_CONTEXTS: dict[int, GpuContext] = {}


class StatusKind(StrEnum):
    """Whether a kernel can run on the session's adapter."""

    OK = "ok"
    NEEDS = "needs"  # a device feature the adapter lacks
    COMPILE_ERROR = "compile error"  # the shader compiler rejected it
    ERROR = "error"  # reflection, a section problem, or the device itself


@dataclass(frozen=True)
class Status:
    """A kernel's status on one adapter: the kind, the missing features, the error."""

    kind: StatusKind
    missing: tuple[str, ...] = ()
    error: WorkbenchError | None = None
    detail: str = ""  # the problem, for ERROR without an exception (reflection, sections)

    @property
    def ok(self) -> bool:
        return self.kind is StatusKind.OK

    @property
    def message(self) -> str:
        """The reason, without the kind: `shader-f16`, a compile diagnostic, a problem."""
        if self.kind is StatusKind.NEEDS:
            return ", ".join(self.missing)
        if self.error is not None:
            return str(self.error)
        return self.detail

    @property
    def text(self) -> str:
        """`ok`, `needs shader-f16`, `compile error: …` or `error: …`."""
        if self.ok:
            return "ok"
        sep = " " if self.kind is StatusKind.NEEDS else ": "
        return f"{self.kind}{sep}{self.message}"


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
    # Outputs of which the kernel wrote no element (an in-out buffer: changed none), by the
    # sentinel evidence of `workbench.written`; empty when every output was written or not asked.
    unwritten: tuple[str, ...] = ()

    @property
    def unwritten_note(self) -> str | None:
        """What the sentinel evidence found never written, said the same by the command line and
        the terminal UI; None when every output was written."""
        if not self.unwritten:
            return None
        return (
            f"the kernel wrote nothing into {', '.join(self.unwritten)} (check the dims, grid and "
            "uniforms)"
        )

    @property
    def verdict(self) -> Verdict:
        """What this run verified, by the one rule (`workbench.verdicts`)."""
        return decide_comparisons(
            self.compare, unwritten=self.unwritten, reference=self.reference is not None
        )

    @property
    def ok(self) -> bool | None:
        """True for a pass; None when there was no reference (it ran, nothing was claimed);
        False for every other verdict (a failure, nothing written, nothing compared, empty)."""
        verdict = self.verdict
        if verdict is Verdict.RAN:
            return None
        return verdict.ok

    @property
    def inputs(self) -> dict[str, np.ndarray]:
        return self.case.inputs

    def observed(self, name: str) -> np.ndarray:
        """Output `name` as it is compared with the reference (`KernelSpec.observed`: the values
        a packed output's words hold); the output itself otherwise."""
        spec = self.case.spec
        return (
            self.outputs[name]
            if spec is None
            else spec.observed(self.case.dims, name, self.outputs[name])
        )

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
        ep = case.entry_point
        return {
            "kernel": case.name,
            "file": case.kernel.file,
            "corpus": corpus,
            "spec": case.spec is not None,
            "adapter": self.adapter.to_json(),
            "dims": case.dims,
            "seed": case.seed,
            "grid": list(self.grid),
            "workgroup_size": list(ep.workgroup_size) if ep else None,
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
            "unwritten": list(self.unwritten),
            "verdict": str(self.verdict),
            "ok": self.ok,
            "timing": self.timing.to_json() if self.timing else None,
            "throughput": self.throughput(),
            "notes": case.notes,
        }


def array_stats(a: np.ndarray) -> dict[str, float | int]:
    """min, max, mean over finite values, and counts of NaN and ±Inf; an empty array (or a
    structured one) has only its count: there is no minimum of nothing."""
    if a.dtype.names or a.size == 0:
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


# The dispatch watchdog's default (`--timeout`), for the command line and the UI.
DISPATCH_TIMEOUT_S = DEFAULT_TIMEOUT_S


def gpu_waits_abandoned() -> bool:
    """Whether Ctrl-C or the watchdog gave up a wait inside wgpu: the process should then end
    with os._exit, since finalizing wgpu objects could wait on that work forever."""
    return abandoned_waits()


def _limit_warning(kernel: Kernel, sites: list[Site], limit: str, wrong: str) -> str:
    """One line: the adapter's `limit`, where the kernel could meet it (the first site), and
    what would then be `wrong`."""
    file, line = kernel.locate(sites[0].line)
    more = f" (and {len(sites) - 1} more)" if len(sites) > 1 else ""
    return f"{limit}; {file}:{line} has {sites[0].what}{more}: {wrong} is wrong here"


class Session:
    """A corpus and an adapter, and the one way to turn a Case into a Run."""

    def __init__(self, corpus: Corpus, gpu: GpuContext) -> None:
        self.corpus = corpus
        self.gpu = gpu
        self._described: dict[str, KernelSpec] | None = None

    @classmethod
    def open(cls, adapter: str | int | None = None, corpus: str | Path | None = None) -> Session:
        """The corpus at `corpus` (default: the shipped kernels) on the adapter `adapter` names."""
        return cls(load_corpus(corpus), GpuContext(choose_adapter(adapter)))

    @classmethod
    def bare(cls, adapter: AdapterInfo) -> Session:
        """A session with no kernels on `adapter`: to probe it, measure it, describe it."""
        return cls(Corpus(root=Path(".")), GpuContext(adapter))

    @classmethod
    def on_adapter(cls, corpus: Corpus, adapter: AdapterInfo) -> Session:
        """A loaded corpus on `adapter` (its device is made at the first run or `open_device`)."""
        return cls(corpus, GpuContext(adapter))

    # -- adapters and the device -------------------------------------------------------------
    @staticmethod
    def adapters() -> tuple[AdapterInfo, ...]:
        """Every adapter wgpu can see, in enumeration order."""
        return list_adapters()

    @staticmethod
    def choose_adapter(selector: str | int | None = None) -> AdapterInfo:
        """The adapter `selector` names (index, backend, name substring), else the best one."""
        return choose_adapter(selector)

    def probe(self) -> tuple[str | None, int | None]:
        """Whether the adapter can run compute shaders (None, or why not) and its measured
        subgroup size (None without subgroups, or when it cannot run them)."""
        problem = self.probe_compute()
        if problem is not None:
            return problem, None
        try:
            return None, self.subgroup_size
        except Exception:  # a broken adapter is still described, without the measurement
            return None, None

    @property
    def adapter(self) -> AdapterInfo:
        return self.gpu.adapter

    @property
    def on_cpu(self) -> bool:
        """Whether the adapter runs on the CPU (lavapipe, llvmpipe, SwiftShader): its times are
        the CPU's, never to be read as a GPU's."""
        return self.adapter.is_cpu

    def with_adapter(
        self, adapter: str | int | AdapterInfo | None, shared: bool = False
    ) -> Session:
        """Same corpus on another adapter. `shared` reuses one device per adapter for the whole
        process (creating one costs far more than a small check); otherwise a fresh one."""
        info = adapter if isinstance(adapter, AdapterInfo) else choose_adapter(adapter)
        return Session(self.corpus, _shared_context(info) if shared else GpuContext(info))

    def open_device(self) -> None:
        """Create the device now rather than at the first run; GpuError when it cannot be."""
        _ = self.gpu.device

    def close(self) -> None:
        """Give this session's device back now (a device shared per adapter, `with_adapter(...,
        shared=True)`, stays for the others). The session runs nothing after this."""
        # By identity: GpuContext is a dataclass, so `in` would compare two contexts field by field.
        if all(self.gpu is not shared for shared in _CONTEXTS.values()):
            self.gpu.close()

    def probe_compute(self) -> str | None:
        """Why this adapter cannot run compute shaders, or None when it can (probed once)."""
        return self.gpu.probe_compute()

    def missing_features(self, kernel: Kernel) -> tuple[str, ...]:
        """The device features `kernel` needs that this adapter lacks."""
        return tuple(self.gpu.missing_features(kernel.features))

    @property
    def subgroup_size(self) -> int | None:
        """The adapter's measured subgroup size; None without subgroups."""
        return self.gpu.subgroup_size

    # -- the corpus ----------------------------------------------------------------------------
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
            described = load_descriptions(self.corpus)
            for spec in described.values():
                _check_tolerances(spec)
            self._described = described
        return self._described

    def kernel(self, name: str) -> Kernel:
        return self.corpus.find(name)

    def spec(self, kernel: Kernel, adhoc: bool = False) -> KernelSpec | None:
        """The matching spec, None for ad-hoc; a signature mismatch is an error, never guessed."""
        return match_spec(kernel, adhoc, self.described)

    def status(self, kernel: Kernel) -> Status:
        """Whether `kernel` compiles and can run on this adapter."""
        known = self._status_before_compiling(kernel)
        return known if isinstance(known, Status) else self._compile_status(kernel, known)

    def statuses(self, kernels: Sequence[Kernel]) -> list[Status]:
        """`status` of each kernel. The compiles not remembered (`gpu.compiled`) run on as many
        threads as this process has CPUs: a compile's time is the driver's compiler, which wgpu
        calls without Python's lock, so on a machine of several cores they overlap."""
        found: dict[int, Status] = {}
        todo: list[tuple[int, Kernel, dict[str, float]]] = []
        for i, kernel in enumerate(kernels):
            known = self._status_before_compiling(kernel)
            if isinstance(known, Status):
                found[i] = known
            elif self._remembered_compiling(kernel, known):
                found[i] = Status(StatusKind.OK)
            else:
                todo.append((i, kernel, known))
        workers = min(len(todo), _cpus())
        if workers <= 1:
            found |= {i: self._compile_status(kernel, over) for i, kernel, over in todo}
        else:
            from concurrent.futures import ThreadPoolExecutor  # only when something compiles

            with ThreadPoolExecutor(workers, thread_name_prefix="compile") as pool:
                running = {i: pool.submit(self._compile_status, k, over) for i, k, over in todo}
                try:
                    found |= {i: future.result() for i, future in running.items()}
                except BaseException:  # Ctrl-C: the compiles not started are not waited for
                    pool.shutdown(wait=False, cancel_futures=True)
                    raise
        return [found[i] for i in range(len(kernels))]

    def _status_before_compiling(self, kernel: Kernel) -> Status | dict[str, float]:
        """The status when it is known without compiling, else the override values the compile
        that decides it takes."""
        if kernel.problem:
            return Status(StatusKind.ERROR, detail=kernel.problem)
        if kernel.entry_point is None:
            return Status(StatusKind.ERROR, detail="no entry point")
        missing = self.missing_features(kernel)
        if missing:
            return Status(StatusKind.NEEDS, missing)
        try:
            described = described_for(self.described, kernel)
        except WorkbenchError as exc:
            return Status(StatusKind.ERROR, error=exc)
        overrides = dict(described.overrides) if described is not None else {}
        needs = set(kernel.entry_point.needs) - set(overrides)
        if needs:
            # Sized by an override without a default: it compiles once a run gives the value.
            return Status(StatusKind.OK)
        return overrides

    def _compile_status(self, kernel: Kernel, overrides: Mapping[str, float]) -> Status:
        try:
            self._compile(kernel, overrides, check_only=True)
        except CompileError as exc:
            return Status(StatusKind.COMPILE_ERROR, error=exc)
        except WorkbenchError as exc:
            return Status(StatusKind.ERROR, error=exc)
        return Status(StatusKind.OK)

    def warnings(self, kernel: Kernel) -> list[str]:
        """What may make a kernel that compiles and runs give wrong results on this adapter: a
        hard-coded subgroup width, and constructs that meet one of the adapter's measured
        result-changing limits (`canaries`)."""
        module = kernel.module
        if module is None:
            return []
        out = self._limit_warnings(kernel)
        width = self.gpu.subgroup_size if module.uses_subgroups else None
        if width is None:
            return out
        return out + [
            f"{name} = {value} but this adapter's subgroups are {width} wide: code that assumes "
            f"{value} lanes computes wrong results here (read @builtin(subgroup_size) instead)"
            for name, value in subgroup_width_constants(module).items()
            if value != width
        ]

    def canaries(self) -> Canaries:
        """This adapter's measured result-changing limits (cached per adapter and driver)."""
        return canaries(self.gpu)

    def _limit_warnings(self, kernel: Kernel) -> list[str]:
        """A warning per limit of this adapter that a construct of `kernel` could meet; the
        canaries are measured only for a kernel that has such a construct."""
        # Found by reflection in what a run can reach (no second parse).
        ep = kernel.entry_point
        if ep is not None:
            loops, chains = list(ep.loops), list(ep.chains)
        else:
            loops = loops_without_small_constant_bound(kernel.text, kernel.file)
            chains = else_if_chains(kernel.text, CHAIN_SUSPECT, kernel.file)
        if not loops and not chains:
            return []
        found = self.canaries()
        out = []
        if found.loop_iterations is not None and loops:
            limit = f"this adapter stops loops after {found.loop_iterations:,} iterations"
            out.append(_limit_warning(kernel, loops, limit, "a result that needs more"))
        long = [c for c in chains if c.size >= (found.else_if_branches or c.size + 1)]
        if long:
            limit = f"this adapter computes else-if branch {found.else_if_branches} on wrongly"
            out.append(_limit_warning(kernel, long, limit, "its later branches"))
        return out

    # -- planning (no GPU) -----------------------------------------------------------------------
    def case(
        self,
        kernel: str | Kernel,
        dims: Mapping[str, int] | None = None,
        inputs: Mapping[str, np.ndarray | str] | None = None,
        sizes: Mapping[str, int] | None = None,
        sets: Mapping[str, float] | None = None,
        seed: int = DEFAULT_SEED,
        adhoc: bool = False,
        grid: tuple[int, int, int] | None = None,
        overrides: Mapping[str, float] | None = None,
    ) -> Case:
        """`workbench.planning.plan_case` on this session's corpus and adapter, with the
        adapter's warnings for the kernel among the case's notes."""
        k = kernel if isinstance(kernel, Kernel) else self.kernel(kernel)
        case = plan_case(
            k,
            self.adapter,
            dims,
            inputs,
            sizes,
            sets,
            seed,
            adhoc,
            self.described,
            grid=grid,
            overrides=overrides,
        )
        case.notes += [f"warning: {w}" for w in self.warnings(k)]
        return case

    def limit_refusal(self, case: Case) -> LimitError | None:
        """The adapter limit `case` would exceed, said before anything is allocated."""
        return limit_refusal(case, self.adapter)

    # -- running -------------------------------------------------------------------------------
    def _compile(
        self,
        kernel: Kernel,
        overrides: Mapping[str, float] | None = None,
        check_only: bool = False,
    ) -> Any:
        """The kernel's pipeline; with `check_only`, only whether it compiles (a success
        remembered from an earlier process is not compiled again: `gpu.compiled`)."""
        text, smap = kernel.assemble(self.adapter.features)
        ep = _entry(kernel)
        overrides = dict(overrides or {})
        # The entry point as reflection read it, so the module is not read a second time.
        args = (
            text,
            smap,
            ep.name,
            ep.bindings,
            kernel.file,
            overrides,
            kernel.resolved(overrides),
        )
        if check_only:
            return self.gpu.check_compiles(*args)
        return self.gpu.compile(*args)

    def _remembered_compiling(self, kernel: Kernel, overrides: Mapping[str, float]) -> bool:
        """Whether `_compile` of the kernel was remembered succeeding (`gpu.compiled`)."""
        text, _ = kernel.assemble(self.adapter.features)
        ep = _entry(kernel)
        return self.gpu.remembered_compiling(text, ep.name, ep.bindings, dict(overrides))

    def _buffer_plans(self, case: Case) -> tuple[list[BufferPlan], tuple[int, int, int]]:
        """What to upload for each binding, and the grid as it will be dispatched."""
        k = case.kernel
        self.gpu.require_features(k.features, k.name)
        plans = []
        for p in case.bindings:
            if p.role == "uniform":
                packed = pack_uniform(p.binding.type, case.uniforms.get(p.name), p.name)
                plans.append(BufferPlan(p.binding, len(packed), packed, False))
            else:
                arr = case.inputs.get(p.name)
                data = _bytes_of(arr) if arr is not None else None
                plans.append(BufferPlan(p.binding, p.nbytes, data, p.role != "input"))
        return plans, check_case_limits(case, self.adapter)

    def bind(self, case: Case) -> Bound:
        """The case's kernel compiled and its buffers made and filled, ready to dispatch."""
        plans, grid = self._buffer_plans(case)
        return self.gpu.bind(self._compile(case.kernel, case.overrides), plans, grid)

    def time_cases(
        self,
        cases: Sequence[Case],
        budget: Budget,
        progress: Callable[[int, int], None] | None = None,
        cancelled: Callable[[], bool] | None = None,
        warming: Callable[[float], None] | None = None,
    ) -> list[Timing]:
        """Time cases interleaved (A B A B …) within a budget, one Timing each (no read-back).

        `progress` hears the timed rounds done and their total; `warming`, before that, the fraction
        of the warm-up done. Cancelled during the warm-up, the Timings have no samples.
        """
        bounds: list[Bound] = []
        try:
            for case in cases:
                bounds.append(self.bind(case))
            return self.gpu.time(bounds, budget, progress, cancelled, warming)
        finally:
            for b in bounds:
                b.release()

    def time_back_to_back(
        self, case: Case, batch: int, samples: int = 1, warmup: int = 1
    ) -> Timing:
        """Milliseconds per dispatch of `case` as the mean over `batch` dispatches back to back
        in one compute pass (`samples` batches, each from the case's inputs; no read-back):
        the peer of timing a stream of calls between two events."""
        plans, grid = self._buffer_plans(case)
        program = self._compile(case.kernel, case.overrides)
        return self.gpu.time_back_to_back(program, plans, grid, batch, samples, warmup)

    def clock_check(self, case: Case, pass_ms: float) -> ClockCheck | None:
        """The timestamp clock against the host clock on `case` (None: no timestamps)."""
        bound = self.bind(case)
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

    @overload
    def roofline(self, budget: Budget | None = None) -> Roofline: ...

    @overload
    def roofline(
        self, budget: Budget | None = None, *, cancelled: Callable[[], bool]
    ) -> Roofline | None: ...

    def roofline(
        self, budget: Budget | None = None, *, cancelled: Callable[[], bool] | None = None
    ) -> Roofline | None:
        """This adapter's measured roofline (measured once per process); None when `cancelled`
        stopped the measurement, which is then not kept."""
        if cancelled is None:
            return roofline(self.gpu, budget)
        return roofline(self.gpu, budget, cancelled=cancelled)

    def measured_roofline(self) -> Roofline | None:
        """The roofline if it was already measured in this process (no GPU work)."""
        return cached(self.gpu)

    def run(
        self,
        case: Case | str,
        reps: int = 0,
        warmup_ms: float = DEFAULT_WARMUP_MS,
        rtol: float | None = None,
        atol: float | None = None,
        reference: bool = True,
        tolerance: Override | None = None,
        progress: Callable[[str, float], None] | None = None,
        cancelled: Callable[[], bool] | None = None,
        evidence: bool = True,
        **case_args: Any,
    ) -> Run:
        """Dispatch `case` (or build one from a kernel name and `case_args`) and compare it; with
        `reps`, time that many more dispatches after a warm-up of `warmup_ms` by the host clock.

        `rtol`/`atol` override every output's tolerance (validated: ToleranceError); `tolerance`
        gives them as an `Override` instead (forced, or from a fixture). With `evidence`, an output
        left as uploaded is dispatched once more pre-filled with the sentinel, to tell "never
        written" from "wrote what was there" (`Run.unwritten`); written outputs cost nothing.

        `cancelled` is asked at every point the run can stop: before the dispatch, after it (before
        the evidence dispatch) and before the reference, where a True answer raises `Cancelled`;
        with `reps`, it ends the timing instead (between timed submissions), and the run comes
        back with the samples it has. A single dispatch is one submission: it cannot be cut short
        without changing the module the user wrote.
        """
        override = tolerance if tolerance is not None else Override.checked(rtol, atol)
        if isinstance(case, str):
            case = self.case(case, **case_args)
        t0 = time.perf_counter()
        say = progress or (lambda _msg, _frac: None)
        k = case.kernel
        plans, grid = self._buffer_plans(case)
        stop = None if reps else cancelled  # a timed run's cancel ends its timing only
        say("compiling", 0.05)
        program = self._compile(k, case.overrides)
        _stop_if(stop)
        say("dispatching", 0.15)
        result = self.gpu.dispatch(
            program,
            plans,
            grid,
            reps=reps,
            warmup_ms=warmup_ms if reps else 0.0,
            progress=(lambda done, total: say(f"timing {done}/{total}", 0.3 + 0.6 * done / total)),
            cancelled=cancelled,
        )
        outputs = {}
        for p in case.bindings:
            if p.name in result.outputs or p.binding.name in result.outputs:
                raw = result.outputs.get(p.binding.name, b"")
                # `raw` is a private writable copy: the array can own it without copying again.
                outputs[p.name] = np.frombuffer(raw, dtype=p.dtype).reshape(p.shape)
        _stop_if(stop)
        never = self._unwritten(case, outputs, program, plans, grid, say) if evidence else ()
        ref, comparisons = None, {}
        if reference and case.spec is not None and case.spec.has_reference:
            _stop_if(stop)
            say("reference", 0.92)
            ref = case.spec.reference(case.dims, {k_: v.copy() for k_, v in case.inputs.items()})
            for name in case.spec.outputs:
                if name not in ref or name not in outputs:
                    continue
                # A packed output is compared as the values its words hold (Run.observed).
                got = case.spec.observed(case.dims, name, outputs[name])
                axes = case.plan(name).axes if got is outputs[name] else ()
                tol = tolerance_for(case.spec, name, case.dims, got.dtype, override)
                comparisons[name] = compare(name, got, ref[name], axes=axes, tol=tol)
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
            never,
        )

    def _unwritten(
        self,
        case: Case,
        outputs: Mapping[str, np.ndarray],
        program: Any,
        plans: Sequence[BufferPlan],
        grid: tuple[int, int, int],
        say: Callable[[str, float], None],
    ) -> tuple[str, ...]:
        """The outputs the kernel wrote no element of (an in-out buffer: changed none). Only
        outputs left exactly as uploaded need the second, sentinel-filled dispatch."""
        still = [
            p
            for p in case.bindings
            if p.role in ("output", "inout")
            and p.name in outputs
            and watchable(p.dtype, p.shape)
            and bool(unchanged(outputs[p.name], case.inputs.get(p.name)).all())
        ]
        asked = [p for p in still if p.role == "output" and case.inputs.get(p.name) is None]
        never = [p.name for p in still if p.role == "inout"]
        if asked:
            say("evidence: dispatching again into sentinel-filled outputs", 0.8)
            fill = {p.binding.name: sentinel_fill(p.shape, p.dtype) for p in asked}
            marked = self.gpu.dispatch(
                program,
                [
                    replace(b, data=_bytes_of(fill[b.binding.name]))
                    if b.binding.name in fill
                    else b
                    for b in plans
                ],
                grid,
            )
            for p in asked:
                got = np.frombuffer(marked.outputs.get(p.binding.name, b""), dtype=p.dtype)
                if (
                    got.size == outputs[p.name].size
                    and unwritten(outputs[p.name].reshape(-1), got).all()
                ):
                    never.append(p.name)
        return tuple(n for n in (p.name for p in case.bindings) if n in never)

    # -- buffers that stay on the device (pipelines) -------------------------------------------
    def allocate(self, nbytes: int) -> DeviceBuffer:
        """A zero-filled device buffer that outlives single dispatches."""
        return self.gpu.new_buffer(nbytes)

    def upload(self, buf: DeviceBuffer, array: np.ndarray | None) -> None:
        """Replace a device buffer's contents with `array`'s bytes (None: zeros)."""
        self.gpu.write(buf, _bytes_of(array) if array is not None else None)

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
        ep = _entry(kernel)
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


def _stop_if(cancelled: Callable[[], bool] | None) -> None:
    """Raise `Cancelled` when the caller has cancelled: a point where the work can stop."""
    if cancelled is not None and cancelled():
        raise Cancelled


def _check_tolerances(spec: KernelSpec) -> None:
    """A described kernel's tolerances through the one validator (DescriptionError, one line)."""
    for tol in spec.tolerances.values():
        try:
            validate_tolerance(tol.rtol, tol.atol)
        except ToleranceError as exc:
            # `rtol must be …` / `rtol = 2 is over 1…` as `kernels.NAME.reference.rtol: …`.
            key, _, problem = str(exc).partition(" ")
            where = f"{spec.described}: kernels.{spec.name}.reference.{key}"
            raise DescriptionError(f"{where}: {problem.removeprefix('= ')}") from None


def _cpus() -> int:
    """The CPUs this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def _entry(kernel: Kernel) -> EntryPoint:
    """The kernel's entry point; UserError for a kernel reflection found none in."""
    if kernel.entry_point is None:
        raise UserError(f"{kernel.file}:{kernel.name}: no @compute entry point could be reflected")
    return kernel.entry_point


def _bytes_of(array: np.ndarray) -> memoryview:
    """An array's bytes as a view, not a copy: big inputs would otherwise be copied every run."""
    return np.ascontiguousarray(array).reshape(-1).view(np.uint8).data


def _shared_context(adapter: AdapterInfo) -> GpuContext:
    """The process's shared device context on `adapter`, made on first use."""
    ctx = _CONTEXTS.get(adapter.index)
    if ctx is None:
        ctx = _CONTEXTS[adapter.index] = GpuContext(adapter)
    return ctx
