"""StepBuffers: a pipeline's buffers at one step, those that step changed marked with how many
elements it changed."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import DataTable

from workbench.viewmodel.steps import BufferRow


class StepBuffers(DataTable[Text | str]):
    """One row per buffer; the highlighted one is shown below it."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)

    def on_mount(self) -> None:
        self.add_columns(" ", "buffer", "shape", "dtype", "changed at this step")

    def show(self, rows: tuple[BufferRow, ...]) -> None:
        keep = self.cursor_row
        # Refilling moves the cursor: that is not the user highlighting a row.
        with self.prevent(DataTable.RowHighlighted):
            self.clear()
            for b in rows:
                if b.changed is None:
                    changed = Text("")
                elif b.changed:
                    changed = Text(f"{b.changed:,} elements", style="bold")
                else:
                    changed = Text("written, unchanged", style="dim")
                self.add_row(Text(b.mark, style="bold yellow"), b.name, b.shape, b.dtype, changed)
            self.move_cursor(row=min(max(keep, 0), self.row_count - 1), animate=False)

    @property
    def selected(self) -> str | None:
        if not self.row_count:
            return None
        return str(self.get_row_at(self.cursor_row)[1])
