"""BufferView: one buffer at one step in the array view the Outputs tab uses (a 2-D slice that
pages through any size, stats, a heatmap), or the later of two steps with the elements that differ
from the earlier one marked."""

from __future__ import annotations

import numpy as np
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Input, Static

from workbench.session import array_stats
from workbench.units import fmt_num
from workbench.viewmodel.slicing import parse_slice, placeholder
from workbench.widgets.array_view import ArrayView
from workbench.widgets.plots import heatmap, legend


class BufferView(Vertical):
    """A buffer's contents, sliced to 2-D; `show` swaps what is shown."""

    DEFAULT_CSS = """
    BufferView #buf-bar { height: 1; }
    BufferView #buf-title { width: 1fr; }
    BufferView #buf-slice { width: 22; }
    BufferView #buf-stats { height: 1; color: $text-muted; }
    BufferView #buf-side { width: 24; padding-left: 1; }
    BufferView #buf-heat-title { color: $text-muted; height: 1; }
    """

    def __init__(self, *, id: str | None = None, blink: bool = True) -> None:
        super().__init__(id=id)
        self._blink = blink
        self._data: np.ndarray | None = None
        self._ref: np.ndarray | None = None
        self._tol = (0.0, 0.0)
        self._axes: tuple[str, ...] = ()

    def compose(self) -> ComposeResult:
        with Horizontal(id="buf-bar"):
            yield Static(id="buf-title")
            box = Input(placeholder="slice", id="buf-slice", compact=True)
            box.cursor_blink = self._blink
            yield box
        yield Static(id="buf-stats")
        with Horizontal():
            yield ArrayView(id="buf-table")
            with Vertical(id="buf-side"):
                yield Static(id="buf-heat-title")
                yield Static(id="buf-heat")
                yield Static(id="buf-legend")

    def show(
        self,
        title: str,
        data: np.ndarray,
        axes: tuple[str, ...],
        ref: np.ndarray | None = None,
        tol: tuple[float, float] = (0.0, 0.0),
        at: tuple[int, ...] = (),
    ) -> None:
        """`data` (named `axes`); with `ref`, elements beyond `tol` of it are marked; `at` picks
        the slice (leading indices) to show first, e.g. the one holding the worst element."""
        self._data, self._ref, self._tol, self._axes = data, ref, tol, axes
        self.query_one("#buf-title", Static).update(Text(title, style="bold"))
        box = self.query_one("#buf-slice", Input)
        box.placeholder = placeholder(axes, data.ndim)
        if at:
            with box.prevent(Input.Changed):
                box.value = " ".join(f"{a}={i}" for a, i in zip(axes, at, strict=False))
        self._redraw()

    def clear(self, text: str) -> None:
        self._data = None
        self.query_one("#buf-title", Static).update("")
        self.query_one("#buf-stats", Static).update("")
        for wid in ("#buf-heat-title", "#buf-heat", "#buf-legend"):
            self.query_one(wid, Static).update("")
        self.query_one(ArrayView).clear(text)

    @on(Input.Changed, "#buf-slice")
    def _slice(self, event: Input.Changed) -> None:
        event.stop()
        self._redraw()

    def _redraw(self) -> None:
        if self._data is None:
            return
        arr = self._data
        lead, problem = parse_slice(
            self.query_one("#buf-slice", Input).value, arr.shape, self._axes
        )
        part = arr[lead] if lead else arr
        ref = self._ref[lead] if (self._ref is not None and lead) else self._ref
        self.query_one(ArrayView).show(part, ref, self._tol)
        s = array_stats(arr)
        stats = Text(
            f"{s['count']:,} elements  min {fmt_num(s['min'])}  max {fmt_num(s['max'])}  "
            f"mean {fmt_num(s['mean'])}  nan {s['nan']}  inf {s['inf']}"
            if "min" in s
            else f"{s['count']:,} elements"
        )
        if problem:
            stats.append(f"   slice: {problem}", style="bold red")
        self.query_one("#buf-stats", Static).update(stats)
        shown = part.astype(np.float64)
        if ref is not None:
            shown = np.abs(shown - np.asarray(ref, dtype=np.float64))
            title = "|Δ| per block"
        else:
            title = ("this slice" if lead else "whole buffer") + ": max |x| per block"
        fin = shown[np.isfinite(shown)]
        top = float(np.abs(fin).max()) if fin.size else 0.0
        self.query_one("#buf-heat-title", Static).update(title)
        self.query_one("#buf-heat", Static).update(heatmap(shown, 22, 8, signed=ref is None))
        lo = 0.0 if ref is not None else -top
        self.query_one("#buf-legend", Static).update(legend(lo, top, ref is None, 16))
