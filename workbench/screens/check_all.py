"""The check-all screen: every check of every kernel with a spec, one row each as results arrive.

The checks run in a thread worker holding the app's GPU lock one kernel at a time; each kernel's
row arrives as a `KernelChecked` message. Escape cancels between kernels, then goes back.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, ProgressBar, Static
from textual.worker import Worker, WorkerState, get_current_worker

from workbench.errors import WorkbenchError
from workbench.messages import KernelChecked
from workbench.viewmodel.advice import ui_message
from workbench.widgets.key_footer import KeyFooter

if TYPE_CHECKING:
    from workbench.session import Case, Session

VERDICT = {True: ("✓ pass", "green"), False: ("✗ FAIL", "bold red"), None: ("✗ error", "red")}


class CheckAllScreen(Screen[None]):
    """`check_case` over every kernel with a spec, one row each, as the results arrive."""

    BINDINGS: ClassVar[list[Binding]] = [
        Binding("escape", "leave", "Cancel / back", id="leave_check_all"),
    ]

    def __init__(
        self,
        session: Session,
        gpu_lock: threading.Lock,
        cases: list[tuple[str, Callable[[], Case]]],
    ) -> None:
        super().__init__()
        self.session = session
        self.gpu_lock = gpu_lock
        self.cases = cases  # (kernel name, a function building its case)
        self._worker: Worker[None] | None = None
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
        table = DataTable(id="check-table", zebra_stripes=True, cursor_type="row")
        table.add_columns("kernel", "verdict", "checks")
        yield table
        yield KeyFooter()

    def on_mount(self) -> None:
        self._worker = self._check_all()

    @work(thread=True, exclusive=True, group="check-all")
    def _check_all(self) -> None:
        from workbench.checks import check_case

        worker = get_current_worker()
        for name, make_case in self.cases:
            if worker.is_cancelled:
                break
            try:
                case = make_case()
                with self.gpu_lock:
                    report = check_case(self.session, case, cancelled=lambda: worker.is_cancelled)
                ok: bool | None = report.ok
                summary = "; ".join(f"{r.kind} {r.summary}" for r in report.results)
                if report.verdict not in ("pass", "fail"):
                    summary = f"{report.verdict.text}; {summary}"
            except WorkbenchError as exc:
                ok, summary = None, ui_message(exc).split("\n", 1)[0]
            except Exception as exc:  # a broken spec or check is a row, not a crash
                ok, summary = None, f"internal error: {type(exc).__name__}: {exc}"
            self.post_message(KernelChecked(name, ok, summary))

    @on(KernelChecked)
    def _row(self, message: KernelChecked) -> None:
        label, style = VERDICT[message.ok]
        self.query_one(DataTable).add_row(message.name, Text(label, style=style), message.summary)
        self.query_one(ProgressBar).advance(1)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker is not self._worker or not event.worker.is_finished:
            return
        # A finished worker's rows were queued before this message; a cancelled one may still
        # add the row of the kernel it was checking.
        self.done = True
        note = "cancelled" if event.state == WorkerState.CANCELLED else "done"
        self.query_one("#check-head", Static).update(
            Text.assemble(("Check all", "bold"), f"  {note}; escape goes back")
        )

    def action_leave(self) -> None:
        if not self.done and self._worker is not None:
            self._worker.cancel()
        else:
            self.dismiss(None)
