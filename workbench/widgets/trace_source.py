"""TraceSource: the file of the current step, its current line lit, the cursor and breakpoints.

The Debug screen shows the lines of one file that went into the kernel (numbered as in the file);
`show` swaps the file, `mark` says which line the current step is on, where the cursor is and
which lines have breakpoints. Lines are highlighted once per file; only the rows on screen are
drawn, with a gutter of `●` (breakpoint), `❯` (the current line) and the line number.
"""

from __future__ import annotations

from typing import ClassVar

from rich.syntax import Syntax
from rich.text import Text
from textual.geometry import Region, Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

CONTEXT = 3  # lines kept in view above and below the cursor


class TraceSource(ScrollView):
    """A listing of one file with the current line, the cursor and breakpoints marked."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "trace-source--gutter",
        "trace-source--current",
        "trace-source--cursor",
        "trace-source--breakpoint",
    }
    DEFAULT_CSS = """
    TraceSource { height: 1fr; }
    TraceSource > .trace-source--gutter { color: $foreground; text-style: dim; }
    TraceSource > .trace-source--current { background: $warning 30%; text-style: bold; }
    TraceSource > .trace-source--cursor { background: $primary 30%; }
    TraceSource > .trace-source--breakpoint { color: $error; text-style: bold; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.numbers: list[int] = []  # the file's line number of each row
        self._lines: list[Text] = []
        self.current: int | None = None  # line numbers
        self.cursor: int | None = None
        self.breakpoints: set[int] = set()

    def show(self, lines: list[tuple[int, str]]) -> None:
        """Show these (line number, text) rows, highlighted as WGSL."""
        code = "\n".join(text for _, text in lines)
        body = Syntax(code, "wgsl", theme="ansi_dark").highlight(code)
        body.rstrip()
        self._lines = body.split("\n", allow_blank=True)[: len(lines)]
        self.numbers = [n for n, _ in lines]
        width = max((t.cell_len for t in self._lines), default=0) + self._gutter_width()
        self.virtual_size = Size(width, len(lines))
        self.refresh()

    def mark(self, current: int | None, cursor: int | None, breakpoints: set[int]) -> None:
        """Light `current`, put the cursor on `cursor`, mark `breakpoints`; scroll the cursor
        into view with `CONTEXT` lines around it where the file has them."""
        self.current, self.cursor, self.breakpoints = current, cursor, set(breakpoints)
        if cursor in self.numbers:
            row = self.numbers.index(cursor)
            top = max(row - CONTEXT, 0)
            self.scroll_to_region(
                Region(0, top, 1, row - top + CONTEXT + 1),
                animate=False,
                immediate=True,
                force=True,
            )
        self.refresh()

    def _gutter_width(self) -> int:
        return len(str(max(self.numbers, default=1))) + 4

    def render_line(self, y: int) -> Strip:
        sx, sy = self.scroll_offset
        row = sy + y
        width = self.size.width
        base = self.rich_style
        if row >= len(self._lines):
            return Strip.blank(width, base)
        n = self.numbers[row]
        style = self.get_component_rich_style
        digits = self._gutter_width() - 4
        mark = "●" if n in self.breakpoints else " "
        arrow = "❯" if n == self.current else " "
        line = Text(no_wrap=True, overflow="crop")
        line.append(mark, style=style("trace-source--breakpoint", partial=True))
        line.append(f"{arrow} {n:>{digits}} ", style=style("trace-source--gutter", partial=True))
        line.append_text(self._lines[row])
        segments = list(line.render(self.app.console))
        strip = Strip(segments).apply_style(base).crop_extend(sx, sx + width, base)
        if n in (self.current, self.cursor):  # the lit band spans the whole width
            lit = "current" if n == self.current else "cursor"
            strip = strip.apply_style(style(f"trace-source--{lit}", partial=True))
        return strip
