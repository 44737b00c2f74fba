"""The runs picker: this session's last runs of the kernel on screen, newest first, the pinned one
marked; enter pins the highlighted run as the baseline."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, OptionList
from textual.widgets.option_list import Option

from workbench.commands import bindings
from workbench.viewmodel.baseline import RunEntry


class RunsScreen(ModalScreen[int | None]):
    """Pick a run to pin; dismissed with its number, or None."""

    DEFAULT_CSS = """
    RunsScreen { align: center middle; }
    RunsScreen > Vertical {
        width: 84; max-width: 100%; height: auto;
        border: round $accent; background: $surface; padding: 0 1;
    }
    RunsScreen OptionList { height: auto; max-height: 12; }
    """

    BINDINGS: ClassVar[list[BindingType]] = bindings("dialog")

    def __init__(
        self, kernel: str, entries: Sequence[RunEntry], pinned: int | None, snapshot: bool
    ) -> None:
        super().__init__()
        self.kernel = kernel
        self.entries = tuple(entries)
        self.pinned = pinned
        self.snapshot = snapshot

    def compose(self) -> ComposeResult:
        options = []
        for e in self.entries:
            label = Text()
            label.append("● " if e.number == self.pinned else "  ", style="green")
            label.append(e.label(self.snapshot))
            if e.number == self.pinned:
                label.append("  pinned", style="green")
            options.append(Option(label, id=str(e.number)))
        with Vertical():
            yield Label(
                f"Runs of {self.kernel} this session, newest first: enter pins one as the "
                "baseline, escape keeps the current one"
            )
            yield OptionList(*options, id="runs-list")

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    @on(OptionList.OptionSelected)
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(int(event.option.id or 0))

    def action_dismiss_none(self) -> None:
        self.dismiss(None)
