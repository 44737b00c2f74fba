"""The main screen: kernel browser on the left, the current kernel's view on the right.

It owns the loop: pick a kernel, edit its dims and inputs (planned in a worker thread as you type,
so derived figures and refusals show before anything runs), run / bench / gradcheck it (in a
worker thread holding the app's GPU lock, cancellable with escape), and show the verdict and the
tabs. Each kernel keeps its own `KernelState` (view model) while you browse, and its last runs in
`history` (`workbench.viewmodel.baseline`): a pinned one is the baseline every run is shown against.

Messages up, attributes down: workers post typed messages (`workbench.messages`) that the handlers
here turn into state changes; the screen then sets its one reactive `view`, which every pane is
bound to and renders.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import subprocess
import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult, SuspendNotSupported
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import Input, Static, TabbedContent, TabPane
from textual.worker import get_current_worker

from workbench.commands import bindings
from workbench.errors import CompileError, SpecMismatchError, UserError, WorkbenchError
from workbench.messages import (
    BaselineCompared,
    CasePlanned,
    CheckFinished,
    FootprintFinished,
    ProbesFinished,
    Progress,
    RunCancelled,
    RunFailed,
    RunFinished,
    StatusChecked,
)
from workbench.screens.bench import BenchScreen, ui_budget
from workbench.screens.confirm import ConfirmScreen
from workbench.screens.jump import JumpScreen
from workbench.screens.runs import RunsScreen
from workbench.screens.save_path import SavePathScreen
from workbench.session import Case, Run, Session, StatusKind
from workbench.specs.base import KernelSpec
from workbench.specs.refworker import cancel_all as cancel_references
from workbench.units import fmt_ms
from workbench.viewmodel.advice import ui_message
from workbench.viewmodel.baseline import RunEntry, RunHistory, baseline_diff
from workbench.viewmodel.cases import build_case, limit_problem, plan_case
from workbench.viewmodel.describe import write_description
from workbench.viewmodel.feedback import DOING, WORK, Standing, why_not
from workbench.viewmodel.form import FormState, default_form, dims_of, parse_form, uniform_paths
from workbench.viewmodel.kernel_state import (
    KernelState,
    View,
    error_location,
    needs_text,
    view_of,
)
from workbench.viewmodel.keys import key
from workbench.viewmodel.status import PENDING, KernelStatus, kernel_key, kernel_name, status_kind
from workbench.viewmodel.takeaway import CASE, case_arrays, default_name, save_arrays, save_diff
from workbench.wgsl.corpus import Corpus, Kernel
from workbench.widgets.baseline_bar import BaselineBar
from workbench.widgets.browser import KernelBrowser
from workbench.widgets.detail_line import DetailLine
from workbench.widgets.form.case_form import CaseForm
from workbench.widgets.key_footer import KeyFooter
from workbench.widgets.panes.bindings import BindingsPane
from workbench.widgets.panes.diff import DiffPane
from workbench.widgets.panes.footprint import FootprintPane
from workbench.widgets.panes.gradients import GradientsPane
from workbench.widgets.panes.outputs import OutputsPane
from workbench.widgets.panes.probes import ProbesPane
from workbench.widgets.panes.source import SourcePane
from workbench.widgets.panes.timing import TimingPane
from workbench.widgets.verdict_bar import VerdictBar
from workbench.workgroups.footprint import footprint
from workbench.workgroups.probes import (
    DEFAULT_CAPACITY,
    ProbeFilter,
    ProbeRun,
    parse_invocation,
    run_probes,
)

if TYPE_CHECKING:
    from workbench.app import WorkbenchApp

# Below this many columns the kernel list starts hidden (ctrl+b shows it): the kernel view needs
# the width more than the list does once a kernel is open.
NARROW_BELOW = 100
WIDE_FROM = 120
PLAN_DELAY_S = 0.25


class MainScreen(Screen):
    """Browser + kernel view + footer."""

    BINDINGS: ClassVar[list[Binding]] = bindings("main")
    # Focus goes where the screen puts it (the kernel list, or nowhere while the list is hidden),
    # never to the first field by default: the footer and the status line name keys (`r run`)
    # that a field would take as text. The focused region is lit, and `d` goes to the dims.
    AUTO_FOCUS = None
    # Classes the stylesheet lays the screen out by: -narrow, -medium or -wide.
    HORIZONTAL_BREAKPOINTS: ClassVar[list[tuple[int, str]]] = [
        (0, "-narrow"),
        (NARROW_BELOW, "-medium"),
        (WIDE_FROM, "-wide"),
    ]

    view: reactive[View] = reactive(View, init=False)
    sidebar: reactive[bool] = reactive(True, init=False)

    def __init__(self) -> None:
        super().__init__()
        self.states: dict[str, KernelState] = {}
        self.current: str | None = None
        self.busy: str | None = None
        self.show_module = False
        self._cancel = threading.Event()
        # GPU work started so far; the outcome of any other job than the one in flight (one the
        # user cancelled) is dropped when it arrives.
        self._job = 0
        self._busy_key: str | None = None
        self._on_mount_calls: list[tuple[Callable[..., object], tuple[object, ...]]] = []
        self._statuses: dict[str, KernelStatus] = {}
        self.history = RunHistory()
        # The pair of runs a worker is comparing now, so a refresh does not start it twice.
        self._comparing: tuple[RunEntry, Run] | None = None
        self._narrow: bool | None = None

    @property
    def wb(self) -> WorkbenchApp:
        return self.app  # type: ignore[return-value]

    # -- typed accessors -----------------------------------------------------------------------
    @property
    def browser(self) -> KernelBrowser:
        return self.query_one(KernelBrowser)

    @property
    def form(self) -> CaseForm:
        return self.query_one(CaseForm)

    @property
    def verdict_bar(self) -> VerdictBar:
        return self.query_one(VerdictBar)

    @property
    def tabs(self) -> TabbedContent:
        return self.query_one("#tabs", TabbedContent)

    def current_state(self) -> KernelState | None:
        return self.states.get(self.current or "")

    def current_run(self) -> Run | None:
        st = self.current_state()
        return st.run if st else None

    # -- layout --------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        blink = not self.wb.snapshot
        yield Static(id="topbar")
        with Horizontal(id="body"):
            yield KernelBrowser(id="browser", blink=blink)
            with Vertical(id="kernel-view", classes="-empty"):
                yield Static(id="kv-title")
                # One line; hovered, the whole doc (the Bindings tab shows it whole too).
                yield DetailLine(id="kv-doc", focusable=False)
                yield CaseForm(id="form", blink=blink)
                yield VerdictBar(id="verdict-bar")
                yield BaselineBar(id="baseline").data_bind(MainScreen.view)
                with TabbedContent(id="tabs", initial="tab-outputs"):
                    with TabPane("Outputs", id="tab-outputs"):
                        yield OutputsPane(id="outputs", blink=blink).data_bind(MainScreen.view)
                    with TabPane("Diff", id="tab-diff"):
                        yield DiffPane(id="diff").data_bind(MainScreen.view)
                    with TabPane("Gradients", id="tab-gradients"):
                        yield GradientsPane(id="gradients").data_bind(MainScreen.view)
                    with TabPane("Timing", id="tab-timing"):
                        yield TimingPane(id="timing").data_bind(MainScreen.view)
                    with TabPane("Source", id="tab-source"):
                        yield SourcePane(id="source").data_bind(MainScreen.view)
                    with TabPane("Bindings", id="tab-bindings"):
                        yield BindingsPane(id="bindings").data_bind(MainScreen.view)
                    with TabPane("Footprint", id="tab-footprint"):
                        yield FootprintPane(id="footprint").data_bind(MainScreen.view)
                    with TabPane("Probes", id="tab-probes"):
                        yield ProbesPane(id="probes").data_bind(MainScreen.view)
        yield KeyFooter()

    def once_mounted(self, callback: Callable[..., object], *args: object) -> None:
        """Call `callback` now if the screen is mounted, else once it is: a small corpus can be
        read, and the adapter opened, before the screen has composed its widgets."""
        if self.is_mounted:
            self.call_later(callback, *args)
        else:
            self._on_mount_calls.append((callback, args))

    def on_mount(self) -> None:
        for callback, args in self._on_mount_calls:
            self.call_later(callback, *args)
        self._on_mount_calls.clear()
        self.update_topbar()
        if self.wb.session is None:
            self._say_title(Text("loading the corpus…", style="dim"))
        self.browser.tree.focus()

    def _say_title(self, text: Text) -> None:
        self.query_one("#kv-title", Static).update(text)

    def _say_doc(self, text: Text) -> None:
        self.query_one("#kv-doc", Static).update(text)

    def update_topbar(self) -> None:
        app = self.wb
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append("workbench", style="bold")
        text.append(" · ")
        if app.session is not None:
            if app.session.on_cpu:
                text.append(" CPU ", style="bold black on yellow")
                text.append(" ")
            text.append(app.adapter_label())
        else:
            text.append(app.opening or "opening the GPU adapter…", style="italic")
        text.append(" · corpus ")
        text.append(app.corpus_label())
        self.query_one("#topbar", Static).update(text)

    # -- what the app tells us -----------------------------------------------------------------
    def show_corpus(self, corpus: Corpus) -> None:
        """The corpus is loaded (before the adapter is ready): fill the browser."""
        browser = self.browser
        browser.set_corpus(corpus, self._statuses)
        wanted = self.wb.first_kernel
        known = {kernel_key(k) for k in corpus.kernels}
        first = self.current or (wanted if wanted in known else None) or browser.first_key()
        if first:
            browser.select(first)
            self.current = first
        self._say_title(
            Text("opening the GPU adapter… (the kernel view appears when it is ready)", style="dim")
        )

    async def session_ready(self) -> None:
        self.update_topbar()
        self.refresh_statuses()
        key_ = self.current or self.browser.first_key()
        if key_:
            await self.open_kernel(key_)

    def fatal(self, message: str) -> None:
        """The corpus or the adapter could not be opened: say so where the view would be."""
        self.update_topbar()
        self._say_title(Text("✗ cannot start", style="bold red"))
        text = Text(message, style="red")
        text.append(
            "\n\nfix it and restart; `workbench adapters` lists the adapters this machine has",
            style="default",
        )
        self._say_doc(text)
        self.query_one("#kv-doc").add_class("-fatal")

    async def corpus_reloaded(self) -> None:
        """The files changed on disk and the session re-read them."""
        session = self.wb.session
        browser = self.browser
        browser.set_corpus(session.corpus, self._statuses)
        for st in self.states.values():
            st.forget_case()
        keys = {kernel_key(k) for k in session.corpus.kernels}
        key_ = self.current if self.current in keys else browser.first_key()
        self.refresh_statuses()
        if key_ is None:
            return
        browser.select(key_)
        await self.open_kernel(key_, rerun=True)

    async def adapter_switched(self, old_label: str) -> None:
        """A new session on another adapter: statuses change, old results are from elsewhere."""
        self.update_topbar()
        for key_, st in self.states.items():
            if key_ == self.current:
                st.forget_case()
            else:
                st.ran_elsewhere(old_label)
        self.refresh_statuses()
        if self.current:
            await self.open_kernel(self.current, rerun=True)

    # -- kernel selection ----------------------------------------------------------------------
    def kernel(self, key_: str | None = None) -> Kernel | None:
        session = self.wb.session
        key_ = key_ or self.current
        if session is None or key_ is None:
            return None
        return next((k for k in session.corpus.kernels if kernel_key(k) == key_), None)

    def spec_of(self, kernel: Kernel) -> tuple[KernelSpec | None, str]:
        """The kernel's spec (None: ad hoc) and, for a signature mismatch, why it runs ad hoc."""
        try:
            return self.wb.session.spec(kernel), ""
        except SpecMismatchError as exc:
            return None, str(exc)
        except WorkbenchError as exc:  # a workbench.toml that cannot be used: say why
            return None, ui_message(exc)

    @on(KernelBrowser.Selected)
    async def _selected(self, event: KernelBrowser.Selected) -> None:
        if event.key == self.current and self.current_state() is not None:
            return  # already shown: the cursor came back to it (a rebuilt tree, a fixture)
        await self.open_kernel(event.key)

    async def open_kernel(self, key_: str, rerun: bool = False) -> None:
        """Show a kernel: its form (remembered per kernel), its last results, and plan its case."""
        self.current = key_
        kernel = self.kernel(key_)
        if kernel is None:
            return
        self.wb.remember_kernel(key_)
        spec, mismatch = self.spec_of(kernel)
        st = self.states.get(key_)
        if st is None or set(st.form.dims) != {d.name for d in dims_of(spec)}:
            # First visit, or the kernel gained/lost its spec with an edit: start from defaults.
            st = self.states[key_] = KernelState(form=default_form(spec))
        status = self._statuses.get(key_, PENDING)
        if kernel.problem:
            problem = kernel.problem
            located = problem.startswith(f"{kernel.file}:")
            st.source_problem(problem if located else f"{kernel.file}: {problem}")
        elif status.kind == "needs":
            st.source_problem(self._needs(kernel.name, status))
        else:
            st.source_fine(status)
        self._title(kernel, spec, mismatch)
        self.query_one("#kernel-view").remove_class("-empty")
        known = st.case or (st.run.case if st.run else None)
        await self.form.set_kernel(
            spec,
            st.form,
            tuple(uniform_paths(kernel.entry_point.bindings)) if kernel.entry_point else (),
            tuple(kernel.module.overrides) if kernel.module else (),
            roles=_roles(known) if known else None,
            kernel=key_,
        )
        self.refresh_view()
        self.refresh_bindings()
        if rerun and st.run is not None and not kernel.problem:
            self.start("bench" if st.run.timing and st.run.timing.reps else "run")
        else:
            self.schedule_plan(0.01)

    def _title(self, kernel: Kernel, spec: KernelSpec | None, mismatch: str) -> None:
        title = Text()
        title.append(kernel.name, style="bold")
        title.append(f"  {kernel.file}:{kernel.line}", style="cyan")
        status = self._statuses.get(kernel_key(kernel), PENDING)
        if spec is not None:
            title.append("  spec'd ✓", style="green")
        else:
            title.append("  ad hoc ○", style="cyan")
        if status.kind == "needs":
            title.append(f"  ⚠ {status.detail}", style="yellow")
        elif status.kind == "error":
            kind = status.detail.split(":", 1)[0] if status.detail else "error"
            title.append(f"  ✗ {kind}", style="red")
        title.append(f"  on {self.wb.adapter_label()}", style="dim")
        self._say_title(title)
        if mismatch:
            doc = Text(f"runs ad hoc: {mismatch}", style="magenta")
        elif spec is not None:
            doc = Text(spec.doc or "")
        else:
            doc = Text(
                "no spec: one size n for every runtime-sized array, no reference to compare with"
            )
        self._say_doc(doc)

    # -- the view ------------------------------------------------------------------------------
    def refresh_view(self) -> None:
        """Set the view from the current kernel's state: the verdict and every pane follow."""
        session = self.wb.session
        st = self.current_state()
        baseline = self.history.diff(self.current or "", st.run if st else None, wait=False)
        if baseline is not None and baseline.pending and st is not None and st.run is not None:
            self._compare_with_baseline(
                self.current or "", baseline.pinned, baseline.number, st.run
            )
        self.view = view_of(
            st,
            self.kernel(),
            snapshot=self.wb.snapshot,
            corpus_root=Path(session.corpus.root) if session else None,
            features=session.adapter.features if session else frozenset(),
            show_module=self.show_module,
            roofline=session.measured_roofline() if session else None,
            baseline=baseline,
            cpu=session.on_cpu if session else False,
        )

    def _compare_with_baseline(
        self, key_: str, pinned: RunEntry, number: int | None, run: Run
    ) -> None:
        if not self._is_comparing(pinned, run):
            self._comparing = (pinned, run)
            self._baseline_worker(key_, pinned, number, run)

    def _is_comparing(self, pinned: RunEntry, run: Run) -> bool:
        # By identity: runs hold arrays, and == on them compares elements.
        return self._comparing is not None and (
            self._comparing[0] is pinned and self._comparing[1] is run
        )

    @work(thread=True, group="baseline")
    def _baseline_worker(self, key_: str, pinned: RunEntry, number: int | None, run: Run) -> None:
        """Outputs of millions of elements take seconds to compare: never on the UI thread."""
        try:
            diff = baseline_diff(pinned, number, run)
        except Exception as exc:  # a bug here must not take the UI down: say it in the bar
            failed = f"comparison failed: {type(exc).__name__}: {exc}"
            pending = baseline_diff(pinned, number, run, outputs=False)
            diff = replace(pending, notes=(failed,), pending=False)
        self.post_message(BaselineCompared(key_, run, diff))

    @on(BaselineCompared)
    def _baseline_compared(self, message: BaselineCompared) -> None:
        if self._is_comparing(message.diff.pinned, message.run):
            self._comparing = None
        self.history.remember(message.key, message.run, message.diff)
        self._show_if_current(message.key)

    def watch_view(self, view: View) -> None:
        if not self.busy:
            self.verdict_bar.show_verdict(
                view.run,
                view.error,
                view.stale,
                view.snapshot,
                view.gradient_check,
                view.report,
                view.last,
                view.cancelled,
            )

    # -- planning (no GPU) ---------------------------------------------------------------------
    @on(CaseForm.Changed)
    def _form_changed(self, event: CaseForm.Changed) -> None:
        st = self.current_state()
        if st is None:
            return
        st.form = event.state
        self.schedule_plan()

    @on(CaseForm.Submitted)
    def _form_submitted(self, event: CaseForm.Submitted) -> None:
        st = self.current_state()
        if st is not None:
            st.form = event.state
            self.start("run")

    @work(exclusive=True, group="plan-soon")
    async def schedule_plan(self, delay: float = PLAN_DELAY_S) -> None:
        """Plan the current form once typing pauses for `delay` seconds."""
        await asyncio.sleep(delay)
        self._plan_now()

    def _plan_now(self) -> None:
        kernel = self.kernel()
        st = self.current_state()
        if kernel is None or st is None or self.wb.session is None:
            return
        if kernel.problem or kernel.entry_point is None:
            self.form.show_derived("")
            return
        spec, _ = self.spec_of(kernel)
        parsed = parse_form(st.form, spec)
        if parsed.problems:
            self.form.show_problems(parsed.problems)
            self.form.show_derived(Text("fix the fields marked below", style="dim"))
            self.form.show_sizes(None)
            return
        if st.case is not None and st.planned:
            self.post_message(CasePlanned(self.current, st.form.key, st.case, st.problems))
            return
        self._plan(self.wb.session, self.current, kernel, spec, st.form)

    @work(thread=True, exclusive=True, group="plan")
    def _plan(
        self, session: Session, key_: str, kernel: Kernel, spec: KernelSpec | None, form: FormState
    ) -> None:
        worker = get_current_worker()
        case, problems = plan_case(session, kernel, spec, form)
        if not worker.is_cancelled:
            self.post_message(CasePlanned(key_, form.key, case, problems))

    @on(CasePlanned)
    async def _planned(self, message: CasePlanned) -> None:
        st = self.states.get(message.key)
        if st is None or not st.plan_done(message.form_key, message.case, message.problems):
            return
        if message.key != self.current:
            return
        shown = message.case or st.case
        if shown is not None:
            await self.form.set_roles(_roles(shown))
        self.form.show_plan(shown, st.problems)
        self.refresh_view()

    # -- GPU work ------------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # Every key acts or says why it cannot (`refused`), so none is disabled; escape cancels
        # work in flight, else leaves a field.
        if action == "cancel":
            return self.busy is not None
        if action == "leave_field":
            return self.busy is None
        return True

    def standing(self) -> Standing:
        """What the screen knows now, for `why_not`."""
        session = self.wb.session
        kernel = self.kernel() if session else None
        st = self.current_state()
        if session is None or kernel is None:
            return Standing(opened=session is not None)
        problem = kernel.problem or ("" if kernel.entry_point else "no entry point to run")
        spec = self.spec_of(kernel)[0] if not problem else None
        return Standing(
            opened=True,
            kernel=kernel.name,
            problem=problem,
            busy=self.busy or "",
            has_run=st is not None and st.run is not None,
            stale=(st.stale or "") if st else "",
            gradient=spec is not None and spec.gradient is not None,
        )

    def refused(self, action: str) -> bool:
        """True (and a notification saying why) when `action` cannot act now."""
        why = why_not(action, self.standing())
        if why is not None:
            self.notify(why, title=action.replace("_", " "), severity="warning")
        return why is not None

    def action_run(self) -> None:
        self.start("run")

    def action_bench(self) -> None:
        self.start("bench")

    def action_bench_variants(self) -> None:
        """Sweep an override or A/B the current kernel on the bench screen."""
        session = self.wb.session
        kernel = self.kernel()
        st = self.current_state()
        if self.refused("bench_variants") or session is None or kernel is None or st is None:
            return
        case = st.case if st.planned else None
        if case is None:
            spec, _ = self.spec_of(kernel)
            try:
                case = build_case(session, kernel, spec, st.form)
            except WorkbenchError as exc:
                self.notify("fix the form first: " + ui_message(exc), severity="error")
                return
        self.app.push_screen(BenchScreen(session, self.wb.gpu_lock, case, self.wb.config))

    def action_gradcheck(self) -> None:
        self.start("grad")

    def action_footprint(self) -> None:
        self.start("footprint")

    def action_probe(self) -> None:
        self.start("probe")

    def action_next_footprint_output(self) -> None:
        if self.current_state() is None or self.current_state().footprint is None:
            self.notify(
                f"no footprint yet: press {key('footprint')} to find who writes what",
                severity="warning",
            )
            return
        self.tabs.active = "tab-footprint"
        self.query_one(FootprintPane).next_output()

    def action_step_workgroups(self) -> None:
        """Open the workgroup stepper on the planned case."""
        from workbench.screens.workgroup_steps import WorkgroupStepScreen

        session, st = self.wb.session, self.current_state()
        if self.refused("step_workgroups") or session is None or st is None:
            return
        if st.case is None or not st.planned:
            self.notify(
                "no case yet: fix the form, or wait for it to be planned", severity="warning"
            )
            return
        self.app.push_screen(WorkgroupStepScreen(session, st.case))

    def start(self, kind: str) -> None:
        """Run, bench or gradcheck the current kernel in a worker thread."""
        session = self.wb.session
        kernel = self.kernel()
        st = self.current_state()
        action = {"grad": "gradcheck"}.get(kind, kind)
        if self.refused(action) or session is None or kernel is None or st is None:
            return
        spec, _ = self.spec_of(kernel)
        parsed = parse_form(st.form, spec)
        if parsed.problems:
            self.form.show_problems(parsed.problems)
            self.notify("fix the form first: " + parsed.problems[0], severity="error")
            return
        self._cancel = threading.Event()
        self._job += 1
        self.busy, self._busy_key = kind, self.current
        self.refresh_bindings()
        self.verdict_bar.busy(f"{DOING[kind]} {kernel.name}: preparing inputs", None)
        cached = st.case if st.planned else None
        tab = {"grad": "gradients", "bench": "timing", "footprint": "footprint", "probe": "probes"}
        if kind in tab:
            self.tabs.active = f"tab-{tab[kind]}"
        pane = self.query_one(ProbesPane)
        probe = (pane.invocation, pane.capacity)
        self._gpu(
            kind,
            session,
            self.current,
            kernel,
            spec,
            st.form,
            cached,
            self._cancel,
            self._job,
            probe,
        )

    @work(thread=True, group="gpu")
    def _gpu(
        self,
        kind: str,
        session: Session,
        key_: str,
        kernel: Kernel,
        spec: KernelSpec | None,
        form: FormState,
        cached: Case | None,
        cancel: threading.Event,
        job: int,
        probe: tuple[str, str] = ("", ""),
    ) -> None:
        """`probe`: what the Probes tab asks to record (an invocation, a capacity) as typed.

        Stops at the next submission when cancelled (escape) or when the app exits: the worker's
        thread cannot be killed, and a timing left running would hold the GPU lock.
        """
        worker = get_current_worker()

        def stop() -> bool:
            return cancel.is_set() or worker.is_cancelled

        def progress(message: str, fraction: float) -> None:
            if not cancel.is_set():  # the screen has said "cancelled" already
                self.post_message(Progress(f"{DOING[kind]} {kernel.name}: {message}", fraction))

        outcome: (
            RunFinished
            | CheckFinished
            | FootprintFinished
            | ProbesFinished
            | RunFailed
            | RunCancelled
        )
        try:
            case = cached
            if case is None:
                case = build_case(session, kernel, spec, form)
                refusal = limit_problem(session, case)
                self.post_message(CasePlanned(key_, form.key, case, (refusal,) if refusal else ()))
            with self.wb.gpu_lock:
                if stop():  # cancelled while waiting for the GPU: do not start
                    outcome = RunCancelled(key_, kind, job)
                elif kind == "grad":
                    from workbench.checks import check_case

                    report = check_case(
                        session, case, what=("grad",), progress=progress, cancelled=stop
                    )
                    outcome = CheckFinished(key_, kind, report, job)
                elif kind == "footprint":
                    fp = footprint(session, case, say=progress, cancelled=stop)
                    outcome = FootprintFinished(key_, kind, fp, job)
                elif kind == "probe":
                    outcome = ProbesFinished(key_, kind, _probe(session, case, *probe), job)
                else:
                    run = session.run(case, progress=progress, cancelled=stop)
                    if kind == "bench" and not stop():
                        run = self._bench(session, run, progress, stop)
                    outcome = RunFinished(key_, kind, run, job)
        except CompileError as exc:
            outcome = RunFailed(key_, kind, str(exc), compile=True, job=job)
        except WorkbenchError as exc:
            outcome = RunFailed(key_, kind, ui_message(exc), job=job)
        except Exception as exc:  # never let a bug in a spec or check kill the UI: show it
            error = f"internal error: {type(exc).__name__}: {exc}"
            outcome = RunFailed(key_, kind, error, job=job)
        self.post_message(RunCancelled(key_, kind, job) if stop() else outcome)

    def _bench(
        self,
        session: Session,
        run: Run,
        progress: Callable[[str, float], None],
        stop: Callable[[], bool],
    ) -> Run:
        """Time a checked run within the bench budget, after measuring the roofline (once)."""
        if session.measured_roofline() is None:
            progress("measuring the adapter's roofline (once per adapter)", 0.2)
            if session.roofline(cancelled=stop) is None:
                return run  # cancelled: the caller says so
        budget = ui_budget(self.wb.config, self.wb.config["bench_ms"])
        warm = fmt_ms(budget.warmup_ms)
        timing = session.time_cases(
            [run.case],
            budget,
            lambda done, total: progress(f"timing {done}/{total}", 0.3 + 0.7 * done / total),
            stop,
            lambda part: progress(f"warming up the adapter for {warm}", 0.2 + 0.1 * part),
        )[0]
        return replace(run, timing=timing)

    @on(Progress)
    def _progress(self, message: Progress) -> None:
        if self.busy:
            self.verdict_bar.busy(message.line, message.fraction)

    def _work_done(
        self,
        message: RunFinished
        | CheckFinished
        | FootprintFinished
        | ProbesFinished
        | RunFailed
        | RunCancelled,
    ) -> KernelState | None:
        """The state to update with the outcome of the work in flight; None for the outcome of
        work cancelled before (the screen said so when it was)."""
        if message.job != self._job or self.busy is None:
            return None
        self.busy = None
        self.refresh_bindings()
        return self.states.get(message.key)

    def _show_if_current(self, key_: str) -> None:
        if key_ == self.current:
            self.refresh_view()

    @on(RunCancelled)
    def _run_cancelled(self, message: RunCancelled) -> None:
        st = self._work_done(message)
        if st is not None:
            st.cancel(message.kind)
            self._show_if_current(message.key)

    @on(RunFinished)
    def _run_finished(self, message: RunFinished) -> None:
        st = self._work_done(message)
        if st is not None:
            self.history.add(message.key, message.run)
            st.ran(message.run)
            self._show_if_current(message.key)

    @on(CheckFinished)
    def _check_finished(self, message: CheckFinished) -> None:
        st = self._work_done(message)
        if st is not None:
            st.checked(message.report)
            self._show_if_current(message.key)

    @on(FootprintFinished)
    def _footprint_finished(self, message: FootprintFinished) -> None:
        st = self._work_done(message)
        if st is not None:
            st.footprinted(message.footprint)
            self._show_if_current(message.key)

    @on(ProbesFinished)
    def _probes_finished(self, message: ProbesFinished) -> None:
        st = self._work_done(message)
        if st is not None:
            st.probed(message.probes)
            self._show_if_current(message.key)

    @on(RunFailed)
    def _run_failed(self, message: RunFailed) -> None:
        st = self._work_done(message)
        if st is None:
            return
        if message.compile:
            st.compile_failed(message.error)
        else:
            st.failed(message.error)
        self._show_if_current(message.key)
        if message.compile and message.key == self.current:
            self.tabs.active = "tab-source"

    def action_cancel(self) -> None:
        """Cancel the work in flight now: the screen says so at once, and drops its outcome.
        The worker stops after the dispatch under way (a dispatch cannot be interrupted); work
        started meanwhile waits for the GPU until then."""
        kind, st = self.busy, self.states.get(self._busy_key or "")
        if kind is None:
            return
        self._cancel.set()
        cancel_references()  # a corpus's refs.py in a loop stops now, not after its time limit
        self._job += 1
        self.busy = None
        self.refresh_bindings()
        if st is not None:
            st.cancel(kind)
        self.refresh_view()
        self.notify(
            f"cancelled the {WORK[kind]}; the GPU finishes the dispatch under way",
            title=WORK[kind],
        )

    def action_leave_field(self) -> None:
        if self.app.focused is self.browser.tree:
            self.notify("nothing is running: esc cancels work in flight, or leaves a field")
        self.sidebar = True
        self.browser.tree.focus()

    def action_filter(self) -> None:
        self.sidebar = True
        self.browser.filter_box.focus()

    # -- the kernel list: shown or hidden, by width and by ctrl+b ------------------------------
    def on_resize(self, event: events.Resize) -> None:
        narrow = event.size.width < NARROW_BELOW
        if narrow != self._narrow:  # crossing the threshold resets what ctrl+b chose
            self._narrow = narrow
            self.sidebar = not narrow

    def action_toggle_sidebar(self) -> None:
        self.sidebar = not self.sidebar
        if self.sidebar:
            self.browser.tree.focus()

    def watch_sidebar(self, shown: bool) -> None:
        self.set_class(not shown, "-sidebar-hidden")
        if not shown and self.browser.has_focus_within:
            # On to the open kernel's first field; before a kernel is open, nowhere (the keys
            # still reach the screen), so that focus does not land on a field about to go.
            fields = self.form.query(Input) if self.current_state() else None
            self.set_focus(fields.first() if fields else None)

    def focus_form(self) -> bool:
        """Focus the first field of the dims form (its text selected); False if none is shown."""
        if self.query_one("#kernel-view").has_class("-empty"):
            return False
        first = next(iter(self.form.query(Input).results(Input)), None)
        if first is not None:
            first.focus()
        return first is not None

    def action_focus_form(self) -> None:
        if not self.focus_form():
            self.notify(
                "no dims form yet: it appears with the kernel view, once the adapter is open"
            )

    def action_tab(self, name: str) -> None:
        self.tabs.active = f"tab-{name}"

    @on(TabbedContent.TabActivated)
    def _tab_changed(self, event: TabbedContent.TabActivated) -> None:
        if event.pane.id == "tab-timing":
            self.query_one(TimingPane).redraw()
        elif event.pane.id == "tab-source":
            self.call_after_refresh(self.query_one(SourcePane).scroll_to_target)

    def action_toggle_module(self) -> None:
        self.show_module = not self.show_module
        self.tabs.active = "tab-source"  # where the switch shows
        self.refresh_view()

    # -- statuses ------------------------------------------------------------------------------
    def refresh_statuses(self) -> None:
        session = self.wb.session
        if session is not None:
            self._check_statuses(session)

    @work(thread=True, exclusive=True, group="status")
    def _check_statuses(self, session: Session) -> None:
        worker = get_current_worker()
        for k in list(session.corpus.kernels):
            if worker.is_cancelled:
                return
            with self.wb.gpu_lock:
                found = session.status(k)
            try:
                spec = session.spec(k)
                mismatch = False
            except SpecMismatchError:
                spec, mismatch = None, True
            if worker.is_cancelled:  # a newer check (another session) has begun
                return
            status = status_kind(found, spec is not None, mismatch)
            self.post_message(StatusChecked(kernel_key(k), status, found))

    @on(StatusChecked)
    def _status(self, message: StatusChecked) -> None:
        key_, status, found = message.key, message.status, message.found
        self._statuses[key_] = status
        self.browser.set_status(key_, status)
        if key_ != self.current:
            return
        st = self.states.get(key_)
        if st is None:
            return
        before = st.error
        if found.kind is StatusKind.COMPILE_ERROR:
            st.compile_failed(found.message)
        elif status.kind == "needs":
            st.source_problem(self._needs(kernel_name(key_), status))
        else:
            st.source_fine(status)
        kernel = self.kernel(key_)
        if kernel is not None:
            self._title(kernel, *self.spec_of(kernel))
        if st.error != before and not self.busy:
            self.refresh_view()

    def _needs(self, name: str, status: KernelStatus) -> str:
        return needs_text(name, status, self.wb.adapter_label(), key("adapter"))

    # -- other actions -------------------------------------------------------------------------
    def action_adapter(self) -> None:
        self.wb.action_switch_adapter()

    def action_fixtures(self) -> None:
        self.wb.action_open_fixtures()

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

    def action_save_fixture(self) -> None:
        if not self.refused("save_fixture"):
            self.wb.action_save_fixture()

    # -- results to take away ------------------------------------------------------------------
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

    @work(thread=True, group="takeaway")
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

        self.app.push_screen(JumpScreen(*shown, blink=not self.wb.snapshot), chosen)

    # -- baseline ------------------------------------------------------------------------------
    def action_pin(self) -> None:
        """Pin the run on screen: from now on every run is shown against it."""
        run = self.current_run()
        if run is None or self.current is None:
            self.notify(f"nothing to pin: run the kernel first ({key('run')})", severity="warning")
            return
        entry = self.history.entry(self.current, run) or self.history.add(self.current, run)
        self.history.pin(self.current, entry)
        self.notify(
            f"pinned run #{entry.number}: every run of {run.case.name} is now compared with it "
            f"({key('unpin')} unpins)",
            title="baseline",
        )
        self.refresh_view()

    def action_unpin(self) -> None:
        entry = self.history.unpin(self.current or "")
        if entry is None:
            self.notify(f"no baseline is pinned ({key('pin')} pins the run on screen)")
            return
        self.notify(f"unpinned run #{entry.number}", title="baseline")
        self.refresh_view()

    def action_runs(self) -> None:
        """Pick the baseline among this session's last runs of the kernel."""
        key_ = self.current
        entries = self.history.runs(key_) if key_ else ()
        if key_ is None or not entries:
            self.notify(f"no runs of this kernel yet this session ({key('run')} runs it)")
            return
        pinned = self.history.pinned(key_)

        def chosen(number: int | None) -> None:
            entry = next((e for e in entries if e.number == number), None)
            if entry is not None:
                self.history.pin(key_, entry)
                self.notify(f"pinned run #{entry.number}", title="baseline")
                self.refresh_view()

        self.app.push_screen(
            RunsScreen(
                kernel_name(key_),
                entries,
                pinned.number if pinned else None,
                self.wb.snapshot,
            ),
            chosen,
        )

    def action_describe(self) -> None:
        """Write the current kernel's settings into the corpus's workbench.toml; the corpus
        reloads, and the kernel is described from then on."""
        st = self.current_state()
        session = self.wb.session
        if st is None or st.case is None or session is None:
            self.notify("nothing to describe yet: the case is not planned", severity="warning")
            return
        try:
            path = write_description(st.case, Path(session.corpus.root))
        except WorkbenchError as exc:
            self.notify(ui_message(exc), severity="error")
            return
        self.notify(f"{st.case.name} described in {path}")
        self.wb.poll_files()

    async def show_case(self, case: Case, run: Run | None, error: str | None = None) -> None:
        """Show a case made elsewhere (a fixture) and its run, as if it had been run here.

        The form gets the case's dims and seed; its inputs (arrays from the fixture) are kept
        with the case and used until the form is edited."""
        key_ = kernel_key(case.kernel)
        form = FormState(dims={k: str(v) for k, v in case.dims.items()}, seed=str(case.seed))
        st = self.states[key_] = KernelState(form=form, case=case, case_key=form.key)
        st.run = run
        st.set_error(error)
        self.browser.select(key_)
        await self.open_kernel(key_)

    @on(CaseForm.LoadNpy)
    def _load_npy(self) -> None:
        self.wb.action_load_npy()


def _roles(case: Case) -> list[tuple[str, str]]:
    """(name, role) of each storage binding of a case: the form's recipe fields."""
    return [(p.name, p.role) for p in case.bindings if p.role != "uniform"]


def _probe(session: Session, case: Case, invocation: str, capacity: str) -> ProbeRun:
    """A probe run as the Probes tab asks for it (its fields as typed)."""
    try:
        cap = int(capacity) if capacity else DEFAULT_CAPACITY
    except ValueError:
        raise UserError(f"probe capacity {capacity!r} is not a whole number") from None
    where = parse_invocation(invocation, case) if invocation else ProbeFilter()
    return run_probes(session, case, capacity=cap, where=where)
