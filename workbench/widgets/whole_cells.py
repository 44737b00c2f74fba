"""A table that never shows part of a cell: a column cut by the edge of the table's region is left
blank, with `…` where it would be, until it is scrolled into view whole.

A DataTable wider than its region crops its cells at the edge, and a cropped number reads as
another number (`362159.52` as `3621`, `1e-05` as `1e-`); a blank column with a mark reads as
"more this way". Scrolling (the arrows, the mouse) still shows every cell whole.
"""

from __future__ import annotations

from itertools import accumulate
from typing import TypeVar

from rich.segment import Segment
from textual.strip import Strip
from textual.widgets import DataTable

MORE = "…"  # where a column that does not fit would be
Cell = TypeVar("Cell")


class WholeCellTable(DataTable[Cell]):
    """A `DataTable` whose cells show whole or not at all (no row labels, no fixed columns)."""

    def column_edges(self) -> list[int]:
        """The x (in the table's whole width) where each column ends."""
        return list(accumulate(c.get_render_width(self) for c in self.ordered_columns))

    def render_line(self, y: int) -> Strip:
        strip = super().render_line(y)
        left, width = int(self.scroll_x), self.size.width
        right = left + width
        edges = self.column_edges()
        below_rows = y >= self.virtual_size.height - int(self.scroll_y)
        if not edges or below_rows or (left == 0 and edges[-1] <= right):
            return strip
        starts = [0, *edges[:-1]]
        # The whole columns in view: from the first that starts at or after `left` to the last
        # that ends at or before `right`.
        first = next((s for s in starts if s >= left), right)
        last = max((e for e in edges if e <= right), default=left)
        if last <= first:  # one column wider than the region: shown as it is
            return strip
        segments = list(strip)
        style = segments[0].style if segments else None
        # The mark goes on the first or last cell of the line: a column's padding, or a blank.
        more_left, more_right = first > 0, last < edges[-1]
        pieces = [
            Strip([Segment(" " * (first - left), style)]),
            strip.crop(first - left, last - left),
            Strip([Segment(" " * (right - last), style)]),
        ]
        line = Strip.join(pieces).crop(int(more_left), width - int(more_right))
        return Strip.join(
            [
                Strip([Segment(MORE, style)] if more_left else []),
                line,
                Strip([Segment(MORE, style)] if more_right else []),
            ]
        )
