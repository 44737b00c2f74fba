"""Small terminal pictures of arrays: block heatmaps, histograms and the timing plot.

Each function returns a Rich renderable built from NumPy data; none touches the GPU. Heatmaps
downsample to the size they are drawn at (two array rows per terminal line, with half blocks), so a
multi-million-element output costs one strided reduction, not one cell per element. plotext keeps
global state, so its use is serialised by a lock (workers may draw while the UI thread does).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Sequence
from types import ModuleType

import numpy as np
from rich.style import Style
from rich.text import Text

_PLOTEXT_LOCK = threading.Lock()
NONFINITE = (200, 60, 200)  # magenta: NaN or ±Inf, never confused with a value


def downsample(a: np.ndarray, rows: int, cols: int, how: str = "absmax") -> np.ndarray:
    """Reduce a 2-D array to at most rows×cols blocks (max |x| or mean per block).

    A block holding a NaN or ±Inf keeps it, so non-finite values stay visible at any zoom.
    """
    a = np.asarray(a, dtype=np.float64)
    if a.ndim == 1:
        a = a[None, :]
    r, c = a.shape
    rows, cols = max(1, min(rows, r)), max(1, min(cols, c))
    re = np.linspace(0, r, rows + 1).astype(int)
    ce = np.linspace(0, c, cols + 1).astype(int)
    out = np.empty((rows, cols))
    bad = ~np.isfinite(a)
    for i in range(rows):
        band = a[re[i] : re[i + 1]]
        bad_band = bad[re[i] : re[i + 1]]
        for j in range(cols):
            block = band[:, ce[j] : ce[j + 1]]
            if bad_band[:, ce[j] : ce[j + 1]].any():
                out[i, j] = np.nan
            elif how == "mean":
                out[i, j] = block.mean()
            else:
                signed = block.ravel()[np.argmax(np.abs(block))]
                out[i, j] = signed
    return out


def diverging(t: float) -> tuple[int, int, int]:
    """-1 → blue, 0 → dark grey, +1 → red."""
    t = max(-1.0, min(1.0, t))
    base = 40
    if t >= 0:
        return (
            int(base + (230 - base) * t),
            int(base + (70 - base) * t),
            int(base + (60 - base) * t),
        )
    t = -t
    return (int(base + (60 - base) * t), int(base + (120 - base) * t), int(base + (230 - base) * t))


def _sequential(t: float) -> tuple[int, int, int]:
    """0 → dark, 1 → bright yellow, through orange."""
    t = max(0.0, min(1.0, t))
    return (int(30 + 225 * t), int(30 + 190 * t * t), int(40 * (1 - t)))


def heatmap(
    a: np.ndarray, width: int, height: int, signed: bool = True, scale: float | None = None
) -> Text:
    """A block heatmap of a 2-D array in `width` columns and `height` lines (2 rows per line).

    Signed data uses a blue/red diverging map around 0; unsigned data (errors) a dark-to-yellow
    ramp. `scale` fixes the value at full colour (default: the largest finite |value|).
    """
    a = np.asarray(a)
    if a.size == 0:
        return Text("(empty)", style="dim")
    if a.ndim == 1:
        cols = min(width, a.size)
        nrows = math.ceil(a.size / cols)
        padded = np.full(nrows * cols, 0.0)
        padded[: a.size] = a
        a = padded.reshape(nrows, cols)
    grid = downsample(a, 2 * height, width, "absmax")
    fin = np.isfinite(grid)
    top = float(np.max(np.abs(grid[fin]))) if fin.any() else 1.0
    top = scale if scale else (top or 1.0)

    def colour(v: float) -> tuple[int, int, int]:
        if not math.isfinite(v):
            return NONFINITE
        return diverging(v / top) if signed else _sequential(abs(v) / top)

    text = Text(no_wrap=True, overflow="crop")
    for i in range(0, grid.shape[0], 2):
        for j in range(grid.shape[1]):
            fg = colour(grid[i, j])
            if i + 1 < grid.shape[0]:
                bg = colour(grid[i + 1, j])
                text.append("▀", Style(color=f"rgb{fg}", bgcolor=f"rgb{bg}"))
            else:
                text.append("▀", Style(color=f"rgb{fg}"))
        text.append("\n")
    text.rstrip()
    return text


def legend(lo: float, hi: float, signed: bool = True, width: int = 20) -> Text:
    """A one-line colour bar with its end values."""
    text = Text(no_wrap=True)
    text.append(f"{lo:.3g} ", style="dim")
    for k in range(width):
        t = k / max(width - 1, 1)
        rgb = diverging(2 * t - 1) if signed else _sequential(t)
        text.append("█", Style(color=f"rgb{rgb}"))
    text.append(f" {hi:.3g}", style="dim")
    return text


HISTOGRAM_SAMPLE = 1 << 20


def histogram(a: np.ndarray, width: int, height: int, bins: int = 24) -> Text:
    """A plotext bar histogram of the finite values of `a` (counted with NumPy first).

    Beyond HISTOGRAM_SAMPLE values an even stride of them is counted: the shape is the same and
    the UI thread is not held up by a 10M-element output.
    """
    flat = np.asarray(a).ravel()
    stride = flat.size // HISTOGRAM_SAMPLE + 1 if flat.size > HISTOGRAM_SAMPLE else 1
    f = flat[::stride].astype(np.float64)
    f = f[np.isfinite(f)]
    if f.size == 0:
        return Text("no finite values", style="dim")
    lo, hi = float(f.min()), float(f.max())
    if lo == hi:
        return Text(f"all {f.size:,} finite values are {lo:.6g}", style="dim")
    counts, edges = np.histogram(f, bins=bins, range=(lo, hi))
    centers = ((edges[:-1] + edges[1:]) / 2).tolist()
    top = int(counts.max())
    yticks = [0, top // 2, top]

    def draw(plt: ModuleType) -> None:
        plt.bar(centers, counts.tolist(), width=1.0, color="cyan")
        plt.xticks([lo, (lo + hi) / 2, hi], [f"{lo:.3g}", f"{(lo + hi) / 2:.3g}", f"{hi:.3g}"])
        plt.yticks(yticks, [_count(c) for c in yticks])

    plot = _plotext(width, height - (stride > 1), draw)
    if stride > 1:
        plot.append(f"\ncounts of a sample: one value in {stride:,}", style="dim")
    return plot


def _count(n: int) -> str:
    """1.2M, 35k, 812: counts that fit a narrow axis."""
    if n >= 1_000_000:
        return f"{n / 1e6:.1f}M"
    if n >= 10_000:
        return f"{n // 1000}k"
    return str(n)


def line_plot(
    ys: Sequence[float], width: int, height: int, labels: Sequence[str] = (), ylabel: str = ""
) -> Text:
    """A plotext line plot of `ys` against the run number, markers on each point."""
    if not ys:
        return Text("no runs timed yet", style="dim")
    xs = list(range(1, len(ys) + 1))

    def draw(plt: ModuleType) -> None:
        plt.plot(xs, list(ys), marker="braille", color="cyan")
        plt.scatter(xs, list(ys), marker="dot", color="yellow")
        plt.xticks(xs, list(labels) if labels else [str(x) for x in xs])
        if ylabel:
            plt.ylabel(ylabel)

    return _plotext(width, height, draw)


def _plotext(width: int, height: int, draw: Callable[[ModuleType], None]) -> Text:
    import plotext as plt

    with _PLOTEXT_LOCK:
        plt.clf()
        plt.plotsize(max(width, 20), max(height, 5))
        plt.theme("clear")
        draw(plt)
        out = plt.build()
        plt.clf()
    return Text.from_ansi(out, no_wrap=True, overflow="crop")
