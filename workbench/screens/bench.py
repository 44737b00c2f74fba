"""The bench screen: a sweep of an override constant, or an A/B of two implementations, of one kernel.

Both run as jobs (`SweepJob`, `ABJob`), started by their button or by enter in their field:
every variant is checked against the reference first, then timed within the budget
(`workbench.bench`), while their progress moves the bar; escape cancels after the pass in flight
and, once nothing runs, goes back. The result is what the command line prints: the sweep as a
table sorted by time with the best marked (a failing variant listed as failing, never timed), or
A and B with their ratio and whether it is beyond noise; and the roofline with each timed variant
as a point (the adapter's ceilings from the start when an earlier bench measured them).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Button, Checkbox, DataTable, Input, ProgressBar, Static

from workbench.bench.ab import ABResult
from workbench.bench.plot import Point
from workbench.bench.report import CPU_TIMES, ab_lines, method_on, roofline_line, sweep_rows
from workbench.bench.sweep import SweepResult, check_override, parse_sweep, replan
from workbench.commands import bindings
from workbench.errors import UserError, WorkbenchError
from workbench.jobs import RunsJobs
from workbench.messages import JobFailed, JobProgress
from workbench.session import Budget
from workbench.viewmodel.jobs import ABJob, Job, SweepJob, Ticket, ui_budget
from workbench.wgsl.corpus import SHIPPED, load_corpus
from workbench.widgets.key_footer import KeyFooter
from workbench.widgets.roofline_chart import RooflineChart

if TYPE_CHECKING:
    from workbench.bench.measure import BenchResult
    from workbench.config import Config
    from workbench.session import Case, Session

DEFAULT_MS = 100.0


def default_sweep(case: Case) -> str:
    """`NAME=V` for the kernel's first override with a default: a starting point to edit."""
    mod = case.kernel.module
    for o in mod.overrides.values() if mod else ():
        if o.default is not None:
            v = float(o.default)
            return f"{o.name}={int(v) if v.is_integer() else v}"
    return ""


def points_of(results: list[BenchResult]) -> list[Point]:
    """The timed results as roofline points."""
    return [
        Point(r.label, r.figures.intensity, r.figures.gflop_per_s, r.figures.gb_per_s)
        for r in results
        if r.figures is not None and r.usable
    ]


