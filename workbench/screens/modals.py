"""Small screens over the main one: help, adapter switcher, fixture name/note, confirmation,
load .npy, and the check-all report.

Each modal returns its answer through `dismiss` (None when the user backs out with escape); the
check-all screen runs its checks in a worker thread holding the app's GPU lock, one kernel at a
time, and can be cancelled between kernels.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import (
    Button,
    DataTable,
    Footer,
    Input,
    Label,
    Markdown,
    OptionList,
    ProgressBar,
    Select,
    Static,
)
from textual.widgets.option_list import Option

from workbench.errors import WorkbenchError
from workbench.recipes import RECIPES
from workbench.session import AdapterInfo

HELP = f"""\
# workbench

Pick a kernel on the left, set its dims and inputs, press **r**. The kernel runs on the GPU
adapter in the header and is compared with a float64 NumPy reference.

## Keys

| key | does |
|---|---|
| `r` | run once and compare with the reference (enter in a field does too) |
| `b` | bench: 20 timed dispatches after 2 warm-ups |
| `g` | gradient check (backward kernels with a spec) |
| `f` | save this case and its outputs as a fixture |
| `x` / `F3` | fixtures: list, replay |
| `e` | open the kernel's file in `$EDITOR` at its line; the view reloads on save |
| `a` | switch adapter |
| `escape` | cancel a run; leave a field |
| `1`–`6` | Outputs, Diff, Gradients, Timing, Source, Bindings |
| `m` | (Source) the file, or the assembled module the GPU compiles |
| `/` | filter kernels |
| `ctrl+p` | every command, themes included |
| `?` / `F1` | this help |
| `q` | quit |

## Kernel marks

✓ spec'd and compiles · ○ ad hoc (no spec: one size `n`, no reference) ·
⚠ needs a feature this adapter lacks · ✗ compile or reflection error ·
≠ a shipped kernel's name with another binding signature (runs ad hoc) · … not checked yet

## Inputs

Leave a recipe empty for the spec's own inputs (seeded). Or type one of:
{", ".join(f"`{r}`" for r in RECIPES)}. **special values** writes NaN, ±Inf, ±0, denormals,
±100 and ±1e4 into every float input at spread positions.

## Files

Files are watched: save a kernel and it is reloaded and re-run; a compile error is shown at its
line in Source while the last good results stay visible, marked STALE.
"""


class HelpScreen(ModalScreen[None]):
    """Keys, marks and recipes on one page."""

    BINDINGS: ClassVar[list[Binding]] = [
        Binding("escape,q,question_mark,f1", "dismiss", "Close", id="close_help")
    ]
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 90; height: 90%; border: round $accent; background: $surface; }
    """

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Markdown(HELP)

    def action_dismiss(self) -> None:
        self.dismiss(None)


class AdapterScreen(ModalScreen[int | None]):
    """Choose the adapter to run on; the current one is marked."""

    BINDINGS: ClassVar[list[Binding]] = [
        Binding("escape", "dismiss_none", "Back", id="close_adapters")
    ]
    DEFAULT_CSS = """
    AdapterScreen { align: center middle; }
    AdapterScreen > Vertical { width: 84; height: auto; border: round $accent; background: $surface; padding: 0 1; }
    AdapterScreen OptionList { height: auto; max-height: 16; }
    """

    def __init__(self, adapters: tuple[AdapterInfo, ...], current: int) -> None:
        super().__init__()
        self.adapters = adapters
        self.current = current

    def compose(self) -> ComposeResult:
        options = []
        for a in self.adapters:
            label = Text()
            label.append("● " if a.index == self.current else "  ", style="green")
            label.append(f"{a.index}: {a.label}", style="bold")
            label.append(f"  {a.type}\n    ")
            useful = [f for f in ("shader-f16", "subgroup", "timestamp-query") if f in a.features]
            label.append(
                "features: " + (", ".join(useful) or "none of f16/subgroup/timestamps"), style="dim"
            )
            options.append(Option(label, id=str(a.index)))
        with Vertical():
            yield Label("Run on which adapter? (enter chooses, escape keeps the current one)")
            yield OptionList(*options, id="adapter-list")

    def on_mount(self) -> None:
        olist = self.query_one(OptionList)
        olist.highlighted = next(
            (i for i, a in enumerate(self.adapters) if a.index == self.current), 0
        )
        olist.focus()

    @on(OptionList.OptionSelected)
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(int(event.option.id or 0))

    def action_dismiss_none(self) -> None:
        self.dismiss(None)


