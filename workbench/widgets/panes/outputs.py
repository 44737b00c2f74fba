"""The Outputs tab: one output (or input) at a time as a 2-D slice table, with its stats, a heatmap
and a histogram. Large arrays go through ArrayView (only the visible window is formatted); the
pictures are computed once per output and slice and cached with the run."""

from __future__ import annotations

import numpy as np
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.reactive import reactive
from textual.widgets import Input, Select, Static

from workbench.session import array_stats
from workbench.units import fmt_num
from workbench.viewmodel.kernel_state import View
from workbench.viewmodel.keys import key
from workbench.viewmodel.slicing import parse_slice, placeholder
from workbench.widgets.array_view import ArrayView
from workbench.widgets.plots import heatmap, histogram, legend


class OutputsPane(Vertical):
    """One output (or input) at a time: a 2-D slice table, its stats, heatmap and histogram."""

    DEFAULT_CSS = """
    OutputsPane #out-bar { height: 1; }
    OutputsPane #out-which { width: 28; }
    OutputsPane #out-slice { width: 22; margin-left: 1; }
    OutputsPane #out-stats { height: 1; color: $text-muted; }
    OutputsPane #out-side { width: 34; padding-left: 1; }
    OutputsPane .title { color: $text-muted; height: 1; }
    OutputsPane #out-heat { height: auto; }
    OutputsPane #out-hist { height: 1fr; }
    """

    view: reactive[View] = reactive(View, init=False)

    def __init__(self, *, id: str | None = None, blink: bool = True) -> None:
        super().__init__(id=id)
        self._cache: dict[tuple, tuple[Text, Text, Text]] = {}
        self._blink = blink
        self._setting = False

    def compose(self) -> ComposeResult:
        with Horizontal(id="out-bar"):
            yield Select([], id="out-which", compact=True, allow_blank=True, prompt="output")
            box = Input(placeholder="slice", id="out-slice", compact=True)
            box.cursor_blink = self._blink
            yield box
        yield Static(id="out-stats")
        with Horizontal():
            yield ArrayView(id="out-table")
            with Vertical(id="out-side"):
                yield Static(classes="title", id="out-heat-title")
                yield Static(id="out-heat")
                yield Static(id="out-legend")
                yield Static(id="out-hist")

    def watch_view(self, old: View, view: View) -> None:
        run = view.run
        select = self.query_one("#out-which", Select)
        if run is None:
            self._cache.clear()
            self._setting = True
            select.set_options([])
            self._setting = False
            self.query_one(ArrayView).clear(
                f"no results yet:\n  {key('run')}     runs this kernel\n  ↑/↓   on the left picks "
                f"another\n  enter in a field runs with what you typed\n  {key('help')}     "
                "explains every key"
                if view.error is None
                else view.error
            )
            for wid in ("#out-stats", "#out-heat-title", "#out-heat", "#out-legend", "#out-hist"):
                self.query_one(wid, Static).update("")
            return
        if run is old.run:
            return
        self._cache.clear()
        options = [(f"{n} (output)", f"out:{n}") for n in run.outputs]
        options += [(f"{n} (input)", f"in:{n}") for n in run.inputs if n not in run.outputs]
        previous = select.value
        self._setting = True
        select.set_options(options)
        values = [v for _, v in options]
        select.value = previous if previous in values else (values[0] if values else Select.BLANK)
        self._setting = False
        self._render_choice()

    @on(Select.Changed, "#out-which")
    def _which(self, event: Select.Changed) -> None:
        event.stop()
        if not self._setting:
            self.query_one("#out-slice", Input).value = ""
            self._render_choice()

    @on(Input.Changed, "#out-slice")
    def _slice(self, event: Input.Changed) -> None:
        event.stop()
        self._render_choice()

    def _choice(self) -> tuple[str, str] | None:
        value = self.query_one("#out-which", Select).value
        if not isinstance(value, str):
            return None
        kind, _, name = value.partition(":")
        return kind, name

    def _render_choice(self) -> None:
        run = self.view.run
        choice = self._choice()
        if run is None or choice is None:
            return
        kind, name = choice
        arr = run.outputs.get(name) if kind == "out" else run.inputs.get(name)
        if arr is None:
            return
        plan = run.case.plan(name)
        axes = plan.axes if len(plan.axes) == arr.ndim else tuple(f"i{k}" for k in range(arr.ndim))
        ref = None
        tol = (0.0, 0.0)
        if kind == "out" and run.reference and name in run.reference:
            ref = np.asarray(run.reference[name]).reshape(arr.shape)
            c = run.compare.get(name)
            if c is not None:
                tol = (c.rtol, c.atol)
        box = self.query_one("#out-slice", Input)
        lead, problem = parse_slice(box.value, arr.shape, axes)
        box.placeholder = placeholder(axes, arr.ndim)
        part = arr[lead] if lead else arr
        ref_part = ref[lead] if (ref is not None and lead) else ref
        table = self.query_one(ArrayView)
        if arr.dtype.names:
            table.clear(f"{name} holds structs ({arr.dtype}); shown in Bindings only")
            return
        table.show(part, ref_part, tol)
        stats = Text()
        stats.append("×".join(map(str, arr.shape)) + f" {arr.dtype}  ", style="bold")
        if part.ndim == 2:
            stats.append(f"rows {axes[-2]} × cols {axes[-1]}  ")
        s = run.stats(name) if kind == "out" else array_stats(arr)
        if "min" in s:
            stats.append(
                f"min {fmt_num(s['min'])} max {fmt_num(s['max'])} mean {fmt_num(s['mean'])}"
            )
            if s["nan"] or s["inf"]:
                stats.append(f"  nan {s['nan']:,} inf {s['inf']:,}", style="magenta")
        if problem:
            stats.append(f"  {problem}", style="red")
        self.query_one("#out-stats", Static).update(stats)
        cache_key = (kind, name, lead)
        if cache_key not in self._cache:
            heat = heatmap(part, 32, 8, signed=True)
            fin = part[np.isfinite(part)] if part.dtype.kind == "f" else part
            lo, hi = (float(fin.min()), float(fin.max())) if fin.size else (0.0, 0.0)
            top = max(abs(lo), abs(hi))
            self._cache[cache_key] = (heat, legend(-top, top, True, 20), histogram(arr, 32, 9))
        heat, leg, hist = self._cache[cache_key]
        where = "this slice" if lead else "whole array"
        self.query_one("#out-heat-title", Static).update(f"{where}: max |x| per block")
        self.query_one("#out-heat", Static).update(heat)
        self.query_one("#out-legend", Static).update(leg)
        self.query_one("#out-hist", Static).update(hist)
