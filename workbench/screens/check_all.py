"""The check-all screen: every check of every kernel with a spec, one row each as results arrive.

The checks run as jobs (`CheckJob`), one kernel at a time: each kernel's row is added when its
job ends, and the next kernel's job is submitted then. Escape cancels the kernel in flight (its
row still comes) and starts no other; then it goes back.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.screen import Screen
from textual.widgets import DataTable, ProgressBar, Static

from workbench.commands import bindings
from workbench.jobs import RunsJobs
from workbench.messages import JobFailed
from workbench.viewmodel.jobs import CheckJob, Ticket
from workbench.widgets.key_footer import KeyFooter

if TYPE_CHECKING:
    from workbench.checks import CheckReport
    from workbench.session import Case, Session

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
        table: DataTable[object] = DataTable(
            id="check-table", zebra_stripes=True, cursor_type="row"
        )
        table.add_columns("kernel", "verdict", "checks")
        yield table
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
            ok: bool | None = report.ok
            summary = "; ".join(f"{r.kind} {r.summary}" for r in report.results)
            if report.verdict not in ("pass", "fail"):
                summary = f"{report.verdict.text}; {summary}"
            self._row(name, ok, summary)
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
        self.query_one(DataTable).add_row(name, Text(label, style=style), summary)
        self.query_one(ProgressBar).advance(1)

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
