"""The Debug screen: one invocation's execution, stepped line by line with the GPU's values.

The trace comes from one `DebugJob` (an instrumented dispatch of the case, run by the app's job
runner); every move after that is `viewmodel.debug.TraceView` over the trace in memory, with no
GPU work. Keys (the registry's `debug` scope, the steppers' one scheme): n/→ next statement,
u/← back, z/home first, l/end last, O over a call, A out of a function, L the loop's next
iteration, t to the cursor's line (↑/↓ move the cursor), F9 a breakpoint on that line,
W a condition, G/F5 and R to the next / previous breakpoint, X a watch, i another invocation (or
an element's last writer), F the first non-finite value. The source shows the current step's file
with its line lit; beside it the frame's locals (those set by this step marked), the watches,
the call stack, the last loads and stores, and each `var<workgroup>` array as the invocation
saw it after the last barrier it reached.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Input, Static

from workbench.commands import bindings
from workbench.errors import UserError
from workbench.jobs import RunsJobs
from workbench.messages import JobFailed, JobProgress
from workbench.session import Case, Session
from workbench.units import fmt_count
from workbench.viewmodel.debug import Debugged, Pick, TraceView, parse_pick, source_lines
from workbench.viewmodel.jobs import DebugJob
from workbench.viewmodel.keys import key
from workbench.widgets.key_footer import KeyFooter
from workbench.widgets.trace_source import TraceSource
from workbench.workgroups.debug import show

MEMORY_SHOWN = 6  # loads and stores listed
SHARED_SHOWN = 16  # elements of a workgroup array shown
# What each question asks, its placeholder.
_ASK = {
    "pick": "invocation X,Y,Z, or an element such as y[36] (its last writer)",
    "condition": "break when (WGSL over the recorded names: acc > 1e6, isnan(x)); empty removes",
    "watch": "watch (WGSL over the recorded names: x[i] * 2.0); empty clears the watches",
}


class DebugScreen(RunsJobs, Screen[None]):
    """Step one invocation's trace; escape returns to the kernel."""

    BINDINGS: ClassVar[list[BindingType]] = bindings("debug")
    DEFAULT_CSS = """
    DebugScreen #debug-head { height: auto; padding: 0 1; background: $boost; }
    DebugScreen #debug-body { height: 1fr; }
    DebugScreen #debug-source { width: 3fr; }
    DebugScreen #debug-side { width: 2fr; min-width: 30; padding: 0 1; }
    DebugScreen #debug-side > Static { height: auto; margin-bottom: 1; }
    DebugScreen #debug-say { height: auto; padding: 0 1; }
    DebugScreen #debug-ask { display: none; }
    DebugScreen.asking #debug-ask { display: block; }
    """

    def __init__(
        self, session: Session, case: Case, pick: Pick | None = None, nonfinite: bool = False
    ) -> None:
        super().__init__()
        self.session, self.case = session, case
        self.start = (pick, nonfinite)
        self.view: TraceView | None = None
        self.found = ""  # how the invocation was found (an element's writer, a search)
        self.busy = False
        self.asking = ""  # the question the input line answers ("" none)
        self.file = ""  # the file shown
        self.cursor = 0  # the cursor's line in it

    def compose(self) -> ComposeResult:
        yield Static(id="debug-head")
        with Horizontal(id="debug-body"):
            yield TraceSource(id="debug-source")
            with VerticalScroll(id="debug-side"):
                yield Static(id="debug-locals")
                yield Static(id="debug-watch")
                yield Static(id="debug-stack")
                yield Static(id="debug-memory")
                yield Static(id="debug-shared")
        yield Static(id="debug-say")
        yield Input(id="debug-ask")
        yield KeyFooter()

    def on_mount(self) -> None:
        self._trace(*self.start)

    # -- the one GPU job -----------------------------------------------------------------------
    def _trace(self, pick: Pick | None, nonfinite: bool = False) -> None:
        if self.busy:
            self._say("a trace is in flight", error=True)
            return
        self.busy = True
        what = "the first non-finite value" if nonfinite else f"invocation {pick or '0,0,0'}"
        self._head(f"{self.case.name}: tracing {what}…")
        self.submit(
            DebugJob(self.session, self.case, pick, nonfinite),
            self._traced,
            self._failed,
            self._progress,
        )

    def _traced(self, result: Debugged) -> None:
        self.busy = False
        self.found = result.found
        nf = result.nonfinite
        self.view = TraceView(result.trace, nonfinite=nf.step.step if nf else None)
        line = self.view.to_nonfinite() if nf else "at the first step"
        if nf is not None:
            ops = ", ".join(f"{k} = {show(v, '')}" for k, v in nf.operands.items())
            line = (
                f"{nf.step.name} = {show(nf.step.value, nf.step.type)} from "
                f"{ops or 'no recorded operands'}; {fmt_count(nf.invocations, 'invocation')} made one"
            )
        self.file = ""
        self._show(line)

    def _failed(self, failure: JobFailed) -> None:
        self.busy = False
        self._say(failure.error, error=True)
        if self.view is None:
            self._head(f"{self.case.name}: no trace")

    def _progress(self, message: JobProgress) -> None:
        self._say(message.line)

    # -- actions -------------------------------------------------------------------------------
    def action_move(self, how: str) -> None:
        if self.view is None:
            self._say("no trace yet", error=True)
            return
        before = self.view.at
        said = getattr(self.view, how)()
        self._show(said, stuck=self.view.at == before)

    def action_reverse(self) -> None:
        if self.view is not None:
            before = self.view.at
            said = self.view.to_break(forward=False)
            self._show(said, stuck=self.view.at == before)

    def action_to_cursor(self) -> None:
        if self.view is not None:
            before = self.view.at
            said = self.view.to_line(self.file, self.cursor)
            self._show(said, stuck=self.view.at == before)

    def action_breakpoint(self) -> None:
        if self.view is not None:
            self._show(self.view.toggle_breakpoint(self.file, self.cursor), follow=False)

    def action_cursor(self, delta: int) -> None:
        source = self.query_one(TraceSource)
        if not source.numbers:
            return
        rows = source.numbers
        row = rows.index(self.cursor) if self.cursor in rows else 0
        self.cursor = rows[min(max(row + delta, 0), len(rows) - 1)]
        self._mark()

    def action_ask(self, what: str) -> None:
        if what != "pick" and self.view is None:
            self._say("no trace yet", error=True)
            return
        self.asking = what
        field = self.query_one("#debug-ask", Input)
        field.placeholder = _ASK[what]
        field.value = str(self.start[0] or "") if what == "pick" else ""
        self.add_class("asking")
        field.focus()

    def action_nonfinite(self) -> None:
        self._trace(None, nonfinite=True)

    def action_close(self) -> None:
        if self.asking:
            self._stop_asking()
            return
        if self.busy:
            self.notify("the trace goes on; its result is dropped", severity="warning")
        self.dismiss(None)

    @on(Input.Submitted, "#debug-ask")
    def _answered(self, event: Input.Submitted) -> None:
        event.stop()
        what, text = self.asking, event.value
        self._stop_asking()
        try:
            if what == "pick":
                pick = parse_pick(text)
                self.start = (pick, False)
                self._trace(pick)
            elif self.view is not None:
                said = (
                    self.view.set_condition(text)
                    if what == "condition"
                    else self.view.add_watch(text)
                )
                self._show(said, follow=False)
        except UserError as exc:
            self._say(str(exc), error=True)

    def _stop_asking(self) -> None:
        self.asking = ""
        self.remove_class("asking")
        self.query_one(TraceSource).focus()

    # -- drawing -------------------------------------------------------------------------------
    def _say(self, text: str, error: bool = False) -> None:
        self.query_one("#debug-say", Static).update(
            Text(text, style="bold red" if error else "dim")
        )

    def _head(self, text: str) -> None:
        self.query_one("#debug-head", Static).update(Text(text, style="bold"))

    def _show(self, said: str, follow: bool = True, stuck: bool = False) -> None:
        """Draw the view at its step and say `said` (in red when the move was `stuck`);
        `follow`: the cursor goes to the current line."""
        view = self.view
        if view is None:
            return
        head = Text()
        head.append(f"{self.case.name}  ", style="bold")
        head.append(view.summary())
        if self.found:
            head.append(f"\n{self.found}", style="dim")
        head.append(f"\n{view.where()}", style="bold")
        self.query_one("#debug-head", Static).update(head)
        st = view.step
        if st is not None:
            if st.file != self.file:
                self.file = st.file
                self.query_one(TraceSource).show(source_lines(self.case.kernel, st.file))
            if follow:
                self.cursor = st.line
        self._mark()
        self._panes(view)
        self._say(said, error=stuck)

    def _mark(self) -> None:
        view = self.view
        st = view.step if view is not None else None
        points = {line for f, line in (view.breakpoints if view else ()) if f == self.file}
        self.query_one(TraceSource).mark(st.line if st else None, self.cursor, points)

    def _panes(self, view: TraceView) -> None:
        st = view.step
        locals_ = Text("locals", style="bold underline")
        if st is not None and st.function:
            locals_.append(f" of {st.function}", style="bold")
        for v in view.locals():
            locals_.append(
                f"\n{'*' if v.changed else ' '} {v.name}", style="bold" if v.changed else ""
            )
            locals_.append(f": {v.type} = ", style="dim")
            locals_.append(v.value, style="bold yellow" if v.changed else "")
        if st is not None and st.kind not in ("assign", "param", "loop"):
            value = "" if st.value is None else f" = {show(st.value, st.type)}"
            index = f" [{st.index}]" if st.index is not None and st.kind != "loop" else ""
            locals_.append(f"\nthis step: {st.kind} {st.name}{value}{index}", style="yellow")
        self.query_one("#debug-locals", Static).update(locals_)
        watch = Text("watch", style="bold underline")
        watch.append(f"  ({key('debug_watch')} adds)", style="dim")
        if view.condition is not None:
            watch.append(f"\nbreak when {view.condition.text}", style="red")
        for text, value in view.watch_values():
            watch.append(f"\n{text} = {value}")
        self.query_one("#debug-watch", Static).update(watch)
        stack = Text("call stack", style="bold underline")
        for frame in view.stack():
            stack.append(f"\n{frame.function or '?'}  {frame.file}:{frame.line}")
        self.query_one("#debug-stack", Static).update(stack)
        memory = Text("loads and stores", style="bold underline")
        for x in view.memory(MEMORY_SHOWN):
            arrow = "→" if x.kind == "store" else ("⇄" if x.kind == "atomic" else "←")
            memory.append(
                f"\n{x.step:>5} {arrow} {x.name} = {show(x.value, x.type)}  [{x.index}]",
                style="bold" if x.step == view.at else "",
            )
        self.query_one("#debug-memory", Static).update(memory)
        shared = Text()
        for seen in view.workgroup_memory():
            shown = ", ".join(show(x, seen.type) for x in seen.values[:SHARED_SHOWN])
            more = f", … ({len(seen.values):,})" if len(seen.values) > SHARED_SHOWN else ""
            shared.append(
                f"{seen.name} after the barrier at step {seen.step}", style="bold underline"
            )
            shared.append(f"\n[{shown}{more}]\n")
        pane = self.query_one("#debug-shared", Static)
        pane.update(shared)
        pane.display = bool(shared.plain)  # only for a kernel with workgroup arrays
