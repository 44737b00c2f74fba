"""The Outputs tab: one output (or input) at a time as a 2-D slice table, with its stats, a heatmap
and a histogram. Large arrays go through ArrayView (only the visible window is formatted); the
pictures are computed once per output and slice and cached with the run. The table's cursor cell or
selection can be copied as text (`copy_text`), and `jump` shows any element by its full index.
`toggle_heatmap` puts a zoomable heatmap of a 2-D output (or slice) beside the table in place of the
small pictures (`ZoomHeatmap`); enter there shows its cursor's element in the table."""

from __future__ import annotations

import numpy as np
from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.reactive import reactive
from textual.widgets import Input, Select, Static

from workbench.closeness import name_index
from workbench.errors import UserError
from workbench.session import array_stats
from workbench.units import fmt_num
from workbench.viewmodel.kernel_state import View
from workbench.viewmodel.keys import key
from workbench.viewmodel.slicing import parse_slice, placeholder
from workbench.viewmodel.takeaway import block_text, value_text
from workbench.widgets.array_view import FOLD, ArrayView
from workbench.widgets.plots import heatmap, histogram, legend
from workbench.widgets.zoom_heatmap import ZoomHeatmap

SLIM_BELOW = 80  # columns: below, the heatmap and histogram are left out


def no_results_hint() -> str:
    """What the empty pane says, one key a line, with the keys as bound now (the pane does not
    wrap: the lines fit at 80 columns, where the kernel list starts hidden)."""
    rows = (
        (key("run"), "runs this kernel"),
        ("↑/↓", "in the kernel list picks another"),
        (key("sidebar"), "shows or hides the kernel list"),
        (key("focus_form"), "edits the dims; enter there runs"),
        (key("help"), "explains every key"),
    )
    return "no results yet:\n" + "\n".join(f"  {k:<7}{what}" for k, what in rows)


