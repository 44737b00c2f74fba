"""DetailLine: a line of text that is never silently cut.

It takes one line, ending in `…` when the text is longer; hovering shows the whole text as a
tooltip, and focusing it (tab, or a click) unfolds it into as many lines as the text needs. For
notes that matter but would push everything else down if always shown whole (the reason for a
tolerance, a kernel's doc).
"""

from __future__ import annotations

from rich.text import Text
from textual.visual import VisualType
from textual.widgets import Static


class DetailLine(Static, can_focus=True):
    """One line with an ellipsis; the whole text on hover (tooltip) and on focus (unfolded)."""

    DEFAULT_CSS = """
    DetailLine { height: 1; text-wrap: nowrap; text-overflow: ellipsis; }
    DetailLine:focus { height: auto; text-wrap: wrap; background: $boost; }
    """

    def __init__(self, *, id: str | None = None, focusable: bool = True) -> None:
        """`focusable=False` for a line whose whole text is shown elsewhere too: hovering
        still shows it, and tab does not stop on it."""
        super().__init__(id=id)
        self.can_focus = focusable

    def update(self, content: VisualType = "", *, layout: bool = True) -> None:
        super().update(content, layout=layout)
        plain = content.plain if isinstance(content, Text) else str(content)
        self.tooltip = plain or None
