"""Every piece of GPU work the UI starts, as a typed job, and the runner that serialises them.

A job is a frozen dataclass: what it asks of the session (its fields), what it is called while it
runs and once done (`work`: "running", "run"), and `execute`, which returns its typed result. It
reaches the GPU only inside `ctx.gpu()`, which holds the runner's one GPU lock and refuses to
start work that was cancelled while it waited; it reports progress and polls for cancellation
through `ctx`. The runner numbers jobs and owns the lock; `workbench.jobs` runs them in worker
threads and hands their results back to the screen that submitted them.

Adding GPU work to the UI is one job class here, a pane or screen that shows its result, a key.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Generic, TypeVar

from workbench.errors import Cancelled, UserError
from workbench.units import fmt_ms

if TYPE_CHECKING:
    from workbench.bench.ab import ABResult
    from workbench.bench.sweep import SweepResult
    from workbench.checks import CheckReport
    from workbench.config import Config
    from workbench.fixtures import ReplayResult
    from workbench.pipelines.stepper import Stepper
    from workbench.session import Budget, Case, Run, Session, Status
    from workbench.specs.base import KernelSpec
    from workbench.viewmodel.debug import Debugged, Pick
    from workbench.viewmodel.form import FormState
    from workbench.wgsl.corpus import Kernel
    from workbench.workgroups.footprint import Footprint
    from workbench.workgroups.probes import ProbeRun
    from workbench.workgroups.stepper import WorkgroupStep, WorkgroupStepper

R = TypeVar("R", covariant=True)  # a job of a narrower result is a job of a wider one


@dataclass(frozen=True)
class Work:
    """What a kind of work is called: while it runs (`doing`) and as a noun (`noun`)."""

    noun: str
    doing: str
    tab: str = ""  # the main screen's tab that shows its result ("" the verdict line)


RUN = Work("run", "running")
BENCH = Work("bench", "benchmarking", "timing")
GRADCHECK = Work("gradient check", "checking gradients", "gradients")
FOOTPRINT = Work("footprint", "stepping the workgroups of", "footprint")
PROBES = Work("probe run", "probing", "probes")
CHECK = Work("check", "checking")
STATUS = Work("status check", "compiling")
VARIANTS = Work("variant bench", "benchmarking variants of")
REPLAY = Work("replay", "replaying")
WORKGROUP_STEP = Work("workgroup step", "running workgroups of")
PIPELINE = Work("pipeline step", "stepping")
CORPUS = Work("corpus read", "reading the corpus")
ADAPTER = Work("adapter switch", "opening the adapter")
DEBUG = Work("debug trace", "tracing")


def ui_budget(config: Config, ms: float, flush: bool = False) -> Budget:
    """The UI's timing budget: `ms` of measurement after the configured warm-up (`warmup_ms`;
    unset, the engine's DEFAULT_WARMUP_MS, as `workbench bench` warms up)."""
    from workbench.session import DEFAULT_WARMUP_MS, Budget

    warm = config["warmup_ms"]
    return Budget(ms=ms, warmup_ms=DEFAULT_WARMUP_MS if warm is None else warm, flush=flush)


@dataclass(frozen=True)
class Ticket:
    """One submitted job: its number (in the order submitted) and its cancel switch."""

    number: int
    stop: threading.Event = field(default_factory=threading.Event, compare=False)

    @property
    def cancelled(self) -> bool:
        return self.stop.is_set()


@dataclass(frozen=True)
class Context:
    """What a running job may use: progress, its cancellation, and the GPU."""

    lock: threading.Lock
    progress: Callable[[str, float | None], None]
    cancelled: Callable[[], bool]

    @contextmanager
    def gpu(self) -> Iterator[None]:
        """Hold the GPU; a job cancelled while it waited does not start (`Cancelled`)."""
        with self.lock:
            if self.cancelled():
                raise Cancelled
            yield


class JobRunner:
    """Owns the GPU lock and numbers jobs: one per app, shared by every screen."""

    def __init__(self) -> None:
        self.gpu_lock = threading.Lock()
        self._count = 0
        self._count_lock = threading.Lock()

    def ticket(self) -> Ticket:
        with self._count_lock:
            self._count += 1
            return Ticket(self._count)

    def context(
        self,
        ticket: Ticket,
        progress: Callable[[str, float | None], None],
        stopped: Callable[[], bool],
    ) -> Context:
        return Context(self.gpu_lock, progress, lambda: ticket.cancelled or stopped())


