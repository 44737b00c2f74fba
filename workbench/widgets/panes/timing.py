"""The Timing tab: median, spread, throughput from the cost model, and plots of recent benches."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.reactive import reactive
from textual.widgets import Static

from workbench.units import fmt_bytes, fmt_rate
from workbench.viewmodel.kernel_state import View
from workbench.viewmodel.keys import key
from workbench.widgets.plots import line_plot


def _method(method: str) -> str:
    return "GPU timestamps" if method == "timestamp" else "host wall clock (no timestamps)"


class TimingPane(Vertical):
    """Median, spread, throughput from the cost model, and plots of the recent benches."""

    DEFAULT_CSS = """
    TimingPane #time-figures { height: auto; }
    TimingPane #time-plots { height: 1fr; }
    TimingPane #time-plots Static { width: 1fr; }
    """

    view: reactive[View] = reactive(View, init=False)

    def compose(self) -> ComposeResult:
        yield Static(id="time-figures")
        with Horizontal(id="time-plots"):
            yield Static(id="time-history")
            yield Static(id="time-samples")

    def watch_view(self, view: View) -> None:
        self.redraw()

    def redraw(self) -> None:
        """Render the view again (the plots fit the pane's size, known once it is shown)."""
        view = self.view
        run = view.run
        fig = Text()
        history = self.query_one("#time-history", Static)
        samples = self.query_one("#time-samples", Static)
        case = view.shown_case
        cost = case.cost if case else None
        if cost is not None:
            fig.append("cost model: ", style="bold")
            fig.append(f"{fmt_bytes(cost.bytes)} moved, {cost.flops:,} flops per dispatch\n")
        t = run.timing if run else None
        if run is None or t is None or not t.reps:
            fig.append(
                f"not timed yet: press {key('bench')} to bench (20 timed dispatches after 2 "
                "warm-ups)"
            )
            if run is not None:
                fig.append(
                    f"\nthe last run took {view.ms(run.wall_s * 1e3)} in all (compile, upload, "
                    "dispatch, read-back, reference)"
                )
            history.update("")
            samples.update("")
            self.query_one("#time-figures", Static).update(fig)
            return
        fig.append("median ", style="bold")
        fig.append(view.ms(t.median_ms))
        fig.append(f"   p10 {view.ms(t.p10_ms)}   p90 {view.ms(t.p90_ms)}   ")
        fig.append(f"{t.reps} reps after {t.warmup} warm-ups, {_method(t.method)}\n")
        tp = run.throughput()
        if tp is not None:
            if view.snapshot:
                fig.append("throughput #.## GB/s   #.## GFLOP/s (masked)")
            else:
                fig.append("throughput ", style="bold")
                fig.append(
                    f"{fmt_rate(tp['gb_per_s'], 'B')}   {fmt_rate(tp['gflop_per_s'], 'FLOP')}"
                )
        self.query_one("#time-figures", Static).update(fig)
        if view.snapshot:
            history.update(Text("plots of timings are masked in snapshot mode", style="dim"))
            samples.update("")
            return
        width = max((self.size.width - 4) // 2, 30)
        height = max(self.size.height - 4, 8)
        history.update(
            Text("median of each bench (ms)\n", style="dim")
            + line_plot(list(view.medians[-20:]), width, height - 1)
        )
        samples.update(
            Text("each dispatch of the last bench (ms)\n", style="dim")
            + line_plot(list(t.samples_ms), width, height - 1)
        )
