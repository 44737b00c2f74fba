"""Inside one dispatch in the terminal UI, on the real default adapter: the footprint picture, the
Probes tab and the workgroup stepper, driven by their keys; snapshots of the Footprint and Probes
tabs at 120x36."""

from __future__ import annotations

import textwrap
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import numpy as np
import pytest
from rich.cells import cell_len
from textual.pilot import Pilot
from textual.widgets import DataTable, Static, TabbedContent

from workbench.app import WorkbenchApp
from workbench.screens.workgroup_steps import WorkgroupStepScreen
from workbench.widgets.array_view import FOLD, ArrayView
from workbench.widgets.footprint_picture import FootprintPicture

from .conftest import SIZE, open_at, press_settled, run_async

# Each workgroup writes one element past its share (a race with the next), and the last one
# forgets its share (holes): both marks in one picture, one 64-element row per workgroup.
PATCHY = """
@group(0) @binding(0) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(64)
fn patchy(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
          @builtin(local_invocation_index) lid: u32) {
    if (wg.x + 1u == nwg.x) { return; }
    let start = wg.x * 64u;
    for (var i = lid; i <= 64u; i = i + 64u) {
        if (start + i < arrayLength(&out)) { out[start + i] = f32(wg.x); }
    }
}
"""
PROBED = """
@group(0) @binding(0) var<storage, read_write> out: array<f32>;
fn wb_probe(tag: u32, value: f32) {} fn wb_probe_u32(tag: u32, value: u32) {}
fn wb_probe_i32(tag: u32, value: i32) {} fn wb_probe_vec4(tag: u32, value: vec4<f32>) {}

@compute @workgroup_size(32)
fn probed(@builtin(global_invocation_id) gid: vec3<u32>) {
    var acc = 0.0;
    for (var k = 0u; k < 3u; k = k + 1u) {
        acc = acc + f32(gid.x) * 0.5 + f32(k);
        wb_probe(k, acc);
    }
    wb_probe_u32(10u, gid.x);
    out[gid.x] = acc;
}
"""
# Reverses 64-element tiles through workgroup memory: stepping must keep its barrier working.
REVERSE = """
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
var<workgroup> tile: array<f32, 64>;

@compute @workgroup_size(64)
fn reverse_tiles(@builtin(workgroup_id) wg: vec3<u32>,
                 @builtin(local_invocation_index) lid: u32) {
    tile[lid] = x[wg.x * 64u + lid];
    workgroupBarrier();
    y[wg.x * 64u + lid] = tile[63u - lid] * 2.0;
}
"""


@pytest.fixture
def inside_corpus(tmp_path: Path) -> Path:
    for name, text in {"patchy": PATCHY, "probed": PROBED, "reverse": REVERSE}.items():
        (tmp_path / f"{name}.wgsl").write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return tmp_path


def _app(corpus: Path) -> WorkbenchApp:
    return WorkbenchApp(corpus=corpus, snapshot=True, watch=False)


@run_async
async def test_the_footprint_key_draws_races_and_holes_and_names_the_writers(inside_corpus):
    app = _app(inside_corpus)
    async with app.run_test(size=SIZE) as pilot:
        await open_at(pilot, "patchy.wgsl:patchy")
        await press_settled(pilot, "o")
        assert app.main.query_one(TabbedContent).active == "tab-footprint"
        summary = str(app.main.query_one("#footprint-summary", Static).render())
        assert "out: 961 of 1,024 written" in summary and "14 races, 63 holes" in summary
        # The picture has the focus (the arrows move its cursor, not the tabs), and the races
        # and holes are listed beside it as the command line lists them.
        picture = app.main.query_one(FootprintPicture)
        assert app.focused is picture
        problems = str(app.main.query_one("#footprint-problems-below", Static).render())
        assert problems.startswith("race at i=64: workgroups 0, 1 (a race)\n")
        assert "hole i=961 .. i=1023 (63 elements)" in problems
        await press_settled(pilot, "down", "down")  # row 2: workgroup 2's share, first element
        selected = str(app.main.query_one("#footprint-selected", Static).render())
        assert selected == "i=128: workgroups 1, 2 (a race)"
        await press_settled(pilot, "right")
        assert str(app.main.query_one("#footprint-selected", Static).render()) == (
            "i=129: workgroup 2"
        )


@run_async
async def test_the_probe_key_fills_the_probes_tab_and_its_filter(inside_corpus):
    app = _app(inside_corpus)
    async with app.run_test(size=SIZE) as pilot:
        await open_at(pilot, "probed.wgsl:probed", n="64")
        app.main.query_one("#probes-invocation").value = "1,3"
        app.main.query_one("#probes-capacity").value = "3"
        await press_settled(pilot, "p")
        table = app.main.query_one("#probes-table", DataTable)
        rows = [table.get_row_at(i) for i in range(table.row_count)]
        acc = np.float32(0)
        want = []
        for k in range(3):
            acc = np.float32(acc + np.float32(35) * np.float32(0.5) + np.float32(k))
            want.append(f"{float(acc):.9g}")
        assert [r[5] for r in rows] == want  # three kept, in program order
        summary = str(app.main.query_one("#probes-summary", Static).render())
        assert "3 of 3 records shown (workgroup 1, local 3,0,0); 1 dropped" in summary
        app.main.query_one("#probes-filter").value = "tag=1"
        await pilot.pause()
        assert table.row_count == 1