class OutputsPane(Vertical):
    """One output (or input) at a time: a 2-D slice table, its stats, heatmap and histogram."""

    DEFAULT_CSS = """
    OutputsPane #out-bar { height: 1; }
    OutputsPane #out-which { width: 28; }
    OutputsPane #out-slice { width: 22; margin-left: 1; }
    OutputsPane #out-stats { height: 1; color: $text-muted; }
    OutputsPane #out-side { width: 34; padding-left: 1; }
    OutputsPane.-slim #out-side { display: none; }
    OutputsPane .title { color: $text-muted; height: 1; }
    OutputsPane #out-heat { height: auto; }
    OutputsPane #out-hist { height: 1fr; }
    OutputsPane #out-zoom { display: none; }
    OutputsPane.-zoom #out-zoom { display: block; }
    OutputsPane.-zoom #out-side { display: none; }
    """

    view: reactive[View] = reactive(View, init=False)

    def __init__(self, *, id: str | None = None, blink: bool = True) -> None:
        super().__init__(id=id)
        # (kind, output name, leading indices) -> heat map, legend, histogram.
        self._cache: dict[tuple[str, str, tuple[int, ...]], tuple[Text, Text, Text]] = {}
        self._blink = blink
        self._setting = False
        # What the table shows: (name, array, its axes, the leading indices of the slice).
        self._shown: tuple[str, np.ndarray, tuple[str, ...], tuple[int, ...]] | None = None
        self._rendered_slice = ""  # the slice box's text the table was last drawn for

    def compose(self) -> ComposeResult:
        with Horizontal(id="out-bar"):
            yield Select([], id="out-which", compact=True, allow_blank=True, prompt="output")
            box = Input(placeholder="slice", id="out-slice", compact=True)
            box.cursor_blink = self._blink
            yield box
        yield Static(id="out-stats")
        with Horizontal():
            yield ArrayView(id="out-table")
            yield ZoomHeatmap(id="out-zoom")
            with Vertical(id="out-side"):
                yield Static(classes="title", id="out-heat-title")
                yield Static(id="out-heat")
                yield Static(id="out-legend")
                yield Static(id="out-hist")

    def on_resize(self, event: events.Resize) -> None:
        # Narrow, the table gets the whole width: the pictures would leave it two or three columns.
        self.set_class(event.size.width < SLIM_BELOW, "-slim")

    def watch_view(self, old: View, view: View) -> None:
        run = view.run
        select = self.query_one("#out-which", Select)
        if run is None:
            self._cache.clear()
            self._shown = None
            self._setting = True
            select.set_options([])
            self._setting = False
            self.query_one(ArrayView).clear(no_results_hint() if view.error is None else view.error)
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
        if event.value != self._rendered_slice:
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
        # (a packed output's words are shown as they are, its reference being of its values)
        known = run.reference or {}
        if kind == "out" and name in known and np.size(known[name]) == arr.size:
            ref = np.asarray(known[name]).reshape(arr.shape)
            c = run.compare.get(name)
            if c is not None:
                tol = (c.rtol, c.atol)
        box = self.query_one("#out-slice", Input)
        self._rendered_slice = box.value
        lead, problem = parse_slice(box.value, arr.shape, axes)
        box.placeholder = placeholder(axes, arr.ndim)
        part = arr[lead] if lead else arr
        ref_part = ref[lead] if (ref is not None and lead) else ref
        table = self.query_one(ArrayView)
        if arr.dtype.names:
            self._shown = None
            table.clear(f"{name} holds structs ({arr.dtype}); shown in Bindings only")
            return
        self._shown = (name, arr, axes, lead)
        table.show(part, ref_part, tol)
        if self.has_class("-zoom"):  # the heatmap follows the output and slice shown
            if part.ndim == 2 and part.size:
                self.query_one(ZoomHeatmap).show(name, part, axes, lead)
            else:
                self.set_class(False, "-zoom")
        stats = Text()
        stats.append("×".join(map(str, arr.shape)) + f" {arr.dtype}  ", style="bold")
        if part.ndim == 2:
            stats.append(f"{axes[-2]} down × {axes[-1]} across  ")
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

    # -- the zoomable heatmap ---------------------------------------------------------------------
    def toggle_heatmap(self) -> bool:
        """Open the heatmap of the 2-D array (or slice) in the table, focused; or close it.
        True when it is open now; UserError (one line) when there is no 2-D array to draw."""
        heat = self.query_one(ZoomHeatmap)
        if self.has_class("-zoom"):
            self.set_class(False, "-zoom")
            self.query_one(ArrayView).focus()
            return False
        if self._shown is None:
            raise UserError(f"no array on show: run the kernel first ({key('run')})")
        name, arr, axes, lead = self._shown
        part = arr[lead] if lead else arr
        if part.ndim != 2 or part.size == 0:
            raise UserError(
                f"{name} is {'empty' if not part.size else f'{part.ndim}-D'}: the heatmap draws a "
                "2-D output (or a 2-D slice of a larger one)"
            )
        self.set_class(True, "-zoom")
        heat.show(name, part, axes, lead)
        heat.focus()
        return True

    @on(ZoomHeatmap.Picked)
    def _picked(self, event: ZoomHeatmap.Picked) -> None:
        event.stop()
        table = self.query_one(ArrayView)
        table.move_to(*event.at)
        table.focus()

    # -- taking values away ------------------------------------------------------------------------
    def shown_array(self) -> tuple[str, tuple[int, ...], tuple[str, ...]] | None:
        """(name, shape, axes) of the array in the table, None when there is none."""
        if self._shown is None:
            return None
        name, arr, axes, _ = self._shown
        return name, arr.shape, axes

    def jump(self, index: tuple[int, ...]) -> None:
        """Show the element at `index` (of the whole array): its slice, its cell under the
        cursor."""
        if self._shown is None:
            return
        _, arr, axes, _ = self._shown
        table = self.query_one(ArrayView)
        if arr.ndim > 2:
            box = self.query_one("#out-slice", Input)
            box.value = " ".join(f"{a}={i}" for a, i in zip(axes[:-2], index[:-2], strict=True))
            self._render_choice()
        if arr.ndim >= 2:
            table.move_to(index[-2], index[-1])
        elif arr.ndim == 1:
            table.move_to(*divmod(index[0], FOLD))
        table.focus()

    def copy_text(self) -> tuple[str, str]:
        """The cursor's value, or the selected values, as text, and what they are in words."""
        if self._shown is None:
            raise UserError(f"no array on show: run the kernel first ({key('run')})")
        name, arr, axes, lead = self._shown
        table = self.query_one(ArrayView)
        if arr.ndim <= 1:
            flat = arr.reshape(-1)
            f0, f1 = table.flat_selection()
            f1 = min(f1, flat.size - 1)
            where = name_index((f0,), axes[-1:] or ("i",))
            if f0 == f1:
                text = value_text(flat[f0])
                return text, f"{name} at {where} = {text}"
            last = name_index((f1,), axes[-1:] or ("i",))
            text = "\n".join(value_text(v) for v in flat[f0 : f1 + 1])
            return text, f"{f1 - f0 + 1} values of {name}, {where} to {last}, one per line"
        part = arr[lead] if lead else arr
        (r0, c0), (r1, c1) = table.selection()
        first = name_index((*lead, r0, c0), axes)
        if (r0, c0) == (r1, c1):
            text = value_text(part[r0, c0])
            return text, f"{name} at {first} = {text}"
        last = name_index((*lead, r1, c1), axes)
        rows, cols = r1 - r0 + 1, c1 - c0 + 1
        text = block_text(part[r0 : r1 + 1, c0 : c1 + 1])
        return text, f"{rows}×{cols} values of {name}, {first} to {last}, tab-separated"
