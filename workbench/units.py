"""Numbers with units, the same everywhere (command line and terminal UI)."""

from __future__ import annotations

import math


def fmt_bytes(n: float) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{int(n)} B"


def fmt_ms(ms: float) -> str:
    if math.isnan(ms):
        return "–"
    if ms < 1:
        return f"{ms * 1e3:.1f} µs"
    if ms < 1000:
        return f"{ms:.3f} ms"
    return f"{ms / 1e3:.2f} s"


def fmt_rate(per_s: float, unit: str) -> str:
    """GB/s, TB/s, GFLOP/s… from a rate given in giga-units per second."""
    if per_s >= 1000:
        return f"{per_s / 1000:.2f} T{unit}/s"
    return f"{per_s:.1f} G{unit}/s"


def fmt_num(x: float) -> str:
    if isinstance(x, int):
        return f"{x:,}"
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return f"{x:.4g}"
