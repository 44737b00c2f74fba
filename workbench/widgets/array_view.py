"""ArrayView: a scrollable table of a 2-D array that renders only the visible window.

It is a Line API widget: `render_line` formats the cells of one visible row and nothing else, so
paging through a 512×3072 output (or millions of rows of a 1-D one, folded into rows of
`FOLD` values) costs a screenful of formatting per frame. The header row and the row-label column
stay put while the body scrolls. Elements outside tolerance against the reference are shown red,
non-finite values magenta; the component classes `array-view--label`, `--nonfinite`, `--mismatch`,
`--cursor`, `--selection` and `--empty` let a theme's stylesheet restyle them.

While focused it shows a cursor cell (the arrows move it, scrolling as needed) and, with shift and
the arrows, a rectangular selection from where shift was first held; `cursor`, `selection()` and
`move_to` let the pane copy values and jump to an element.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

import numpy as np
from rich.segment import Segment
from textual.binding import BindingType
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from workbench.closeness import bad_mask
from workbench.commands import bindings

CELL = 11  # characters per value, separator included, before any data is shown
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


def value_width(data: np.ndarray, integer: bool) -> int:
    """The characters the widest value of `data` takes as `fmt_cell` writes it (for floats an
    upper bound, close: a cell sized by it holds every value whole, and as many columns fit as
    the values allow, not as the widest possible number needs)."""
    if data.size == 0:
        return 1
    if integer:
        return max(len(str(int(data.min()))), len(str(int(data.max()))))
    f = np.asarray(data, dtype=np.float64).ravel()
    width = 0
    if np.isnan(f).any() or np.isposinf(f).any():
        width = 3  # nan, inf
    if np.isneginf(f).any():
        width = 4
    if (f == 0).any():
        width = max(width, 2 if np.signbit(f[f == 0]).any() else 1)
    finite = f[np.isfinite(f) & (f != 0)]
    if finite.size:
        exp = np.floor(np.log10(np.abs(finite)))
        # 4 significant digits: `e` from 1e4 (9999.5 rounds to 1e+04) and below 1e-4.
        sci = (exp < -4) | (np.abs(finite) >= 9999.5)
        exp_digits = max(2, len(str(int(np.abs(exp).max()))))
        # `-1.234e-05`: sign, 5 of mantissa, `e`, the exponent's sign and digits; `0.001234`:
        # 4 digits after the zeros; `123.4`: 4 digits and the point; a whole number its digits.
        whole = finite == np.round(finite)  # `300`: its digits alone
        fixed = np.where(exp >= 0, np.where(whole, exp + 1, 5), 2 - exp - 1 + 4)
        widths = (finite < 0) + np.where(sci, 7 + exp_digits, fixed)
        width = max(width, int(widths.max()))
    return width


class ArrayView(ScrollView, can_focus=True):
    """A 2-D window onto an array; `show` swaps the data without rebuilding anything."""

    BINDINGS: ClassVar[list[BindingType]] = bindings("array")

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "array-view--label",
        "array-view--nonfinite",
        "array-view--mismatch",
        "array-view--cursor",
        "array-view--selection",
        "array-view--empty",
    }

    DEFAULT_CSS = """
    ArrayView { height: 1fr; background: $surface; }
    ArrayView > .array-view--label { color: $foreground; text-style: bold dim; }
    ArrayView > .array-view--nonfinite { color: $text-accent; text-style: bold; }
    ArrayView > .array-view--mismatch { color: $text-error; text-style: bold; }
    ArrayView > .array-view--cursor { text-style: reverse bold; }
    ArrayView > .array-view--selection { text-style: reverse; }
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
        self._cell = CELL
        self._integer = False
        self._empty_text = "nothing to show"
        self._folded_n: int | None = None
        self.cursor = (0, 0)  # (row, column) of the shown 2-D table
        self.select_from: tuple[int, int] | None = None  # where a shift-selection started

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
        # Cells as wide as the widest value or column label, and one space.
        label = len(col_label(max(data.shape[1] - 1, 0)))
        self._cell = max(value_width(data, self._integer), label, 2) + 1
        self._label_w = max(4, len(row_label(max(rows - 1, 0))) + 1)
        self.virtual_size = Size(self._label_w + self._cell * data.shape[1], rows + 1)
        self.cursor, self.select_from = (0, 0), None
        self.scroll_to(0, 0, animate=False)
        self.refresh()

    @property
    def folded_n(self) -> int | None:
        """The length of a 1-D array shown folded into rows of FOLD; None for a 2-D one."""
        return self._folded_n

    def _valid(self, row: int, col: int) -> tuple[int, int]:
        rows, cols = self._data.shape
        row, col = min(max(row, 0), max(rows - 1, 0)), min(max(col, 0), max(cols - 1, 0))
        if self._folded_n is not None and row * FOLD + col >= self._folded_n:
            row, col = divmod(max(self._folded_n - 1, 0), FOLD)
        return row, col

    def move_to(self, row: int, col: int, extend: bool = False) -> None:
        """Put the cursor on a cell (clamped to the table) and scroll it into view; `extend`
        grows the selection from where it started instead of dropping it."""
        if extend and self.select_from is None:
            self.select_from = self.cursor
        elif not extend:
            self.select_from = None
        self.cursor = self._valid(row, col)
        self._scroll_to_cursor()
        self.refresh()

    def action_move(self, d_row: int, d_col: int, extend: bool = False) -> None:
        self.move_to(self.cursor[0] + d_row, self.cursor[1] + d_col, extend)

    def selection(self) -> tuple[tuple[int, int], tuple[int, int]]:
        """The selected block's first and last (row, column), inclusive: the cursor's cell
        alone when nothing is selected."""
        a = self.select_from or self.cursor
        b = self.cursor
        return (min(a[0], b[0]), min(a[1], b[1])), (max(a[0], b[0]), max(a[1], b[1]))

    def flat_selection(self) -> tuple[int, int]:
        """For a folded 1-D array: the first and last selected flat index, inclusive (the
        selection runs along the array, not as a block of the fold)."""
        a = self.select_from or self.cursor
        fa, fb = a[0] * FOLD + a[1], self.cursor[0] * FOLD + self.cursor[1]
        return min(fa, fb), max(fa, fb)

    def _in_selection(self, row: int, col: int) -> bool:
        if self._folded_n is not None:
            f0, f1 = self.flat_selection()
            return f0 <= row * FOLD + col <= f1
        (r0, c0), (r1, c1) = self.selection()
        return r0 <= row <= r1 and c0 <= col <= c1

    def _scroll_to_cursor(self) -> None:
        row, col = self.cursor
        sx, sy = self.scroll_offset
        body_rows = max(self.size.height - 1, 1)
        body_cols = max((self.size.width - self._label_w) // self._cell, 1)
        first = -(-sx // self._cell)
        y = row if row < sy else (row - body_rows + 1 if row >= sy + body_rows else sy)
        x = col if col < first else (col - body_cols + 1 if col >= first + body_cols else first)
        self.scroll_to(x * self._cell, y, animate=False)

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()

    def clear(self, text: str = "nothing to show") -> None:
        self._data = np.zeros((0, 0))
        self._ref = None
        self._folded_n = None
        self.cursor, self.select_from = (0, 0), None
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
        first = min(-(-sx // self._cell), cols)
        count = max(0, min(cols - first, body_w // self._cell))
        head = base + self.get_component_rich_style("array-view--label", partial=True)
        nonfinite = base + self.get_component_rich_style("array-view--nonfinite", partial=True)
        mismatch = base + self.get_component_rich_style("array-view--mismatch", partial=True)
        cursor = self.get_component_rich_style("array-view--cursor", partial=True)
        selected = self.get_component_rich_style("array-view--selection", partial=True)
        if y == 0:
            segs = [Segment(" " * self._label_w, head)]
            for c in range(first, first + count):
                segs.append(
                    Segment(self._col_label(c)[: self._cell - 1].rjust(self._cell - 1) + " ", head)
                )
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
                    segs.append(Segment(" " * self._cell, base))
                    continue
                text = fmt_cell(v, self._integer).rjust(self._cell - 1)[-(self._cell - 1) :] + " "
                style = base
                if not self._integer and not np.isfinite(v):
                    style = nonfinite
                elif bad is not None and bad[k]:
                    style = mismatch
                if self.has_focus and self._in_selection(r, first + k):
                    style += cursor if (r, first + k) == self.cursor else selected
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
