"""SourceView: highlighted WGSL that renders only the lines on screen.

The file is lexed once (Pygments' WGSL lexer through rich) into one Text per line; scrolling and
tab switches then render a screenful of lines, not the whole file, which keeps the UI responsive
while a kernel runs on the CPU adapter and competes for the same cores.
"""

from __future__ import annotations

from rich.syntax import Syntax
from rich.text import Text
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip


def highlight_lines(code: str, first: int, marked: set[int]) -> list[Text]:
    """One Text per line with a line-number gutter; marked lines get a red ❯ and number."""
    body = Syntax(code, "wgsl", theme="ansi_dark").highlight(code)
    body.rstrip()
    lines = body.split("\n", allow_blank=True)
    width = len(str(first + len(lines)))
    out = []
    for k, line in enumerate(lines):
        n = first + k
        text = Text(no_wrap=True, overflow="crop")
        if n in marked:
            text.append(f"❯ {n:>{width}} ", style="bold red")
        else:
            text.append(f"  {n:>{width}} ", style="bright_black")
        text.append_text(line)
        out.append(text)
    return out


class SourceView(ScrollView, can_focus=True):
    """A scrollable, pre-highlighted listing."""

    DEFAULT_CSS = """
    SourceView { height: 1fr; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._lines: list[Text] = []
        self._strips: dict[int, Strip] = {}

    def show(self, lines: list[Text]) -> None:
        self._lines = lines
        self._strips = {}
        width = max((t.cell_len for t in lines), default=0)
        self.virtual_size = Size(width, len(lines))
        self.refresh()

    def render_line(self, y: int) -> Strip:
        sx, sy = self.scroll_offset
        index = sy + y
        width = self.size.width
        base = self.rich_style
        if index >= len(self._lines):
            return Strip.blank(width, base)
        strip = self._strips.get(index)
        if strip is None:
            segments = list(self._lines[index].render(self.app.console))
            strip = Strip(segments).apply_style(base)
            self._strips[index] = strip
        return strip.crop_extend(sx, sx + width, base)
