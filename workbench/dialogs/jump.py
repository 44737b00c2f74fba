"""The jump-to-index dialog of the Outputs tab: an element by named index (`s=17 h=3 d=40`) or
flat index, checked before the dialog closes (`workbench.viewmodel.slicing.parse_index`)."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Static

from workbench.commands import bindings
from workbench.errors import UserError
from workbench.viewmodel.slicing import parse_index


class JumpScreen(ModalScreen[tuple[int, ...] | None]):
    """Ask for an element of `name` (shape, axes); dismissed with its full index or None."""

    DEFAULT_CSS = """
    JumpScreen { align: center middle; }
    JumpScreen > Vertical {
        width: 70; max-width: 100%; height: auto;
        border: round $accent; background: $surface; padding: 0 1;
    }
    JumpScreen #jump-problem { color: $error; height: auto; }
    """

    BINDINGS: ClassVar[list[BindingType]] = bindings("dialog")

    def __init__(
        self, name: str, shape: tuple[int, ...], axes: tuple[str, ...], blink: bool = True
    ) -> None:
        super().__init__()
        self.array_name = name
        self.shape = shape
        self.axes = axes
        self.blink = blink

    def compose(self) -> ComposeResult:
        dims = " × ".join(f"{a} {n}" for a, n in zip(self.axes, self.shape, strict=True))
        example = " ".join(f"{a}={n // 2}" for a, n in zip(self.axes, self.shape, strict=True))
        with Vertical():
            yield Label(
                Text.assemble(("Jump to an element of ", "bold"), (self.array_name, "bold"))
            )
            yield Label(f"{dims}: every axis by name, or one flat index; enter jumps")
            box = Input(placeholder=example, id="jump-index")
            box.cursor_blink = self.blink
            yield box
            yield Static(id="jump-problem")

    def on_mount(self) -> None:
        self.query_one("#jump-index", Input).focus()

    @on(Input.Submitted, "#jump-index")
    def _submit(self, event: Input.Submitted) -> None:
        try:
            index = parse_index(event.value, self.shape, self.axes)
        except UserError as exc:
            self.query_one("#jump-problem", Static).update(str(exc))
            return
        self.dismiss(index)

    def action_dismiss_none(self) -> None:
        self.dismiss(None)