class SaveFixtureScreen(ModalScreen[tuple[str, str] | None]):
    """Ask for a fixture name and a note."""

    BINDINGS: ClassVar[list[Binding]] = [
        Binding("escape", "dismiss_none", "Back", id="close_fixture")
    ]
    DEFAULT_CSS = """
    SaveFixtureScreen { align: center middle; }
    SaveFixtureScreen > Vertical { width: 80; height: auto; border: round $accent; background: $surface; padding: 0 1; }
    SaveFixtureScreen Input { margin-bottom: 1; }
    SaveFixtureScreen #fixture-problem { color: $error; height: auto; }
    SaveFixtureScreen Horizontal { height: auto; align-horizontal: right; }
    """

    def __init__(self, default_name: str, folder: Path, blink: bool = True) -> None:
        super().__init__()
        self.default_name = default_name
        self.folder = folder
        self.blink = blink

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(Text.assemble(("Save fixture", "bold"), f"  into {self.folder}"))
            yield Label("name (letters, digits, - and _)")
            name = Input(self.default_name, id="fixture-name")
            note = Input(placeholder="why this case matters (optional)", id="fixture-note")
            name.cursor_blink = note.cursor_blink = self.blink
            yield name
            yield Label("note")
            yield note
            yield Static(id="fixture-problem")
            with Horizontal():
                yield Button("Save", variant="primary", id="fixture-save")
                yield Button("Cancel", id="fixture-cancel")

    def _submit(self) -> None:
        name = self.query_one("#fixture-name", Input).value.strip()
        if not name or not all(c.isalnum() or c in "-_" for c in name):
            self.query_one("#fixture-problem", Static).update(
                "a name is letters, digits, '-' and '_' only"
            )
            return
        self.dismiss((name, self.query_one("#fixture-note", Input).value.strip()))

    @on(Input.Submitted)
    def _entered(self) -> None:
        self._submit()

    @on(Button.Pressed, "#fixture-save")
    def _save(self) -> None:
        self._submit()

    @on(Button.Pressed, "#fixture-cancel")
    def _cancel(self) -> None:
        self.dismiss(None)

    def action_dismiss_none(self) -> None:
        self.dismiss(None)


class ConfirmScreen(ModalScreen[bool]):
    """A yes/no question; escape means no."""

    BINDINGS: ClassVar[list[Binding]] = [
        Binding("escape,n", "answer(False)", "No", id="confirm_no"),
        Binding("y", "answer(True)", "Yes", id="confirm_yes"),
    ]
    DEFAULT_CSS = """
    ConfirmScreen { align: center middle; }
    ConfirmScreen > Vertical { width: 70; height: auto; border: round $warning; background: $surface; padding: 0 1; }
    ConfirmScreen Horizontal { height: auto; align-horizontal: right; }
    """

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self.question)
            with Horizontal():
                yield Button("Yes (y)", variant="warning", id="confirm-yes")
                yield Button("No (n)", id="confirm-no")

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "confirm-yes")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


