"""The help screen: keys (built from the bindings' registry), mouse, themes, kernel marks, input
recipes, files. The box fits the terminal and scrolls."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown

from workbench.commands import bindings
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

## Mouse

Everything answers the mouse too: click a kernel, a tab, a field or a key in the footer (it does
what the key does); the wheel scrolls tables, lists and this page. A line that ends in `…` shows
its whole text when hovered, or when focused (tab to it). Below 100 columns the kernel list starts
hidden: **{key("sidebar")}** shows it.

## Themes

`ctrl+p` → **Theme** picks one of Textual's themes; every colour of the workbench follows it, and
the choice is remembered for the next start. `theme = "NAME"` in the configuration file
(`workbench config` shows where it is) sets it for good. Any key above can be rebound there too,
under `[keys]`, by the binding id in the table.

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

    BINDINGS: ClassVar[list[BindingType]] = bindings("help")

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Markdown(help_text())
