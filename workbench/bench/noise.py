"""Is B faster than A, or is that noise? Paired ratios of interleaved samples and their interval.

Samples taken interleaved (A B A B …) pair up: each pair saw the same drift, so the ratio B/A of a
pair cancels it. The verdict uses a bootstrap 95% interval of the median pair ratio: a difference is
real only when the whole interval lies more than `MIN_EFFECT` away from 1, so a 1% wobble from
buffer placement is never reported as one kernel beating the other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

MIN_EFFECT = 0.02  # differences under 2% are not reported as real, however many samples
MIN_SAMPLES = 5  # fewer samples a side give no interval worth reading
_RESAMPLES = 2000


@dataclass(frozen=True)
class RatioStats:
    """B's time over A's: median of the pair ratios, their p10–p90, and the 95% interval."""

    ratio: float
    p10: float
    p90: float
    low: float  # bootstrap 95% interval of the median ratio
    high: float
    pairs: int

    @property
    def beyond_noise(self) -> bool:
        return self.low > 1 + MIN_EFFECT or self.high < 1 - MIN_EFFECT

    def verdict(self) -> str:
        if not self.beyond_noise:
            return "no difference beyond noise"
        return "B is faster" if self.ratio < 1 else "B is slower"

    def summary(self) -> str:
        return (
            f"B/A time {self.ratio:.3f}× (pairs p10–p90 {self.p10:.3f}–{self.p90:.3f}×, 95% interval "
            f"of the median {self.low:.3f}–{self.high:.3f}×, {self.pairs} pairs): {self.verdict()}"
            + ("" if self.beyond_noise else f" (needs an interval clear of 1 ± {MIN_EFFECT:.0%})")
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "ratio_b_over_a": self.ratio,
            "p10": self.p10,
            "p90": self.p90,
            "ci95_low": self.low,
            "ci95_high": self.high,
            "pairs": self.pairs,
            "min_effect": MIN_EFFECT,
            "beyond_noise": self.beyond_noise,
            "verdict": self.verdict(),
        }


def ratio_stats(a_ms: tuple[float, ...], b_ms: tuple[float, ...], seed: int = 0) -> RatioStats:
    """Statistics of B/A over interleaved samples (pairs beyond the shorter list are dropped)."""
    n = min(len(a_ms), len(b_ms))
    if n == 0:
        nan = float("nan")
        return RatioStats(nan, nan, nan, nan, nan, 0)
    a = np.asarray(a_ms[:n], dtype=np.float64)
    b = np.asarray(b_ms[:n], dtype=np.float64)
    keep = a > 0
    r = b[keep] / a[keep]
    if r.size == 0:
        nan = float("nan")
        return RatioStats(nan, nan, nan, nan, nan, 0)
    rng = np.random.default_rng(seed)
    boots = np.median(r[rng.integers(0, r.size, size=(_RESAMPLES, r.size))], axis=1)
    return RatioStats(
        float(np.median(r)),
        float(np.percentile(r, 10)),
        float(np.percentile(r, 90)),
        float(np.percentile(boots, 2.5)),
        float(np.percentile(boots, 97.5)),
        int(r.size),
    )


def unpaired_ratio(
    a_ms: tuple[float, ...], b_ms: tuple[float, ...], seed: int = 0
) -> tuple[float, float, float]:
    """B's median over A's, and a bootstrap 95% interval of that ratio, for samples that were not
    interleaved (two separate benches): each side is resampled on its own, so drift between the
    two benches is not cancelled and the interval is only as narrow as the samples allow."""
    a = np.asarray(a_ms, dtype=np.float64)
    b = np.asarray(b_ms, dtype=np.float64)
    ratio = float(np.median(b) / np.median(a))
    rng = np.random.default_rng(seed)
    boot_a = np.median(a[rng.integers(0, a.size, size=(_RESAMPLES, a.size))], axis=1)
    boot_b = np.median(b[rng.integers(0, b.size, size=(_RESAMPLES, b.size))], axis=1)
    boots = boot_b / boot_a
    return ratio, float(np.percentile(boots, 2.5)), float(np.percentile(boots, 97.5))
