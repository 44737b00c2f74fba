"""The load-.npy dialog: an input binding and a .npy file to fill it with (checked before closing)."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Select, Static

from workbench.commands import bindings


class LoadNpyScreen(ModalScreen[tuple[str, str] | None]):
    """Choose an input binding and a .npy file to fill it with."""

    BINDINGS: ClassVar[list[BindingType]] = bindings("dialog")

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