class Job(ABC, Generic[R]):
    """A piece of GPU work and its typed result."""

    work: ClassVar[Work]

    @abstractmethod
    def execute(self, ctx: Context) -> R:
        """Do the work (in a worker thread); raise WorkbenchError for what the user can fix."""


# -- the main screen: one kernel at the dims of its form ------------------------------------------
@dataclass(frozen=True)
class Target:
    """One kernel at its form: what the main screen's jobs work on."""

    session: Session
    key: str
    kernel: Kernel
    spec: KernelSpec | None
    form: FormState
    planned: Case | None = None  # the case planned from the form as it is, if any

    def case(self) -> Case:
        """The case planned from the form, else built from it now (planning work: call it in a
        worker)."""
        if self.planned is not None:
            return self.planned
        from workbench.viewmodel.cases import build_case

        return build_case(self.session, self.kernel, self.spec, self.form)


@dataclass(frozen=True)
class KernelJob(Job[R]):
    """Work on one kernel's case: the one planned from the form, else built from it now."""

    target: Target

    @property
    def session(self) -> Session:
        return self.target.session

    def case(self) -> Case:
        return self.target.case()


@dataclass(frozen=True)
class RunJob(KernelJob["Run"]):
    """Run the case once and compare with its reference."""

    work: ClassVar[Work] = RUN

    def execute(self, ctx: Context) -> Run:
        case = self.case()
        with ctx.gpu():
            return self.session.run(case, progress=ctx.progress, cancelled=ctx.cancelled)


@dataclass(frozen=True)
class BenchJob(KernelJob["Run"]):
    """A checked run, then timed within `budget` (after measuring the roofline, once)."""

    work: ClassVar[Work] = BENCH
    budget: Budget | None = None

    def execute(self, ctx: Context) -> Run:
        case = self.case()
        assert self.budget is not None, "a bench job is given its budget"
        with ctx.gpu():
            run = self.session.run(case, progress=ctx.progress, cancelled=ctx.cancelled)
            if ctx.cancelled():
                return run
            if self.session.measured_roofline() is None:
                ctx.progress("measuring the adapter's roofline (once per adapter)", 0.2)
                if self.session.roofline(cancelled=ctx.cancelled) is None:
                    return run  # cancelled: the runner says so
            warm = fmt_ms(self.budget.warmup_ms)
            timing = self.session.time_cases(
                [run.case],
                self.budget,
                lambda done, total: ctx.progress(
                    f"timing {done}/{total}", 0.3 + 0.7 * done / total
                ),
                ctx.cancelled,
                lambda part: ctx.progress(f"warming up the adapter for {warm}", 0.2 + 0.1 * part),
            )[0]
        return replace(run, timing=timing)


@dataclass(frozen=True)
class GradcheckJob(KernelJob["CheckReport"]):
    """Check the kernel's gradients against finite differences of its forward."""

    work: ClassVar[Work] = GRADCHECK

    def execute(self, ctx: Context) -> CheckReport:
        from workbench.checks import check_case

        case = self.case()
        with ctx.gpu():
            return check_case(
                self.session, case, what=("grad",), progress=ctx.progress, cancelled=ctx.cancelled
            )


@dataclass(frozen=True)
class FootprintJob(KernelJob["Footprint"]):
    """Which workgroup writes which output element."""

    work: ClassVar[Work] = FOOTPRINT

    def execute(self, ctx: Context) -> Footprint:
        from workbench.workgroups.footprint import footprint

        case = self.case()
        with ctx.gpu():
            return footprint(self.session, case, say=ctx.progress, cancelled=ctx.cancelled)


@dataclass(frozen=True)
class ProbesJob(KernelJob["ProbeRun"]):
    """Record the kernel's probe calls: `invocation` and `capacity` as typed in the Probes tab."""

    work: ClassVar[Work] = PROBES
    invocation: str = ""
    capacity: str = ""

    def execute(self, ctx: Context) -> ProbeRun:
        from workbench.workgroups.probes import (
            DEFAULT_CAPACITY,
            ProbeFilter,
            parse_invocation,
            run_probes,
        )

        case = self.case()
        try:
            cap = int(self.capacity) if self.capacity else DEFAULT_CAPACITY
        except ValueError:
            raise UserError(f"probe capacity {self.capacity!r} is not a whole number") from None
        where = parse_invocation(self.invocation, case) if self.invocation else ProbeFilter()
        with ctx.gpu():
            return run_probes(self.session, case, capacity=cap, where=where)


