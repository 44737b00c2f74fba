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

CHECK_KINDS = ("compare", "evidence", "grad", "special", "determinism", "adapters")
DEFAULT_WHAT = ("compare", "evidence", "grad", "special", "determinism")
# What a report says was verified: `pass`/`fail` only after a comparison with a reference (or a
# gradient check), `ran` with nothing to compare with, `no_work` when an output was never written,
# `error` when the kernel could not be checked.
VERDICTS = ("pass", "fail", "ran", "no_work", "error")
# Kinds whose success is evidence against a reference.
_REFERENCE_KINDS = ("compare", "grad", "special")

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
        return not self.cancelled and all(r.ok for r in self.results)

    @property
    def failed(self) -> list[CheckResult]:
        return [r for r in self.results if not r.ok]

    @property
    def verdict(self) -> str:
        """One of VERDICTS: what was actually verified."""
        if self.cancelled:
            return "error"
        if any(r.kind == "evidence" and r.details.get("no_work") for r in self.results):
            return "no_work"
        if any(not r.ok for r in self.results):
            return "fail"
        ran = [r for r in self.results if not r.skipped]
        if any(r.kind in _REFERENCE_KINDS for r in ran):
            return "pass"
        return "ran" if ran else "error"

    def of_kind(self, kind: str) -> list[CheckResult]:
        return [r for r in self.results if r.kind == kind]

    def to_json(self) -> dict[str, Any]:
        return {
            "kernel": self.kernel,
            "file": self.file,
            "adapter": self.adapter,
            "dims": dict(self.dims),
            "ok": self.ok,
            "verdict": self.verdict,
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
