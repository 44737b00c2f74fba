"""The zoomable heatmap's state (Textual-free): which window of a 2-D array is drawn, how many
elements each character cell covers, where the cursor is, and what lies under it.

Each cell stands for a block of `block` elements (rows × cols), coloured by the block's largest
|x| (a block holding a NaN or ±Inf shows it, so a non-finite value stays visible at any zoom). The
whole array fits at first; zooming in halves the block around the cursor, down to one element per
cell, and zooming out doubles it back up to the whole array. The cursor is a cell; what is under it
is the cell's block and its largest-|x| element (its first non-finite one if it has any), by named
index, so at one element per cell it is the element itself.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from workbench.closeness import name_index


@dataclass(frozen=True)
class Under:
    """What the cursor's cell covers: its block (row and column ranges, end exclusive), the
    element shown for it (largest |x|, or its first non-finite one) and that element's value."""

    rows: tuple[int, int]
    cols: tuple[int, int]
    at: tuple[int, int]
    value: float

    def text(self, axes: tuple[str, ...], lead: tuple[int, ...] = ()) -> str:
        """`rows=12 cols=40 = 0.1234`, or for a block, its extent and its largest element."""
        where = name_index((*lead, *self.at), axes)
        value = f"{where} = {self.value:.6g}"
        (r0, r1), (c0, c1) = self.rows, self.cols
        if (r1 - r0, c1 - c0) == (1, 1):
            return value
        ra, ca = axes[-2], axes[-1]
        block = f"{ra} {r0}–{r1 - 1} × {ca} {c0}–{c1 - 1}"
        picked = "first non-finite" if not math.isfinite(self.value) else "max |x|"
        return f"{block}: {picked} at {value}"