@dataclass(frozen=True)
class StatusJob(Job["Status"]):
    """Whether one kernel compiles and can run on the adapter."""

    work: ClassVar[Work] = STATUS
    session: Session
    kernel: Kernel

    def execute(self, ctx: Context) -> Status:
        with ctx.gpu():
            return self.session.status(self.kernel)


# -- other screens --------------------------------------------------------------------------------
@dataclass(frozen=True)
class CheckJob(Job["CheckReport"]):
    """The default checks of one kernel, as `workbench check` runs them (the check screen runs
    one, the check-all screen one per kernel)."""

    work: ClassVar[Work] = CHECK
    session: Session
    make_case: Callable[[], Case]

    def execute(self, ctx: Context) -> CheckReport:
        from workbench.checks import check_case

        case = self.make_case()
        with ctx.gpu():
            return check_case(self.session, case, progress=ctx.progress, cancelled=ctx.cancelled)


@dataclass(frozen=True)
class SweepJob(Job["SweepResult"]):
    """Time a case at each value of one override, each checked first."""

    work: ClassVar[Work] = VARIANTS
    session: Session
    make: Callable[[Mapping[str, float]], Case]
    name: str
    values: tuple[float, ...]
    budget: Budget

    def execute(self, ctx: Context) -> SweepResult:
        from workbench.bench.sweep import sweep

        with ctx.gpu():
            if self.session.measured_roofline() is None:
                ctx.progress("measuring the adapter's roofline (once per adapter)", None)
            roof = self.session.roofline(cancelled=ctx.cancelled)
            return sweep(
                self.session,
                self.make,
                self.name,
                list(self.values),
                self.budget,
                roof,
                ctx.progress,
                ctx.cancelled,
            )


@dataclass(frozen=True)
class ABJob(Job["ABResult"]):
    """Time two cases interleaved (A B A B …), each checked first."""

    work: ClassVar[Work] = VARIANTS
    session: Session
    a: tuple[str, Case]
    b: tuple[str, Case]
    budget: Budget

    def execute(self, ctx: Context) -> ABResult:
        from workbench.bench.ab import ab

        warm = fmt_ms(self.budget.warmup_ms)
        with ctx.gpu():
            if self.session.measured_roofline() is None:
                ctx.progress("measuring the adapter's roofline (once per adapter)", None)
            return ab(
                self.session,
                self.a,
                self.b,
                self.budget,
                self.session.roofline(cancelled=ctx.cancelled),
                lambda done, total: ctx.progress(f"timing A B A B … {done}/{total}", done / total),
                ctx.cancelled,
                lambda _part: ctx.progress(f"warming up the adapter for {warm}", None),
            )


@dataclass(frozen=True)
class ReplayJob(Job["ReplayResult"]):
    """Replay one fixture (the fixtures screen runs one per fixture)."""

    work: ClassVar[Work] = REPLAY
    session: Session
    path: Path

    def execute(self, ctx: Context) -> ReplayResult:
        from workbench.fixtures import FixtureError, load_fixture, replay_fixture
        from workbench.fixtures.replay import unreadable

        try:
            fixture = load_fixture(self.path)
        except FixtureError as exc:
            return unreadable(self.path, str(exc), self.session.adapter.label)
        name = self.path.stem

        def say(message: str, fraction: float) -> None:
            ctx.progress(f"{name}: {message}", fraction)

        with ctx.gpu():
            return replay_fixture(self.session, fixture, progress=say, cancelled=ctx.cancelled)


@dataclass(frozen=True)
class WorkgroupStepJob(Job["WorkgroupStep"]):
    """Run the next `count` workgroups of the stepper's dispatch."""

    work: ClassVar[Work] = WORKGROUP_STEP
    stepper: WorkgroupStepper
    count: int

    def execute(self, ctx: Context) -> WorkgroupStep:
        with ctx.gpu():
            return self.stepper.step(self.count)


