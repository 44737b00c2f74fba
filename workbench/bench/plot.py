"""The roofline as a plotext chart: the memory and compute ceilings on log–log axes, kernels as points.

Pure text (ANSI colours when asked), no Textual: the terminal UI wraps it in a widget, the roofline
script writes it into docs/benchmarks.md. A kernel that does no arithmetic (a gather, a copy) has no
place on log axes of FLOP/s; it is named under the chart with its fraction of the bandwidth.
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass

from workbench.units import fmt_rate

_LOCK = threading.Lock()  # plotext draws into one global figure
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


@dataclass(frozen=True)
class Point:
    """A timed kernel on the chart: FLOP per byte, GFLOP/s and GB/s; `faint` for earlier runs."""

    label: str
    intensity: float
    gflop_s: float
    gb_s: float
    faint: bool = False


def roofline_chart(
    bandwidth_gb_s: float,
    peak_gflop_s: float,
    points: Sequence[Point],
    width: int = 78,
    height: int = 22,
    color: bool = True,
    title: str = "",
) -> str:
    """The chart as text: x is arithmetic intensity (FLOP/B), y is GFLOP/s, both logarithmic."""
    import plotext as plt

    ridge = peak_gflop_s / bandwidth_gb_s
    shown = [p for p in points if p.gflop_s > 0 and 0 < p.intensity < math.inf]
    off = [p for p in points if p not in shown and not p.faint]
    finite = [p.intensity for p in shown if p.intensity > 0 and math.isfinite(p.intensity)]
    x_lo = 10 ** math.floor(math.log10(min([ridge / 100, *finite])))
    x_hi = 10 ** math.ceil(math.log10(max([ridge * 100, *finite])))
    xs = [x_lo * (x_hi / x_lo) ** (k / 200) for k in range(201)]
    roof = [min(peak_gflop_s, bandwidth_gb_s * x) for x in xs]
    with _LOCK:
        plt.clf()
        plt.plotsize(max(width, 30), max(height, 10))
        plt.theme("clear")
        plt.xscale("log")
        plt.yscale("log")
        plt.plot(xs, roof, marker="braille", color="cyan", label="roof")
        for faint in (True, False):
            group = [p for p in shown if p.faint == faint]
            if not group:
                continue
            plt.scatter(
                [p.intensity for p in group],
                [p.gflop_s for p in group],
                marker="dot" if faint else "x",
                color="gray" if faint else "yellow",
                label="earlier runs" if faint else None,
            )
            if not faint:
                # Numbers beside the markers, names in a key below: labels never collide.
                step = (x_hi / x_lo) ** (2.0 / max(width, 30))  # two characters right
                for k, p in enumerate(group, 1):
                    plt.text(
                        str(k), p.intensity * step, p.gflop_s, color="yellow", alignment="left"
                    )
        y_lo = min([*(p.gflop_s for p in shown), roof[0]])
        xt = _decades(x_lo, x_hi)
        yt = _decades(y_lo, peak_gflop_s)
        plt.xticks(xt, [f"{v:g}" for v in xt])
        plt.yticks(yt, [f"{v:g}" for v in yt])
        out = plt.build()
        plt.clf()
    current = [p for p in shown if not p.faint]
    if current:
        out += "\n" + "  ".join(f"{k} {p.label}" for k, p in enumerate(current, 1))
    # Under the chart, not in plotext's title and labels, which it drops when the chart is narrow.
    out += (
        f"\n{title or 'roof'}: {fmt_rate(bandwidth_gb_s, 'B')} × FLOP/B, up to "
        f"{fmt_rate(peak_gflop_s, 'FLOP')}; ridge {ridge:.3g} FLOP/B\n"
        "x: FLOP per byte, y: GFLOP/s (both logarithmic)"
    )
    if off:
        out += "\nno arithmetic, so not on the chart: " + ", ".join(
            f"{p.label} ({p.gb_s / bandwidth_gb_s:.0%} of the bandwidth)" for p in off
        )
    return out if color else _ANSI.sub("", out)


def _decades(lo: float, hi: float) -> list[float]:
    """The powers of ten between `lo` and `hi` (at most about six of them)."""
    a, b = math.ceil(math.log10(lo) - 1e-9), math.floor(math.log10(hi) + 1e-9)
    step = max(1, (b - a) // 6)
    return [10.0**k for k in range(a, b + 1, step)]
