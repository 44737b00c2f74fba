"""SourceView: highlighted WGSL that renders only the lines on screen.

The file is lexed once (Pygments' WGSL lexer through rich) into one Text per line; scrolling and
tab switches then render a screenful of lines, not the whole file, which keeps the UI responsive
while a kernel runs on the CPU adapter and competes for the same cores. The gutter and the marked
line's number take their look from the component classes `source-view--gutter` and `--marked`.
"""

from __future__ import annotations

from typing import ClassVar

from rich.style import Style
from rich.syntax import Syntax
from rich.text import Text
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip


def highlight_lines(
    code: str,
    first: int,
    marked: set[int],
    gutter: Style,
    mark: Style,
) -> list[Text]:
    """One Text per line with a line-number gutter; marked lines get a ❯ and their number in
    the `mark` style."""
    body = Syntax(code, "wgsl", theme="ansi_dark").highlight(code)
    body.rstrip()
    lines = body.split("\n", allow_blank=True)
    width = len(str(first + len(lines)))
    out = []
    for k, line in enumerate(lines):
        n = first + k
        text = Text(no_wrap=True, overflow="crop")
        if n in marked:
            text.append(f"❯ {n:>{width}} ", style=mark)
        else:
            text.append(f"  {n:>{width}} ", style=gutter)
        text.append_text(line)
        out.append(text)
    return out


class SourceView(ScrollView, can_focus=True):
    """A scrollable, pre-highlighted listing."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {"source-view--gutter", "source-view--marked"}

    DEFAULT_CSS = """
    SourceView { height: 1fr; }
    SourceView > .source-view--gutter { color: $foreground; text-style: dim; }
    SourceView > .source-view--marked { color: $text-error; text-style: bold; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._lines: list[Text] = []
        self._strips: dict[int, Strip] = {}

    def show_code(self, code: str, marked: set[int]) -> None:
        """Highlight `code` (numbered from 1) with the lines in `marked` marked, and show it."""
        self.show(
            highlight_lines(
                code,
                1,
                marked,
                self.get_component_rich_style("source-view--gutter", partial=True),
                self.get_component_rich_style("source-view--marked", partial=True),
            )
        )

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
