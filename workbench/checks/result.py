"""What every check returns: `CheckResult` (one output or scenario) and `CheckReport` (one case).

A result carries a one-line summary with units, every figure in `details` (JSON-able), and a
table (`columns`, `rows` of display strings) so a UI can show any result without knowing its kind.
Also the callbacks checks default to.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from workbench.jsonable import jsonable
from workbench.verdicts import Verdict, decide

CHECK_KINDS = ("compare", "evidence", "grad", "special", "determinism", "adapters")
DEFAULT_WHAT = ("compare", "evidence", "grad", "special", "determinism")
# Kinds whose success, once run, is evidence against a reference besides the compare check.
_VERIFYING_KINDS = ("grad", "special")

# A progress callback: a message and the fraction done.
Say = Callable[[str, float], None]


@dataclass(frozen=True)
class CheckResult:
    """One verdict: an output compared, a gradient checked, a scenario run."""

    kind: str  # one of CHECK_KINDS
    name: str  # the output, gradient or scenario it is about
    ok: bool
    summary: str
    details: dict[str, Any] = field(default_factory=dict)
    columns: tuple[str, ...] = ()
    rows: Sequence[tuple[str, ...]] = field(default_factory=list)
    skipped: bool = False  # not run (missing feature, nothing to check); ok stays True

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "name": self.name,
            "ok": self.ok,
            "skipped": self.skipped,
            "summary": self.summary,
            "details": jsonable(self.details),
            "columns": list(self.columns),
            "rows": [list(r) for r in self.rows],
        }


def skipped(kind: str, name: str, why: str, **details: Any) -> CheckResult:
    """A check that did not run, and why; it does not fail the report."""
    return CheckResult(
        kind, name, True, f"{name}: skipped: {why}", {"why": why, **details}, (), [], True
    )


@dataclass
class CheckReport:
    """Every check of one case."""

    kernel: str
    file: str
    adapter: str  # the adapter's label
    dims: dict[str, int]
    results: list[CheckResult] = field(default_factory=list)
    elapsed_s: float = 0.0
    notes: list[str] = field(default_factory=list)
    cancelled: bool = False

    @property
    def ok(self) -> bool:
        """True for a pass alone (`workbench.verdicts`): written elements compared, all good."""
        return self.verdict.ok

    @property
    def failed(self) -> list[CheckResult]:
        return [r for r in self.results if not r.ok]

    @property
    def verdict(self) -> Verdict:
        """What was actually verified, by the one rule (`workbench.verdicts.decide`)."""
        if self.cancelled:
            return Verdict.ERROR
        ran = [r for r in self.results if not r.skipped]
        if not ran:
            missing = any(r.details.get("missing_features") for r in self.results)
            return Verdict.SKIP if missing else Verdict.ERROR
        no_work = any(r.details.get("no_work") for r in ran)
        nothing = any(r.details.get("nothing_compared") for r in ran)
        return decide(
            (r.details["n_total"] for r in ran if r.kind == "compare" and "n_total" in r.details),
            failed=any(not r.ok for r in ran if not r.details.get("nothing_compared")),
            no_work=no_work,
            nothing_compared=nothing,
            verified=any(r.kind in _VERIFYING_KINDS and r.ok for r in ran),
        )

    def of_kind(self, kind: str) -> list[CheckResult]:
        return [r for r in self.results if r.kind == kind]

    def to_json(self) -> dict[str, Any]:
        return {
            "kernel": self.kernel,
            "file": self.file,
            "adapter": self.adapter,
            "dims": dict(self.dims),
            "ok": self.ok,
            "verdict": str(self.verdict),
            "cancelled": self.cancelled,
            "elapsed_s": self.elapsed_s,
            "notes": list(self.notes),
            "results": [r.to_json() for r in self.results],
        }


def callbacks(
    say: Say | None, cancelled: Callable[[], bool] | None
) -> tuple[Say, Callable[[], bool]]:
    """The progress and cancel callbacks given, or ones that say nothing and never cancel."""
    return say or _say_nothing, cancelled or _never


def _say_nothing(_msg: str, _frac: float) -> None:
    return None


def _never() -> bool:
    return False
