"""Bench arithmetic with no GPU: timing statistics against NumPy, budget → repetitions, the A/B
noise verdict, roofline figures, and `--sweep` parsing."""

from __future__ import annotations

import math

import numpy as np
import pytest

from workbench.bench.figures import Figures
from workbench.bench.noise import MIN_EFFECT, ratio_stats
from workbench.bench.plot import Point, roofline_chart
from workbench.bench.sweep import parse_sweep
from workbench.errors import UserError
from workbench.gpu.timing import (
    DRIFT_LIMIT,
    MAX_ROUNDS,
    MIN_ROUNDS,
    ClockCheck,
    Timing,
    rounds_for,
)


def test_timing_statistics_match_numpy() -> None:
    rng = np.random.default_rng(3)
    samples = tuple(float(v) for v in rng.gamma(4.0, 0.25, size=37))
    t = Timing("timestamp", samples, warmup=4)
    ref = np.array(samples, dtype=np.float64)
    srt = np.sort(ref)

    # Percentiles by linear interpolation between order statistics, written out independently.
    def pct(q: float) -> float:
        pos = q / 100 * (len(srt) - 1)
        lo = math.floor(pos)
        hi = min(lo + 1, len(srt) - 1)
        return float(srt[lo] + (srt[hi] - srt[lo]) * (pos - lo))

    assert t.median_ms == pytest.approx(pct(50))
    assert t.p10_ms == pytest.approx(pct(10))
    assert t.p90_ms == pytest.approx(pct(90))
    assert t.min_ms == srt[0]
    assert t.mean_ms == pytest.approx(ref.sum() / len(ref))
    assert t.std_ms == pytest.approx(math.sqrt(((ref - ref.mean()) ** 2).sum() / (len(ref) - 1)))
    assert t.reps == 37
    j = t.to_json()
    for key in ("median_ms", "p10_ms", "p90_ms", "min_ms", "mean_ms", "std_ms", "reps", "method"):
        assert key in j
    assert j["detail"] == "GPU timestamps per pass"


def test_wall_clock_samples_count_every_pass_of_a_batch() -> None:
    t = Timing("wall", (1.0, 2.0, 3.0), warmup=2, passes_per_sample=8, flushed=True)
    assert t.reps == 24
    assert "wall clock over batches of 8 passes" in t.detail and "flushed" in t.detail


def test_drift_compares_the_first_tenth_of_the_passes_with_the_last() -> None:
    # The H100 after idle: passes at 120 µs until its clocks rose, then 42 µs.
    ramp = (0.120,) * 30 + (0.042,) * 270
    t = Timing("timestamp", ramp, warmup=1)
    assert t.drift == pytest.approx(0.120 / 0.042) and t.drifted
    assert t.to_json()["drift"] == t.drift
    rng = np.random.default_rng(1)
    steady = Timing("timestamp", tuple(rng.normal(0.042, 0.001, 300)), warmup=1)
    assert abs(steady.drift - 1) < DRIFT_LIMIT - 1 and not steady.drifted
    slowing = Timing("timestamp", tuple(reversed(ramp)), warmup=1)  # slower at the end: no warm-up
    assert slowing.drift < 1 and not slowing.drifted
    few = Timing("timestamp", ramp[:49], warmup=1)  # a tenth of these is too few to judge
    assert math.isnan(few.drift) and not few.drifted


def test_budget_to_rounds_is_monotone() -> None:
    for estimate in (0.003, 0.05, 1.0, 7.5, 180.0):
        budgets = [0.5 * 1.3**k for k in range(60)]
        reps = [rounds_for(b, estimate) for b in budgets]
        assert reps == sorted(reps), estimate
        assert all(MIN_ROUNDS <= r <= MAX_ROUNDS for r in reps)
    assert rounds_for(100.0, 1.0) == 100
    assert rounds_for(100.0, 0.1) == 1000
    assert rounds_for(0.0, 1.0) == 0


def test_identical_samples_are_no_difference_and_a_real_one_is_found() -> None:
    rng = np.random.default_rng(0)
    drift = np.linspace(1.0, 1.3, 400)  # both sides slow down alike: interleaving cancels it
    a = tuple(drift * rng.normal(1.0, 0.08, 400))
    b = tuple(drift * rng.normal(1.0, 0.08, 400))
    same = ratio_stats(a, b)
    assert not same.beyond_noise and same.verdict() == "no difference beyond noise"
    assert same.low <= 1.0 <= same.high
    slower = ratio_stats(a, tuple(1.25 * v for v in b))
    assert slower.beyond_noise and slower.verdict() == "B is slower"
    assert slower.ratio == pytest.approx(1.25, rel=0.05)
    faster = ratio_stats(a, tuple(0.5 * v for v in b))
    assert faster.verdict() == "B is faster"
    # A tiny but consistent difference stays under the stated minimum effect.
    tiny = ratio_stats(a, tuple((1 + MIN_EFFECT / 4) * v for v in a))
    assert not tiny.beyond_noise


def test_figures_place_a_kernel_on_the_roofline() -> None:
    # 1 GB and 0.5 GFLOP in 10 ms: 100 GB/s, 50 GFLOP/s, 0.5 FLOP/B.
    f = Figures(10**9, 5 * 10**8, 10.0, bandwidth_gb_s=400.0, peak_gflop_s=2000.0)
    assert f.gb_per_s == pytest.approx(100.0)
    assert f.gflop_per_s == pytest.approx(50.0)
    assert f.intensity == pytest.approx(0.5)
    assert f.frac_bandwidth == pytest.approx(0.25)
    assert f.frac_compute == pytest.approx(0.025)
    assert f.binds == "memory" and f.frac_roof == pytest.approx(0.25)  # ridge is 5 FLOP/B
    g = Figures(10**6, 10**9, 1.0, bandwidth_gb_s=400.0, peak_gflop_s=2000.0)  # 1000 FLOP/B
    assert g.binds == "compute" and g.frac_roof == pytest.approx(0.5)
    bare = Figures(10**6, 0, 1.0)
    assert bare.binds is None and bare.frac_bandwidth is None
    assert set(f.to_json()) >= {"gb_per_s", "gflop_per_s", "intensity_flop_per_byte", "binds"}


def test_clock_check_states_its_tolerance() -> None:
    ok = ClockCheck(1.0, 1.1, batch=16, batches=5)
    assert ok.agree and "agree within 25%" in ok.summary()
    off = ClockCheck(1.0, 2.0, batch=16, batches=5)
    assert not off.agree and "do NOT agree" in off.summary()


def test_parse_sweep() -> None:
    assert parse_sweep("wg=64,128, 256") == ("wg", [64, 128, 256])
    assert parse_sweep("scale=0.5,1") == ("scale", [0.5, 1])
    for bad in ("wg", "wg=", "=1,2", "wg=a,b", "wg=1,1"):
        with pytest.raises(UserError):
            parse_sweep(bad)


def test_roofline_chart_names_each_point_and_the_ceilings() -> None:
    points = [
        Point("gelu_inplace", 1.25, 0.7, 0.56),
        Point("attention", 20.0, 9.0, 0.45),
        Point("embed", 0.0, 0.0, 1.5),
        Point("earlier", 1.25, 0.5, 0.4, faint=True),
    ]
    text = roofline_chart(3.0, 30.0, points, width=70, height=18, color=False)
    assert "3.00 GB/s" in text and "30.0 GFLOP/s" in text and "ridge 10 FLOP/B" in text
    assert "1 gelu_inplace  2 attention" in text
    assert "embed (50% of the bandwidth)" in text
    assert "\x1b[" not in text
