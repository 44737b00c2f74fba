"""The save-to-file dialog: what to save (when there is a choice) and a path with a sensible
default, checked before the dialog closes (`workbench.viewmodel.takeaway.check_path`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
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
from workbench.errors import UserError
from workbench.viewmodel.takeaway import check_path


class SavePathScreen(ModalScreen[tuple[Path, str] | None]):
    """Ask where to save (and, with `choices`, what); dismissed with (path, choice) or None."""

    DEFAULT_CSS = """
    SavePathScreen { align: center middle; }
    SavePathScreen > Vertical {
        width: 84; max-width: 100%; height: auto;
        border: round $accent; background: $surface; padding: 0 1;
    }
    SavePathScreen Select { margin-bottom: 1; }
    SavePathScreen #save-problem { color: $error; height: auto; }
    """

    BINDINGS: ClassVar[list[BindingType]] = bindings("dialog")

    def __init__(
        self,
        title: str,
        default_for: Callable[[str], str],
        suffixes_for: Callable[[str], tuple[str, ...]],
        choices: Sequence[tuple[str, str]] = (),
        blink: bool = True,
    ) -> None:
        """`default_for(choice)` is the path offered, `suffixes_for(choice)` the endings allowed;
        without `choices` the choice is ""."""
        super().__init__()
        self.title_text = title
        self.default_for = default_for
        self.suffixes_for = suffixes_for
        self.choices = tuple(choices)
        self.blink = blink

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(Text(self.title_text, style="bold"))
            if self.choices:
                yield Select(
                    self.choices, value=self.choices[0][1], allow_blank=False, id="save-what"
                )
            yield Label(f"file (relative to {Path.cwd()}); enter saves, escape cancels")
            first = self.choices[0][1] if self.choices else ""
            path = Input(self.default_for(first), id="save-path")
            path.cursor_blink = self.blink
            yield path
            yield Static(id="save-problem")

    def on_mount(self) -> None:
        self.query_one("#save-path", Input).focus()

    def _choice(self) -> str:
        if not self.choices:
            return ""
        value = self.query_one("#save-what", Select).value
        return value if isinstance(value, str) else self.choices[0][1]

    @on(Select.Changed, "#save-what")
    def _what(self, event: Select.Changed) -> None:
        event.stop()
        self.query_one("#save-path", Input).value = self.default_for(self._choice())
        self.query_one("#save-problem", Static).update("")

    @on(Input.Submitted, "#save-path")
    def _submit(self) -> None:
        choice = self._choice()
        try:
            path = check_path(self.query_one("#save-path", Input).value, self.suffixes_for(choice))
        except UserError as exc:
            self.query_one("#save-problem", Static).update(str(exc))
            return
        self.dismiss((path, choice))

    def action_dismiss_none(self) -> None:
        self.dismiss(None)
