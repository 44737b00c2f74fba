"""The Timing tab: the bench's statistics and method, its rates against the adapter's measured
roofline, the roofline chart (this bench as a point, earlier ones fainter), and plots of the recent
benches. In snapshot mode every time-dependent figure is masked."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.reactive import reactive
from textual.widgets import Static

from workbench.bench.figures import Figures
from workbench.bench.plot import Point
from workbench.bench.report import CPU_TIMES, method_on
from workbench.session import DEFAULT_WARMUP_MS
from workbench.units import fmt_bytes, fmt_count, fmt_ms
from workbench.viewmodel.kernel_state import View
from workbench.viewmodel.keys import key
from workbench.widgets.plots import line_plot
from workbench.widgets.roofline_chart import RooflineChart


class TimingPane(Vertical):
    """Statistics, rates on the roofline, the roofline chart, and plots of the recent benches."""

    DEFAULT_CSS = """
    TimingPane #time-figures { height: auto; }
    TimingPane #time-plots { height: 1fr; }
    TimingPane #time-plots > * { width: 1fr; }
    TimingPane #time-lines Static { height: 1fr; }
    """

    view: reactive[View] = reactive(View, init=False)

    def compose(self) -> ComposeResult:
        yield Static(id="time-figures")
        with Horizontal(id="time-plots"):
            yield RooflineChart(id="time-roofline")
            with Vertical(id="time-lines"):
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
        chart = self.query_one(RooflineChart)
        case = view.shown_case
        cost = case.cost if case else None
        if cost is not None:
            fig.append("cost model: ", style="bold")
            flops = fmt_count(cost.flops, "flop") if cost.flops else "no flops"
            fig.append(f"{fmt_bytes(cost.bytes)} moved, {flops} per dispatch\n")
        t = run.timing if run else None
        if run is None or t is None or not t.reps:
            fig.append(
                f"not timed yet: press {key('bench')} to bench (timed dispatches for `bench_ms`, "
                f"100 ms by default, after a warm-up of `warmup_ms`, {fmt_ms(DEFAULT_WARMUP_MS)} "
                f"by default), or {key('bench_variants')} to sweep or A/B variants"
            )
            if run is not None:
                fig.append(
                    f"\nthe last run took {view.ms(run.wall_s * 1e3)} in all (compile, upload, "
                    "dispatch, read-back, reference)"
                )
            history.update("")
            samples.update("")
            chart.masked("the roofline appears with the first bench")
            self.query_one("#time-figures", Static).update(fig)
            return
        # Repetitions follow a time budget: they differ from run to run, so snapshots mask them.
        reps = (
            "# reps after # warm-up rounds"
            if view.snapshot
            else f"{fmt_count(t.reps, 'rep')} after {fmt_count(t.warmup, 'warm-up round')}"
        )
        fig.append("median ", style="bold")
        fig.append(view.ms(t.median_ms))
        fig.append(
            f"   p10 {view.ms(t.p10_ms)}   p90 {view.ms(t.p90_ms)}   min {view.ms(t.min_ms)}"
        )
        fig.append(f"   mean {view.ms(t.mean_ms)} ± {view.ms(t.std_ms)}\n")
        fig.append(f"{reps}; {method_on(t.detail, view.cpu)}\n")
        if view.cpu:
            fig.append(CPU_TIMES + "\n", style="bold yellow")
        roof = view.roofline
        figures = (
            Figures(
                cost.bytes,
                cost.flops,
                t.median_ms,
                roof.bandwidth_gb_s if roof else None,
                roof.peak_gflop_s if roof else None,
            )
            if cost is not None
            else None
        )
        if figures is not None:
            fig.append("rates ", style="bold")
            fig.append("masked in snapshot mode" if view.snapshot else figures.summary())
        self.query_one("#time-figures", Static).update(fig)
        if view.snapshot:
            history.update(Text("plots of timings are masked in snapshot mode", style="dim"))
            samples.update("")
            chart.masked("the roofline is masked in snapshot mode")
            return
        if roof is None or figures is None:
            chart.masked(
                "no roofline: the kernel has no cost model"
                if roof
                else "no roofline on this adapter yet: the next bench measures it"
            )
        else:
            earlier = [
                Point(p.label, p.intensity, p.gflop_s, p.gb_s, faint=True)
                for p in view.benches[:-1][-20:]
            ]
            now = Point(
                case.name if case else "this bench",
                figures.intensity,
                figures.gflop_per_s,
                figures.gb_per_s,
            )
            chart.show(roof.bandwidth_gb_s, roof.peak_gflop_s, [*earlier, now])
        width = max(self.size.width // 2 - 2, 30)
        height = max((self.size.height - 6) // 2, 6)
        history.update(
            Text("median of each bench (ms)\n", style="dim")
            + line_plot(list(view.medians[-20:]), width, height - 1)
        )
        samples.update(
            Text("each sample of the last bench (ms)\n", style="dim")
            + line_plot(list(t.samples_ms), width, height - 1)
        )
