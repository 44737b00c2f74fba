"""A roofline chart widget: the adapter's two ceilings and kernels as points (plotext, redrawn to fit)."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.events import Resize
from textual.widgets import Static

from workbench.bench.plot import Point, roofline_chart


class RooflineChart(Static):
    """Shows `roofline_chart` at the widget's size; `show` sets what it draws."""

    DEFAULT_CSS = """
    RooflineChart { height: 1fr; min-height: 10; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._ceilings: tuple[float, float] | None = None
        self._points: tuple[Point, ...] = ()
        self._note = "no roofline yet: a bench measures the adapter's once"

    def show(
        self, bandwidth_gb_s: float | None, peak_gflop_s: float | None, points: Sequence[Point]
    ) -> None:
        """Draw the ceilings with `points` (None ceilings: say the roofline is not measured)."""
        self._ceilings = (bandwidth_gb_s, peak_gflop_s) if bandwidth_gb_s and peak_gflop_s else None
        self._points = tuple(points)
        self._draw()

    def masked(self, note: str) -> None:
        """Show a line instead of a chart (snapshot mode: times differ from run to run)."""
        self._ceilings, self._note = None, note
        self._draw()

    def on_resize(self, event: Resize) -> None:
        self._draw()

    def _draw(self) -> None:
        if self._ceilings is None:
            self.update(Text(self._note, style="dim"))
            return
        width, height = max(self.size.width, 40), max(self.size.height, 10)
        chart = roofline_chart(*self._ceilings, self._points, width=width, height=height - 2)
        self.update(Text.from_ansi(chart, no_wrap=True, overflow="crop"))
