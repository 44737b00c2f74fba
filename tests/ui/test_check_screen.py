"""The check screen: c runs the full `check` of the kernel on screen (the CLI's `check_case`) with
progress, and shows its report as `workbench check` prints it (`report_lines`). Real adapter."""

from __future__ import annotations

from textual.widgets import ProgressBar, Static

from workbench.app import WorkbenchApp
from workbench.checks.report import report_lines
from workbench.screens.check import CheckScreen

from .conftest import SIZE, open_at, press_settled, run_async

GELU_KEY = "06_activation.wgsl:gelu_inplace"


@run_async
async def test_c_checks_the_kernel_on_screen_as_the_cli_does() -> None:
    app = WorkbenchApp(watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await open_at(pilot, GELU_KEY, seq="8", d_ff="64")
        await press_settled(pilot, "c")
        screen = app.screen
        assert isinstance(screen, CheckScreen)
        report = screen.report
        assert report is not None and not report.cancelled
        # At the form's dims, every default check, judged by the one verdict rule.
        assert report.dims == {"seq": 8, "d_ff": 64} and report.ok
        kinds = {r.kind for r in report.results}
        assert kinds == {"compare", "evidence", "grad", "special", "determinism"}
        # Shown line for line as the CLI prints it.
        shown = str(screen.query_one("#check-report", Static).render())
        assert shown.rstrip("\n").split("\n") == report_lines(report)
        assert "  verdict: PASS" in shown
        assert screen.query_one(ProgressBar).progress == 1.0
        await press_settled(pilot, "escape")
        assert not isinstance(app.screen, CheckScreen)
