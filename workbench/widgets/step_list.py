"""StepList: a pipeline's steps as a table, the start first; the current step is marked, each
step shows its verdict, GPU time and what it changed. The highlighted row is the step whose
buffers the Steps screen shows."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import DataTable

from workbench.viewmodel.steps import StepsView

_VERDICT_STYLE = {"pass": "bold green", "fail": "bold red", "ran": "bold yellow"}


class StepList(DataTable[Text | str]):
    """Row k is the state after step k (row 0: the start)."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)

    def on_mount(self) -> None:
        self.add_columns(" ", "#", "kernel", "verdict", "GPU time", "changed (elements)")

    def show(self, view: StepsView) -> None:
        """Refill from `view`, keeping the highlighted row."""
        keep = self.cursor_row
        # Refilling moves the cursor: that is not the user highlighting a row.
        with self.prevent(DataTable.RowHighlighted):
            self.clear()
            self.add_row(
                Text("▶" if view.position == 0 else ""), "0", Text("start", style="dim"), "", "", ""
            )
            for r in view.rows:
                verdict = Text(r.verdict.upper() or "·", style=_VERDICT_STYLE.get(r.verdict, "dim"))
                if r.diverged:
                    verdict.append(" ⚑", style="bold red")
                changed = Text(r.changed)
                if r.verdict and not r.kept:
                    changed.append("  (evicted)", style="dim italic")
                self.add_row(
                    Text(r.mark, style="bold"),
                    str(r.index),
                    Text(r.kernel, style="" if r.verdict else "dim"),
                    verdict,
                    r.time,
                    changed,
                )
            self.move_cursor(row=min(max(keep, 0), self.row_count - 1), animate=False)
