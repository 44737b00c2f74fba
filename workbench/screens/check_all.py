"""The check-all screen: every check of every kernel with a spec, one row each as results arrive.

The checks run as jobs (`CheckJob`), one kernel at a time: each kernel's row is added when its
job ends, and the next kernel's job is submitted then. Escape cancels the kernel in flight (its
row still comes) and starts no other; then it goes back.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.screen import Screen
from textual.widgets import DataTable, ProgressBar, Static

from workbench.commands import bindings
from workbench.jobs import RunsJobs
from workbench.messages import JobFailed
from workbench.units import clip_words
from workbench.viewmodel.jobs import CheckJob, Ticket
from workbench.widgets.key_footer import KeyFooter
from workbench.widgets.whole_cells import WholeCellTable

if TYPE_CHECKING:
    from workbench.checks import CheckReport
    from workbench.session import Case, Session

CHECKS_WIDTH = 80  # the checks column; the line below the table has the highlighted row whole


def checks_summary(report: CheckReport) -> str:
    """One line for a kernel's row: why it is not a pass first (the verdict that is not one,
    then the failed checks), then the checks that passed."""
    results = sorted(report.results, key=lambda r: r.ok)  # stable: the failed ones first
    summary = "; ".join(f"{r.kind} {r.summary}" for r in results)
    if report.verdict not in ("pass", "fail"):
        summary = f"{report.verdict.text}; {summary}"
    return summary


VERDICT = {True: ("✓ pass", "green"), False: ("✗ FAIL", "bold red"), None: ("✗ error", "red")}


class CheckAllScreen(RunsJobs, Screen[None]):
    """`check_case` over every kernel with a spec, one row each, as the results arrive."""

    BINDINGS: ClassVar[list[BindingType]] = bindings("check_all")

    def __init__(self, session: Session, cases: list[tuple[str, Callable[[], Case]]]) -> None:
        super().__init__()
        self.session = session
        self.cases = cases  # (kernel name, a function building its case)
        self._ticket: Ticket | None = None  # the kernel in flight
        self._stopped = False
        self.done = False  # every row in, or the checks cancelled: escape goes back
        self._summaries: list[str] = []  # each row's checks, whole

    def compose(self) -> ComposeResult:
        yield Static(
            Text.assemble(
                ("Check all", "bold"),
                f"  {len(self.cases)} kernels with a spec, each at the dims in its form "
                "(defaults unless you changed them); escape cancels between kernels",
            ),
            id="check-head",
        )
        yield ProgressBar(total=max(len(self.cases), 1), show_eta=False, id="check-progress")
        table: WholeCellTable[object] = WholeCellTable(
            id="check-table", zebra_stripes=True, cursor_type="row"
        )
        table.add_column("kernel")
        table.add_column("verdict")
        table.add_column("checks", width=CHECKS_WIDTH)
        yield table
        yield Static(id="check-detail")
        yield KeyFooter()

    def on_mount(self) -> None:
        self._check(0)

    def _check(self, index: int) -> None:
        """Check kernel `index`, then the next; the last one (or a cancel) ends it."""
        if index >= len(self.cases) or self._stopped:
            self._finish("cancelled" if self._stopped else "done")
            return
        name, make_case = self.cases[index]

        def checked(report: CheckReport) -> None:
            self._row(name, report.ok, checks_summary(report))
            self._check(index + 1)

        def failed(failure: JobFailed) -> None:
            self._row(name, None, failure.error.split("\n", 1)[0])
            self._check(index + 1)

        self._ticket = self.submit(
            CheckJob(self.session, make_case), checked, failed, cancelled=self._cancelled
        )

    def _cancelled(self) -> None:
        self._finish("cancelled")

    def _row(self, name: str, ok: bool | None, summary: str) -> None:
        label, style = VERDICT[ok]
        self._summaries.append(summary)
        self.query_one(DataTable).add_row(
            name, Text(label, style=style), clip_words(summary, CHECKS_WIDTH)
        )
        self.query_one(ProgressBar).advance(1)
        self._show_detail()

    @on(DataTable.RowHighlighted)
    def _show_detail(self) -> None:
        row = self.query_one(DataTable).cursor_row
        whole = self._summaries[row] if 0 <= row < len(self._summaries) else ""
        self.query_one("#check-detail", Static).update(Text(whole))

    def _finish(self, note: str) -> None:
        self._ticket = None
        self.done = True
        self.query_one("#check-head", Static).update(
            Text.assemble(("Check all", "bold"), f"  {note}; escape goes back")
        )

    def action_leave(self) -> None:
        if not self.done and self._ticket is not None:
            self._stopped = True
            self.cancel(self._ticket)
        else:
            self.dismiss(None)
