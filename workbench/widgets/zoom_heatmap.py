"""ZoomHeatmap: a 2-D array as a heatmap to zoom into, with the value under the cursor.

One character cell per block of elements (`workbench.viewmodel.heatmap.Zoom` decides which), in
the Outputs tab's diverging colours (blue below 0, red above, at the whole array's largest |x| so
the colours keep their meaning while zooming; non-finite values magenta). The arrows move the
cursor a cell, `+`/`-` zoom in and out around it, `0` shows the whole array again, and enter asks
for the element under the cursor in the table (`Picked`). A line above the picture says the zoom,
one under it what the cursor's cell holds, by named index.
"""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np
from rich.style import Style
from rich.text import Text
from textual.binding import BindingType
from textual.events import Resize
from textual.message import Message
from textual.widget import Widget

from workbench.commands import bindings
from workbench.viewmodel.heatmap import Zoom
from workbench.widgets.plots import NONFINITE, diverging, legend

LINES_AROUND = 3  # the zoom line above the picture; the legend and the value under the cursor below


class ZoomHeatmap(Widget, can_focus=True):
    """A zoomable heatmap of one 2-D array; `show` swaps the array."""

    BINDINGS: ClassVar[list[BindingType]] = bindings("heatmap")
    DEFAULT_CSS = """
    ZoomHeatmap { height: 1fr; width: 1fr; padding-left: 1; }
    ZoomHeatmap:focus { background: $boost; }
    """

    class Picked(Message):
        """Enter on a cell: show the element under the cursor (`at`, in the array) in the table."""

        def __init__(self, at: tuple[int, int]) -> None:
            super().__init__()
            self.at = at

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._data: np.ndarray | None = None
        self._axes: tuple[str, ...] = ("rows", "cols")
        self._lead: tuple[int, ...] = ()
        self._title = ""
        self._scale = 1.0
        self.zoom: Zoom | None = None

    def show(
        self, name: str, data: np.ndarray, axes: tuple[str, ...], lead: tuple[int, ...] = ()
    ) -> None:
        """Draw `data` (2-D, the slice `lead` of an array with named `axes`), whole at first."""
        if data.ndim != 2 or data.size == 0:
            raise ValueError("a heatmap draws a non-empty 2-D array")
        self._data, self._axes, self._lead, self._title = data, axes, lead, name
        finite = np.abs(data[np.isfinite(data)]) if data.dtype.kind == "f" else np.abs(data)
        self._scale = float(finite.max()) if finite.size and finite.max() > 0 else 1.0
        self.zoom = Zoom.fit((data.shape[0], data.shape[1]), self._cells())
        self.refresh()

    def under_text(self) -> str:
        """What the cursor's cell holds, as the line under the picture says it."""
        if self._data is None or self.zoom is None:
            return ""
        return self.zoom.under(self._data).text(self._axes, self._lead)

    # -- keys -----------------------------------------------------------------------------------
    def action_move(self, dr: int, dc: int) -> None:
        if self.zoom is not None:
            self.zoom = self.zoom.move(dr, dc)
            self.refresh()

    def action_zoom(self, steps: int) -> None:
        if self.zoom is not None:
            self.zoom = self.zoom.zoom(steps)
            self.refresh()

    def action_whole(self) -> None:
        if self._data is not None:
            self.zoom = Zoom.fit(self.zoom.shape if self.zoom else self._data.shape, self._cells())
            self.refresh()

    def action_pick(self) -> None:
        if self._data is not None and self.zoom is not None:
            self.post_message(self.Picked(self.zoom.under(self._data).at))

    # -- drawing --------------------------------------------------------------------------------
    def _cells(self) -> tuple[int, int]:
        """Cells for the picture: the widget's content less the lines around it."""
        return max(self.content_size.height - LINES_AROUND, 4), max(self.content_size.width, 8)

    def on_resize(self, event: Resize) -> None:
        if self.zoom is not None:
            self.zoom = self.zoom.resized(self._cells())

    def render(self) -> Text:
        z, data = self.zoom, self._data
        if z is None or data is None:
            return Text("no 2-D array to draw", style="dim")
        grid = z.window(data)
        (r0, c0), (br, bc) = z.origin, z.block
        rows, cols = grid.shape
        ra, ca = self._axes[-2], self._axes[-1]
        head = Text(no_wrap=True, overflow="ellipsis")
        head.append(self._title, style="bold")
        head.append(
            f"  {ra} {r0}–{min(r0 + rows * br, z.shape[0]) - 1} of {z.shape[0]} × "
            f"{ca} {c0}–{min(c0 + cols * bc, z.shape[1]) - 1} of {z.shape[1]}  ·  "
            f"a cell is {br}×{bc}",
            style="dim",
        )
        text = Text(no_wrap=True, overflow="crop")
        text.append_text(head)
        here = z.on_screen()
        for i in range(rows):
            text.append("\n")
            for j in range(cols):
                v = float(grid[i, j])
                rgb = NONFINITE if not math.isfinite(v) else diverging(v / self._scale)
                if (i, j) == here:
                    text.append("◆", Style(color="white", bgcolor=f"rgb{rgb}", bold=True))
                else:
                    text.append(" ", Style(bgcolor=f"rgb{rgb}"))
        text.append("\n")
        text.append_text(legend(-self._scale, self._scale, True, 16))
        text.append("\n")
        text.append(self.under_text(), style="bold")
        return text
