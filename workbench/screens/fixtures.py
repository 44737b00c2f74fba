"""The fixtures screen: every fixture with its status and where it comes from (shipped with the
package, read-only, or the user's own), replay all (one `ReplayJob` per fixture, with progress), and open
one in the kernel view. Before a replay the result column says `not replayed`; the note is in the
detail below the table.

Opening posts `FixturesScreen.OpenCase(case, run, result)`, which bubbles to the app: the app shows
that case and run in its kernel view (run is None when the kernel did not compile). The screen
itself touches no wgpu; it calls `workbench.fixtures`, which goes through the Session.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, ProgressBar, Static

from workbench.commands import bindings
from workbench.errors import WorkbenchError
from workbench.fixtures import (
    SHIPPED_FIXTURES,
    Fixture,
    FixtureError,
    ReplayResult,
    find_fixtures,
    load_fixture,
)
from workbench.fixtures.replay import unreadable
from workbench.fixtures.report import result_lines, summary_line
from workbench.jobs import RunsJobs
from workbench.messages import JobFailed, JobProgress
from workbench.session import Case, Run, Session
from workbench.units import clip_words, fmt_count
from workbench.viewmodel.fixture_places import origin
from workbench.viewmodel.jobs import ReplayJob, Ticket
from workbench.viewmodel.keys import key as key_of
from workbench.viewmodel.paths import shown_path
from workbench.widgets.key_footer import KeyFooter
from workbench.widgets.whole_cells import WholeCellTable

STATUS_CELL = {
    "pending": ("…", "bright_black"),
    "running": ("▸ running", "cyan"),
    "pass": ("✓ pass", "green"),
    "fail": ("✗ FAIL", "bold red"),
    "no_work": ("∅ no_work", "bold red"),
    "empty": ("∅ empty", "bold red"),
    "nothing_compared": ("○ nothing", "bold red"),
    "error": ("! error", "magenta"),
    "skip": ("– skip", "yellow"),
}
# How the title and the detail line name where a fixture comes from.
_FROM = {"shipped": "shipped (read-only)", "yours": "yours"}


ITALIC = "italic bright_black"  # a result's notes

# The result column gets what the status and a long fixture name leave of the screen's width
# (at least RESULT_MIN): its text is cut after a whole word, the detail line has it whole.
NAMES_WIDTH = 52
RESULT_MIN = 24


def _status(kind: str) -> Text:
    label, style = STATUS_CELL[kind]
    return Text(label, style=style)


class FixturesScreen(RunsJobs, Screen[None]):
    """Fixtures with their status; `r` replays them all, `enter` opens one in the kernel view."""

    BINDINGS: ClassVar[list[BindingType]] = bindings("fixtures")

    @dataclass
    class OpenCase(Message):
        """Show this fixture's case (and its run, None when it did not compile) in the kernel view."""

        case: Case
        run: Run | None
        result: ReplayResult

    def __init__(
        self,
        session: Session | Callable[[], Session],
        paths: Sequence[str | Path] | None = None,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
        adapter: str | None = None,
    ) -> None:
        """`session` is a Session, or a callable giving the current one (the app switches
        adapters); `paths` are fixture files or folders (default: the shipped fixtures);
        `adapter` is the adapter as the title names it (default: the session's label)."""
        super().__init__(name=name, id=id, classes=classes)
        self._session = session
        self._result_width = RESULT_MIN  # set from the screen's width once mounted
        self._adapter = adapter
        self.paths = [Path(p) for p in paths] if paths else [SHIPPED_FIXTURES]
        self.fixtures: dict[str, Fixture | None] = {}  # manifest path -> fixture (None: unreadable)
        self.results: dict[str, ReplayResult] = {}
        self._ticket: Ticket | None = None  # the fixture replaying now
        self._stopped = False  # cancelled: replay no further fixture

    @property
    def session(self) -> Session:
        return self._session() if callable(self._session) else self._session

    def compose(self) -> ComposeResult:
        where = " · ".join(f"{_FROM[origin(p)]} {shown_path(p)}" for p in self.paths)
        adapter = self._adapter or self.session.adapter.label
        yield Static(f"Fixtures · {where} · {adapter}", id="fixtures-title")
        yield WholeCellTable(id="fixtures-table", cursor_type="row", zebra_stripes=True)
        yield ProgressBar(total=1.0, show_eta=False, id="fixtures-progress")
        yield Static("", id="fixtures-progress-label")
        yield Static("", id="fixtures-detail")
        yield KeyFooter()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_column("status", key="status", width=10)
        table.add_column("fixture", key="fixture")
        self._result_width = max(RESULT_MIN, self.app.size.width - NAMES_WIDTH)
        table.add_column("result", key="result", width=self._result_width)
        table.add_column("kernel", key="kernel")
        table.add_column("from", key="from")
        table.add_column("dims", key="dims")
        self.reload()
        table.focus()

    # -- listing ---------------------------------------------------------------------------------
    def reload(self) -> None:
        """Find and load every fixture again (host only); results of earlier replays are kept."""
        table = self.query_one(DataTable)
        table.clear()
        self.fixtures.clear()
        existing = [p for p in self.paths if p.exists()]
        if not existing:
            where = ", ".join(str(p) for p in self.paths)
            self._label(f"no fixtures yet in {where}: f on a run saves one")
            return
        try:
            paths = find_fixtures(existing)
        except WorkbenchError as exc:
            self._label(str(exc))
            return
        for path in paths:
            key = str(path)
            try:
                fx: Fixture | None = load_fixture(path)
            except FixtureError as exc:
                fx = None
                self.results[key] = unreadable(path, str(exc), self.session.adapter.label)
            self.fixtures[key] = fx
            result = self.results.get(key)
            table.add_row(
                _status(result.status if result else "pending"),
                path.stem,
                self._result_text(result) if result else Text("not replayed", "dim"),
                fx.kernel if fx else "?",
                origin(path),
                fx.dims_text() if fx else "",
                key=key,
            )
        self._label(f"{fmt_count(len(paths), 'fixture')} · r replays them all")
        self._show_detail()

    def _result_text(self, r: ReplayResult) -> Text:
        """The result in its column, cut after a whole word (the detail below has it whole);
        the notes (`source changed`: why it fails) keep their place at the end."""
        worst = r.worst() if r.status != "skip" else (r.error or "skipped")
        info = "  · " + "; ".join(r.info) if r.info else ""
        room = max(self._result_width - len(info), self._result_width // 2)
        text = Text(clip_words(worst, room))
        if info:
            text.append(clip_words(info, self._result_width - len(text)), style=ITALIC)
        return text

    # -- replaying -------------------------------------------------------------------------------
    def action_replay_all(self) -> None:
        self._start([Path(k) for k, fx in self.fixtures.items() if fx is not None])

    def action_replay_selected(self) -> None:
        key = self._selected()
        if key is not None and self.fixtures.get(key) is not None:
            self._start([Path(key)])

    def _start(self, paths: list[Path]) -> None:
        if self._replaying():
            self.notify(
                f"A replay is already running ({key_of('fixtures_back')} cancels it)",
                severity="warning",
            )
            return
        if not paths:
            self.notify("No readable fixtures to replay", severity="warning")
            return
        table = self.query_one(DataTable)
        for p in paths:
            table.update_cell(str(p), "status", _status("running"))
        self.query_one(ProgressBar).update(total=1.0, progress=0.0)
        self._stopped = False
        self._replay(paths, 0, [])
        self.refresh_bindings()

    def _replay(self, paths: list[Path], index: int, results: list[ReplayResult]) -> None:
        """Replay fixture `index` (a job), then the next; the last one (or a cancel) ends it."""
        if index >= len(paths) or self._stopped:
            self._replayed(results, cancelled=self._stopped)
            return
        base, span = index / len(paths), 1 / len(paths)

        def progress(message: JobProgress) -> None:
            self._progress(message.line, base + span * (message.fraction or 0.0))

        def done(result: ReplayResult) -> None:
            results.append(result)
            self._show_result(result)
            self._replay(paths, index + 1, results)

        def failed(failure: JobFailed) -> None:
            self._replayed(results, error=failure.error)

        def cancelled() -> None:
            self._replayed(results, cancelled=True)

        job = ReplayJob(self.session, paths[index])
        self._ticket = self.submit(job, done, failed, progress, cancelled)

    def _progress(self, line: str, fraction: float) -> None:
        self.query_one(ProgressBar).update(progress=max(0.0, min(1.0, fraction)))
        self._label(line)

    def _show_result(self, r: ReplayResult) -> None:
        key = str(r.path)
        self.results[key] = r
        table = self.query_one(DataTable)
        if key in table.rows:
            table.update_cell(key, "status", _status(r.status))
            table.update_cell(key, "result", self._result_text(r))
        self._show_detail()

    def _replayed(
        self, results: list[ReplayResult], cancelled: bool = False, error: str = ""
    ) -> None:
        self._ticket = None
        if error:
            self._label(f"replay stopped: {error}")
            self.notify(f"Replay stopped: {error}", severity="error")
        elif cancelled:
            self._label("replay cancelled")
        else:
            self._label(summary_line(results))
            self.notify(
                summary_line(results),
                severity="information" if all(r.ok for r in results) else "error",
            )
        self._reset_running_rows()
        self.refresh_bindings()

    def _reset_running_rows(self) -> None:
        table = self.query_one(DataTable)
        for key in self.fixtures:
            r = self.results.get(key)
            table.update_cell(key, "status", _status(r.status if r else "pending"))

    def _replaying(self) -> bool:
        return self._ticket is not None

    def _cancel(self) -> None:
        if self._ticket is not None:
            self._stopped = True
            self.cancel(self._ticket)
            self._label("cancelling after the fixture in progress…")

    # -- opening ---------------------------------------------------------------------------------
    def action_open(self) -> None:
        key = self._selected()
        r = self.results.get(key) if key else None
        if r is None:
            self.notify(
                f"Replay it first: {key_of('fixtures_replay_selected')} replays this one, "
                f"{key_of('fixtures_replay_all')} all of them"
            )
            return
        if r.case is None:
            self.notify(r.error or "This fixture has no case to open", severity="error")
            return
        self.post_message(self.OpenCase(r.case, r.run, r))

    def action_back(self) -> None:
        """Escape: cancel the replay in flight, else back to the kernels."""
        if self._replaying():
            self._cancel()
            return
        self.dismiss(None)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("replay_all", "replay_selected"):
            return None if self._replaying() else True
        return True

    # -- details ---------------------------------------------------------------------------------
    def _selected(self) -> str | None:
        table = self.query_one(DataTable)
        if not table.row_count:
            return None
        try:
            row_key, _ = table.coordinate_to_cell_key(table.cursor_coordinate)
        except Exception:  # the cursor can sit past the rows while the table is rebuilt
            return None
        return row_key.value

    @on(DataTable.RowSelected)
    def _selected_row(self, _event: DataTable.RowSelected) -> None:
        # The table takes enter itself (select); selecting a row is opening it.
        self.action_open()

    @on(DataTable.RowHighlighted)
    def _highlighted(self, _event: DataTable.RowHighlighted) -> None:
        self._show_detail()

    def _show_detail(self) -> None:
        key = self._selected()
        detail = self.query_one("#fixtures-detail", Static)
        if key is None:
            detail.update("")
            return
        fx = self.fixtures.get(key)
        r = self.results.get(key)
        lines: list[str] = []
        if fx is not None:
            lines.append(
                f"{_FROM[origin(fx.path)]} {shown_path(fx.path)}  ·  {fx.kernel} ({fx.source})  ·  "
                f"{fx.dims_text()}"
            )
            if fx.note:
                lines.append(fx.note)
            lines.append(
                f"recorded on {fx.recorded_on or 'unknown'} · expected from {fx.expected_from} · "
                f"checks {', '.join(fx.checks)}"
            )
        if r is not None:
            lines.extend(line.strip() for line in result_lines(r)[1:])
        detail.update(Text("\n".join(lines)))

    def _label(self, text: str) -> None:
        self.query_one("#fixtures-progress-label", Static).update(text)
