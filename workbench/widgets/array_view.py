"""ArrayView: a scrollable table of a 2-D array that renders only the visible window.

It is a Line API widget: `render_line` formats the cells of one visible row and nothing else, so
paging through a 512×3072 output (or millions of rows of a 1-D one, folded into rows of
`FOLD` values) costs a screenful of formatting per frame. The header row and the row-label column
stay put while the body scrolls. Elements outside tolerance against the reference are shown red,
non-finite values magenta; the component classes `array-view--label`, `--nonfinite`, `--mismatch`
and `--empty` let a theme's stylesheet restyle them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

import numpy as np
from rich.segment import Segment
from textual.binding import Binding
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from workbench.closeness import bad_mask

CELL = 11  # characters per value, separator included
FOLD = 8  # values per row when a 1-D array is shown


def fmt_cell(v: float | int, integer: bool) -> str:
    if integer:
        return str(int(v))
    f = float(v)
    if f != f:
        return "nan"
    if f in (float("inf"), float("-inf")):
        return "inf" if f > 0 else "-inf"
    if f == 0:
        return "-0" if np.signbit(f) else "0"
    return f"{f:.4g}"


class ArrayView(ScrollView, can_focus=True):
    """A 2-D window onto an array; `show` swaps the data without rebuilding anything."""

    BINDINGS: ClassVar[list[Binding]] = [
        Binding("left", "cells(-1)", "Left", show=False, id="array.left"),
        Binding("right", "cells(1)", "Right", show=False, id="array.right"),
    ]

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "array-view--label",
        "array-view--nonfinite",
        "array-view--mismatch",
        "array-view--empty",
    }

    DEFAULT_CSS = """
    ArrayView { height: 1fr; background: $surface; }
    ArrayView > .array-view--label { color: ansi_bright_black; text-style: bold; }
    ArrayView > .array-view--nonfinite { color: ansi_magenta; text-style: bold; }
    ArrayView > .array-view--mismatch { color: ansi_red; text-style: bold; }
    ArrayView > .array-view--empty { text-style: dim; }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._data: np.ndarray = np.zeros((0, 0))
        self._ref: np.ndarray | None = None
        self._tol = (0.0, 0.0)
        self._row_label: Callable[[int], str] = str
        self._col_label: Callable[[int], str] = str
        self._label_w = 4
        self._integer = False
        self._empty_text = "nothing to show"

    # -- data ----------------------------------------------------------------------------------
    def show(
        self,
        data: np.ndarray,
        ref: np.ndarray | None = None,
        tol: tuple[float, float] = (0.0, 0.0),
        row_label: Callable[[int], str] = str,
        col_label: Callable[[int], str] = str,
    ) -> None:
        """Show a 2-D array (1-D is folded into rows of FOLD); `ref` marks mismatches."""
        data = np.asarray(data)
        if data.ndim == 0:
            data = data.reshape(1, 1)
        if data.ndim == 1:
            n = data.shape[0]
            rows = -(-n // FOLD)
            pad = rows * FOLD - n
            # The fold copies at most FOLD-1 padding values: a view when it divides evenly.
            data = np.concatenate([data, np.zeros(pad, data.dtype)]) if pad else data
            data = data.reshape(rows, FOLD)
            if ref is not None:
                ref = np.asarray(ref).ravel()
                ref = np.concatenate([ref, np.zeros(pad)]) if pad else ref
                ref = ref.reshape(rows, FOLD)
            self._folded_n = n
            row_label = lambda r: str(r * FOLD)  # noqa: E731
            col_label = lambda c: f"+{c}"  # noqa: E731
        else:
            self._folded_n = None
        self._data = data
        self._ref = None if ref is None else np.asarray(ref).reshape(data.shape)
        self._tol = tol
        self._row_label, self._col_label = row_label, col_label
        self._integer = data.dtype.kind in "iub"
        rows = data.shape[0]
        self._label_w = max(4, len(row_label(max(rows - 1, 0))) + 1)
        self.virtual_size = Size(self._label_w + CELL * data.shape[1], rows + 1)
        self.scroll_to(0, 0, animate=False)
        self.refresh()

    def action_cells(self, step: int) -> None:
        """Scroll sideways by whole columns."""
        column = max(0, self.scroll_offset.x // CELL + step)
        self.scroll_to(x=column * CELL, animate=False)

    def clear(self, text: str = "nothing to show") -> None:
        self._data = np.zeros((0, 0))
        self._ref = None
        self._empty_text = text
        self.virtual_size = Size(0, 0)
        self.refresh()

    # -- rendering -----------------------------------------------------------------------------
    def render_line(self, y: int) -> Strip:
        width = self.size.width
        base = self.rich_style
        if self._data.size == 0:
            lines = self._empty_text.split("\n")
            text = lines[y] if y < len(lines) else ""
            empty = base + self.get_component_rich_style("array-view--empty", partial=True)
            return Strip([Segment(text.ljust(width), empty)]).crop(0, width)
        sx, sy = self.scroll_offset
        rows, cols = self._data.shape
        body_w = max(width - self._label_w, 0)
        # Whole cells only: a column that does not fit is left out (scroll to it), never cut, and
        # rounding the offset up lets the last column come fully into view at the end of the scroll.
        first = min(-(-sx // CELL), cols)
        count = max(0, min(cols - first, body_w // CELL))
        head = base + self.get_component_rich_style("array-view--label", partial=True)
        nonfinite = base + self.get_component_rich_style("array-view--nonfinite", partial=True)
        mismatch = base + self.get_component_rich_style("array-view--mismatch", partial=True)
        if y == 0:
            segs = [Segment(" " * self._label_w, head)]
            for c in range(first, first + count):
                segs.append(Segment(self._col_label(c)[: CELL - 1].rjust(CELL - 1) + " ", head))
        else:
            r = sy + y - 1
            if r >= rows:
                return Strip.blank(width, base)
            label = self._row_label(r)[: self._label_w - 1].rjust(self._label_w - 1) + " "
            segs = [Segment(label, head)]
            values = self._data[r, first : first + count]
            bad = self._bad(r, first, count)
            for k, v in enumerate(values):
                if self._folded_n is not None and r * FOLD + first + k >= self._folded_n:
                    segs.append(Segment(" " * CELL, base))
                    continue
                text = fmt_cell(v, self._integer).rjust(CELL - 1)[-(CELL - 1) :] + " "
                style = base
                if not self._integer and not np.isfinite(v):
                    style = nonfinite
                elif bad is not None and bad[k]:
                    style = mismatch
                segs.append(Segment(text, style))
        strip = Strip(segs)
        # The label column stays; the body scrolls by whole cells, never showing half a number.
        label_part = strip.crop(0, self._label_w)
        body = strip.crop(self._label_w, self._label_w + body_w)
        return Strip.join([label_part, body]).extend_cell_length(width, base).crop(0, width)

    def _bad(self, r: int, first: int, count: int) -> np.ndarray | None:
        if self._ref is None or self._integer:
            return None
        rtol, atol = self._tol
        return bad_mask(
            self._data[r, first : first + count], self._ref[r, first : first + count], rtol, atol
        )
