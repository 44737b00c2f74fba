"""The Steps screen: step a pipeline one dispatch at a time and look at every buffer between steps.

Top: the pipelines (the open corpus's pipeline files, then the shipped ones, then any opened by
path) beside the chosen one's steps (the current one marked, each with its verdict against its
spec's float64 reference on its own inputs, its GPU time and what it changed). Below: the buffers
after the highlighted step, those it changed marked, and the highlighted buffer in the array
view. Keys (ids `steps_next`, `steps_back`, ...; the registry is `viewmodel.keys`): next, back,
run to the highlighted step, run to the end, reset, mark a step and diff the highlighted buffer
between the marked and the highlighted step, set the pipeline's dims, open a pipeline file by
path, and open the highlighted step in the kernel view with the buffers it was given as the case
(posted as `OpenCase`; the app shows it). Opening, stepping and a step's case are jobs
(`PipelineOpenJob`, `PipelineStepJob`, `StepCaseJob`), so keys answer while a step runs; the
figures come from `viewmodel.steps`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, OptionList, Static

from workbench.commands import bindings
from workbench.dialogs.ask_line import AskLineScreen
from workbench.errors import WorkbenchError
from workbench.jobs import RunsJobs
from workbench.messages import JobFailed
from workbench.pipelines import locate
from workbench.pipelines.model import load
from workbench.pipelines.stepper import Stepper
from workbench.viewmodel.jobs import PipelineOpenJob, PipelineStepJob, StepCaseJob
from workbench.viewmodel.keys import key
from workbench.viewmodel.steps import (
    PipelineChoice,
    diff_lines,
    dims_text,
    parse_dims,
    pipeline_choices,
    steps_view,
)
from workbench.widgets.buffer_view import BufferView
from workbench.widgets.key_footer import KeyFooter
from workbench.widgets.step_buffers import StepBuffers
from workbench.widgets.step_list import StepList

if TYPE_CHECKING:
    from workbench.app import WorkbenchApp
    from workbench.session import Case, Run


class StepsScreen(RunsJobs, Screen[None]):
    """A pipeline, steppable both ways, with every buffer kept."""

    BINDINGS: ClassVar[list[BindingType]] = bindings("steps")

    DEFAULT_CSS = """
    StepsScreen #steps-title { height: 1; padding: 0 1; background: $panel; }
    StepsScreen #steps-top { height: 11; }
    StepsScreen #steps-pipelines { width: 16; }
    StepsScreen #steps-list { width: 1fr; }
    StepsScreen #steps-buffers { width: 56; }
    StepsScreen #steps-diff { height: auto; max-height: 7; padding: 0 1; }
    StepsScreen #steps-status { height: auto; padding: 0 1; color: $text-muted; }
    """

    @dataclass
    class OpenCase(Message):
        """Show this step's case and its run in the kernel view."""

        case: Case
        run: Run

    def __init__(self, pipeline: str | None = None) -> None:
        """`pipeline`: a shipped name or a pipeline file's path (default: the first listed)."""
        super().__init__()
        self._pipeline = pipeline or ""
        self._choices: list[PipelineChoice] = []
        self.stepper: Stepper | None = None
        self.busy = False
        self.mark: int | None = None
        self._diff: tuple[str, int, int] | None = None  # buffer, earlier step, later step

    @property
    def wb(self) -> WorkbenchApp:
        return self.app  # type: ignore[return-value]

    def compose(self) -> ComposeResult:
        session = self.wb.session
        self._choices = pipeline_choices(Path(session.corpus.root) if session else None)
        self._pipeline = self._pipeline or self._choices[0].target
        if self._pipeline not in (c.target for c in self._choices):
            self._choices.append(PipelineChoice(self._pipeline, self._pipeline))
        yield Static(id="steps-title")
        with Horizontal(id="steps-top"):
            yield OptionList(*(c.label for c in self._choices), id="steps-pipelines")
            yield StepList(id="steps-list")
        with Horizontal():
            yield StepBuffers(id="steps-buffers")
            yield BufferView(id="steps-buffer", blink=not self.wb.snapshot)
        yield Static(id="steps-diff")
        yield Static(id="steps-status")
        yield KeyFooter()

    def on_mount(self) -> None:
        self._load(self._pipeline)

    # -- worker side ---------------------------------------------------------------------------
    def _load(self, target: str, dims: Mapping[str, int] | None = None) -> None:
        self.busy = True
        self._pipeline = target
        self.mark, self._diff = None, None
        label = next(c.label for c in self._choices if c.target == target)
        listed = self.query_one("#steps-pipelines", OptionList)
        listed.highlighted = [c.target for c in self._choices].index(target)
        self._say(f"planning {label} and putting its buffers on the GPU…")
        session = self.wb.session
        if session is None:  # the app opens the Steps screen once the session is open
            return
        self.submit(PipelineOpenJob(session, target, dict(dims or {})), self._ready, self._failed)

    def _move(self, what: str, op: Callable[[Stepper], object]) -> None:
        if self.stepper is None:
            return
        if self.busy:
            self.notify("a step is running; wait for it", severity="warning", timeout=2)
            return
        self.busy = True
        self._say(f"{what}…")
        self.submit(PipelineStepJob(self.stepper, what, op), self._stepped, self._failed)

    # -- outcomes ------------------------------------------------------------------------------
    def _ready(self, stepper: Stepper) -> None:
        self.stepper = stepper
        self.busy = False
        self.query_one(StepList).move_cursor(row=0, animate=False)
        self._refresh(
            f"{self.stepper.plan.name}: {len(self.stepper.steps)} steps ready; press {key('steps_next')} to step"
        )

    def _stepped(self, what: str) -> None:
        self.busy = False
        s = self.stepper
        if s is None:
            return
        self.query_one(StepList).move_cursor(row=s.position, animate=False)
        self._refresh(f"{what}: now after step {s.position} of {len(s.steps)}")

    def _failed(self, failure: JobFailed) -> None:
        self.busy = False
        self._refresh(failure.error, error=True)

    # -- actions ---------------------------------------------------------------------------------
    def action_next(self) -> None:
        self._move("next step", Stepper.next)

    def action_back(self) -> None:
        self._move("back one step", Stepper.back)

    def action_run_to(self) -> None:
        k = self._shown()
        self._move(f"run to step {k}", lambda s: s.run_to(k))

    def action_end(self) -> None:
        self._move("run to the end", Stepper.run_to_end)

    def action_reset(self) -> None:
        self._move("reset", Stepper.reset)

    def action_mark(self) -> None:
        self.mark = self._shown()
        self._say(
            f"step {self.mark} marked: highlight another step and a buffer, then press "
            f"{key('steps_diff')} to diff them"
        )

    def action_diff(self) -> None:
        if self.stepper is None:
            return
        if self.mark is None:
            self._say(
                f"mark a step first ({key('steps_mark')}), then highlight another", error=True
            )
            return
        name = self.query_one(StepBuffers).selected
        if name is None:
            return
        a, b = sorted((self.mark, self._shown()))
        self._diff = (name, a, b)
        self._show_buffer()

    def action_close(self) -> None:
        self.dismiss(None)

    def action_set_dims(self) -> None:
        """Ask the pipeline's dims (the ones it runs at offered) and plan it again at them."""
        s = self.stepper
        if s is None or self._refused():
            return
        known = list(s.plan.pipeline.dims)
        if not known:
            self._say(f"{s.plan.name} has no dims to set", error=True)
            return

        def chosen(dims: dict[str, int] | None) -> None:
            if dims is not None:
                self._load(self._pipeline, dims)

        self.app.push_screen(
            AskLineScreen(
                f"Dims of {s.plan.name}",
                f"NAME=VALUE for any of {', '.join(known)}",
                dims_text(s.plan.dims),
                lambda text: parse_dims(text, known),
                blink=not self.wb.snapshot,
            ),
            chosen,
        )

    def action_open_file(self) -> None:
        """Ask a pipeline file's path; it is listed and opened."""
        if self._refused():
            return
        session = self.wb.session
        root = Path(session.corpus.root) if session else Path.cwd()

        def read(text: str) -> str:
            path = locate(text.strip())
            load(path)  # a broken file is said here, in the dialog
            return str(path.resolve())

        def chosen(target: str | None) -> None:
            if target is None:
                return
            if target not in (c.target for c in self._choices):
                self._choices.append(PipelineChoice(target, target))
                self.query_one("#steps-pipelines", OptionList).add_option(target)
            self._load(target)

        self.app.push_screen(
            AskLineScreen(
                "Open a pipeline file",
                f"the path of a pipeline .toml (relative to {Path.cwd()})",
                f"{root}/",
                read,
                blink=not self.wb.snapshot,
            ),
            chosen,
        )

    def action_open_kernel(self) -> None:
        """The highlighted step in the kernel view: its case with the buffers it was given."""
        s = self.stepper
        session = self.wb.session
        if s is None or session is None or self._refused():
            return
        index = self._shown()
        if index == 0:
            self._say("highlight a step first (row 0 is the start)", error=True)
            return
        if s.plan.corpus.resolve() != Path(session.corpus.root).resolve():
            self._say(
                f"step {index}'s kernel {s.steps[index - 1].name} is a shipped kernel (the open "
                "folder lacks this pipeline's kernels): the kernel view shows the open folder's "
                "kernels; open the shipped kernels (workbench ui, no folder) to look at it there",
                error=True,
            )
            return
        self.busy = True
        self._say(f"running step {index} as a case of its own…")
        self.submit(StepCaseJob(s, index), self._case_ready, self._failed)

    def _case_ready(self, result: tuple[Case, Run]) -> None:
        self.busy = False
        self.post_message(self.OpenCase(*result))

    def _refused(self) -> bool:
        if self.busy:
            self.notify("a step is running; wait for it", severity="warning", timeout=2)
        return self.busy

    @on(OptionList.OptionSelected, "#steps-pipelines")
    def _pick(self, event: OptionList.OptionSelected) -> None:
        if self._refused():
            return
        self._load(self._choices[event.option_index].target)

    @on(DataTable.RowSelected, "#steps-list")
    def _step_selected(self) -> None:
        self.action_run_to()

    @on(DataTable.RowHighlighted, "#steps-list")
    def _step_highlighted(self) -> None:
        self._diff = None
        self._refresh()

    @on(DataTable.RowHighlighted, "#steps-buffers")
    def _buffer_highlighted(self) -> None:
        self._diff = None
        self._show_buffer()

    # -- drawing ---------------------------------------------------------------------------------
    def _shown(self) -> int:
        return max(self.query_one(StepList).cursor_row, 0)

    def _say(self, line: str, error: bool = False) -> None:
        self.query_one("#steps-diff", Static).update(Text(line, style="bold red" if error else ""))

    def _refresh(self, line: str | None = None, error: bool = False) -> None:
        if self.stepper is None:
            if line:
                self._say(line, error)
            return
        shown = min(self._shown(), self.stepper.position)
        view = steps_view(self.stepper, shown, self.wb.snapshot)
        self.query_one("#steps-title", Static).update(view.title)
        self.query_one(StepList).show(view)
        self.query_one(StepBuffers).show(view.buffers)
        status = "  ·  ".join(p for p in (view.memory, view.divergence) if p)
        self.query_one("#steps-status", Static).update(status)
        if line:
            self._say(line, error)
        self._show_buffer()

    def _show_buffer(self) -> None:
        s = self.stepper
        table = self.query_one(StepBuffers)
        panel = self.query_one(BufferView)
        name = table.selected
        if s is None or name is None:
            return
        axes = s.plan.buffers[name].axes
        try:
            if self._diff is not None:
                name, a, b = self._diff
                c = s.diff(name, a, b)
                self._say("\n".join(diff_lines(c)), error=False)
                later = s.contents(name, b)
                worst = c.worst[0].index[: max(later.ndim - 2, 0)] if c.worst else ()
                panel.show(
                    f"{name}: after step {b}, marked where it differs from after step {a}",
                    later,
                    axes,
                    ref=s.contents(name, a),
                    tol=(c.rtol, c.atol),
                    at=worst,
                )
                return
            shown = self._shown()
            if shown > s.position:
                panel.clear(
                    f"step {shown} has not run yet: press {key('steps_run_to')} to run to it"
                )
                return
            when = "at the start" if shown == 0 else f"after step {shown}"
            panel.show(f"{name} {when}", s.contents(name, shown), axes)
        except WorkbenchError as exc:
            panel.clear(str(exc))
