"""A yes/no question over the current screen; escape means no."""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from workbench.commands import bindings


class ConfirmScreen(ModalScreen[bool]):
    """A yes/no question; escape means no."""

    BINDINGS: ClassVar[list[BindingType]] = bindings("confirm")

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
