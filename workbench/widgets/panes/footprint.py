"""The Footprint tab: who wrote which element of each read_write binding of the current case.

A line per binding (written, races, holes, atomic), the picture of one binding coloured by owner
workgroup with races and holes marked, beside it its first races and holes as text (the lines the
command line prints, `OutputFootprint.problem_lines`), its legend, and what the element under the
cursor is and who wrote it. The picture takes the focus when the tab opens on a footprint, so the
arrows move its cursor at once. The footprint is computed on request (its key) and kept with the
kernel.
"""

from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.reactive import reactive
from textual.widgets import Input, Static

from workbench.units import fmt_count, fmt_int
from workbench.viewmodel.footprint import legend_items
from workbench.viewmodel.kernel_state import View
from workbench.viewmodel.keys import key
from workbench.widgets.footprint_picture import FootprintPicture
from workbench.workgroups.footprint import Footprint, OutputFootprint

# The picture's widest (64 cells) and room for a race line beside it.
BESIDE_FROM = 64 + 2 + 40


def problems_text(output: OutputFootprint) -> Text:
    """The races and holes of one binding, a line each; what an atomic or clean one is."""
    lines = output.problem_lines()
    if not lines:
        return Text(output.verdict(), style="cyan" if output.atomic else "green")
    text = Text("\n".join(lines), style="red")
    holes_shown = sum(b - a + 1 for a, b in output.hole_ranges())
    if len(output.first_races()) < output.races or holes_shown < output.holes:
        text.append(f"\n… the first of {output.verdict()}", style="dim")
    return text


class FootprintPane(Vertical):
    """The last footprint of the current kernel; `next_output` shows the next binding."""

    DEFAULT_CSS = """
    FootprintPane { height: 1fr; padding: 0 1; overflow-y: auto; }
    FootprintPane > Static { height: auto; }
    FootprintPane #footprint-body { height: auto; }
    FootprintPane #footprint-picture { width: auto; }
    FootprintPane .problems { width: 1fr; height: auto; }
    FootprintPane #footprint-problems { padding-left: 2; }
    FootprintPane #footprint-problems-below, FootprintPane.-stacked #footprint-problems {
        display: none;
    }
    FootprintPane.-stacked #footprint-problems-below { display: block; }
    """

    view: reactive[View] = reactive(View, init=False)

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._shown: Footprint | None = None
        self._index = 0

    def compose(self) -> ComposeResult:
        yield Static(id="footprint-summary")
        with Horizontal(id="footprint-body"):
            yield FootprintPicture(id="footprint-picture")
            yield Static(id="footprint-problems", classes="problems")
        yield Static(id="footprint-legend")
        yield Static(id="footprint-selected")
        yield Static(id="footprint-problems-below", classes="problems")

    def watch_view(self, view: View) -> None:
        if view.footprint is self._shown and view.footprint is not None:
            return
        self._shown, self._index = view.footprint, 0
        self._draw()

    def element(self) -> str | None:
        """The element under the picture's cursor as `NAME[flat]`, or None."""
        found = self.query_one(FootprintPicture).element()
        return f"{found[0]}[{found[1]}]" if found is not None else None

    def on_resize(self, event: events.Resize) -> None:
        # Beside the picture where both fit whole (no picture cut), else below what the cursor
        # is on (which stays in view).
        self.set_class(event.size.width < BESIDE_FROM, "-stacked")

    def take_focus(self) -> bool:
        """Focus the picture if it shows a footprint (the tab opened); False if none."""
        if self._shown is None or not self._shown.outputs:
            return False
        self.query_one(FootprintPicture).focus()
        return True

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
            for problems in self.query(".problems").results(Static):
                problems.update("")
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
        for problems in self.query(".problems").results(Static):
            problems.update(problems_text(fp.outputs[name]))
        if self.is_on_screen and not isinstance(self.app.focused, Input):
            self.take_focus()  # a footprint arriving on the open tab (not while typing)
        legend = Text()
        for mark, colour, meaning in legend_items(fp.outputs[name]):
            legend.append(mark, Style(color=f"rgb{colour}", bold=True))
            legend.append(f" {meaning}   ", style="dim")
        legend.append(f"\nfill: {fp.sentinel}", style="dim")
        self.query_one("#footprint-legend", Static).update(legend)

    @on(FootprintPicture.Selected)
    def _selected(self, message: FootprintPicture.Selected) -> None:
        self.query_one("#footprint-selected", Static).update(Text(message.text, style="bold"))
