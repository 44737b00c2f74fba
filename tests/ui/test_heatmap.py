"""The zoomable heatmap (issue 31): its state (which blocks are drawn, zoom, the cursor and what is
under it) against NumPy computed here, the widget's keys in a bare app, and the Outputs tab opening
it beside the table for a 2-D output of a real run (and refusing a 1-D one, in one line)."""

from __future__ import annotations

from dataclasses import replace
from typing import ClassVar

import numpy as np
import pytest
from textual.app import App, ComposeResult
from textual.binding import BindingType

from workbench.commands import bindings
from workbench.errors import UserError
from workbench.session import Run, Session
from workbench.viewmodel.heatmap import Zoom
from workbench.viewmodel.kernel_state import View
from workbench.widgets.array_view import ArrayView
from workbench.widgets.panes.outputs import OutputsPane
from workbench.widgets.zoom_heatmap import ZoomHeatmap

from .conftest import run_async

AXES = ("s", "d")


def _array() -> np.ndarray:
    rng = np.random.default_rng(3)
    a = rng.standard_normal((37, 90)).astype(np.float32)
    a[20, 61] = 50.0  # the largest |x| of its blocks at every zoom
    a[5, 7] = np.nan
    return a


def _block_absmax(a: np.ndarray, r0: int, r1: int, c0: int, c1: int) -> float:
    block = a[r0:r1, c0:c1].astype(np.float64)
    if not np.isfinite(block).all():
        return np.nan
    return float(block.flat[np.argmax(np.abs(block))])


def test_the_whole_array_fits_and_each_cell_is_its_blocks_largest_value() -> None:
    a = _array()
    z = Zoom.fit(a.shape, (8, 20))
    assert z.block == (5, 5) and z.grid == (8, 18) and z.whole
    grid = z.window(a)
    assert grid.shape == (8, 18)
    for i in range(8):
        for j in range(18):
            want = _block_absmax(a, 5 * i, 5 * i + 5, 5 * j, 5 * j + 5)
            assert np.array_equal(grid[i, j], want, equal_nan=True), (i, j)


def test_zoom_keeps_the_cursor_on_its_element_down_to_one_element_a_cell() -> None:
    a = _array()
    z = Zoom.fit(a.shape, (8, 20)).move(4, 12)  # the cell holding s=20 d=61
    under = z.under(a)
    assert under.rows == (20, 25) and under.cols == (60, 65) and under.at == (20, 61)
    assert under.text(AXES) == "s 20–24 × d 60–64: max |x| at s=20 d=61 = 50"
    z = z.zoom(1)
    assert z.block == (2, 2) and z.under(a).at == (20, 61) and not z.whole
    z = z.zoom(5)  # one element a cell: no further
    assert z.block == (1, 1) and z.under(a).text(AXES).startswith("s=20 d=60 = ")
    row, col = z.on_screen()
    assert 0 <= row < 8 and 0 <= col < 20  # the window follows the cursor
    assert z.window(a)[row, col] == np.float64(a[20, 60])
    assert z.zoom(-10).whole and z.zoom(-10).block == (5, 5)


def test_a_non_finite_element_shows_at_any_zoom_and_under_the_cursor() -> None:
    a = _array()
    z = Zoom.fit(a.shape, (8, 20)).move(1, 1)
    assert np.isnan(z.window(a)[1, 1])
    assert z.under(a).at == (5, 7) and "first non-finite at s=5 d=7 = nan" in z.under(a).text(AXES)


def test_moving_scrolls_the_window_and_stops_at_the_edges() -> None:
    a = _array()
    z = Zoom.fit(a.shape, (4, 10)).zoom(3)  # one element a cell
    assert z.block == (1, 1)
    z = z.move(-100, -100)
    assert z.cursor == (0, 0) and z.origin == (0, 0)
    z = z.move(100, 100)
    assert z.cursor == (36, 89) and z.origin == (33, 80) and z.on_screen() == (3, 9)


class _Heat(App[None]):
    BINDINGS: ClassVar[list[BindingType]] = bindings("app")

    def compose(self) -> ComposeResult:
        yield ZoomHeatmap()


@run_async
async def test_the_widget_zooms_with_its_keys_and_names_the_value_under_the_cursor() -> None:
    a = _array()
    app = _Heat()
    async with app.run_test(size=(60, 14)) as pilot:
        heat = app.query_one(ZoomHeatmap)
        heat.show("o", a, AXES)
        heat.focus()
        await pilot.pause()
        fit = heat.zoom
        assert fit is not None and fit.whole
        await pilot.press("plus", "plus")
        assert heat.zoom is not None and heat.zoom.block < fit.block
        await pilot.press("0")
        assert heat.zoom == Zoom.fit(a.shape, fit.cells)
        while heat.zoom.block != (1, 1):
            await pilot.press("plus")
        await pilot.press("down", "right", "right")
        r, c = heat.zoom.under(a).at
        assert (r, c) == (1, 2)
        assert heat.under_text() == f"s=1 d=2 = {float(a[1, 2]):.6g}"
        assert heat.under_text() in str(heat.render())


class _Outputs(App[None]):
    def compose(self) -> ComposeResult:
        yield OutputsPane(blink=False)


@pytest.fixture(scope="module")
def swiglu(session: Session) -> Run:
    return session.run("ffn_swiglu_backward", dims={"seq": 6, "d_ff": 40})


@run_async
async def test_the_outputs_tab_opens_it_beside_the_table_for_a_2d_output(swiglu: Run) -> None:
    app = _Outputs()
    async with app.run_test(size=(120, 30)) as pilot:
        pane = app.query_one(OutputsPane)
        pane.view = View(run=swiglu)
        await pilot.pause()
        assert pane.toggle_heatmap() is True
        await pilot.pause()
        heat, table = pane.query_one(ZoomHeatmap), pane.query_one(ArrayView)
        assert heat.display and heat.has_focus and table.region.width > 0
        assert heat.region.x >= table.region.right  # beside the table
        name = pane.shown_array()[0]
        data = swiglu.outputs[name]
        under = heat.zoom.under(data)
        assert under.value == pytest.approx(_block_absmax(data, *under.rows, *under.cols))
        await pilot.press("enter")  # the element under the cursor, in the table
        assert table.has_focus and table.cursor == under.at
        assert pane.toggle_heatmap() is False
        await pilot.pause()
        assert not heat.display


@run_async
async def test_a_1d_output_has_no_heatmap_and_says_so(session: Session) -> None:
    run = session.run("gelu_inplace", dims={"seq": 4, "d_ff": 64})
    flat = replace(run, outputs={"x": run.outputs["x"].reshape(-1)})
    app = _Outputs()
    async with app.run_test(size=(120, 30)) as pilot:
        pane = app.query_one(OutputsPane)
        pane.view = View(run=flat)
        await pilot.pause()
        with pytest.raises(UserError, match="x is 1-D: the heatmap draws a 2-D output"):
            pane.toggle_heatmap()