class BenchScreen(RunsJobs, Screen[None]):
    """Sweep or A/B of the current kernel, with progress, cancel, a table and the roofline."""

    BINDINGS: ClassVar[list[BindingType]] = bindings("bench")
    DEFAULT_CSS = """
    BenchScreen #bench-inputs { height: auto; }
    BenchScreen #bench-inputs Input { width: 1fr; }
    BenchScreen #bench-ms { width: 12; }
    BenchScreen #bench-table { height: auto; max-height: 12; }
    BenchScreen #bench-text { height: auto; }
    """

    def __init__(self, session: Session, case: Case, config: Config) -> None:
        super().__init__()
        self.session = session
        self.case = case
        self.config = config
        self._ticket: Ticket | None = None  # the bench in flight
        self.result: SweepResult | ABResult | None = None

    def compose(self) -> ComposeResult:
        yield Static(
            Text.assemble(
                (f"Bench {self.case.name}", "bold"),
                f"  ({self.case.kernel.file}, at its form's dims): every variant is checked "
                "against the reference before it is timed; escape cancels, then goes back",
                *([("\n" + CPU_TIMES, "bold yellow")] if self.session.on_cpu else []),
            ),
            id="bench-head",
        )
        with Horizontal(id="bench-inputs"):
            yield Input(default_sweep(self.case), placeholder="NAME=V1,V2,…", id="bench-sweep")
            yield Button("Sweep", id="bench-run-sweep", variant="primary")
            yield Input("shipped", placeholder="shipped, or a corpus folder", id="bench-vs")
            yield Button("A/B", id="bench-run-ab")
            yield Input(f"{DEFAULT_MS:g}", placeholder="ms", id="bench-ms")
            yield Checkbox("flush", id="bench-flush")
        yield ProgressBar(total=1.0, show_eta=False, id="bench-progress")
        yield Static(id="bench-status")
        table: DataTable[object] = DataTable(
            id="bench-table", zebra_stripes=True, cursor_type="row"
        )
        table.add_columns("", "variant", "check", "median", "p10–p90", "reps", "rate", "vs best")
        yield table
        yield Static(id="bench-text")
        yield RooflineChart(id="bench-roofline")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.query_one("#bench-table").display = False
        roof = self.session.measured_roofline()
        chart = self.query_one(RooflineChart)
        if roof is None:
            chart.masked("no roofline yet: the first sweep or A/B measures the adapter's")
        else:  # measured by an earlier bench in this process: its ceilings, no points yet
            chart.show(roof.bandwidth_gb_s, roof.peak_gflop_s, [])

    # -- starting ------------------------------------------------------------------------------
    def _budget(self) -> Budget:
        text = self.query_one("#bench-ms", Input).value.strip()
        try:
            ms = float(text)
        except ValueError:
            raise UserError(f"budget: {text!r} is not a number of milliseconds") from None
        if not 0 < ms < 1e7:
            raise UserError("budget: the milliseconds to measure each variant must be > 0")
        return ui_budget(self.config, ms, self.query_one("#bench-flush", Checkbox).value)

    @on(Button.Pressed, "#bench-run-sweep")
    @on(Input.Submitted, "#bench-sweep")
    def start_sweep(self) -> None:
        try:
            name, values = parse_sweep(self.query_one("#bench-sweep", Input).value)
            check_override(self.case, name)
            budget = self._budget()
        except UserError as exc:
            self._say(str(exc), "red")
            return
        base = self.case

        def make(overrides: Mapping[str, float]) -> Case:
            return replan(self.session, base, overrides)

        self._start(SweepJob(self.session, make, name, tuple(values), budget))

    @on(Button.Pressed, "#bench-run-ab")
    @on(Input.Submitted, "#bench-vs")
    def start_ab(self) -> None:
        vs = self.query_one("#bench-vs", Input).value.strip() or "shipped"
        a = self.case
        try:
            budget = self._budget()
            other = self.session.with_corpus(load_corpus(SHIPPED if vs == "shipped" else vs))
            b = other.case(a.name, dims=a.dims, seed=a.seed, adhoc=a.spec is None)
        except WorkbenchError as exc:
            self._say(str(exc).split("\n", 1)[0], "red")
            return
        self._start(ABJob(self.session, ("A (this kernel)", a), (f"B ({vs})", b), budget))

    def _start(self, job: Job[SweepResult | ABResult]) -> None:
        if self._ticket is not None:
            self.notify("a bench is in flight: escape cancels it", severity="warning")
            return
        self.query_one(ProgressBar).update(total=1.0, progress=0.0)
        self._say("waiting for the GPU…", "")
        self._ticket = self.submit(job, self._finished, self._failed, self._progress, self._stopped)

    def _stopped(self) -> None:
        self._ticket = None
        self._say("cancelled", "yellow")

    # -- results -------------------------------------------------------------------------------
    def _say(self, line: str, style: str) -> None:
        self.query_one("#bench-status", Static).update(Text(line, style=style))

    def _progress(self, message: JobProgress) -> None:
        self._say(message.line, "")
        if message.fraction is not None:
            self.query_one(ProgressBar).update(progress=message.fraction)

    def _failed(self, failure: JobFailed) -> None:
        self._ticket = None
        self._say(failure.error.split("\n", 1)[0], "red")

    def _finished(self, res: SweepResult | ABResult) -> None:
        cancelled = self._ticket is not None and self._ticket.cancelled
        self._ticket = None
        self.result = res
        self.query_one(ProgressBar).update(progress=1.0)
        roof = self.session.measured_roofline()
        status = "cancelled: what was measured before is shown" if cancelled else "done"
        self._say(status + (f"; {roofline_line(roof)}" if roof else ""), "")
        table = self.query_one("#bench-table", DataTable)
        table.clear()
        if isinstance(res, SweepResult):
            for row in sweep_rows(res):
                verdict = Text(row.verdict, style="green" if row.verdict == "PASS" else "bold red")
                table.add_row(
                    "★" if row.best else "",
                    row.label,
                    verdict if row.verdict != "RAN" else Text("ran", style="yellow"),
                    row.median,
                    row.spread,
                    row.reps,
                    row.rate,
                    row.vs_best or f"not timed: {row.problem}",
                )
            best = res.best
            lines = (
                [f"best: {best.label} ★  ({method_on(best.timing.detail, self.session.on_cpu)})"]
                if best and best.timing
                else []
            )
            lines += [f"note: {n}" for n in (best.notes if best else [])]
            self.query_one("#bench-text", Static).update("\n".join(lines))
            results = res.results
        else:
            self.query_one("#bench-text", Static).update("\n".join(ab_lines(res)))
            results = [res.a, res.b]
        table.display = isinstance(res, SweepResult)
        chart = self.query_one(RooflineChart)
        if roof is None:
            chart.masked("no roofline: nothing was measured")
        else:
            chart.show(roof.bandwidth_gb_s, roof.peak_gflop_s, points_of(results))

    def action_leave(self) -> None:
        if self._ticket is not None:
            self.cancel(self._ticket)
            self._say("cancelling after the pass in flight…", "yellow")
        else:
            self.dismiss(None)
