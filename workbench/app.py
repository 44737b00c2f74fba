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
import threading
from dataclasses import replace
from pathlib import Path
from typing import ClassVar

import numpy as np
from textual import on, work
from textual.app import App
from textual.binding import Binding
from textual.screen import Screen

from workbench.commands import WorkbenchCommands, bindings
from workbench.config import Config, load_config
from workbench.errors import WorkbenchError
from workbench.fixtures import ReplayResult, default_fixture_name
from workbench.keys_in_order import KeysInOrder
from workbench.messages import (
    AdapterFailed,
    AdapterSwitched,
    CorpusLoaded,
    CorpusReloaded,
    FixtureExists,
    FixtureNotSaved,
    FixtureSaved,
    OpenFailed,
    Opening,
    ReloadFailed,
    SessionOpened,
)
from workbench.screens.adapters import AdapterScreen
from workbench.screens.check_all import CheckAllScreen
from workbench.screens.confirm import ConfirmScreen
from workbench.screens.fixtures import FixturesScreen
from workbench.screens.help import HelpScreen
from workbench.screens.load_npy import LoadNpyScreen
from workbench.screens.main import MainScreen
from workbench.screens.save_fixture import SaveFixtureScreen
from workbench.screens.steps import StepsScreen
from workbench.session import Case, Run, Session
from workbench.viewmodel.advice import ui_message
from workbench.viewmodel.cases import build_case
from workbench.viewmodel.fixture_places import FixturePlaces, fixture_places
from workbench.viewmodel.form import default_form
from workbench.viewmodel.keys import key, keymap, rebind
from workbench.viewmodel.paths import shown_path
from workbench.viewmodel.status import kernel_key

POLL_S = 1.0
SNAPSHOT_ADAPTER = "adapter (snapshot mode)"  # the header's CPU badge still shows


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")


