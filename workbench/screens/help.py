"""The help screen: keys (built from the bindings' registry), kernel marks, input recipes, files."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown

from workbench.recipes import RECIPES
from workbench.viewmodel.keys import help_table, key


def help_text() -> str:
    """The help page, built when shown, so rebound keys (config `[keys]`) appear as they are."""
    return f"""\
# workbench

Pick a kernel on the left, set its dims and inputs, press **{key("run")}**. The kernel runs on the
GPU adapter in the header and is compared with a float64 NumPy reference.

## Keys

{help_table()}

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

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Markdown(help_text())

    def action_dismiss(self) -> None:
        self.dismiss(None)
