"""The main screen: kernel browser on the left, the current kernel's view on the right.

It owns the loop: pick a kernel, edit its dims and inputs (planned in a worker thread as you type,
so derived figures and refusals show before anything runs), run / bench / gradcheck it (in a
worker thread holding the app's GPU lock, cancellable with escape), and show the verdict and the
tabs. Each kernel keeps its own state (form, last run, report, timings) while you browse, and
results that no longer match the source after an edit are kept and marked stale.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult, SuspendNotSupported
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Footer, Static, TabbedContent, TabPane
from textual.worker import get_current_worker

from workbench.errors import CompileError, LimitError, SpecMismatchError, WorkbenchError
from workbench.session import Case, Run, Session, Status, StatusKind
from workbench.specs.base import KernelSpec
from workbench.specs.registry import spec_for
from workbench.wgsl.corpus import Corpus, Kernel
from workbench.widgets.browser import KernelBrowser, KernelStatus, kernel_key, status_kind
from workbench.widgets.case_form import (
    CaseForm,
    FormState,
    default_form,
    derived_text,
    dims_of,
    inject_specials,
    parse_form,
)
from workbench.widgets.panes import (
    BindingsPane,
    DiffPane,
    GradientsPane,
    OutputsPane,
    SourcePane,
    TimingPane,
    View,
)
from workbench.widgets.verdict import VerdictBar, verdict_text

if TYPE_CHECKING:
    from workbench.app import WorkbenchApp

BENCH_REPS = 20
BENCH_WARMUP = 2
PLAN_DELAY_S = 0.25
TABS = ("outputs", "diff", "gradients", "timing", "source", "bindings")


@dataclass
class KernelState:
    """What the screen remembers about one kernel while the user browses."""

    form: FormState
    case: Case | None = None
    case_key: tuple | None = None
    problems: tuple[str, ...] = ()
    run: Run | None = None
    report: Any = None
    error: str | None = None
    # Where the error came from: "source" (reflection, compile, missing feature: cleared when the
    # kernel compiles again) or "run" (limits, device: cleared by the next good run).
    error_from: str = ""
    stale: str | None = None
    medians: list[float] = field(default_factory=list)

    def set_error(self, error: str | None, source: str = "run") -> None:
        self.error, self.error_from = error, (source if error else "")


def limit_problem(session: Session, case: Case) -> str | None:
    """The adapter limit this case would exceed, said before anything is allocated."""
    refusal = session.limit_refusal(case)
    return f"refused: {refusal}" if refusal else None


def build_case(session: Session, kernel: Kernel, spec: KernelSpec | None, state: FormState) -> Case:
    """The case the form describes; WorkbenchError for anything the user can fix."""
    parsed = parse_form(state, spec)
    if parsed.problems:
        raise WorkbenchError("; ".join(parsed.problems))
    case = session.case(
        kernel, dims=parsed.dims, inputs=parsed.inputs, seed=parsed.seed, adhoc=spec is None
    )
    if parsed.special:
        inject_specials(case)
    return case


class MainScreen(Screen):
    """Browser + kernel view + footer."""

    BINDINGS: ClassVar[list[Binding]] = [
        Binding("r", "run", "Run", id="run"),
        Binding("b", "bench", "Bench", id="bench"),
        Binding("g", "gradcheck", "Gradcheck", id="gradcheck"),
        Binding("f", "save_fixture", "Save fixture", id="save_fixture"),
        Binding("e", "edit", "Edit", id="edit"),
        Binding("a", "adapter", "Adapter", id="adapter"),
        Binding("x,f3", "fixtures", "Fixtures", id="fixtures"),
        Binding("m", "toggle_module", "Module", show=False, id="toggle_module"),
        Binding("escape", "cancel", "Cancel run", id="cancel"),
        Binding("escape", "leave_field", "Back to kernels", show=False, id="leave_field"),
        Binding("slash", "filter", "Filter", show=False, id="filter"),
        *[
            Binding(str(i + 1), f"tab('{name}')", name.title(), show=False, id=f"tab_{name}")
            for i, name in enumerate(TABS)
        ],
    ]

    DEFAULT_CSS = """
    MainScreen #topbar { height: 1; background: $panel; color: $text; padding: 0 1; }
    MainScreen #kernel-view { padding: 0 0 0 1; }
    MainScreen #kv-title { height: 1; }
    MainScreen #kv-doc { height: 1; color: $text-muted; }
    MainScreen #kv-doc.-fatal { height: auto; }
    MainScreen #kernel-view.-empty #form, MainScreen #kernel-view.-empty #verdict-bar,
    MainScreen #kernel-view.-empty #tabs { display: none; }
    MainScreen #tabs { height: 1fr; }
    MainScreen TabPane { padding: 0; }
    """

    def __init__(self) -> None:
        super().__init__()
        self.states: dict[str, KernelState] = {}
        self.current: str | None = None
        self.busy: str | None = None
        self.planning = False
        self.checking_status = False
        self.show_module = False
        self._cancel = threading.Event()
        self._plan_timer: Timer | None = None
        self._statuses: dict[str, KernelStatus] = {}

    @property
    def wb(self) -> WorkbenchApp:
        return self.app  # type: ignore[return-value]

    # -- layout --------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        blink = not self.wb.snapshot
        yield Static(id="topbar")
        with Horizontal(id="body"):
            yield KernelBrowser(id="browser", blink=blink)
            with Vertical(id="kernel-view", classes="-empty"):
                yield Static(id="kv-title")
                yield Static(id="kv-doc")
                yield CaseForm(id="form", blink=blink)
                yield VerdictBar(id="verdict-bar")
                with TabbedContent(id="tabs", initial="tab-outputs"):
                    with TabPane("Outputs", id="tab-outputs"):
                        yield OutputsPane(id="outputs", blink=blink)
                    with TabPane("Diff", id="tab-diff"):
                        yield DiffPane(id="diff")
                    with TabPane("Gradients", id="tab-gradients"):
                        yield GradientsPane(id="gradients")
                    with TabPane("Timing", id="tab-timing"):
                        yield TimingPane(id="timing")
                    with TabPane("Source", id="tab-source"):
                        yield SourcePane(id="source")
                    with TabPane("Bindings", id="tab-bindings"):
                        yield BindingsPane(id="bindings")
        yield Footer()

    def on_mount(self) -> None:
        self.update_topbar()
        self.query_one("#kv-title", Static).update(Text("loading the corpus…", style="dim"))
        self.query_one(KernelBrowser).tree.focus()

    def update_topbar(self) -> None:
        app = self.wb
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append("workbench", style="bold")
        text.append(" · ")
        if app.session is not None:
            text.append(app.adapter_label())
        else:
            text.append(app.opening or "opening the GPU adapter…", style="italic")
        text.append(" · corpus ")
        text.append(app.corpus_label())
        self.query_one("#topbar", Static).update(text)

    # -- what the app tells us -----------------------------------------------------------------
    def show_corpus(self, corpus: Corpus) -> None:
        """The corpus is loaded (before the adapter is ready): fill the browser."""
        browser = self.query_one(KernelBrowser)
        browser.set_corpus(corpus, self._statuses)
        first = self.current or browser.first_key()
        if first:
            browser.select(first)
            self.current = first
        self.query_one("#kv-title", Static).update(
            Text("opening the GPU adapter… (the kernel view appears when it is ready)", style="dim")
        )

    async def session_ready(self) -> None:
        self.update_topbar()
        self.refresh_statuses()
        key = self.current or self.query_one(KernelBrowser).first_key()
        if key:
            await self.open_kernel(key)

    def fatal(self, message: str) -> None:
        """The corpus or the adapter could not be opened: say so where the view would be."""
        self.update_topbar()
        self.query_one("#kv-title", Static).update(Text("✗ cannot start", style="bold red"))
        text = Text(message, style="red")
        text.append(
            "\n\nfix it and restart; `workbench adapters` lists the adapters this machine has",
            style="default",
        )
        self.query_one("#kv-doc", Static).update(text)
        self.query_one("#kv-doc").add_class("-fatal")

    async def corpus_reloaded(self) -> None:
        """The files changed on disk and the session re-read them."""
        session = self.wb.session
        browser = self.query_one(KernelBrowser)
        browser.set_corpus(session.corpus, self._statuses)
        for st in self.states.values():
            st.case, st.case_key = None, None
        keys = {kernel_key(k) for k in session.corpus.kernels}
        key = self.current if self.current in keys else browser.first_key()
        self.refresh_statuses()
        if key is None:
            return
        browser.select(key)
        await self.open_kernel(key, rerun=True)

    async def adapter_switched(self, old_label: str) -> None:
        """A new session on another adapter: statuses change, old results are from elsewhere."""
        self.update_topbar()
        for key, st in self.states.items():
            st.case, st.case_key = None, None
            if st.run is not None and key != self.current:
                st.stale = f"ran on {old_label}"
        self.refresh_statuses()
        if self.current:
            await self.open_kernel(self.current, rerun=True)

    # -- kernel selection ----------------------------------------------------------------------
    def kernel(self, key: str | None = None) -> Kernel | None:
        session = self.wb.session
        key = key or self.current
        if session is None or key is None:
            return None
        return next((k for k in session.corpus.kernels if kernel_key(k) == key), None)

    def spec_of(self, kernel: Kernel) -> tuple[KernelSpec | None, str]:
        """The kernel's spec (None: ad hoc) and, for a signature mismatch, why it runs ad hoc."""
        try:
            return self.wb.session.spec(kernel), ""
        except SpecMismatchError as exc:
            return None, str(exc)

    @on(KernelBrowser.Selected)
    async def _selected(self, event: KernelBrowser.Selected) -> None:
        await self.open_kernel(event.key)

    async def open_kernel(self, key: str, rerun: bool = False) -> None:
        """Show a kernel: its form (remembered per kernel), its last results, and plan its case."""
        self.current = key
        kernel = self.kernel(key)
        if kernel is None:
            return
        spec, mismatch = self.spec_of(kernel)
        st = self.states.get(key)
        if st is None or set(st.form.dims) != {d.name for d in dims_of(spec)}:
            # First visit, or the kernel gained/lost its spec with an edit: start from defaults.
            st = self.states[key] = KernelState(form=default_form(spec))
        status = self._statuses.get(key, KernelStatus("pending"))
        if kernel.problem:
            problem = kernel.problem
            located = problem.startswith(f"{kernel.file}:")
            st.set_error(problem if located else f"{kernel.file}: {problem}", "source")
        elif status.kind == "needs":
            st.set_error(self._needs(kernel.name, status), "source")
        elif st.error_from == "source" and status.kind != "error":
            st.set_error(None)
        self._title(kernel, spec, mismatch)
        self.query_one("#kernel-view").remove_class("-empty")
        await self.query_one(CaseForm).set_kernel(spec, st.form)
        self.refresh_view()
        self.refresh_bindings()
        if rerun and st.run is not None and not kernel.problem:
            self.start("bench" if st.run.timing and st.run.timing.reps else "run")
        else:
            self.schedule_plan(0.01)

    def _title(self, kernel: Kernel, spec: KernelSpec | None, mismatch: str) -> None:
        title = Text(no_wrap=True, overflow="ellipsis")
        title.append(kernel.name, style="bold")
        title.append(f"  {kernel.file}:{kernel.line}", style="cyan")
        status = self._statuses.get(kernel_key(kernel), KernelStatus("pending"))
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
        self.query_one("#kv-title", Static).update(title)
        if mismatch:
            doc = Text(f"runs ad hoc: {mismatch}", style="magenta")
        elif spec is not None:
            doc = Text(spec.doc or "")
        else:
            doc = Text(
                "no spec: one size n for every runtime-sized array, no reference to compare with"
            )
        doc.no_wrap, doc.overflow = True, "ellipsis"
        self.query_one("#kv-doc", Static).update(doc)

    # -- views ---------------------------------------------------------------------------------
    def view(self) -> View:
        key = self.current
        st = self.states.get(key) if key else None
        session = self.wb.session
        return View(
            kernel=self.kernel(),
            case=st.case if st else None,
            run=st.run if st else None,
            report=st.report if st else None,
            error=st.error if st else None,
            stale=st.stale if st else None,
            medians=list(st.medians) if st else [],
            snapshot=self.wb.snapshot,
            corpus_root=session.corpus.root if session else None,
            features=session.adapter.features if session else frozenset(),
            show_module=self.show_module,
        )

    def refresh_view(self) -> None:
        """Re-render the verdict and every pane from the current kernel's state."""
        view = self.view()
        if not self.busy:
            spec = view.case.spec if view.case is not None else None
            if spec is None and view.kernel is not None:
                spec = spec_for(view.kernel.name)
            grad = spec is not None and spec.gradient is not None
            self.query_one(VerdictBar).show(
                verdict_text(view.run, view.error, view.stale, view.snapshot, grad, view.report)
            )
        self.query_one(OutputsPane).show(view)
        self.query_one(DiffPane).show(view)
        self.run_worker(self.query_one(GradientsPane).show(view), group="panes", exclusive=True)
        self.query_one(TimingPane).show(view)
        if view.kernel is not None:
            self.query_one(SourcePane).show(view)
        self.query_one(BindingsPane).show(view)

    # -- planning (no GPU) ---------------------------------------------------------------------
    @on(CaseForm.Changed)
    def _form_changed(self, event: CaseForm.Changed) -> None:
        st = self.states.get(self.current or "")
        if st is None:
            return
        st.form = event.state
        self.schedule_plan()

    @on(CaseForm.Submitted)
    def _form_submitted(self, event: CaseForm.Submitted) -> None:
        st = self.states.get(self.current or "")
        if st is not None:
            st.form = event.state
            self.start("run")

    def schedule_plan(self, delay: float = PLAN_DELAY_S) -> None:
        if self._plan_timer is not None:
            self._plan_timer.stop()
        self.planning = True
        self._plan_timer = self.set_timer(delay, self._plan_now)

    async def _plan_now(self) -> None:
        kernel = self.kernel()
        st = self.states.get(self.current or "")
        if kernel is None or st is None or self.wb.session is None:
            self.planning = False
            return
        if kernel.problem or kernel.entry_point is None:
            self.planning = False
            self.query_one(CaseForm).show_derived("")
            return
        spec, _ = self.spec_of(kernel)
        parsed = parse_form(st.form, spec)
        form = self.query_one(CaseForm)
        if parsed.problems:
            self.planning = False
            form.show_problems(parsed.problems)
            form.show_derived(Text("fix the fields marked below", style="dim"))
            form.show_sizes(None)
            return
        if st.case is not None and st.case_key == st.form.key:
            self.planning = False
            await self._show_plan(st)
            return
        self._plan(self.wb.session, self.current, kernel, spec, st.form)

    @work(thread=True, exclusive=True, group="plan")
    def _plan(
        self, session: Session, key: str, kernel: Kernel, spec: KernelSpec | None, form: FormState
    ) -> None:
        worker = get_current_worker()
        case, problems = None, ()
        try:
            case = build_case(session, kernel, spec, form)
            refusal = limit_problem(session, case)
            problems = (refusal,) if refusal else ()
        except LimitError as exc:
            problems = (f"refused: {exc}",)
        except WorkbenchError as exc:
            problems = (str(exc),)
        except Exception as exc:  # a spec's own bug must not take the UI down; show it
            problems = (f"internal error while planning: {type(exc).__name__}: {exc}",)
        if not worker.is_cancelled:
            self.app.call_from_thread(self._planned, key, form.key, case, problems)

    async def _planned(self, key: str, form_key: tuple, case: Case | None, problems: tuple) -> None:
        st = self.states.get(key)
        if st is None or st.form.key != form_key:
            return  # the form moved on; a newer plan is coming
        st.case, st.case_key, st.problems = (case if not problems else None), form_key, problems
        if key == self.current:
            self.planning = False
            await self._show_plan(st, case)

    async def _show_plan(self, st: KernelState, case: Case | None = None) -> None:
        form = self.query_one(CaseForm)
        shown = case or st.case
        if shown is not None:
            await form.set_roles([(p.name, p.role) for p in shown.bindings if p.role != "uniform"])
        form.show_problems(st.problems)
        form.show_derived(derived_text(shown) if shown is not None else "")
        form.show_sizes(shown)
        self.query_one(BindingsPane).show(self.view())
        self.query_one(TimingPane).show(self.view())

    # -- GPU work ------------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        st = self.states.get(self.current or "")
        kernel = self.kernel() if self.wb.session else None
        runnable = kernel is not None and not kernel.problem and kernel.entry_point is not None
        if action == "cancel":
            return self.busy is not None
        if action == "leave_field":
            return self.busy is None
        if action in ("run", "bench"):
            return None if (self.busy or not runnable) else True
        if action == "gradcheck":
            spec = self.spec_of(kernel)[0] if runnable else None
            if spec is None or spec.gradient is None:
                return False
            return None if self.busy else True
        if action == "save_fixture":
            return bool(st and st.run is not None and not st.stale and not self.busy) or None
        if action == "edit":
            return kernel is not None
        return True

    def action_run(self) -> None:
        self.start("run")

    def action_bench(self) -> None:
        self.start("bench")

    def action_gradcheck(self) -> None:
        self.start("grad")

    def start(self, kind: str) -> None:
        """Run, bench or gradcheck the current kernel in a worker thread."""
        session = self.wb.session
        kernel = self.kernel()
        st = self.states.get(self.current or "")
        if session is None or kernel is None or st is None:
            return
        if self.busy:
            self.notify("a run is in flight: escape cancels it", severity="warning")
            return
        spec, _ = self.spec_of(kernel)
        parsed = parse_form(st.form, spec)
        if parsed.problems:
            self.query_one(CaseForm).show_problems(parsed.problems)
            self.notify("fix the form first: " + parsed.problems[0], severity="error")
            return
        self._cancel = threading.Event()
        self.busy = kind
        self.refresh_bindings()
        label = {"run": "running", "bench": "benchmarking", "grad": "checking gradients"}[kind]
        self.query_one(VerdictBar).busy(f"{label} {kernel.name}: preparing inputs", None)
        cached = st.case if st.case_key == st.form.key else None
        if kind == "grad":
            self.query_one(TabbedContent).active = "tab-gradients"
        elif kind == "bench":
            self.query_one(TabbedContent).active = "tab-timing"
        self._gpu(kind, session, self.current, kernel, spec, st.form, cached, self._cancel)

    @work(thread=True, group="gpu")
    def _gpu(
        self,
        kind: str,
        session: Session,
        key: str,
        kernel: Kernel,
        spec: KernelSpec | None,
        form: FormState,
        cached: Case | None,
        cancel: threading.Event,
    ) -> None:
        label = {"run": "running", "bench": "benchmarking", "grad": "checking gradients"}[kind]

        def progress(message: str, fraction: float) -> None:
            self.app.call_from_thread(self._progress, f"{label} {kernel.name}: {message}", fraction)

        result: tuple[str, Any]
        try:
            case = cached
            if case is None:
                case = build_case(session, kernel, spec, form)
                refusal = limit_problem(session, case)
                self.app.call_from_thread(
                    self._planned, key, form.key, case, (refusal,) if refusal else ()
                )
            with self.wb.gpu_lock:
                if kind == "grad":
                    from workbench.checks import check_case

                    report = check_case(
                        session, case, what=("grad",), progress=progress, cancelled=cancel.is_set
                    )
                    result = ("report", report)
                else:
                    bench = kind == "bench"
                    run = session.run(
                        case,
                        reps=BENCH_REPS if bench else 0,
                        warmup=BENCH_WARMUP if bench else 0,
                        progress=progress,
                        cancelled=cancel.is_set,
                    )
                    result = ("run", run)
        except CompileError as exc:
            result = ("compile", str(exc))
        except WorkbenchError as exc:
            result = ("error", str(exc))
        except Exception as exc:  # never let a bug in a spec or check kill the UI: show it
            result = ("error", f"internal error: {type(exc).__name__}: {exc}")
        self.app.call_from_thread(self._finished, key, kind, result, cancel.is_set())

    def _progress(self, message: str, fraction: float) -> None:
        if self.busy:
            self.query_one(VerdictBar).busy(message, fraction)

    def _finished(self, key: str, kind: str, result: tuple[str, Any], cancelled: bool) -> None:
        self.busy = None
        self.refresh_bindings()
        st = self.states.get(key)
        if st is None:
            return
        what, value = result
        if cancelled:
            self.notify("cancelled; the results shown are from before", title=kind)
        elif what == "run":
            st.run, st.stale = value, None
            st.set_error(None)
            if value.timing is not None and value.timing.reps:
                st.medians.append(value.timing.median_ms)
        elif what == "report":
            st.report = value
            st.set_error(None)
        elif what == "compile":
            st.set_error(value, "source")
            if st.run is not None:
                st.stale = "results from before the last edit: " + value.split("\n", 1)[0]
        else:
            st.set_error(value)
        if key == self.current:
            self.refresh_view()
            if what in ("compile",):
                self.query_one(TabbedContent).active = "tab-source"

    def action_cancel(self) -> None:
        if self.busy:
            self._cancel.set()
            self.query_one(VerdictBar).busy("cancelling after the current dispatch…", None)

    def action_leave_field(self) -> None:
        self.query_one(KernelBrowser).tree.focus()

    def action_filter(self) -> None:
        self.query_one("#filter").focus()

    def action_tab(self, name: str) -> None:
        self.query_one(TabbedContent).active = f"tab-{name}"

    @on(TabbedContent.TabActivated)
    def _tab_changed(self, event: TabbedContent.TabActivated) -> None:
        if event.pane.id == "tab-timing":
            self.query_one(TimingPane).show(self.view())
        elif event.pane.id == "tab-source":
            self.call_after_refresh(self.query_one(SourcePane).scroll_to_target)

    def action_toggle_module(self) -> None:
        self.show_module = not self.show_module
        self.query_one(SourcePane).show(self.view())

    # -- statuses ------------------------------------------------------------------------------
    def refresh_statuses(self) -> None:
        session = self.wb.session
        if session is not None:
            self.checking_status = True
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
            status = status_kind(found, spec is not None, mismatch)
            self.app.call_from_thread(self._status, kernel_key(k), status, found)
        self.app.call_from_thread(self._statuses_done)

    def _status(self, key: str, status: KernelStatus, found: Status) -> None:
        self._statuses[key] = status
        self.query_one(KernelBrowser).set_status(key, status)
        if key != self.current:
            return
        st = self.states.get(key)
        if st is None:
            return
        before = st.error
        if found.kind is StatusKind.COMPILE_ERROR:
            st.set_error(found.message, "source")
            if st.run is not None:
                st.stale = "results from before the last edit: " + st.error.split("\n", 1)[0]
        elif status.kind == "needs":
            st.set_error(self._needs(key.rsplit(":", 1)[1], status), "source")
        elif st.error_from == "source" and status.kind != "error":
            st.set_error(None)
        changed = st.error != before
        kernel = self.kernel(key)
        if kernel is not None:
            self._title(kernel, *self.spec_of(kernel))
        if changed and not self.busy:
            self.refresh_view()

    def _needs(self, name: str, status: KernelStatus) -> str:
        return (
            f"{name} {status.detail}, which {self.wb.adapter_label()} lacks: press a to choose "
            "another adapter"
        )

    def _statuses_done(self) -> None:
        self.checking_status = False

    # -- other actions -------------------------------------------------------------------------
    def action_adapter(self) -> None:
        self.wb.action_switch_adapter()

    def action_fixtures(self) -> None:
        self.wb.action_open_fixtures()

    def action_edit(self) -> None:
        kernel = self.kernel()
        session = self.wb.session
        if kernel is None or session is None:
            return
        path = Path(session.corpus.root) / kernel.file
        st = self.states.get(self.current or "")
        line = kernel.line
        from workbench.widgets.panes import error_location

        loc = error_location(st.error) if st and st.error else None
        if loc and loc[0] == kernel.file:
            line = loc[1]
        editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
        try:
            with self.app.suspend():
                subprocess.run([*shlex.split(editor), f"+{line}", str(path)], check=False)
        except SuspendNotSupported:
            self.notify(f"cannot hand the terminal to an editor here; edit {path}:{line}")
            return
        except OSError as exc:
            self.notify(f"could not start {editor!r}: {exc}", severity="error")
            return
        self.wb.poll_files()

    def action_save_fixture(self) -> None:
        self.wb.action_save_fixture()

    async def show_case(self, case: Case, run: Run | None, error: str | None = None) -> None:
        """Show a case made elsewhere (a fixture) and its run, as if it had been run here.

        The form gets the case's dims and seed; its inputs (arrays from the fixture) are kept
        with the case and used until the form is edited."""
        key = kernel_key(case.kernel)
        form = FormState(dims={k: str(v) for k, v in case.dims.items()}, seed=str(case.seed))
        st = self.states[key] = KernelState(form=form, case=case, case_key=form.key)
        st.run = run
        st.set_error(error)
        self.query_one(KernelBrowser).select(key)
        await self.open_kernel(key)

    def current_run(self) -> Run | None:
        st = self.states.get(self.current or "")
        return st.run if st else None

    def set_recipe(self, name: str, recipe: str) -> None:
        """Fill a binding's recipe field (the load .npy dialog uses this)."""
        self.query_one(CaseForm).set_recipe(name, recipe)

    @on(CaseForm.LoadNpy)
    def _load_npy(self) -> None:
        self.wb.action_load_npy()

    def input_names(self) -> list[str]:
        return self.query_one(CaseForm).input_names()

    @property
    def settled(self) -> bool:
        """Nothing in flight: no run, no pending plan, no status check (tests wait for this)."""
        return (
            self.wb.session is not None
            and self.busy is None
            and not self.planning
            and not self.checking_status
        )
