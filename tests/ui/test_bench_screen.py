"""The Timing tab after a bench, and the bench screen: a sweep with a failing variant, an A/B of
identical implementations, cancel. Real adapter (lavapipe); no timed assertions."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Button, DataTable, Input, Static

from tests.bench.test_bench import GELU
from tests.engine.conftest import write_corpus
from workbench.app import WorkbenchApp
from workbench.screens.bench import BenchScreen
from workbench.widgets.roofline_chart import RooflineChart

from .conftest import SIZE, open_at, press_settled, run_async, settle

GELU_KEY = "06_activation.wgsl:gelu_inplace"


def _screen_text(app: WorkbenchApp, selector: str) -> str:
    return str(app.screen.query_one(selector, Static).render())


async def _start(pilot, button: str, **fields: str) -> None:
    app = pilot.app
    for name, value in fields.items():
        app.screen.query_one(f"#bench-{name}", Input).value = value
    app.screen.query_one(f"#bench-run-{button}", Button).press()
    await pilot.pause()
    await settle(pilot)


@run_async
async def test_a_bench_shows_its_rates_on_the_roofline() -> None:
    app = WorkbenchApp(watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await open_at(pilot, GELU_KEY, seq="64", d_ff="512")
        await press_settled(pilot, "b")
        await press_settled(pilot, "b")
        figures = str(app.main.query_one("#time-figures", Static).render())
        assert "p10" in figures and "min" in figures and "mean" in figures and "reps" in figures
        # The method as it is on this adapter: a CPU adapter's timestamps are the CPU's clock.
        stamps = "the CPU adapter's timestamps" if app.session.on_cpu else "GPU timestamps"
        assert f"{stamps} per pass" in figures or "wall clock" in figures
        assert "-bound, at" in figures and "FLOP/B" in figures
        chart = str(app.main.query_one("#time-roofline", RooflineChart).render())
        assert "GB/s × FLOP/B" in chart and "1 gelu_inplace" in chart
        assert "earlier runs" in chart  # the first bench, fainter
        # The bench screen opened after it draws the roofline measured, never "no roofline yet".
        await press_settled(pilot, "B")
        chart = str(app.screen.query_one(RooflineChart).render())
        assert "GB/s × FLOP/B" in chart and "no roofline" not in chart


@run_async
async def test_sweep_lists_a_failing_variant_as_failing_never_best(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path, {"gelu.wgsl": GELU})
    app = WorkbenchApp(corpus=corpus, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await open_at(pilot, "gelu.wgsl:gelu_inplace", seq="64", d_ff="512")
        await press_settled(pilot, "B")
        assert isinstance(app.screen, BenchScreen)
        assert app.screen.query_one("#bench-sweep", Input).value == "part=1"  # its default
        # Enter in the sweep field starts the sweep (no Tab to the button).
        app.screen.query_one("#bench-ms", Input).value = "20"
        app.screen.query_one("#bench-sweep", Input).value = "part=2,1"
        app.screen.query_one("#bench-sweep", Input).focus()
        await press_settled(pilot, "enter")
        table = app.screen.query_one("#bench-table", DataTable)
        rows = [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]
        assert rows[0][:3] == ["★", "part=1", "PASS"], rows
        assert rows[1][1:3] == ["part=2", "FAIL"] and rows[1][0] == "", rows
        assert rows[1][-1].startswith("not timed")
        assert "best: part=1" in _screen_text(app, "#bench-text")
        chart = str(app.screen.query_one(RooflineChart).render())
        assert "1 part=1" in chart and "part=2" not in chart
        await press_settled(pilot, "escape")
        assert not isinstance(app.screen, BenchScreen)


@run_async
async def test_ab_of_identical_kernels_and_cancel() -> None:
    app = WorkbenchApp(watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await open_at(pilot, GELU_KEY, seq="64", d_ff="512")
        await press_settled(pilot, "B")
        assert isinstance(app.screen, BenchScreen)
        await _start(pilot, "ab", vs="shipped", ms="150")
        text = _screen_text(app, "#bench-text")
        assert text.count("PASS") == 2 and "B/A time" in text, text
        assert "no difference beyond noise" in text, text
        # A long A/B, cancelled: the screen stays, says so, and a second escape leaves.
        app.screen.query_one("#bench-ms", Input).value = "600000"
        app.screen.query_one("#bench-run-ab", Button).press()
        await pilot.pause(1.0)
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, BenchScreen)
        assert "cancel" in _screen_text(app, "#bench-status")
        await press_settled(pilot, "escape")
        assert not isinstance(app.screen, BenchScreen)
