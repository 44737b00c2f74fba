"""A CPU adapter (lavapipe, llvmpipe, SwiftShader) is said in the header with a badge, and times
measured on it are marked as the CPU's in the Timing tab, so nobody reads them as GPU figures."""

from __future__ import annotations

from textual.widgets import Static

from workbench.app import WorkbenchApp
from workbench.bench.report import CPU_TIMES

from .conftest import SIZE, SWIGLU, open_at, press_settled, run_async


@run_async
async def test_cpu_badge_and_cpu_marked_timings() -> None:
    app = WorkbenchApp(snapshot=False, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await open_at(pilot, SWIGLU, seq="2", d_ff="64")
        session = app.session
        assert session is not None
        assert session.on_cpu is (session.adapter.type == "CPU")
        header = str(app.main.query_one("#topbar", Static).render())
        assert (" CPU " in header) is session.on_cpu and session.adapter.label in header
        await press_settled(pilot, "b")
        figures = str(app.main.query_one("#time-figures", Static).render())
        assert "median " in figures
        assert (CPU_TIMES in figures) is session.on_cpu
