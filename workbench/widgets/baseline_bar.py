"""The baseline bar: under the verdict, the run on screen against the pinned run, output by output
(max |Δ|, changed elements, the worst one's named index) and in time; a run on another adapter than
the pinned one's says so on the first line. Hidden while nothing is pinned; the figures come from
`workbench.viewmodel.baseline`."""

from __future__ import annotations

from rich.text import Text
from textual.reactive import reactive
from textual.widgets import Static

from workbench.viewmodel.baseline import BaselineDiff, OutputDiff
from workbench.viewmodel.kernel_state import View
from workbench.viewmodel.keys import key

SHOWN_OUTPUTS = 4  # output lines at most; the rest are summed up in one line


def _output_line(d: OutputDiff, width: int) -> Text:
    style = "green" if d.identical else ("bold red" if d.beyond or d.note else "yellow")
    line = Text("  ")
    line.append(d.name.ljust(width), style="bold")
    line.append("  ")
    line.append(d.text(), style=style)
    return line


def baseline_text(diff: BaselineDiff, snapshot: bool) -> Text:
    """The bar's lines for one run against the pinned one; runs on two adapters say so first,
    on a line of its own (the header line is cut at the bar's width)."""
    text = Text()
    if diff.across:  # the adapter shown in the header is this run's
        text.append(f"pinned on another adapter: {diff.across}\n", style="bold yellow")
    text.append("baseline ", style="bold")
    text.append(diff.pinned.label(snapshot))
    if diff.is_pinned_run:
        text.append(
            f"  (this run; edit the kernel and run again to compare · {key('unpin')} unpins)",
            style="dim",
        )
        return text
    this = f"run #{diff.number}" if diff.number is not None else "this run"
    text.append(f"  ← {this}", style="bold")
    for note in diff.notes:
        text.append(f" · {note}", style="cyan")
    width = max((len(d.name) for d in diff.outputs), default=4)
    width = max(width, len("time"))
    if diff.pending:
        text.append("\n  comparing the outputs with the pinned run's…", style="dim")
    for d in diff.outputs[:SHOWN_OUTPUTS]:
        text.append("\n")
        text.append_text(_output_line(d, width))
    rest = diff.outputs[SHOWN_OUTPUTS:]
    if rest:
        same = sum(1 for d in rest if d.identical)
        text.append(f"\n  … {len(rest)} more outputs, {same} identical", style="dim")
    text.append("\n  ")
    text.append("time".ljust(width), style="bold")
    text.append("  " + diff.timing.text(snapshot))
    return text


class BaselineBar(Static):
    """The run on screen against the pinned one; not displayed while nothing is pinned."""

    DEFAULT_CSS = """
    BaselineBar { height: auto; max-height: 8; display: none; text-wrap: nowrap; text-overflow: ellipsis; }
    BaselineBar.-pinned { display: block; }
    """

    view: reactive[View] = reactive(View, init=False)

    def watch_view(self, view: View) -> None:
        diff = view.baseline
        self.set_class(diff is not None, "-pinned")
        self.update(baseline_text(diff, view.snapshot) if diff is not None else "")