@dataclass(frozen=True)
class Zoom:
    """The window of a `shape` array drawn in `cells` (rows, cols) of character cells."""

    shape: tuple[int, int]
    cells: tuple[int, int]
    block: tuple[int, int]  # elements per cell (rows, cols)
    origin: tuple[int, int] = (0, 0)  # the first element drawn (a multiple of `block`)
    cursor: tuple[int, int] = (0, 0)  # the cursor's cell, in cells of the whole array

    @classmethod
    def fit(cls, shape: tuple[int, int], cells: tuple[int, int]) -> Zoom:
        """The whole array in `cells`, each cell as few elements as that allows."""
        cells = (max(cells[0], 1), max(cells[1], 1))
        return cls(shape, cells, _fit(shape, cells))

    @property
    def grid(self) -> tuple[int, int]:
        """Cells the whole array takes at this zoom (rows, cols)."""
        return (
            math.ceil(self.shape[0] / self.block[0]),
            math.ceil(self.shape[1] / self.block[1]),
        )

    @property
    def whole(self) -> bool:
        """The whole array fits: zooming out does nothing."""
        return self.block == _fit(self.shape, self.cells)

    def resized(self, cells: tuple[int, int]) -> Zoom:
        """The same zoom in another number of cells (the block no larger than fitting needs)."""
        cells = (max(cells[0], 1), max(cells[1], 1))
        fit = _fit(self.shape, cells)
        block = (min(self.block[0], fit[0]), min(self.block[1], fit[1]))
        return self._keep(self._element(), replace(self, cells=cells, block=block))

    def zoom(self, steps: int) -> Zoom:
        """`steps` > 0 zooms in (blocks halved, down to one element), < 0 out (doubled, up to
        the whole array); the cursor stays on the element it was on."""
        element = self._element()
        fit = _fit(self.shape, self.cells)
        r, c = self.block
        for _ in range(abs(steps)):
            if steps > 0:
                r, c = max(1, r // 2), max(1, c // 2)
            else:
                r, c = min(fit[0], r * 2), min(fit[1], c * 2)
        return self._keep(element, replace(self, block=(r, c)))

    def move(self, dr: int, dc: int) -> Zoom:
        """The cursor `dr`, `dc` cells on, kept on the array; the window follows it."""
        rows, cols = self.grid
        r = min(max(self.cursor[0] + dr, 0), rows - 1)
        c = min(max(self.cursor[1] + dc, 0), cols - 1)
        return _follow(replace(self, cursor=(r, c)))

    def window(self, a: np.ndarray) -> np.ndarray:
        """The cells on show: each block's largest-|x| value (NaN where a block holds a
        non-finite value), `cells` at most."""
        r0, c0 = self.origin
        br, bc = self.block
        rows = min(self.cells[0], math.ceil((self.shape[0] - r0) / br))
        cols = min(self.cells[1], math.ceil((self.shape[1] - c0) / bc))
        part = np.asarray(a[r0 : r0 + rows * br, c0 : c0 + cols * bc], dtype=np.float64)
        padded = np.full((rows * br, cols * bc), np.nan)
        padded[: part.shape[0], : part.shape[1]] = part
        blocks = padded.reshape(rows, br, cols, bc).swapaxes(1, 2).reshape(rows, cols, br * bc)
        filled = np.zeros_like(padded, dtype=bool)
        filled[: part.shape[0], : part.shape[1]] = True
        inside = filled.reshape(rows, br, cols, bc).swapaxes(1, 2).reshape(rows, cols, br * bc)
        bad = inside & ~np.isfinite(blocks)
        magnitude = np.where(inside & ~bad, np.abs(blocks), -1.0)
        pick = np.take_along_axis(blocks, magnitude.argmax(axis=2)[..., None], axis=2)[..., 0]
        return np.where(bad.any(axis=2), np.nan, pick)

    def under(self, a: np.ndarray) -> Under:
        """What the cursor's cell covers."""
        r0, c0 = self.cursor[0] * self.block[0], self.cursor[1] * self.block[1]
        r1, c1 = min(r0 + self.block[0], self.shape[0]), min(c0 + self.block[1], self.shape[1])
        block = np.asarray(a[r0:r1, c0:c1], dtype=np.float64)
        bad = ~np.isfinite(block)
        flat = int(np.argmax(bad)) if bad.any() else int(np.argmax(np.abs(block)))
        i, j = divmod(flat, block.shape[1])
        return Under((r0, r1), (c0, c1), (r0 + i, c0 + j), float(block[i, j]))

    def on_screen(self) -> tuple[int, int]:
        """The cursor's cell within the window drawn."""
        return (
            self.cursor[0] - self.origin[0] // self.block[0],
            self.cursor[1] - self.origin[1] // self.block[1],
        )

    def _element(self) -> tuple[int, int]:
        """The element the cursor is on: its cell's first."""
        return self.cursor[0] * self.block[0], self.cursor[1] * self.block[1]

    def _keep(self, element: tuple[int, int], z: Zoom) -> Zoom:
        """`z` with its cursor on the cell holding `element`, centred where it can be."""
        cursor = (element[0] // z.block[0], element[1] // z.block[1])
        rows, cols = z.grid
        origin = (
            _start(cursor[0], z.cells[0], rows) * z.block[0],
            _start(cursor[1], z.cells[1], cols) * z.block[1],
        )
        return replace(z, cursor=cursor, origin=origin)


def _fit(shape: tuple[int, int], cells: tuple[int, int]) -> tuple[int, int]:
    return max(1, math.ceil(shape[0] / cells[0])), max(1, math.ceil(shape[1] / cells[1]))


def _start(cursor: int, cells: int, total: int) -> int:
    """The first cell drawn so that `cursor` sits in the middle of `cells`, within `total`."""
    return max(0, min(cursor - cells // 2, total - cells))


def _follow(z: Zoom) -> Zoom:
    """Scroll the window (by whole cells) just enough to keep the cursor on it."""
    first = [z.origin[0] // z.block[0], z.origin[1] // z.block[1]]
    for k in (0, 1):
        if z.cursor[k] < first[k]:
            first[k] = z.cursor[k]
        elif z.cursor[k] >= first[k] + z.cells[k]:
            first[k] = z.cursor[k] - z.cells[k] + 1
    return replace(z, origin=(first[0] * z.block[0], first[1] * z.block[1]))
