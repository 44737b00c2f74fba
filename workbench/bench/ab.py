"""A/B of two implementations of one kernel: both checked, then timed interleaved (A B A B …).

Interleaving in the same submissions means drift (clocks, other load) hits both alike; the pairs'
ratios then say whether B differs from A by more than run-to-run noise (`workbench.bench.noise`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from workbench.bench.measure import BenchResult, check, place
from workbench.bench.noise import RatioStats, ratio_stats
from workbench.session import Budget, Case, Roofline, Session


@dataclass
class ABResult:
    a: BenchResult
    b: BenchResult
    stats: RatioStats | None  # None when either failed its check (then nothing is timed)

    def to_json(self) -> dict[str, Any]:
        return {
            "a": self.a.to_json(),
            "b": self.b.to_json(),
            "comparison": self.stats.to_json() if self.stats else None,
        }


def ab(
    session: Session,
    a: tuple[str, Case],
    b: tuple[str, Case],
    budget: Budget,
    roof: Roofline | None,
    progress: Callable[[int, int], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
    warming: Callable[[float], None] | None = None,
) -> ABResult:
    """Check A and B (labelled cases), then time them interleaved when both may be compared
    (`progress` and `warming` as `Session.time_cases` calls them)."""
    ra, rb = check(session, a[1], a[0]), check(session, b[1], b[0])
    if ra.verdict not in ("pass", "ran") or rb.verdict not in ("pass", "ran"):
        return ABResult(ra, rb, None)
    ta, tb = session.time_cases([a[1], b[1]], budget, progress, cancelled, warming)
    flush = session.flush_size
    place(ra, ta, roof, budget, flush)
    place(rb, tb, roof, budget, flush)
    return ABResult(ra, rb, ratio_stats(ta.samples_ms, tb.samples_ms))
