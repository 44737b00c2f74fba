"""What the main screen remembers per kernel (`KernelState`) and what its panes render (`View`).

A kernel's state changes only through the methods here (a run finished, a check finished, the
source failed to compile, the adapter lacks a feature…), so the rules for errors and staleness
live in one place: an error from the source is cleared when the kernel compiles again, an error
from a run by the next good run, and results that no longer match the source stay, marked stale.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.bench.figures import Figures
from workbench.bench.plot import Point
from workbench.specs.registry import spec_for
from workbench.units import fmt_ms
from workbench.verdicts import Verdict
from workbench.viewmodel.form import FormKey, FormState
from workbench.viewmodel.jobs import BENCH, FOOTPRINT, GRADCHECK, PROBES, RUN, Work
from workbench.viewmodel.status import KernelStatus

if TYPE_CHECKING:
    from workbench.checks import CheckReport
    from workbench.session import Case, Roofline, Run
    from workbench.viewmodel.baseline import BaselineDiff
    from workbench.wgsl.corpus import Kernel
    from workbench.workgroups.footprint import Footprint
    from workbench.workgroups.probes import ProbeRun

_LOCATED = re.compile(r"^(?P<file>[^\n:]+\.wgsl):(?P<line>\d+)(?::(?P<col>\d+))?: ", re.M)
MASK = "#.### ms"
DEFERRED_SHOWN = 3  # notes of what the front end could not work out, shown above the code


def error_location(message: str) -> tuple[str, int, int] | None:
    """(file, line, column) of a `file.wgsl:LINE:COL: …` diagnostic."""
    m = _LOCATED.search(message or "")
    return (m["file"], int(m["line"]), int(m["col"] or 0)) if m else None


def needs_text(name: str, status: KernelStatus, adapter: str, key: str) -> str:
    """Why a kernel cannot run on this adapter, and what to press about it."""
    return f"{name} {status.detail}, which {adapter} lacks: press {key} to choose another adapter"


def stale_reason(error: str) -> str:
    return "results from before the last edit: " + error.split("\n", 1)[0]


@dataclass
class KernelState:
    """What the screen remembers about one kernel while the user browses."""

    form: FormState
    case: Case | None = None
    case_key: FormKey | None = None
    problems: tuple[str, ...] = ()
    run: Run | None = None
    run_form: FormKey | None = None  # the form the run was started from (None: not from a form)
    report: CheckReport | None = None
    error: str | None = None
    # Where the error came from: "source" (reflection, compile, missing feature: cleared when the
    # kernel compiles again) or "run" (limits, device: cleared by the next good run).
    error_from: str = ""
    stale: str | None = None
    medians: list[float] = field(default_factory=list)
    benches: list[Point] = field(default_factory=list)  # each bench on the roofline, oldest first
    footprint: Footprint | None = None
    probes: ProbeRun | None = None
    # The last GPU work that finished: what the status line leads with; and the work cancelled
    # since (None: none).
    last: Work | None = None
    cancelled: Work | None = None

    def set_error(self, error: str | None, source: str = "run") -> None:
        self.error, self.error_from = error, (source if error else "")

    # -- planning ------------------------------------------------------------------------------
    @property
    def planned(self) -> bool:
        """The case on hand was planned from the form as it is now."""
        return self.case_key == self.form.key

    def plan_done(self, form_key: FormKey, case: Case | None, problems: tuple[str, ...]) -> bool:
        """Keep a finished plan; False when the form has moved on (a newer plan is coming)."""
        if self.form.key != form_key:
            return False
        self.case, self.case_key, self.problems = (
            (case if not problems else None),
            form_key,
            problems,
        )
        return True

    def forget_case(self) -> None:
        """The corpus or the adapter changed: plan again before the next run."""
        self.case, self.case_key = None, None

    # -- outcomes of GPU work ------------------------------------------------------------------
    def _finished(self, work: Work) -> None:
        self.last, self.cancelled = work, None
        self.set_error(None)

    def ran(self, run: Run, form: FormKey | None = None) -> None:
        """A run finished; `form`: the form it was started from (default: the form now)."""
        self.run, self.stale = run, None
        self.run_form = self.form.key if form is None else form
        self._finished(BENCH if run.timing is not None and run.timing.reps else RUN)
        if run.timing is not None and run.timing.reps:
            self.medians.append(run.timing.median_ms)
            cost = run.case.cost
            if cost is not None and cost.bytes > 0 and run.timing.median_ms > 0:
                f = Figures(cost.bytes, cost.flops, run.timing.median_ms)
                label = f"bench {len(self.benches) + 1}"
                self.benches.append(Point(label, f.intensity, f.gflop_per_s, f.gb_per_s))

    def checked(self, report: CheckReport) -> None:
        self.report = report
        self._finished(GRADCHECK)

    def footprinted(self, footprint: Footprint) -> None:
        self.footprint = footprint
        self._finished(FOOTPRINT)

    def probed(self, probes: ProbeRun) -> None:
        self.probes = probes
        self._finished(PROBES)

    def compile_failed(self, message: str) -> None:
        """The source does not compile: say where; earlier results stay, marked stale."""
        self.set_error(message, "source")
        if self.run is not None:
            self.stale = stale_reason(message)

    def failed(self, message: str) -> None:
        self.set_error(message)
        self.cancelled = None

    def cancel(self, work: Work) -> None:
        """The user cancelled `work`: the results shown stay, from before it."""
        self.cancelled = work

    @property
    def shown_stale(self) -> str | None:
        """Why the results shown are not for what is on screen: the source changed, another
        adapter, or the form no longer says what the run was made of; None when they are."""
        if self.stale or self.run is None:
            return self.stale
        if self.run_form is not None and self.run_form != self.form.key:
            made = " ".join(f"{k}={v}" for k, v in self.run.case.dims.items())
            return f"results for {made or 'the form as it was'}, not the form as it is now"
        return None

    # -- the kernel's standing on this adapter -------------------------------------------------
    def source_problem(self, message: str) -> None:
        """Reflection failed, or the adapter lacks a feature: nothing can run until it changes."""
        self.set_error(message, "source")

    def source_fine(self, status: KernelStatus) -> None:
        """The source is no longer in error: an error it caused goes away."""
        if self.error_from == "source" and status.kind != "error":
            self.set_error(None)

    def ran_elsewhere(self, adapter: str) -> None:
        """A new adapter: results shown came from another one."""
        self.forget_case()
        if self.run is not None:
            self.stale = f"ran on {adapter}"


def list_verdict(state: KernelState) -> tuple[str, str] | None:
    """A kernel's last verdict as the kernel list shows it beside its name: (`PASS`, `FAIL`,
    `RAN`, `ERROR`…, the mark kind whose colour it takes); results that are stale are dimmed
    (`pending`); None before anything ran."""
    if state.error and state.error_from == "run":
        return "ERROR", "error"
    if state.run is None:
        return None
    verdict = state.run.verdict
    if state.shown_stale:
        return verdict.word, "pending"
    kind = "spec" if verdict.ok else ("adhoc" if verdict is Verdict.RAN else "error")
    return verdict.word, kind


@dataclass(frozen=True, eq=False)
class View:
    """What the panes show for the current kernel (a new View each time anything changes)."""

    kernel: Kernel | None = None
    case: Case | None = None
    run: Run | None = None
    report: CheckReport | None = None
    error: str | None = None  # the last compile/run error, shown with its location
    stale: str | None = None  # why the results shown are not from the current source
    medians: tuple[float, ...] = ()  # of this kernel's benches, oldest first
    benches: tuple[Point, ...] = ()  # the same benches on the roofline
    roofline: Roofline | None = None  # the adapter's, once measured
    snapshot: bool = False
    cpu: bool = False  # the adapter is a CPU one: its times are marked as the CPU's
    corpus_root: Path | None = None
    features: frozenset[str] = frozenset()
    show_module: bool = False
    footprint: Footprint | None = None  # who wrote which element, when computed
    probes: ProbeRun | None = None  # the last probe run's records
    baseline: BaselineDiff | None = None  # the run against the pinned one, when one is pinned
    last: Work | None = None  # the last GPU work that finished: what the status line leads with
    cancelled: Work | None = None  # the work cancelled since (None: none)

    def ms(self, value: float) -> str:
        """A duration as shown: masked in snapshot mode so pictures do not change."""
        return MASK if self.snapshot else fmt_ms(value)

    @property
    def shown_case(self) -> Case | None:
        """The planned case, or the case of the last run."""
        return self.case or (self.run.case if self.run else None)

    @property
    def gradient_check(self) -> bool:
        """The kernel's spec links it to a forward, so its gradients can be checked."""
        spec = self.case.spec if self.case is not None else None
        if spec is None and self.kernel is not None:
            spec = spec_for(self.kernel.name)
        return spec is not None and spec.gradient is not None

    @property
    def error_location(self) -> tuple[str, int, int] | None:
        return error_location(self.error) if self.error else None

    @property
    def deferred(self) -> tuple[str, ...]:
        """Lines saying what the front end could not work out in the kernel (the compiler judges
        it: the kernel still compiles and runs), the first DEFERRED_SHOWN and how many more."""
        notes = self.kernel.deferred if self.kernel is not None else ()
        lines = tuple(f"left to the compiler: {n}" for n in notes[:DEFERRED_SHOWN])
        if len(notes) > DEFERRED_SHOWN:
            lines += (f"(and {len(notes) - DEFERRED_SHOWN} more left to the compiler)",)
        return lines


def view_of(state: KernelState | None, kernel: Kernel | None, **facts: Any) -> View:
    """The View of one kernel's state (`facts`: snapshot, corpus_root, features, show_module…)."""
    if state is None:
        return View(kernel=kernel, **facts)
    return View(
        kernel=kernel,
        case=state.case,
        run=state.run,
        report=state.report,
        error=state.error,
        stale=state.shown_stale,
        medians=tuple(state.medians),
        benches=tuple(state.benches),
        footprint=state.footprint,
        probes=state.probes,
        last=state.last,
        cancelled=state.cancelled,
        **facts,
    )
