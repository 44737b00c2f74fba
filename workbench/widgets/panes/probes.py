"""The Probes tab: what the kernel's `wb_probe` calls recorded, as a table one can filter.

Above the table, what to record, chosen before the run (`WG` for one workgroup, `WG,LID` for one
invocation, empty for every invocation) and the log's capacity; the probe key runs it. Beside them,
a filter over the records shown (`tag=3 wg=2`), and under them the counts: shown, recorded, and
dropped past the capacity.
"""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.reactive import reactive
from textual.widgets import DataTable, Input, Label, Static

from workbench.viewmodel.kernel_state import View
from workbench.viewmodel.keys import key
from workbench.viewmodel.probes import COLUMNS, filter_records, record_row, summary
from workbench.workgroups.probes import DEFAULT_CAPACITY, ProbeRecord, ProbeRun

SHOWN = 2000  # rows put in the table at most (the counts line says how many matched)


class ProbesPane(Vertical):
    """Probe records of the current kernel's last probe run."""

    DEFAULT_CSS = """
    ProbesPane { height: 1fr; }
    ProbesPane > Horizontal { height: auto; }
    ProbesPane Input { width: 22; }
    ProbesPane Label { padding: 1 0 0 1; }
    ProbesPane #probes-summary { height: auto; padding: 0 1; }
    ProbesPane DataTable { height: 1fr; }
    """

    view: reactive[View] = reactive(View, init=False)

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._shown: ProbeRun | None = None
        self._rows: list[tuple[str, ...]] = []
        self._records: list[ProbeRecord] = []  # the records listed, in the table's order

    def compose(self) -> ComposeResult:
        with Horizontal():
            yield Label("record")
            yield Input(placeholder="all, WG or WG,LID", id="probes-invocation")
            yield Label("capacity")
            yield Input(str(DEFAULT_CAPACITY), id="probes-capacity", type="integer")
            yield Label("show")
            yield Input(placeholder="tag=N wg=N", id="probes-filter")
        yield Static(id="probes-summary")
        table: DataTable[str] = DataTable(id="probes-table", zebra_stripes=True, cursor_type="row")
        table.add_columns(*COLUMNS)
        yield table

    @property
    def invocation(self) -> str:
        """What to record, as typed: "", `WG` or `WG,LID`."""
        return self.query_one("#probes-invocation", Input).value.strip()

    def record(self) -> ProbeRecord | None:
        """The highlighted record, or None when none is listed."""
        row = self.query_one("#probes-table", DataTable).cursor_row
        return self._records[row] if self._shown and 0 <= row < len(self._records) else None

    @property
    def capacity(self) -> str:
        return self.query_one("#probes-capacity", Input).value.strip()

    def watch_view(self, view: View) -> None:
        if view.probes is self._shown and view.probes is not None:
            return
        self._shown = view.probes
        self._fill()

    @on(Input.Changed, "#probes-filter")
    def _filter_changed(self) -> None:
        self._fill()

    def _fill(self) -> None:
        table = self.query_one("#probes-table", DataTable)
        line = self.query_one("#probes-summary", Static)
        run = self._shown
        if run is None:
            line.update(
                Text(
                    f"press {key('probe')} to run the kernel's wb_probe(tag, value) calls "
                    "(README: Probes)",
                    style="dim",
                )
            )
            self._records = []
            self._show_rows(table, [])
            return
        try:
            shown = filter_records(run, self.query_one("#probes-filter", Input).value)
        except ValueError as exc:
            self._records = []
            self._show_rows(table, [])
            line.update(Text(f"show: {exc}", style="red"))
            return
        self._records = shown[:SHOWN]
        self._show_rows(table, [record_row(record) for record in self._records])
        style = "bold red" if run.dropped else ""
        line.update(Text(summary(run, shown), style=style))

    def _show_rows(self, table: DataTable[str], rows: list[tuple[str, ...]]) -> None:
        # The same rows again (a refill from the filter's first Changed, say) are left in place:
        # clearing them would redraw the table at its headers' widths until it measures again.
        if rows == self._rows and table.row_count == len(rows):
            return
        self._rows = rows
        # Each column as wide as its widest cell, set with the column: a width the table measures
        # later, as rows arrive, can be drawn before it is (a snapshot caught 'local' one short).
        table.clear(columns=True)
        for i, name in enumerate(COLUMNS):
            table.add_column(name, width=max([len(name), *(len(row[i]) for row in rows)]))
        for row in rows:
            table.add_row(*row)
