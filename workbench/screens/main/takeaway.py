"""Results to take away: the case's arrays (.npz / .npy), the Diff tab as CSV or Markdown, a
value or a selection to the clipboard, a fixture of the run; and the current kernel's settings
described into its corpus's workbench.toml, or its source opened in the editor.

Files are written in a worker thread (no GPU), asking first when one exists.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from collections.abc import Callable
from pathlib import Path

from textual import on, work
from textual.app import SuspendNotSupported

from workbench.dialogs.ask_line import jump_to_element
from workbench.dialogs.confirm import ConfirmScreen
from workbench.dialogs.save_fixture import SaveFixtureScreen
from workbench.dialogs.save_path import SavePathScreen
from workbench.errors import UserError, WorkbenchError
from workbench.fixtures import default_fixture_name
from workbench.messages import FixtureExists, FixtureNotSaved, FixtureSaved
from workbench.screens.main.base import MainBase
from workbench.session import Run
from workbench.viewmodel.advice import ui_message
from workbench.viewmodel.describe import write_description
from workbench.viewmodel.kernel_state import error_location
from workbench.viewmodel.keys import key
from workbench.viewmodel.takeaway import CASE, case_arrays, default_name, save_arrays, save_diff
from workbench.widgets.panes.outputs import OutputsPane


class Takeaway(MainBase):
    """Saving, exporting, copying and describing what the current kernel shows."""

    def _run_to_save(self) -> Run | None:
        run = self.current_run()
        if run is None:
            self.notify(f"no results yet: run the kernel first ({key('run')})", severity="warning")
        return run

    def action_save_arrays(self) -> None:
        """Save the run's arrays: the whole case as .npz, or one buffer as .npy."""
        run = self._run_to_save()
        if run is None:
            return
        choices = [("every input, output and reference of the case (.npz)", CASE)]
        choices += [(f"{k} (.npy)", k) for k in case_arrays(run)]

        def default(what: str) -> str:
            return default_name(run, what, ".npz" if what == CASE else ".npy")

        def chosen(answer: tuple[Path, str] | None) -> None:
            if answer is not None:
                path, what = answer
                self._save(path, lambda overwrite: save_arrays(path, run, what, overwrite))

        self.app.push_screen(
            SavePathScreen(
                f"Save the arrays of {run.case.name}",
                default,
                lambda what: (".npz",) if what == CASE else (".npy",),
                choices,
                blink=not self.wb.snapshot,
            ),
            chosen,
        )

    def action_export_diff(self) -> None:
        """Write the Diff tab's tables to a CSV or Markdown file."""
        run = self._run_to_save()
        if run is None:
            return
        if not run.compare:
            self.notify("no comparison to export: this kernel has no reference", severity="warning")
            return

        def chosen(answer: tuple[Path, str] | None) -> None:
            if answer is not None:
                path = answer[0]
                self._save(path, lambda overwrite: save_diff(path, run, overwrite))

        self.app.push_screen(
            SavePathScreen(
                f"Export the diff of {run.case.name} (.csv, or .md for Markdown)",
                lambda _: default_name(run, "", "-diff.csv"),
                lambda _: (".csv", ".md"),
                blink=not self.wb.snapshot,
            ),
            chosen,
        )

    def _save(self, path: Path, write: Callable[[bool], str]) -> None:
        """Write (in a thread), asking first when the file exists; `write(overwrite)`."""

        def answered(yes: bool | None) -> None:
            if yes:
                self._write(path, lambda: write(True))
            else:
                self.notify(f"kept the existing {path.name}", markup=False)

        if path.exists():
            self.app.push_screen(ConfirmScreen(f"{path.name} exists. Overwrite it?"), answered)
        else:
            self._write(path, lambda: write(False))

    @work(thread=True, group="takeaway", exit_on_error=False)
    def _write(self, path: Path, write: Callable[[], str]) -> None:
        try:
            what = write()
        except UserError as exc:
            self.notify(f"not saved: {exc}", severity="error", markup=False)
            return
        self.notify(f"saved {what} to {path}", title="saved", markup=False)

    def action_copy(self) -> None:
        """Copy the Outputs table's value under the cursor, or its selection."""
        try:
            text, what = self.query_one(OutputsPane).copy_text()
        except UserError as exc:
            self.notify(str(exc), severity="warning", markup=False)
            return
        self.app.copy_to_clipboard(text)
        self.notify(f"copied {what}", title="clipboard", markup=False)

    def action_heatmap(self) -> None:
        """Open (or close) the zoomable heatmap of the Outputs table's 2-D array."""
        self.tabs.active = "tab-outputs"
        try:
            self.query_one(OutputsPane).toggle_heatmap()
        except UserError as exc:
            self.notify(str(exc), severity="warning")

    def action_jump(self) -> None:
        """Show an element of the Outputs table's array by its index."""
        pane = self.query_one(OutputsPane)
        shown = pane.shown_array()
        if shown is None:
            self.notify(f"no array on show: run the kernel first ({key('run')})")
            return

        def chosen(index: tuple[int, ...] | None) -> None:
            if index is not None:
                self.tabs.active = "tab-outputs"
                pane.jump(index)

        self.app.push_screen(jump_to_element(*shown, blink=not self.wb.snapshot), chosen)

    def action_describe(self) -> None:
        """Write the current kernel's settings into the corpus's workbench.toml; the corpus
        reloads, and the kernel is described from then on."""
        st = self.current_state()
        session = self.wb.session
        if st is None or st.case is None or session is None:
            self.notify("nothing to describe yet: the case is not planned", severity="warning")
            return
        try:
            label = session.corpus.label(st.case.kernel)
            path = write_description(st.case, Path(session.corpus.root), label)
        except WorkbenchError as exc:
            self.notify(ui_message(exc), severity="error")
            return
        self.notify(f"{st.case.name} described in {path}")
        self.wb.poll_files()

    def action_edit(self) -> None:
        kernel = self.kernel()
        session = self.wb.session
        if self.refused("edit") or kernel is None or session is None:
            return
        path = Path(session.corpus.root) / kernel.file
        st = self.current_state()
        line = kernel.line
        loc = error_location(st.error) if st and st.error else None
        if loc and loc[0] == kernel.file:
            line = loc[1]
        configured = self.wb.config["editor"]
        editor = configured or os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
        argv = (
            shlex.split(configured.format(file=path, line=line))
            if configured
            else [*shlex.split(editor), f"+{line}", str(path)]
        )
        try:
            with self.app.suspend():
                subprocess.run(argv, check=False)
        except SuspendNotSupported:
            self.notify(f"cannot hand the terminal to an editor here; edit {path}:{line}")
            return
        except OSError as exc:
            self.notify(f"could not start {editor!r}: {exc}", severity="error")
            return
        self.wb.poll_files()

    # -- fixtures ------------------------------------------------------------------------------
    def action_save_fixture(self) -> None:
        """Record the run on screen as a fixture, in the folder the configuration names."""
        st = self.current_state()
        run = st.run if st is not None else None
        if self.refused("save_fixture") or run is None:
            return
        default = default_fixture_name(run.case)
        places = self.wb.fixture_places()
        folder = places.save_to

        def chosen(answer: tuple[str, str] | None) -> None:
            if answer is not None:
                self._record(run, folder / answer[0], answer[1], False)

        self.app.push_screen(
            SaveFixtureScreen(default, folder, places.why, blink=not self.wb.snapshot), chosen
        )

    @work(thread=True, group="fixture", exit_on_error=False)
    def _record(self, run: Run, path: Path, note: str, force: bool) -> None:
        from workbench.fixtures import record_fixture

        try:
            written = record_fixture(run, path, note=note, force=force)
        except FileExistsError:
            self.post_message(FixtureExists(run, path, note))
            return
        except (WorkbenchError, OSError) as exc:
            self.post_message(FixtureNotSaved(str(exc)))
            return
        self.post_message(FixtureSaved(written))

    @on(FixtureSaved)
    def _saved(self, message: FixtureSaved) -> None:
        self.notify(f"saved {message.path}", title="fixture")

    @on(FixtureNotSaved)
    def _not_saved(self, message: FixtureNotSaved) -> None:
        self.notify(f"not saved: {message.error}", severity="error")

    @on(FixtureExists)
    def _ask_overwrite(self, message: FixtureExists) -> None:
        def answered(yes: bool | None) -> None:
            if yes:
                self._record(message.run, message.path, message.note, True)
            else:
                self.notify("kept the existing fixture")

        self.app.push_screen(ConfirmScreen(f"{message.path.name} exists. Overwrite it?"), answered)
