"""The Diff tab: metrics per output, each maximum with the element it comes from; for the chosen
output, where rel and ULP are measured and what a ULP is, the elements nearest to (or beyond)
tolerance with their named indices, the tolerance's reason, and a heatmap of |Δ| / tolerance."""

from __future__ import annotations

import numpy as np
from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.reactive import reactive
from textual.widgets import DataTable, Select, Static

from workbench.units import NONE, fmt_err, fmt_fit, fmt_int, fmt_val
from workbench.viewmodel.diff import Element, closest, tolerance_ratio
from workbench.viewmodel.kernel_state import View
from workbench.viewmodel.keys import key
from workbench.widgets.detail_line import DetailLine
from workbench.widgets.plots import heatmap, legend
from workbench.widgets.whole_cells import WholeCellTable

WORST_COLUMNS = ("where", "/tol", "|Δ|", "got", "reference", "rel", "ULP")
TOL_WIDTH = 6  # the /tol column: `0.42`, `85712`, `3.6e12`, never cut (`units.fmt_fit`)


def element_row(e: Element) -> tuple[str, Text, str, str, str, str, str]:
    """A row of the table of elements nearest to tolerance (`WORST_COLUMNS`: how far beyond it
    comes first, beside where); beyond it in red."""
    style = "bold red" if e.ratio > 1 else ("yellow" if e.ratio > 0.5 else "")
    diff = e.abs_diff
    return (
        e.where,
        Text(fmt_fit(e.ratio, TOL_WIDTH), style=style),
        NONE if diff is None else fmt_err(diff),
        fmt_val(e.got),
        fmt_val(e.ref),
        NONE if e.rel is None else fmt_err(e.rel),
        NONE if e.ulp is None else fmt_int(e.ulp),
    )


SLIM_BELOW = 80  # columns: below, the heatmap of |Δ| / tolerance is left out


class DiffPane(Vertical):
    """Metrics per output, the worst elements of the chosen one, and where they are."""

    DEFAULT_CSS = """
    DiffPane #diff-metrics { height: auto; max-height: 6; }
    DiffPane #diff-bar { height: auto; }
    DiffPane #diff-which { width: 30; }
    DiffPane #diff-why { width: 1fr; color: $text-muted; margin-left: 1; }
    DiffPane #diff-about { height: auto; color: $text-muted; }
    DiffPane #diff-worst { width: 1fr; }
    DiffPane #diff-side { width: 26; padding-left: 1; }
    DiffPane.-slim #diff-side { display: none; }
    DiffPane .title { color: $text-muted; height: auto; }
    """

    WORST = 12

    view: reactive[View] = reactive(View, init=False)

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._setting = False
        self._worst: tuple[str, list[Element]] = ("", [])  # the chosen output's rows

    def element(self) -> str | None:
        """The highlighted worst element as `NAME[axis=i ...]`, or None when none is listed."""
        name, rows = self._worst
        row = self.query_one("#diff-worst", DataTable).cursor_row
        return f"{name}[{rows[row].where}]" if 0 <= row < len(rows) else None

    def compose(self) -> ComposeResult:
        table: WholeCellTable[Text | str] = WholeCellTable(
            id="diff-metrics", cursor_type="row", zebra_stripes=True
        )
        table.add_columns(
            "output", "verdict", "outside tol", "max |Δ|", "max rel", "max ULP", "rtol", "atol"
        )
        yield table
        yield Static(id="diff-about")
        with Horizontal(id="diff-bar"):
            yield Select([], id="diff-which", compact=True, allow_blank=True, prompt="output")
            yield DetailLine(id="diff-why")
        with Horizontal():
            worst: WholeCellTable[Text | str] = WholeCellTable(
                id="diff-worst", cursor_type="row", zebra_stripes=True
            )
            worst.add_columns(*WORST_COLUMNS)
            yield worst
            with Vertical(id="diff-side"):
                yield Static(classes="title", id="diff-heat-title")
                yield Static(id="diff-heat")
                yield Static(id="diff-legend")

    def on_resize(self, event: events.Resize) -> None:
        # Narrow, the tables get the whole width and the heatmap is left out.
        self.set_class(event.size.width < SLIM_BELOW, "-slim")

    def watch_view(self, old: View, view: View) -> None:
        run = view.run
        if run is old.run and run is not None:
            return
        metrics = self.query_one("#diff-metrics", WholeCellTable)
        metrics.clear()
        self.query_one("#diff-worst", DataTable).clear()
        self._worst = ("", [])
        select = self.query_one("#diff-which", Select)
        why = self.query_one("#diff-why", DetailLine)
        if run is None or not run.compare:
            why.update(
                f"no comparison yet: press {key('run')} to run"
                if run is None
                else "ad-hoc kernel: no reference to compare with (give it a spec to check it)"
            )
            self._setting = True
            select.set_options([])
            self._setting = False
            for wid in ("#diff-about", "#diff-heat-title", "#diff-heat", "#diff-legend"):
                self.query_one(wid, Static).update("")
            return
        for name, c in run.compare.items():
            verdict = Text("✓ ok", style="green") if c.ok else Text("✗ FAIL", style="bold red")
            metrics.add_row(
                name,
                verdict,
                f"{fmt_int(c.n_bad)}/{fmt_int(c.n_total)}",
                fmt_err(c.max_abs),
                NONE if c.max_rel is None else fmt_err(c.max_rel),
                NONE if c.max_ulp is None else fmt_int(c.max_ulp),
                f"{c.rtol:g}",
                f"{c.atol:g}",
            )
        self._setting = True
        names = list(run.compare)
        select.set_options([(n, n) for n in names])
        failing = [n for n, c in run.compare.items() if not c.ok]
        select.value = failing[0] if failing else names[0]
        self._setting = False
        self._chosen()

    @on(Select.Changed, "#diff-which")
    def _which(self, event: Select.Changed) -> None:
        event.stop()
        if not self._setting:
            self._chosen()

    def _chosen(self) -> None:
        run = self.view.run
        name = self.query_one("#diff-which", Select).value
        if run is None or not isinstance(name, str) or name not in run.compare:
            return
        c = run.compare[name]
        # Where each maximum of the metrics table comes from, and what rel and ULP are about.
        self.query_one("#diff-about", Static).update(f"{name}: {c.figures()}\n{c.about()}")
        why = self.query_one("#diff-why", DetailLine)
        why.update(f"tolerance: {c.why or 'default'}")
        worst = self.query_one("#diff-worst", DataTable)
        worst.clear()
        ratio = tolerance_ratio(run, name)
        self._worst = (name, closest(run, name, self.WORST, ratio))
        for element in self._worst[1]:
            worst.add_row(*element_row(element))
        shown = ratio.reshape(-1, ratio.shape[-1]) if ratio.ndim > 2 else ratio
        self.query_one("#diff-heat-title", Static).update(
            "|Δ| / tolerance, max per block (1 and above fail)"
        )
        self.query_one("#diff-heat", Static).update(
            heatmap(np.minimum(shown, 1.0), 24, 8, signed=False, scale=1.0)
        )
        self.query_one("#diff-legend", Static).update(legend(0.0, 1.0, False, 16))