@run_async
async def test_the_workgroup_key_steps_forward_and_back_and_ends_as_one_dispatch(inside_corpus):
    app = _app(inside_corpus)
    async with app.run_test(size=SIZE) as pilot:
        await open_at(pilot, "reverse.wgsl:reverse_tiles", n="256")
        await press_settled(pilot, "w")
        screen = app.screen
        assert isinstance(screen, WorkgroupStepScreen)
        await press_settled(pilot, "n")
        head = str(screen.query_one("#wg-head", Static).render())
        assert "1 of 4 workgroups run" in head and "workgroup 0 (0,0,0)" in head
        await press_settled(pilot, "u")  # the steppers' one scheme: n/→ u/← z/home l/end
        assert "0 of 4 workgroups run" in str(screen.query_one("#wg-head", Static).render())
        await press_settled(pilot, "N")
        assert "4 of 4 workgroups run" in str(screen.query_one("#wg-head", Static).render())
        await press_settled(pilot, "u", "end")
        state = screen.stepper.current
        x = screen.stepper.case.inputs["x"].astype(np.float64)
        assert np.array_equal(state.buffers["y"], (x.reshape(-1, 64)[:, ::-1] * 2).reshape(-1))
        await press_settled(pilot, "z")
        assert "0 of 4 workgroups run" in str(screen.query_one("#wg-head", Static).render())
        await press_settled(pilot, "s")
        assert screen.has_class("source")
        await press_settled(pilot, "escape")
        assert app.screen is app.main


@run_async
async def test_the_workgroup_stepper_follows_the_changed_elements_and_shows_inputs(inside_corpus):
    app = _app(inside_corpus)
    async with app.run_test(size=SIZE) as pilot:
        await open_at(pilot, "reverse.wgsl:reverse_tiles", n="256")
        await press_settled(pilot, "w", "n", "n")  # workgroup 1 writes y[64..127]
        screen = app.screen
        assert isinstance(screen, WorkgroupStepScreen)
        view = screen.query_one("#wg-array", ArrayView)
        assert view.cursor == (64 // FOLD, 0)  # its first element, in rows of FOLD
        await press_settled(pilot, "right_square_bracket")  # then the input x, as given
        legend = str(screen.query_one("#wg-legend", Static).render())
        assert legend.startswith("x 256: an input, read by the dispatch")


def _at(
    key: str,
    *keys: str,
    fields: dict[str, str] | None = None,
    filled: str | None = None,
    **dims: str,
) -> Callable[[Pilot], Awaitable[None]]:
    """Open `key` with `dims`, set `fields`, press `keys`; `filled` names a DataTable that must
    hold rows before the picture (the pane fills it from the view after the worker is done)."""

    async def before(pilot: Pilot) -> None:
        await open_at(pilot, key, **dims)
        for selector, value in (fields or {}).items():
            pilot.app.screen.query_one(selector).value = value  # type: ignore[attr-defined]
        await press_settled(pilot, *keys)
        t0 = time.perf_counter()
        if filled is not None:
            rows = pilot.app.screen.query_one(filled, DataTable)
            while rows.row_count == 0:
                assert time.perf_counter() - t0 < 60, f"{filled} was never filled"
                await pilot.pause()
        # A table measures the rows added to it when it next goes idle: the picture waits for
        # that, or it catches a column at its header's width (`local` 7 wide, not 8).
        for table in pilot.app.screen.query(DataTable):
            while not _measured(table):
                assert time.perf_counter() - t0 < 60, "the table never measured its rows"
                await pilot.pause()

    return before


def _measured(table: DataTable) -> bool:
    """Every column is as wide as its widest cell: the table has measured the rows it holds."""
    for column_key, column in table.columns.items():
        widest = max((cell_len(str(c)) for c in table.get_column(column_key)), default=0)
        if column.content_width < widest:
            return False
    return True


def test_footprint_tab(snap_compare, inside_corpus) -> None:
    before = _at("patchy.wgsl:patchy", "o")
    assert snap_compare(_app(inside_corpus), terminal_size=SIZE, run_before=before)


def test_probes_tab(snap_compare, inside_corpus) -> None:
    # One workgroup's records: their order is the workgroup's own, the same on every run.
    fields = {"#probes-invocation": "1", "#probes-capacity": "50"}
    before = _at("probed.wgsl:probed", "p", fields=fields, filled="#probes-table", n="64")
    assert snap_compare(_app(inside_corpus), terminal_size=SIZE, run_before=before)
