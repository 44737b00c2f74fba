"""The Footprint tab: who wrote which element of each read_write binding of the current case.

A line per binding (written, races, holes, atomic), the picture of one binding coloured by owner
workgroup with races and holes marked, its legend, and what the element under the cursor is and who
wrote it. The footprint is computed on request (its key) and kept with the kernel.
"""

from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.reactive import reactive
from textual.widgets import Static

from workbench.units import fmt_count, fmt_int
from workbench.viewmodel.footprint import legend_items
from workbench.viewmodel.kernel_state import View
from workbench.viewmodel.keys import key
from workbench.widgets.footprint_picture import FootprintPicture
from workbench.workgroups.footprint import Footprint


class FootprintPane(Vertical):
    """The last footprint of the current kernel; `next_output` shows the next binding."""

    DEFAULT_CSS = """
    FootprintPane { height: 1fr; padding: 0 1; }
    FootprintPane > Static { height: auto; }
    """

    view: reactive[View] = reactive(View, init=False)

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._shown: Footprint | None = None
        self._index = 0

    def compose(self) -> ComposeResult:
        yield Static(id="footprint-summary")
        yield FootprintPicture(id="footprint-picture")
        yield Static(id="footprint-legend")
        yield Static(id="footprint-selected")

    def watch_view(self, view: View) -> None:
        if view.footprint is self._shown and view.footprint is not None:
            return
        self._shown, self._index = view.footprint, 0
        self._draw()

    def element(self) -> str | None:
        """The element under the picture's cursor as `NAME[flat]`, or None."""
        found = self.query_one(FootprintPicture).element()
        return f"{found[0]}[{found[1]}]" if found is not None else None

    def next_output(self) -> None:
        if self._shown is not None and self._shown.outputs:
            self._index = (self._index + 1) % len(self._shown.outputs)
            self._draw()

    def _draw(self) -> None:
        fp = self._shown
        picture = self.query_one(FootprintPicture)
        summary = self.query_one("#footprint-summary", Static)
        if fp is None or not fp.outputs:
            picture.clear()
            summary.update(
                Text(
                    f"press {key('footprint')} to find which workgroup writes which element of "
                    "each read_write binding: races (several workgroups, not atomic) and holes "
                    "(no workgroup)",
                    style="dim",
                )
            )
            self.query_one("#footprint-legend", Static).update("")
            self.query_one("#footprint-selected", Static).update("")
            return
        names = list(fp.outputs)
        name = names[self._index]
        text = Text()
        how = (
            f"sampled {fmt_int(fp.stepped)} of {fmt_count(fp.workgroups, 'workgroup')}"
            if fp.sampled
            else f"all {fmt_count(fp.workgroups, 'workgroup')} stepped"
        )
        text.append(f"{how} in {fmt_count(fp.dispatches, 'dispatch')}", style="dim")
        for other in names:
            o = fp.outputs[other]
            style = "cyan" if o.atomic else ("green" if o.ok else "bold red")
            text.append(f"\n{'▸' if other == name else ' '} {other}: ")
            text.append(f"{fmt_int(o.written)} of {fmt_int(o.elements)} written · ")
            text.append(o.verdict(), style=style)
        if len(names) > 1:
            text.append(f"   ({key('next_footprint_output')}: next binding)", style="dim")
        for note in fp.notes:
            text.append(f"\nnote: {note}", style="dim")
        summary.update(text)
        picture.show(fp.outputs[name])
        legend = Text()
        for mark, colour, meaning in legend_items(fp.outputs[name]):
            legend.append(mark, Style(color=f"rgb{colour}", bold=True))
            legend.append(f" {meaning}   ", style="dim")
        legend.append(f"\nfill: {fp.sentinel}", style="dim")
        self.query_one("#footprint-legend", Static).update(legend)

    @on(FootprintPicture.Selected)
    def _selected(self, message: FootprintPicture.Selected) -> None:
        self.query_one("#footprint-selected", Static).update(Text(message.text, style="bold"))
