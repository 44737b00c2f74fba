"""Bench one case: check it against its reference, time it within a budget, place it on the roofline.

A case is checked before it is timed (a fast wrong kernel is no result), then timed with
`Session.time_cases`. The verdict says what was verified: `pass`/`fail` after a comparison with the
reference, `ran` when the kernel has none. A result whose bytes fit in the last-level cache while
no flush was asked for carries a note saying its rates may be the cache's, and one whose passes
still sped up while they were measured a note saying it was not warmed up enough.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from workbench.bench.figures import Figures
from workbench.session import Budget, Case, Roofline, Run, Session, Timing, Verdict
from workbench.units import fmt_bytes


@dataclass
class BenchResult:
    """One benched case: its verdict, timing and roofline figures."""

    label: str  # the kernel's name, or a variant such as "wg=128"
    case: Case
    verdict: str  # a `Verdict`'s value: "pass", "fail", "ran" (no reference), "no_work", …
    problem: str = ""  # why it failed, in one line
    timing: Timing | None = None
    figures: Figures | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def usable(self) -> bool:
        """Checked (or without a reference) and timed: may be compared and ranked."""
        return self.verdict in ("pass", "ran") and self.timing is not None and self.timing.reps > 0

    def to_json(self) -> dict[str, Any]:
        case = self.case
        return {
            "label": self.label,
            "kernel": case.name,
            "file": case.kernel.file,
            "dims": case.dims,
            "overrides": case.overrides,
            "grid": list(case.grid),
            "verdict": self.verdict,
            "problem": self.problem,
            "timing": self.timing.to_json() if self.timing else None,
            "figures": self.figures.to_json() if self.figures else None,
            "notes": self.notes,
        }


def verdict_of(run: Run) -> tuple[str, str]:
    """The run's verdict (`Session.run` decides it by the one rule) and, when it is not a pass
    or a plain ran, why in one line."""
    verdict = run.verdict
    if verdict in (Verdict.PASS, Verdict.RAN):
        return str(verdict), ""
    bad = next((c for c in run.compare.values() if not c.ok), None)
    if verdict is Verdict.FAIL and bad is not None:
        return str(verdict), bad.summary()
    return str(verdict), verdict.text


def check(session: Session, case: Case, label: str) -> BenchResult:
    """Dispatch once and compare with the reference: a BenchResult not yet timed."""
    verdict, problem = verdict_of(session.run(case))
    return BenchResult(label, case, verdict, problem)


def case_bytes(case: Case) -> int:
    """Bytes one dispatch moves: the spec's cost model, else every binding once."""
    cost = case.cost
    return cost.bytes if cost is not None else sum(p.nbytes for p in case.bindings)


def place(
    result: BenchResult,
    timing: Timing,
    roof: Roofline | None,
    budget: Budget,
    flush: tuple[int, str],
) -> None:
    """Fill in the timing, the roofline figures and the cache note of a checked result."""
    case = result.case
    result.timing = timing
    cost = case.cost
    if cost is not None and timing.reps:
        result.figures = Figures(
            cost.bytes,
            cost.flops,
            timing.median_ms,
            roof.bandwidth_gb_s if roof else None,
            roof.peak_gflop_s if roof else None,
        )
    elif cost is None:
        result.notes.append("no cost model (ad-hoc kernel): no GB/s or GFLOP/s")
    if timing.drifted:
        result.notes.append(
            f"drift: the first tenth of the passes took {timing.drift:.2f}× as long as the last "
            "tenth, so the adapter was still speeding up (an idle GPU raises its clocks only after "
            "sustained work) or the machine was busy; warm up longer (--warmup-ms) and run again"
        )
    nbytes = case_bytes(case)
    if not budget.flush and nbytes < flush[0]:
        result.notes.append(
            f"fits in cache: its {fmt_bytes(nbytes)} are under the {fmt_bytes(flush[0])} flush size "
            f"({flush[1]}), so the times may be the cache's; --flush evicts it before each pass"
        )


def bench_case(
    session: Session,
    case: Case,
    budget: Budget,
    roof: Roofline | None,
    label: str | None = None,
    progress: Callable[[int, int], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> BenchResult:
    """Check, then time within the budget, then place on the roofline."""
    result = check(session, case, label or case.name)
    timing = session.time_cases([case], budget, progress, cancelled)[0]
    place(result, timing, roof, budget, session.flush_size)
    return result
