"""The terminal UI: `WorkbenchApp`, started by `workbench [PATH]`.

The app owns the session (corpus + adapter), the lock that serialises GPU work between worker
threads, live reload (file mtimes polled once a second), the adapter switcher, fixtures, help and
the command palette. The main screen (screens/main.py) owns the per-kernel loop. The UI reaches
the GPU only through `workbench.session`; it never imports wgpu.

First paint does not wait for the GPU: the corpus is read and the adapter opened in a worker
thread, which reports back with messages (`workbench.messages`); the kernel view fills in when
they arrive.

Snapshot mode (`snapshot=True` or WORKBENCH_SNAPSHOT=1) fixes the adapter name and the corpus path
shown, masks every timing, and stops cursors blinking, so screenshots do not change between runs.

The user's configuration (`workbench.config`: theme, adapter, bench reps, editor, keymap) applies at
start; a bad value is a notice and its default is used. With `remember=True` (the `workbench`
command) the theme, corpus and kernel in use are written back for the next start.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import ClassVar

import numpy as np
from textual import on, work
from textual.app import App
from textual.binding import BindingType
from textual.screen import Screen

from workbench.commands import WorkbenchCommands, bindings
from workbench.config import Config, load_config
from workbench.dialogs.adapters import AdapterScreen
from workbench.dialogs.open_corpus import OpenCorpusScreen
from workbench.errors import WorkbenchError
from workbench.fixtures import ReplayResult
from workbench.gc_policy import tune_for_ui
from workbench.jobs import RunsJobs
from workbench.keys_in_order import KeysInOrder
from workbench.messages import (
    CorpusLoaded,
    JobFailed,
    OpenBench,
    OpenCheck,
    OpenCheckAll,
    OpenDebug,
    OpenFailed,
    Opening,
    OpenWorkgroupSteps,
    SessionOpened,
)
from workbench.screens.bench import BenchScreen
from workbench.screens.check import CheckScreen
from workbench.screens.check_all import CheckAllScreen
from workbench.screens.debug import DebugScreen
from workbench.screens.fixtures import FixturesScreen
from workbench.screens.help import HelpScreen
from workbench.screens.main import MainScreen
from workbench.screens.steps import StepsScreen
from workbench.screens.workgroup_steps import WorkgroupStepScreen
from workbench.session import Run, Session
from workbench.viewmodel.advice import ui_message
from workbench.viewmodel.fixture_places import FixturePlaces, fixture_places
from workbench.viewmodel.jobs import AdapterJob, CorpusJob, JobRunner, ReloadJob
from workbench.viewmodel.keys import keymap, rebind
from workbench.viewmodel.paths import shown_path
from workbench.viewmodel.watched import stamps

POLL_S = 1.0
SNAPSHOT_ADAPTER = "adapter (snapshot mode)"  # the header's CPU badge still shows


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")


class WorkbenchApp(RunsJobs, KeysInOrder):
    """Browse, run, check, time and record WGSL kernels."""

    TITLE = "workbench"
    CSS_PATH = "app.tcss"
    COMMANDS = App.COMMANDS | {WorkbenchCommands}
    BINDINGS: ClassVar[list[BindingType]] = bindings("app")

    def __init__(
        self,
        corpus: str | Path | None = None,
        adapter: str | int | None = None,
        snapshot: bool | None = None,
        watch: bool = True,
        config: Config | None = None,
        kernel: str | None = None,
        remember: bool = False,
        fixtures: str | Path | None = None,
        corpus_why: str = "",
    ) -> None:
        super().__init__()
        # Why this corpus, for the header ("" given on the command line): `cli.ui.corpus_why`.
        self.corpus_why = corpus_why
        self.fixtures_option = Path(fixtures) if fixtures is not None else None
        self.config = config if config is not None else load_config()
        self.corpus_path = corpus
        self.adapter_selector = adapter if adapter is not None else self.config["adapter"] or None
        self.first_kernel = kernel
        self.remember = remember
        self.snapshot = _env_flag("WORKBENCH_SNAPSHOT") if snapshot is None else snapshot
        self.watch_files = watch  # poll the corpus's files for changes
        self.session: Session | None = None
        self.jobs = JobRunner()  # the GPU lock and the job numbers, for every screen
        self.opening: str | None = None
        self._mtimes: dict[Path, tuple[int, int]] = {}
        self._reloading = False
        self._reload_asked = False  # by the reload command: say when it is done
        self._open_failed_once = False  # the last start failed: a changed file starts it again
        if self.snapshot:
            # Pictures must not depend on where an animation happened to be.
            self.animation_level = "none"

    @property
    def main(self) -> MainScreen:
        return self._main

    def get_default_screen(self) -> Screen[None]:
        self._main = MainScreen()
        return self._main

    def on_mount(self) -> None:
        tune_for_ui()
        self._apply_config()
        self._open()
        if self.watch_files:
            self.set_interval(POLL_S, self.poll_files)

    def _apply_config(self) -> None:
        """Theme and keymap from the configuration; every problem with it is one notice."""
        cfg = self.config
        problems = list(cfg.problems)
        unknown = rebind(cfg.keymap)
        problems += [
            f"{cfg.config_path}: [keys] {i}: no action has this binding id" for i in unknown
        ]
        self.set_keymap(keymap())
        if cfg["theme"] in self.available_themes:
            self.theme = cfg["theme"]
        else:
            problems.append(f"{cfg.sources['theme']}: theme {cfg['theme']!r} is not installed")
        for problem in problems:
            self.notify(problem, title="configuration", severity="warning", timeout=10)

    def watch_theme(self, theme: str) -> None:
        if self.remember:
            self.config.remember(theme=theme)

    def remember_kernel(self, kernel_key: str) -> None:
        """Keep the corpus and the kernel on screen for the next `workbench` start. The shipped
        kernels are remembered as no corpus, never by their path: the next start opens its own
        install's, not those of the install (another clone, an older venv) that wrote the state."""
        from workbench.wgsl.corpus import SHIPPED

        if self.remember and self.session is not None:
            root = Path(self.session.corpus.root)
            shipped = root.resolve() == Path(SHIPPED).resolve()
            self.config.remember(corpus=None if shipped else str(root), kernel=kernel_key)

    # -- labels --------------------------------------------------------------------------------
    def adapter_label(self) -> str:
        if self.session is None:
            return "no adapter yet"
        return SNAPSHOT_ADAPTER if self.snapshot else self.session.adapter.label

    def corpus_label(self) -> str:
        from workbench.wgsl.corpus import SHIPPED

        root = Path(self.session.corpus.root if self.session else (self.corpus_path or SHIPPED))
        if root.resolve() == SHIPPED.resolve():
            return "shipped kernels (workbench/shaders)"
        return root.name if self.snapshot else shown_path(root)

    # -- opening -------------------------------------------------------------------------------
    def _corpus_root(self) -> Path:
        from workbench.wgsl.corpus import SHIPPED

        root = Path(self.corpus_path) if self.corpus_path is not None else SHIPPED
        return root.parent if root.is_file() else root

    @work(thread=True, exclusive=True, group="open", exit_on_error=False)
    def _open(self) -> None:
        from workbench.wgsl.corpus import load_corpus

        # Stamped before reading: a file fixed while the corpus is read is read again.
        self._mtimes = stamps(self._corpus_root())
        try:
            corpus = load_corpus(self.corpus_path)
            self.post_message(CorpusLoaded(corpus))
            adapter = Session.choose_adapter(self.adapter_selector)
            self.post_message(Opening(f"opening {adapter.label}…"))
            session = Session.on_adapter(corpus, adapter)
            with self.jobs.gpu_lock:
                session.open_device()  # now, not at the first run
        except WorkbenchError as exc:
            self.post_message(OpenFailed(ui_message(exc), "no adapter"))
            return
        except Exception as exc:  # a bug below the UI: say so in the view, not as a crash
            self.post_message(OpenFailed(f"internal error: {type(exc).__name__}: {exc}", "failed"))
            return
        self.post_message(SessionOpened(session))

    @on(CorpusLoaded)
    def _corpus_loaded(self, message: CorpusLoaded) -> None:
        self.main.once_mounted(self.main.show_corpus, message.corpus)

    @on(Opening)
    def _opening(self, message: Opening) -> None:
        self.opening = message.line
        self.main.once_mounted(self.main.update_topbar)

    @on(OpenFailed)
    def _open_failed(self, message: OpenFailed) -> None:
        self.opening = message.state
        self._open_failed_once = True
        self.main.once_mounted(self.main.fatal, message.error)

    @on(SessionOpened)
    async def _session_opened(self, message: SessionOpened) -> None:
        self.session = message.session
        if self.session.on_cpu:
            # On a CPU adapter the kernels run on the cores the UI draws with; animation frames
            # (the tab underline slides over 0.3 s) then delay keys by hundreds of ms.
            self.animation_level = "none"
        self.main.once_mounted(self.main.session_ready)

    # -- live reload ---------------------------------------------------------------------------
    def poll_files(self) -> None:
        """Reload the corpus when a file it depends on changed (or one came or went); after a
        start that failed, open again once a file changed (the fix)."""
        if self.session is None:
            if self._open_failed_once and stamps(self._corpus_root()) != self._mtimes:
                self._open_failed_once = False
                self.opening = None
                self.main.starting_again()
                self._open()
            return
        if self._reloading:
            return
        now = stamps(Path(self.session.corpus.root), self.session.corpus.watched)
        if now != self._mtimes:
            self._mtimes = now
            self._reloading = True
            self.submit(ReloadJob(self.session), self._reloaded, self._reload_failed)

    def _reload_failed(self, failure: JobFailed) -> None:
        self._reloading = self._reload_asked = False
        self.notify(f"reload failed: {failure.error}", severity="error")
        self.main.corpus_unreadable(failure.error)

    async def _reloaded(self, _: None) -> None:
        self._reloading = False
        await self.main.corpus_reloaded()
        if self._reload_asked and self.session is not None:
            self._reload_asked = False
            self.notify(f"re-read {len(self.session.corpus.kernels)} kernels", title="reload")

    def action_reload(self) -> None:
        if self.session is None:
            self.notify("the adapter is still opening; the corpus is read then")
            return
        if self._reloading:
            self.notify("the corpus is being re-read already")
            return
        self._reload_asked = True
        self._mtimes = {}
        self.poll_files()

    # -- adapters ------------------------------------------------------------------------------
    def on_unmount(self) -> None:
        self._retire(self.session)

    def _retire(self, old: Session | None, new: Session | None = None) -> None:
        """Give back the device of a session the app no longer uses (replaced by `new`, or the app
        has ended), unless `new` runs on the same one. GPU work still in flight keeps it."""
        if old is None or (new is not None and new.gpu is old.gpu):
            return
        if self.jobs.gpu_lock.acquire(blocking=False):
            try:
                old.close()
            finally:
                self.jobs.gpu_lock.release()

    def _free_to_switch(self) -> bool:
        """Whether the adapter or the corpus may change now; says why not when it may not."""
        if self.session is None:
            self.notify("the adapter is still opening")
            return False
        if self.main.busy:
            self.notify("a run is in flight: escape cancels it first", severity="warning")
            return False
        return True

    def action_switch_adapter(self) -> None:
        if not self._free_to_switch() or self.session is None:
            return
        self.push_screen(
            AdapterScreen(Session.adapters(), self.session.adapter.index), self._adapter_chosen
        )

    def _adapter_chosen(self, index: int | None) -> None:
        if index is None or self.session is None:
            return
        if index == self.session.adapter.index:
            self.notify(f"already on {self.adapter_label()}")
            return
        self.main.switching_adapter()
        old = self.adapter_label()

        async def switched(session: Session) -> None:
            self._retire(self.session, session)
            self.session = session
            await self.main.adapter_switched(old)

        self.submit(AdapterJob(self.session, index), switched, self._adapter_failed)

    def _adapter_failed(self, failure: JobFailed) -> None:
        self.notify(failure.error, severity="error", title="adapter")
        self.main.refresh_view()

    # -- another corpus ------------------------------------------------------------------------
    def action_open_corpus(self) -> None:
        if not self._free_to_switch():
            return
        self.push_screen(
            OpenCorpusScreen(self.corpus_label(), blink=not self.snapshot), self._corpus_chosen
        )

    def _corpus_chosen(self, path: Path | None) -> None:
        if path is None or self.session is None:
            return
        self.main.switching_corpus(path)

        async def opened(session: Session) -> None:
            self._retire(self.session, session)
            self.session, self.corpus_path, self.corpus_why = session, path, ""
            self._mtimes = stamps(Path(session.corpus.root), session.corpus.watched)
            await self.main.corpus_opened()

        def failed(failure: JobFailed) -> None:
            self.notify(f"cannot open {path}: {failure.error}", severity="error", title="corpus")
            self.main.refresh_view()

        self.submit(CorpusJob(self.session, path), opened, failed)

    # -- fixtures ------------------------------------------------------------------------------
    def fixture_places(self) -> FixturePlaces:
        """Where `f` saves and what the Fixtures screen lists; a refused folder is a notice."""
        root = Path(self.session.corpus.root) if self.session else self._corpus_root()
        places = fixture_places(root, self.fixtures_option, self.config["fixtures"])
        for problem in places.problems:
            self.notify(problem, title="fixtures", severity="warning", timeout=10)
        return places

    def action_open_fixtures(self) -> None:
        if self.session is None:
            self.notify("the adapter is still opening")
            return
        places = self.fixture_places()
        self.push_screen(
            FixturesScreen(self._session, paths=places.listed, adapter=self.adapter_label())
        )

    def _session(self) -> Session:
        """The session now (the Fixtures screen follows adapter switches); open by then."""
        if self.session is None:
            raise WorkbenchError("the adapter is still opening")
        return self.session

    @on(FixturesScreen.OpenCase)
    async def _open_fixture_case(self, event: FixturesScreen.OpenCase) -> None:
        event.stop()
        if isinstance(self.screen, FixturesScreen):
            self.pop_screen()
        run = event.run
        if run is not None and event.result.comparisons:
            run = self._against_fixture(run, event.result)
        error = None if run is not None else (event.result.error or "the fixture did not run")
        await self.main.show_case(event.case, run, error)

    @staticmethod
    def _against_fixture(run: Run, result: ReplayResult) -> Run:
        """The replayed run with the fixture's expected outputs as its reference, so the verdict
        and the Diff tab show the comparison the replay made."""
        from workbench.fixtures import FixtureError, load_fixture

        try:
            fixture = load_fixture(result.path)
        except (FixtureError, OSError):
            return replace(run, compare=dict(result.comparisons))
        reference = {
            name: np.asarray(fixture.arrays[entry.array], dtype=np.float64)
            for name, entry in fixture.expected.items()
            if entry.array in fixture.arrays
        }
        run.case.notes.append(f"compared with the expected outputs of fixture {result.name}")
        return replace(run, reference=reference, compare=dict(result.comparisons))

    # -- screens a screen asks for ---------------------------------------------------------------
    @on(OpenBench)
    def _open_bench(self, message: OpenBench) -> None:
        self.push_screen(BenchScreen(message.session, message.case, self.config))

    @on(OpenWorkgroupSteps)
    def _open_workgroup_steps(self, message: OpenWorkgroupSteps) -> None:
        self.push_screen(WorkgroupStepScreen(message.session, message.case))

    @on(OpenDebug)
    def _open_debug(self, message: OpenDebug) -> None:
        self.push_screen(DebugScreen(message.session, message.case, message.pick))

    @on(OpenCheck)
    def _open_check(self, message: OpenCheck) -> None:
        self.push_screen(CheckScreen(message.session, message.name, message.make_case))

    @on(OpenCheckAll)
    def _open_check_all(self, message: OpenCheckAll) -> None:
        self.push_screen(CheckAllScreen(message.session, message.cases))

    # -- pipelines -----------------------------------------------------------------------------
    def action_steps(self) -> None:
        if self.session is None:
            self.notify("the adapter is still opening", severity="warning", timeout=2)
            return
        if not isinstance(self.screen, StepsScreen):
            self.push_screen(StepsScreen())

    @on(StepsScreen.OpenCase)
    async def _open_step_case(self, event: StepsScreen.OpenCase) -> None:
        event.stop()
        if isinstance(self.screen, StepsScreen):
            self.pop_screen()
        await self.main.show_case(event.case, event.run)

    # -- help ----------------------------------------------------------------------------------
    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())
