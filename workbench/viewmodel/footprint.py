"""The footprint picture without a toolkit: an output's owners reduced to a grid of cells.

An output is laid out as the heatmaps are: its last axis across, the others down (a 1-D output wraps
at the picture's width). Each cell covers a block of elements and shows, in this order of
precedence, a race (or, for an atomic binding, a shared element), a hole, an element written only by
unstepped workgroups, or the owner of its first element, coloured by workgroup id so neighbours
differ. `describe` names the elements of a cell and who wrote them.
"""

from __future__ import annotations

import colorsys
import math
from dataclasses import dataclass

import numpy as np

from workbench.workgroups.footprint import HOLE, RACE, UNSTEPPED, OutputFootprint

OWNED, RACED, HOLED, UNSEEN = 0, 1, 2, 3
MARKS = {RACED: "×", HOLED: "·", UNSEEN: "?"}
MARK_COLOURS = {RACED: (235, 60, 60), HOLED: (90, 90, 90), UNSEEN: (150, 150, 170)}


def owner_colour(owner: int) -> tuple[int, int, int]:
    """A colour per workgroup id: hues a golden angle apart, so neighbouring ids differ."""
    hue = (owner * 0.6180339887) % 1.0
    r, g, b = colorsys.hsv_to_rgb(hue, 0.55, 0.9)
    return int(r * 255), int(g * 255), int(b * 255)


@dataclass(frozen=True)
class OwnerGrid:
    """`kinds` and `owners` per cell; `row_edges`/`col_edges` bound each cell's elements."""

    output: OutputFootprint
    layout: tuple[int, int]  # the output as rows x cols of elements
    row_edges: np.ndarray
    col_edges: np.ndarray
    kinds: np.ndarray
    owners: np.ndarray

    @property
    def shape(self) -> tuple[int, int]:
        return self.kinds.shape

    def flat(self, r: int, c: int) -> int:
        return r * self.layout[1] + c

    def elements(self, i: int, j: int) -> tuple[int, int, int, int]:
        """Rows [r0, r1) and columns [c0, c1) of the elements under cell (i, j)."""
        return (
            int(self.row_edges[i]),
            int(self.row_edges[i + 1]),
            int(self.col_edges[j]),
            int(self.col_edges[j + 1]),
        )

    def describe(self, i: int, j: int) -> str:
        """What cell (i, j) covers and who wrote it, e.g. `s=3 d=8 … s=3 d=15: workgroup 12`."""
        out = self.output
        r0, r1, c0, c1 = self.elements(i, j)
        owner = out.owner.reshape(-1)
        flats = [self.flat(r, c) for r in range(r0, r1) for c in range(c0, c1)]
        flats = [f for f in flats if f < out.elements]
        if not flats:
            return "past the end of the output"
        where = out.named(flats[0])
        if len(flats) > 1:
            where += f" … {out.named(flats[-1])} ({len(flats):,} elements)"
        values = owner[flats]
        special = [f for f, v in zip(flats, values, strict=True) if v in (RACE, HOLE, UNSTEPPED)]
        if len(flats) == 1 or not special:
            ids = sorted(set(int(v) for v in values))
            if len(flats) == 1:
                return f"{where}: {out.writers(flats[0])}"
            shown = ", ".join(map(str, ids[:6])) + (" …" if len(ids) > 6 else "")
            return f"{where}: workgroup{'s' if len(ids) > 1 else ''} {shown}"
        return f"{where}: {out.named(special[0])} written by {out.writers(special[0])}"


def picture(output: OutputFootprint, width: int, height: int) -> OwnerGrid:
    """Reduce `output` to at most `height` x `width` cells."""
    owner = output.owner
    if owner.ndim >= 2:
        cols = owner.shape[-1]
        rows = owner.size // max(cols, 1)
    else:
        cols = max(1, min(width, owner.size))
        rows = math.ceil(owner.size / cols)
    flat = np.full(rows * cols, HOLE, np.int64)
    flat[: owner.size] = owner.reshape(-1)
    grid = flat.reshape(rows, cols)
    h, w = max(1, min(height, rows)), max(1, min(width, cols))
    re = np.linspace(0, rows, h + 1).astype(int)
    ce = np.linspace(0, cols, w + 1).astype(int)
    kinds = np.full((h, w), OWNED, np.int8)
    owners = np.zeros((h, w), np.int64)
    for i in range(h):
        band = grid[re[i] : re[i + 1]]
        for j in range(w):
            block = band[:, ce[j] : ce[j + 1]]
            if (block == RACE).any():
                kinds[i, j] = RACED
            elif (block == HOLE).any():
                kinds[i, j] = HOLED
            elif (block == UNSTEPPED).any():
                kinds[i, j] = UNSEEN
            else:
                owners[i, j] = block.flat[0]
    return OwnerGrid(output, (rows, cols), re, ce, kinds, owners)


def legend_items(output: OutputFootprint) -> list[tuple[str, tuple[int, int, int], str]]:
    """(mark, colour, meaning) for the legend under a picture."""
    race = "shared by design (atomic)" if output.atomic else "race: several workgroups"
    return [
        ("█", owner_colour(0), "owner workgroup (one colour per id)"),
        (MARKS[RACED], MARK_COLOURS[RACED], race),
        (MARKS[HOLED], MARK_COLOURS[HOLED], "hole: no workgroup"),
        (MARKS[UNSEEN], MARK_COLOURS[UNSEEN], "written outside the stepped sample"),
    ]
