"""The workgroup stepper: one dispatch of the current case, run a few workgroups at a time.

Keys (the registry's `workgroups` scope, the steppers' one scheme): n/→ next, N many, b/← back,
z/home to the start, e/end to the end. Buffers persist between steps, so a scatter or an accumulation builds up in front of you; the
elements the last step changed are shown red against the state before it, and the view moves to
the first of them; `o` goes through the buffers the dispatch writes, then its inputs. Each step is a job
(`WorkgroupStepJob`) whose result, the buffers after it, comes back to `_stepped`. `s` shows the instrumented
module (the guard, and where it was put).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

import numpy as np
from rich.syntax import Syntax
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Static

from workbench.commands import bindings
from workbench.jobs import RunsJobs
from workbench.messages import JobFailed
from workbench.session import Case, Session
from workbench.units import fmt_count, fmt_int
from workbench.viewmodel.jobs import WorkgroupStepJob
from workbench.viewmodel.keys import key
from workbench.widgets.array_view import FOLD, ArrayView
from workbench.widgets.key_footer import KeyFooter
from workbench.workgroups.stepper import WorkgroupStep, WorkgroupStepper

if TYPE_CHECKING:
    from workbench.app import WorkbenchApp


class WorkgroupStepScreen(RunsJobs, Screen[None]):
    """Step the case's dispatch by workgroup; escape returns to the kernel."""

    BINDINGS: ClassVar[list[BindingType]] = bindings("workgroups")
    DEFAULT_CSS = """
    WorkgroupStepScreen #wg-head { height: auto; padding: 0 1; background: $boost; }
    WorkgroupStepScreen #wg-source { display: none; height: 1fr; }
    WorkgroupStepScreen.source #wg-source { display: block; }
    WorkgroupStepScreen.source #wg-body { display: none; }
    """

    def __init__(self, session: Session, case: Case) -> None:
        super().__init__()
        self.stepper = WorkgroupStepper(session, case)
        # The buffers the dispatch writes, then its inputs (viewable; no step changes them).
        written = list(self.stepper.current.buffers)
        self.names = written + [n for n in case.inputs if n not in written]
        self.shown = 0
        self.busy = False

    @property
    def wb(self) -> WorkbenchApp:
        return self.app  # type: ignore[return-value]

    def compose(self) -> ComposeResult:
        yield Static(id="wg-head")
        with Vertical(id="wg-body"):
            yield ArrayView(id="wg-array")
            yield Static(id="wg-legend")
        with VerticalScroll(id="wg-source"):
            yield Static(id="wg-source-text")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.query_one("#wg-source-text", Static).update(
            Syntax(self.stepper.source(), "wgsl", line_numbers=True, word_wrap=False)
        )
        self._show(self.stepper.current)

    # -- actions -------------------------------------------------------------------------------
    def action_step(self, count: int) -> None:
        if self.busy or self.stepper.finished:
            return
        self.busy = True
        self._say(f"running workgroups {self.stepper.current.done:,}…")
        self.submit(WorkgroupStepJob(self.stepper, count), self._stepped, self._failed)

    def action_to_end(self) -> None:
        self.action_step(self.stepper.total)

    def action_back(self) -> None:
        if self.busy:
            return
        state = self.stepper.back()
        if state is None:
            self.notify("nothing to go back to", severity="warning")
            return
        self._show(state)

    def action_to_start(self) -> None:
        if self.busy:
            return
        state = None
        while (back := self.stepper.back()) is not None:
            state = back
        if state is None:
            self.notify("nothing to go back to", severity="warning")
            return
        self._show(state)

    def action_next_output(self) -> None:
        self.shown = (self.shown + 1) % max(len(self.names), 1)
        self._show(self.stepper.current)

    def action_source(self) -> None:
        """Show (or hide) the instrumented module, at the kernel's own first line: the
        preambles before it are the same for every kernel."""
        self.toggle_class("source")
        if self.has_class("source"):
            line = self.stepper.kernel_line()
            scroll = self.query_one("#wg-source", VerticalScroll)
            self.call_after_refresh(scroll.scroll_to, 0, max(line - 1, 0), animate=False)

    def action_close(self) -> None:
        self.dismiss(None)

    def _stepped(self, state: WorkgroupStep) -> None:
        self.busy = False
        self._show(state)

    def _failed(self, failure: JobFailed) -> None:
        self.busy = False
        self._say(failure.error, error=True)

    # -- drawing -------------------------------------------------------------------------------
    def _say(self, text: str, error: bool = False) -> None:
        self.query_one("#wg-legend", Static).update(Text(text, style="red" if error else "dim"))

    def _show(self, state: WorkgroupStep) -> None:
        st = self.stepper
        case = st.case
        grid = "x".join(map(str, case.grid))
        if state.hi:
            x, y, z = st.workgroup_id(state.lo)
            last = (
                f"last step: workgroup {state.lo:,} ({x},{y},{z})"
                if state.hi - state.lo == 1
                else f"last step: workgroups {state.lo:,}..{state.hi - 1:,}"
            )
        else:
            last = "nothing run yet"
        head = Text()
        head.append(f"{case.name}", style="bold")
        head.append(
            f"  grid {grid}  {fmt_int(state.done)} of {fmt_count(st.total, 'workgroup')} run  ·  {last}"
        )
        self.query_one("#wg-head", Static).update(head)
        if not self.names:
            return
        name = self.names[self.shown]
        if name not in state.buffers:  # an input: as given, whatever the step
            data = case.inputs[name]
            self.query_one("#wg-array", ArrayView).show(_shaped(data))
            self._say(
                f"{name} {'x'.join(map(str, data.shape))}: an input, read by the dispatch  ·  "
                f"{key('wg_output')}: next buffer ({len(self.names)})"
            )
            return
        data = state.buffers[name]
        previous = st.states[-2].buffers[name] if len(st.states) > 1 and state.hi else None
        shaped = _shaped(data)
        ref = previous.reshape(shaped.shape) if previous is not None else None
        view = self.query_one("#wg-array", ArrayView)
        view.show(shaped, ref=ref)
        changed = state.changed.get(name, np.zeros(0, np.int64))
        if changed.size and state.hi:  # the view follows what the step changed: its first
            first = int(changed[0])
            cols = FOLD if shaped.ndim == 1 else shaped.shape[1]
            view.move_to(first // cols, first % cols)
        self._say(
            f"{name} {'x'.join(map(str, data.shape))}: {fmt_count(changed.size, 'element')} "
            f"changed by the last step (red; the view starts at the first)  ·  "
            f"{key('wg_output')}: next buffer ({len(self.names)})"
        )


def _shaped(data: np.ndarray) -> np.ndarray:
    """At most two dimensions: the first axis, the rest flattened."""
    return data.reshape(data.shape[0], -1) if data.ndim > 2 else data
