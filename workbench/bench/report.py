"""Bench results in words: the lines the command line prints and the terminal UI shows.

Pure text from results (no printing, no Textual), so both front ends say exactly the same thing.
The sweep table also comes as rows, for a UI table widget.
"""

from __future__ import annotations

from dataclasses import dataclass

from workbench.bench.ab import ABResult
from workbench.bench.measure import BenchResult
from workbench.bench.sweep import SweepResult
from workbench.session import Budget, ClockCheck, Roofline
from workbench.units import fmt_bytes, fmt_count, fmt_int, fmt_ms, fmt_rate, fmt_ratio

# Said wherever times measured on a CPU adapter are shown, so nobody reads them as GPU figures.
CPU_TIMES = "CPU adapter: these times are the CPU's, not a GPU's"


def method_on(detail: str, cpu: bool) -> str:
    """A Timing's method in words (`Timing.detail`) for the adapter it ran on: a CPU adapter
    (lavapipe) answers timestamp queries from the host's clock, so its timestamps time the CPU."""
    return detail.replace("GPU timestamps", "the CPU adapter's timestamps") if cpu else detail


def header_lines(
    adapter: str, budget: Budget, roof: Roofline | None, flush: tuple[int, str], cpu: bool = False
) -> list[str]:
    """What was measured on which adapter, how, and against which ceilings."""
    lines = [
        f"bench on {adapter}" + (f"  ({CPU_TIMES})" if cpu else ""),
        f"  budget {budget.ms:g} ms per kernel after {budget.warmup_ms:g} ms warm-up; "
        + (
            f"cache flushed before each pass ({fmt_bytes(flush[0])}: {flush[1]})"
            if budget.flush
            else "no cache flush"
        ),
    ]
    if roof is not None:
        lines.append("  " + roofline_line(roof))
    return lines


def roofline_line(roof: Roofline) -> str:
    bw = roof.bandwidth_probe
    return (
        f"roofline {fmt_rate(roof.bandwidth_gb_s, 'B')} ({bw.kernel}, {bw.size})  "
        f"{fmt_rate(roof.peak_gflop_s, 'FLOP')} ({roof.fma.kernel}, {roof.fma.size}); "
        f"ridge {roof.ridge:.3g} FLOP/B; {roof.method}"
    )


def time_line(r: BenchResult) -> str:
    t = r.timing
    if t is None or not t.reps:
        return "not timed"
    return (
        f"median {fmt_ms(t.median_ms)}  p10 {fmt_ms(t.p10_ms)}  p90 {fmt_ms(t.p90_ms)}  "
        f"min {fmt_ms(t.min_ms)}  mean {fmt_ms(t.mean_ms)} ± {fmt_ms(t.std_ms)}  "
        f"({fmt_count(t.reps, 'rep')}; {t.detail})"
    )


def result_lines(r: BenchResult) -> list[str]:
    case = r.case
    dims = "  ".join(f"{n} {fmt_int(v)}" for n, v in case.dims.items())
    lines = [f"{r.label}  ({case.kernel.file}; {dims})  {r.verdict.upper()}"]
    if r.problem:
        lines.append(f"  check  {r.problem}")
    lines.append(f"  time   {time_line(r)}")
    if r.figures:
        lines.append(f"  rate   {r.figures.summary()}")
    lines += [f"  note   {note}" for note in r.notes]
    return lines


@dataclass(frozen=True)
class SweepRow:
    """One variant of a sweep as a table shows it."""

    best: bool
    label: str
    verdict: str
    median: str
    spread: str  # p10–p90
    reps: str
    rate: str  # GB/s by the cost model
    vs_best: str
    problem: str  # why it was not timed


def sweep_rows(res: SweepResult) -> list[SweepRow]:
    best = res.best
    rows = []
    for r in res.results:
        t = r.timing
        if not r.usable or t is None or best is None or best.timing is None:
            rows.append(
                SweepRow(
                    False, r.label, r.verdict.upper(), "", "", "", "", "", r.problem or "cancelled"
                )
            )
            continue
        rows.append(
            SweepRow(
                r is best,
                r.label,
                r.verdict.upper(),
                fmt_ms(t.median_ms),
                f"{fmt_ms(t.p10_ms)}–{fmt_ms(t.p90_ms)}",
                str(t.reps),
                fmt_rate(r.figures.gb_per_s, "B") if r.figures else "",
                fmt_ratio(t.median_ms / best.timing.median_ms),
                "",
            )
        )
    return rows


def sweep_lines(kernel: str, file: str, res: SweepResult) -> list[str]:
    lines = [f"sweep of override {res.name} over {kernel} ({file})"]
    rows = sweep_rows(res)
    width = max(len(r.label) for r in rows)
    for row in rows:
        head = f"  {'★' if row.best else ' '} {row.label:<{width}}  {row.verdict:<5}"
        if row.problem:
            lines.append(f"{head}  not timed: {row.problem}")
            continue
        rate = f"  {row.rate}" if row.rate else ""
        lines.append(
            f"{head}  {row.median:>10}  p10–p90 {row.spread}  {row.reps} reps{rate}  "
            f"{row.vs_best} best"
        )
    best = res.best
    if best is not None and best.timing is not None:
        lines.append(f"  best: {best.label} (★); method {best.timing.detail}")
        lines += [f"  note   {note}" for note in best.notes]
    else:
        lines.append("  no value passed its check: nothing was timed")
    return lines


def ab_lines(res: ABResult) -> list[str]:
    lines = [f"A/B of {res.a.case.name}, interleaved A B A B …"]
    for r in (res.a, res.b):
        lines += result_lines(r)
    if res.stats is None:
        lines.append("  not timed: both must pass their checks before they are compared")
    else:
        lines.append(f"  {res.stats.summary()}")
    return lines


def clock_line(clock: ClockCheck | None, has_timestamps: bool) -> str:
    if clock is not None:
        return f"clock check: {clock.summary()}"
    if not has_timestamps:
        return "clock check: none (the adapter has no timestamps; times are wall clock)"
    return "clock check: none (nothing was timed)"