class LoadNpyScreen(ModalScreen[tuple[str, str] | None]):
    """Choose an input binding and a .npy file to fill it with."""

    BINDINGS: ClassVar[list[Binding]] = [Binding("escape", "dismiss_none", "Back", id="close_npy")]
    DEFAULT_CSS = """
    LoadNpyScreen { align: center middle; }
    LoadNpyScreen > Vertical { width: 80; height: auto; border: round $accent; background: $surface; padding: 0 1; }
    LoadNpyScreen #npy-problem { color: $error; height: auto; }
    """

    def __init__(self, bindings: list[str], blink: bool = True) -> None:
        super().__init__()
        self.bindings = bindings
        self.blink = blink

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(Text("Load a .npy file into an input", style="bold"))
            yield Select(
                [(b, b) for b in self.bindings],
                value=self.bindings[0] if self.bindings else Select.BLANK,
                id="npy-binding",
                allow_blank=not self.bindings,
            )
            path = Input(placeholder="path/to/array.npy", id="npy-path")
            path.cursor_blink = self.blink
            yield path
            yield Static(id="npy-problem")

    def on_mount(self) -> None:
        self.query_one("#npy-path", Input).focus()

    @on(Input.Submitted, "#npy-path")
    def _submit(self) -> None:
        binding = self.query_one("#npy-binding", Select).value
        path = Path(self.query_one("#npy-path", Input).value.strip()).expanduser()
        problem = self.query_one("#npy-problem", Static)
        if not isinstance(binding, str):
            problem.update("this kernel has no input to fill")
        elif not path.is_file():
            problem.update(f"{path} is not a file")
        elif path.suffix != ".npy":
            problem.update(f"{path} is not a .npy file")
        else:
            self.dismiss((binding, str(path)))

    def action_dismiss_none(self) -> None:
        self.dismiss(None)


class CheckAllScreen(Screen[None]):
    """`check_case` over every kernel with a spec, one row each, as the results arrive."""

    BINDINGS: ClassVar[list[Binding]] = [
        Binding("escape", "leave", "Cancel / back", id="leave_check_all"),
    ]
    DEFAULT_CSS = """
    CheckAllScreen #check-head { height: auto; padding: 0 1; }
    CheckAllScreen #check-progress { height: 1; padding: 0 1; }
    CheckAllScreen DataTable { height: 1fr; }
    """

    def __init__(
        self,
        session: Any,
        gpu_lock: threading.Lock,
        cases: list[tuple[str, Callable[[], Any]]],
    ) -> None:
        super().__init__()
        self.session = session
        self.gpu_lock = gpu_lock
        self.cases = cases  # (kernel name, a function building its case)
        self.cancel = threading.Event()
        self.done = False

    def compose(self) -> ComposeResult:
        yield Static(
            Text.assemble(
                ("Check all", "bold"),
                f"  {len(self.cases)} kernels with a spec, each at the dims in its form "
                "(defaults unless you changed them); escape cancels between kernels",
            ),
            id="check-head",
        )
        yield ProgressBar(total=max(len(self.cases), 1), show_eta=False, id="check-progress")
        table = DataTable(id="check-table", zebra_stripes=True, cursor_type="row")
        table.add_columns("kernel", "verdict", "checks")
        yield table
        yield Footer()

    def on_mount(self) -> None:
        self._check_all()

    @work(thread=True, exclusive=True, group="check-all")
    def _check_all(self) -> None:
        from workbench.checks import check_case

        for name, make_case in self.cases:
            if self.cancel.is_set():
                break
            try:
                case = make_case()
                with self.gpu_lock:
                    report = check_case(self.session, case, cancelled=self.cancel.is_set)
                results = list(getattr(report, "results", ()))
                ok = all(r.ok for r in results)
                summary = "; ".join(f"{r.kind} {r.summary}" for r in results)
                verdict = Text("✓ pass", style="green") if ok else Text("✗ FAIL", style="bold red")
            except WorkbenchError as exc:
                verdict, summary = Text("✗ error", style="red"), str(exc).split("\n", 1)[0]
            except Exception as exc:  # a broken spec or check is a row, not a crash
                verdict = Text("✗ error", style="red")
                summary = f"internal error: {type(exc).__name__}: {exc}"
            self.app.call_from_thread(self._row, name, verdict, summary)
        self.app.call_from_thread(self._finished)

    def _row(self, name: str, verdict: Text, summary: str) -> None:
        self.query_one(DataTable).add_row(name, verdict, summary)
        self.query_one(ProgressBar).advance(1)

    def _finished(self) -> None:
        self.done = True
        note = "cancelled" if self.cancel.is_set() else "done"
        self.query_one("#check-head", Static).update(
            Text.assemble(("Check all", "bold"), f"  {note}; escape goes back")
        )

    def action_leave(self) -> None:
        if not self.done:
            self.cancel.set()
        else:
            self.dismiss(None)