@dataclass(frozen=True)
class DebugJob(Job["Debugged"]):
    """Trace one invocation of `case`: the one `pick` names (an invocation, or the last writer
    of an element), or with `nonfinite` the first to make a NaN or infinity from finite
    operands."""

    work: ClassVar[Work] = DEBUG
    session: Session
    case: Case
    pick: Pick | None = None
    nonfinite: bool = False

    def execute(self, ctx: Context) -> Debugged:
        from workbench.viewmodel.debug import Debugged
        from workbench.workgroups.debug import first_nonfinite, parse_element, trace, writers

        case = self.case
        with ctx.gpu():
            if self.nonfinite:
                ctx.progress("searching every invocation for a NaN or infinity", None)
                found = first_nonfinite(self.session, case)
                if found is None:
                    raise UserError(
                        f"{case.name}: no invocation made a NaN or infinity from finite operands"
                    )
                nf, t = found
                return Debugged(t, f"first non-finite value: {nf.step.name}", nf)
            pick = self.pick
            if pick is not None and pick.element:
                binding, flat = parse_element(pick.element, case)
                ctx.progress(f"finding the invocations that write {binding}[{flat}]", None)
                stores = writers(self.session, case, binding, flat)
                if not stores:
                    raise UserError(f"{pick.element}: no invocation wrote it in this dispatch")
                w = stores[-1]
                gid = w.invocation
                found_by = (
                    f"{pick.element} was last written by invocation {','.join(map(str, gid))} "
                    f"at {w.file}:{w.line}"
                )
            else:
                gid = pick.invocation if pick is not None and pick.invocation else (0, 0, 0)
                found_by = ""
            ctx.progress(f"tracing invocation {','.join(map(str, gid))}", None)
            # With each workgroup array as the invocation sees it after each barrier.
            return Debugged(trace(self.session, case, gid, memory=True), found_by)


@dataclass(frozen=True)
class PipelineOpenJob(Job["Stepper"]):
    """Plan a pipeline (a shipped one by name, any other by its file's path) at `dims` (its own
    defaults for the rest) and put its buffers on the GPU."""

    work: ClassVar[Work] = PIPELINE
    session: Session
    name: str
    dims: Mapping[str, int] = field(default_factory=dict)

    def execute(self, ctx: Context) -> Stepper:
        from workbench.pipelines import load_pipeline
        from workbench.pipelines.plan import plan
        from workbench.pipelines.stepper import Stepper

        planned = plan(load_pipeline(self.name), self.session, self.dims)
        with ctx.gpu():
            return Stepper(self.session, planned, divergence=True)


@dataclass(frozen=True)
class StepCaseJob(Job["tuple[Case, Run]"]):
    """Step `index` of a stepped pipeline as a case of its own (the buffers it was given as its
    inputs), run once and compared, for the kernel view."""

    work: ClassVar[Work] = PIPELINE
    stepper: Stepper
    index: int

    def execute(self, ctx: Context) -> tuple[Case, Run]:
        case = self.stepper.case(self.index)
        with ctx.gpu():
            run = self.stepper.session.run(case, progress=ctx.progress, cancelled=ctx.cancelled)
        return case, run


@dataclass(frozen=True)
class PipelineStepJob(Job[str]):
    """Move a pipeline stepper (`op`: a step, back, to a mark…); the result is `what` it did."""

    work: ClassVar[Work] = PIPELINE
    stepper: Stepper
    what: str
    op: Callable[[Stepper], object]

    def execute(self, ctx: Context) -> str:
        with ctx.gpu():
            self.op(self.stepper)
        return self.what


@dataclass(frozen=True)
class ReloadJob(Job[None]):
    """Re-read the corpus from disk (live reload)."""

    work: ClassVar[Work] = CORPUS
    session: Session

    def execute(self, ctx: Context) -> None:
        with ctx.gpu():
            self.session.reload()


@dataclass(frozen=True)
class CorpusJob(Job["Session"]):
    """Another corpus (a folder, or one .wgsl file) on the adapter of `session`."""

    work: ClassVar[Work] = CORPUS
    session: Session
    path: Path

    def execute(self, ctx: Context) -> Session:
        from workbench.session import Session
        from workbench.wgsl.corpus import load_corpus

        corpus = load_corpus(self.path)
        with ctx.gpu():
            new = Session.on_adapter(corpus, self.session.adapter)
            new.open_device()
        return new


@dataclass(frozen=True)
class AdapterJob(Job["Session"]):
    """The same corpus on another adapter, its device opened (a failure is said here, not at
    the next run)."""

    work: ClassVar[Work] = ADAPTER
    session: Session
    index: int

    def execute(self, ctx: Context) -> Session:
        with ctx.gpu():
            new = self.session.with_adapter(self.index)
            new.open_device()
        return new