class WorkbenchApp(KeysInOrder):
    """Browse, run, check, time and record WGSL kernels."""

    TITLE = "workbench"
    CSS_PATH = "app.tcss"
    COMMANDS = App.COMMANDS | {WorkbenchCommands}
    BINDINGS: ClassVar[list[Binding]] = bindings("app")

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
    ) -> None:
        super().__init__()
        self.fixtures_option = Path(fixtures) if fixtures is not None else None
        self.config = config if config is not None else load_config()
        self.corpus_path = corpus
        self.adapter_selector = adapter if adapter is not None else self.config["adapter"] or None
        self.first_kernel = kernel
        self.remember = remember
        self.snapshot = _env_flag("WORKBENCH_SNAPSHOT") if snapshot is None else snapshot
        self.watch = watch
        self.session: Session | None = None
        self.gpu_lock = threading.Lock()
        self.opening: str | None = None
        self._mtimes: dict[Path, tuple[int, int]] = {}
        self._reloading = False
        self._reload_asked = False  # by the reload command: say when it is done
        if self.snapshot:
            # Pictures must not depend on where an animation happened to be.
            self.animation_level = "none"

    @property
    def main(self) -> MainScreen:
        return self._main

    def get_default_screen(self) -> Screen:
        self._main = MainScreen()
        return self._main

    def on_mount(self) -> None:
        self._apply_config()
        self._open()
        if self.watch:
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
        """Keep the corpus and the kernel on screen for the next `workbench` start."""
        if self.remember and self.session is not None:
            self.config.remember(corpus=str(self.session.corpus.root), kernel=kernel_key)

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
    @work(thread=True, exclusive=True, group="open")
    def _open(self) -> None:
        from workbench.wgsl.corpus import load_corpus

        try:
            corpus = load_corpus(self.corpus_path)
            self._mtimes = self._scan(corpus.root)
            self.post_message(CorpusLoaded(corpus))
            adapter = Session.choose_adapter(self.adapter_selector)
            self.post_message(Opening(f"opening {adapter.label}…"))
            session = Session.on_adapter(corpus, adapter)
            with self.gpu_lock:
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
    @staticmethod
    def _scan(root: Path) -> dict[Path, tuple[int, int]]:
        out: dict[Path, tuple[int, int]] = {}
        for p in [*root.rglob("*.wgsl"), root / "wgslconfig.toml", root / "workbench.toml"]:
            try:
                st = p.stat()
            except OSError:
                continue
            out[p] = (st.st_mtime_ns, st.st_size)
        return out

    def poll_files(self) -> None:
        """Reload the corpus when a file's mtime or size changed (or one came or went)."""
        if self.session is None or self._reloading:
            return
        now = self._scan(Path(self.session.corpus.root))
        if now != self._mtimes:
            self._mtimes = now
            self._reloading = True
            self._reload(self.session)

    @work(thread=True, exclusive=True, group="reload")
    def _reload(self, session: Session) -> None:
        try:
            with self.gpu_lock:
                session.reload()
        except Exception as exc:  # a file the reader chokes on must not end the session
            self.post_message(ReloadFailed(str(exc)))
            return
        self.post_message(CorpusReloaded())

    @on(ReloadFailed)
    def _reload_failed(self, message: ReloadFailed) -> None:
        self._reloading = self._reload_asked = False
        self.notify(f"reload failed: {message.error}", severity="error")

    @on(CorpusReloaded)
    async def _reloaded(self) -> None:
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
    def action_switch_adapter(self) -> None:
        if self.session is None:
            self.notify("the adapter is still opening")
            return
        if self.main.busy:
            self.notify("a run is in flight: escape cancels it first", severity="warning")
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
        self.main.verdict_bar.busy("opening the adapter…", None)
        self._switch(self.session, index)

    @work(thread=True, exclusive=True, group="open")
    def _switch(self, session: Session, index: int) -> None:
        old = self.adapter_label()
        try:
            with self.gpu_lock:
                new = session.with_adapter(index)
                new.open_device()  # fail here, with a message, not at the next run
        except WorkbenchError as exc:
            self.post_message(AdapterFailed(ui_message(exc)))
            return
        self.post_message(AdapterSwitched(new, old))

    @on(AdapterFailed)
    def _adapter_failed(self, message: AdapterFailed) -> None:
        self.notify(message.error, severity="error", title="adapter")
        self.main.refresh_view()

    @on(AdapterSwitched)
    async def _adapter_switched(self, message: AdapterSwitched) -> None:
        self.session = message.session
        await self.main.adapter_switched(message.old)

    # -- fixtures ------------------------------------------------------------------------------
    def fixture_places(self) -> FixturePlaces:
        """Where `f` saves and what the Fixtures screen lists; a refused folder is a notice."""
        places = fixture_places(
            Path(self.session.corpus.root), self.fixtures_option, self.config["fixtures"]
        )
        for problem in places.problems:
            self.notify(problem, title="fixtures", severity="warning", timeout=10)
        return places

    def action_open_fixtures(self) -> None:
        if self.session is None:
            self.notify("the adapter is still opening")
            return
        places = self.fixture_places()
        self.push_screen(
            FixturesScreen(lambda: self.session, paths=places.listed, adapter=self.adapter_label())
        )

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

    def action_save_fixture(self) -> None:
        run = self.main.current_run()
        st = self.main.current_state()
        if run is None or st is None or st.stale:
            self.notify(
                f"run the kernel first ({key('run')}): a fixture records a run", severity="warning"
            )
            return
        default = default_fixture_name(run.case)
        places = self.fixture_places()
        folder = places.save_to

        def chosen(answer: tuple[str, str] | None) -> None:
            if answer is not None:
                self._record(run, folder / answer[0], answer[1], False)

        self.push_screen(
            SaveFixtureScreen(default, folder, places.why, blink=not self.snapshot), chosen
        )

    @work(thread=True, group="fixture")
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

        self.push_screen(ConfirmScreen(f"{message.path.name} exists. Overwrite it?"), answered)

    # -- inputs --------------------------------------------------------------------------------
    def action_load_npy(self) -> None:
        names = self.main.form.input_names()
        if not names:
            self.notify("this kernel has no input binding to fill")
            return

        def chosen(answer: tuple[str, str] | None) -> None:
            if answer is not None:
                self.main.form.set_recipe(answer[0], f"npy:{answer[1]}")

        self.push_screen(LoadNpyScreen(names, blink=not self.snapshot), chosen)

    # -- checks --------------------------------------------------------------------------------
    def action_check_all(self) -> None:
        session = self.session
        if session is None:
            self.notify("the adapter is still opening")
            return
        cases = []
        for k in session.corpus.kernels:
            try:
                spec = session.spec(k)
            except WorkbenchError:
                continue
            if spec is None:
                continue
            st = self.main.states.get(kernel_key(k))
            form = st.form if st is not None else default_form(spec)

            def make(k=k, spec=spec, form=form) -> Case:
                return build_case(session, k, spec, form)

            cases.append((k.name, make))
        self.push_screen(CheckAllScreen(session, self.gpu_lock, cases))

    # -- pipelines -----------------------------------------------------------------------------
    def action_steps(self) -> None:
        if self.session is None:
            self.notify("the adapter is still opening", severity="warning", timeout=2)
            return
        if not isinstance(self.screen, StepsScreen):
            self.push_screen(StepsScreen())

    # -- help ----------------------------------------------------------------------------------
    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())
