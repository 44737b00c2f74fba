"""Numbers are never cut into other numbers (issue 31, item 2): a table wider than its region shows
each cell whole or not at all, with `…` where more is; a figure that does not fit its column is
written shorter (`3.6e5`), a long result is cut after a whole word, and a FAIL row of the
check-all screen says why first."""

from __future__ import annotations

import math

from textual.app import App, ComposeResult

from workbench.checks import CheckReport, CheckResult
from workbench.screens.check_all import checks_summary
from workbench.viewmodel.diff import Element
from workbench.widgets.panes.diff import WORST_COLUMNS, element_row
from workbench.widgets.whole_cells import MORE, WholeCellTable

from .conftest import run_async

ROWS = [("seq=312 d_ff=2862", "362159.52", "6.2e+00", "18.60915", "12.4061", "1e-05")]


class _Table(App[None]):
    CSS = "WholeCellTable { width: 40; height: 4; }"

    def compose(self) -> ComposeResult:
        table = WholeCellTable()
        table.add_columns("where", "/tol", "|Δ|", "got", "reference", "atol")
        table.add_rows(ROWS)
        yield table


def _cells(line: str) -> list[str]:
    return line.replace(MORE, " ").split()


@run_async
async def test_a_table_wider_than_its_region_shows_whole_cells_only() -> None:
    app = _Table()
    async with app.run_test(size=(60, 10)) as pilot:
        table = app.query_one(WholeCellTable)
        whole = set(ROWS[0]) | {"seq=312", "d_ff=2862"}
        for scroll in (0, 12, 30):
            table.scroll_to(x=scroll, animate=False)
            await pilot.pause()
            line = table.render_line(1).text
            assert len(line) == 40
            assert set(_cells(line)) <= whole, (scroll, line)  # no cell shown in part
            assert line.rstrip().endswith(MORE) or scroll == 30
        assert "1e-05" in table.render_line(1).text  # the last column, scrolled to, whole


def test_the_tolerance_ratio_comes_second_and_is_never_cut() -> None:
    row = element_row(Element("s=1", 18.6, 12.4, 362159.52, 0.5, 12))
    assert WORST_COLUMNS[:3] == ("where", "/tol", "|Δ|")
    assert str(row[1]) == "362160"
    assert str(element_row(Element("s=1", math.inf, 1.0, math.inf))[1]) == "inf"


def test_a_failed_kernel_row_says_why_first() -> None:
    report = CheckReport("k", "k.wgsl", "lavapipe", {"n": 4})
    report.results = [
        CheckResult("compare", "y", True, "y: max|Δ| 0 (pass)"),
        CheckResult("evidence", "y", True, "y: every element written"),
        CheckResult("special", "nan", False, "nan: 3/4 outside tol"),
    ]
    assert checks_summary(report).startswith("special nan: 3/4 outside tol; compare")
