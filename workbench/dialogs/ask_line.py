"""A one-line question: a title, a hint, an answer offered, and a reader that turns the answer
into a value or says (one line, under the field) what is wrong with it; the dialog stays open
until the answer reads. The Steps screen asks a pipeline file's path and the pipeline's dims
with it; the Outputs tab an element to jump to (`jump_to_element`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar, TypeVar

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

T = TypeVar("T")


class AskLineScreen(ModalScreen[T | None]):
    """Dismissed with `read(answer)`, or None when cancelled."""

    DEFAULT_CSS = """
    AskLineScreen { align: center middle; }
    AskLineScreen > Vertical {
        width: 84; max-width: 100%; height: auto;
        border: round $accent; background: $surface; padding: 0 1;
    }
    AskLineScreen #ask-problem { color: $error; height: auto; }
    """

    BINDINGS: ClassVar[list[BindingType]] = bindings("dialog")

    def __init__(
        self,
        title: str,
        hint: str,
        offered: str,
        read: Callable[[str], T],
        blink: bool = True,
        placeholder: str = "",
    ) -> None:
        super().__init__()
        self.placeholder = placeholder
        self.title_text = title
        self.hint = hint
        self.offered = offered
        self.read = read
        self.blink = blink

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(Text(self.title_text, style="bold"))
            yield Label(Text(f"{self.hint}; enter takes it, escape cancels"))
            field = Input(self.offered, placeholder=self.placeholder, id="ask-line")
            field.cursor_blink = self.blink
            yield field
            yield Static(id="ask-problem")

    def on_mount(self) -> None:
        self.query_one("#ask-line", Input).focus()

    @on(Input.Submitted, "#ask-line")
    def _submit(self) -> None:
        try:
            value = self.read(self.query_one("#ask-line", Input).value)
        except UserError as exc:
            self.query_one("#ask-problem", Static).update(Text(str(exc)))
            return
        self.dismiss(value)

    def action_dismiss_none(self) -> None:
        self.dismiss(None)


def jump_to_element(
    name: str, shape: tuple[int, ...], axes: tuple[str, ...], blink: bool = True
) -> AskLineScreen[tuple[int, ...]]:
    """Ask for an element of `name` (shape, axes) by named index (`s=17 h=3 d=40`) or flat
    index, checked before the dialog closes (`workbench.viewmodel.slicing.parse_index`)."""
    dims = " × ".join(f"{a} {n}" for a, n in zip(axes, shape, strict=True))
    example = " ".join(f"{a}={n // 2}" for a, n in zip(axes, shape, strict=True))
    return AskLineScreen(
        f"Jump to an element of {name}",
        f"{dims}: every axis by name, or one flat index",
        "",
        lambda text: parse_index(text, shape, axes),
        blink=blink,
        placeholder=example,
    )
