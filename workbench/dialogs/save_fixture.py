"""The save-fixture dialog: a fixture's name (checked as typed) and a note, and the folder it goes to
(a user-owned one, never the installed package: `workbench.viewmodel.fixture_places`)."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static

from workbench.commands import bindings


class SaveFixtureScreen(ModalScreen[tuple[str, str] | None]):
    """Ask for a fixture name and a note."""

    BINDINGS: ClassVar[list[BindingType]] = bindings("dialog")

    def __init__(self, default_name: str, folder: Path, why: str = "", blink: bool = True) -> None:
        super().__init__()
        self.default_name = default_name
        self.folder = folder
        self.why = why
        self.blink = blink

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(Text.assemble(("Save fixture", "bold"), f"  into {self.folder}"))
            if self.why:
                yield Label(Text(f"({self.why})", style="dim"))
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
