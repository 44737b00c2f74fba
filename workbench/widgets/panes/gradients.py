"""The Gradients tab: every result of the last gradient check as a title line and a table."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Static

from workbench.viewmodel.kernel_state import View
from workbench.viewmodel.keys import key
from workbench.widgets.whole_cells import WholeCellTable


class GradientsPane(VerticalScroll):
    """Gradient check results: every CheckResult as a title line and a table."""

    DEFAULT_CSS = """
    GradientsPane .result-title { height: auto; margin-top: 1; }
    GradientsPane DataTable { height: auto; max-height: 16; }
    """

    view: reactive[View] = reactive(View, init=False)

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._shown: tuple[object, str] | None = None

    def compose(self) -> ComposeResult:
        yield Static(id="grad-intro")

    def _intro(self, view: View) -> str:
        if view.report is not None:
            return ""
        if view.gradient_check:
            return (
                f"press {key('gradcheck')} to check gradients: the analytic gradients this "
                "backward kernel computes against central finite differences of its float64 "
                "forward"
            )
        return "no gradient check: this kernel has no forward/backward link in its spec"

    async def watch_view(self, view: View) -> None:
        intro = self._intro(view)
        if self._shown == (view.report, intro):
            return
        self._shown = (view.report, intro)
        await self.remove_children(".result")
        intro_widget = self.query_one("#grad-intro", Static)
        intro_widget.update(intro)
        intro_widget.display = bool(intro)
        if view.report is None:
            return
        widgets: list[Widget] = []
        for res in view.report.results:
            title = Text()
            title.append("✓ " if res.ok else "✗ ", style="green" if res.ok else "bold red")
            title.append(f"{res.kind}: ", style="bold")
            title.append(res.summary)
            widgets.append(Static(title, classes="result result-title"))
            if res.columns:
                table: WholeCellTable[str] = WholeCellTable(
                    classes="result", zebra_stripes=True, cursor_type="row"
                )
                table.add_columns(*res.columns)
                for row in res.rows:
                    table.add_row(*row)
                widgets.append(table)
        if not widgets:
            widgets.append(Static("the check returned no results", classes="result"))
        await self.mount_all(widgets)
