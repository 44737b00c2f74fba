"""The check screen: the full `check` of one kernel (compare, evidence, gradients, special values,
determinism) at the dims of its form, as `workbench check KERNEL` runs it (`check_case`, a
`CheckJob`) and shown as it prints it (`workbench.checks.report.report_lines`).

The progress bar and line follow the checks; escape cancels (the checks stop at their next step,
the results so far are shown, marked CANCELLED), then goes back.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import ProgressBar, Static

from workbench.checks.report import report_lines, verdict_text
from workbench.commands import bindings
from workbench.jobs import RunsJobs
from workbench.messages import JobFailed, JobProgress
from workbench.viewmodel.jobs import CheckJob, Ticket
from workbench.widgets.key_footer import KeyFooter

if TYPE_CHECKING:
    from workbench.checks import CheckReport
    from workbench.session import Case, Session


def report_text(report: CheckReport) -> Text:
    """The CLI's lines, the failures and the verdict coloured."""
    text = Text()
    for i, line in enumerate(report_lines(report)):
        style = "bold" if i == 0 else ""
        if line.startswith("  verdict: "):
            style = "bold " + ("green" if report.ok else "yellow" if report.cancelled else "red")
        elif " ✗ " in line:
            style = "red"
        text.append(line + "\n", style=style)
    return text


class CheckScreen(RunsJobs, Screen[None]):
    """`check_case` of one kernel, with progress and cancel; the report as the CLI prints it."""

    BINDINGS: ClassVar[list[BindingType]] = bindings("check")

    def __init__(self, session: Session, name: str, make_case: Callable[[], Case]) -> None:
        super().__init__()
        self.session = session
        self.kernel = name
        self.make_case = make_case
        self._ticket: Ticket | None = None  # the check in flight
        self.report: CheckReport | None = None

    def compose(self) -> ComposeResult:
        yield Static(
            Text.assemble(
                (f"Check {self.kernel}", "bold"),
                "  at the dims in its form: compare, evidence, gradients, special values, "
                "determinism (as `workbench check`); escape cancels, then goes back",
            ),
            id="check-head",
        )
        yield ProgressBar(total=1.0, show_eta=False, id="check-progress")
        yield Static("waiting for the GPU…", id="check-status")
        with VerticalScroll(id="check-body"):
            yield Static(id="check-report")
        yield KeyFooter()

    def on_mount(self) -> None:
        job = CheckJob(self.session, self.make_case)
        self._ticket = self.submit(job, self._done, self._failed, self._progress, self._stopped)

    def _say(self, line: str, style: str = "") -> None:
        self.query_one("#check-status", Static).update(Text(line, style=style))

    def _progress(self, message: JobProgress) -> None:
        self._say(message.line)
        if message.fraction is not None:
            self.query_one(ProgressBar).update(progress=message.fraction)

    def _done(self, report: CheckReport) -> None:
        self._ticket = None
        self.report = report
        self.query_one(ProgressBar).update(progress=1.0)
        self._say(f"{verdict_text(report)}; escape goes back", "bold")
        self.query_one("#check-report", Static).update(report_text(report))

    def _stopped(self) -> None:
        """Cancelled while it waited for the adapter: nothing was checked."""
        self._ticket = None
        self._say("cancelled before it started: nothing was checked; escape goes back", "yellow")

    def _failed(self, failure: JobFailed) -> None:
        self._ticket = None
        self._say(failure.error.split("\n", 1)[0], "red")

    def action_leave(self) -> None:
        if self._ticket is not None:
            self.cancel(self._ticket)
            self._say("cancelling at the next step of the checks…", "yellow")
        else:
            self.dismiss(None)
