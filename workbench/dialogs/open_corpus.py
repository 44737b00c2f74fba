"""The open-corpus dialog: a folder of .wgsl files (or one file) to open instead of the corpus on
screen, checked before closing."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Static

from workbench.commands import bindings


def corpus_problem(path: Path) -> str | None:
    """Why `path` cannot be opened as a corpus, or None: the same rule as `workbench PATH`."""
    if not path.exists():
        return f"{path} does not exist"
    if path.is_file() and path.suffix != ".wgsl":
        return f"{path} is not a .wgsl file or a folder of them"
    return None


class OpenCorpusScreen(ModalScreen[Path | None]):
    """Ask for the folder (or .wgsl file) to open as the corpus."""

    BINDINGS: ClassVar[list[BindingType]] = bindings("dialog")

    def __init__(self, now: str, blink: bool = True) -> None:
        super().__init__()
        self.now = now
        self.blink = blink

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(Text("Open a corpus: a folder of .wgsl files, or one file", style="bold"))
            yield Static(Text(f"now: {self.now}", style="dim"))
            path = Input(placeholder="path/to/kernels", id="corpus-path")
            path.cursor_blink = self.blink
            yield path
            yield Static(id="corpus-problem")

    def on_mount(self) -> None:
        self.query_one("#corpus-path", Input).focus()

    @on(Input.Submitted, "#corpus-path")
    def _submit(self) -> None:
        text = self.query_one("#corpus-path", Input).value.strip()
        path = Path(text).expanduser()
        problem = corpus_problem(path) if text else "give a folder or a .wgsl file"
        if problem is not None:
            self.query_one("#corpus-problem", Static).update(problem)
        else:
            self.dismiss(path)

    def action_dismiss_none(self) -> None:
        self.dismiss(None)
