"""`check_case`: every requested check of one case, as one `CheckReport`.

The case is dispatched once; that run feeds the compare check and counts as the first run of the
determinism check. The other checks size themselves (`workbench.checks.sizing`). Progress is
reported as (message, overall fraction); `cancelled()` is polled between steps and by the first
run between its submissions, and a cancelled report keeps the results it has and is not ok.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence

from workbench.checks.adapters import adapter_results
from workbench.checks.comparing import compare_results
from workbench.checks.determinism import DEFAULT_REPEATS, determinism_results
from workbench.checks.evidence import evidence_results
from workbench.checks.gradcheck import grad_results
from workbench.checks.result import CHECK_KINDS, DEFAULT_WHAT, CheckReport, callbacks, skipped
from workbench.checks.special import Injection, special_results
from workbench.closeness import Override
from workbench.errors import Cancelled, UserError
from workbench.session import Case, Session

# Relative cost of each check, for the progress fraction.
_WEIGHT = {
    "compare": 1.0,
    "evidence": 1.0,
    "grad": 2.0,
    "special": 2.0,
    "determinism": 1.0,
    "adapters": 1.0,
}


def parse_what(what: str | Iterable[str]) -> tuple[str, ...]:
    """`compare,grad` or an iterable of kinds, validated and in CHECK_KINDS order."""
    items = what.split(",") if isinstance(what, str) else list(what)
    kinds = {w.strip() for w in items if w.strip()}
    unknown = sorted(kinds - set(CHECK_KINDS))
    if unknown:
        raise UserError(f"unknown check {', '.join(unknown)}; choose from {', '.join(CHECK_KINDS)}")
    if not kinds:
        raise UserError(f"no check chosen; choose from {', '.join(CHECK_KINDS)}")
    return tuple(k for k in CHECK_KINDS if k in kinds)


def check_case(
    session: Session,
    case: Case,
    what: str | Iterable[str] = DEFAULT_WHAT,
    against: str | int | None = None,
    rtol: float | None = None,
    atol: float | None = None,
    progress: Callable[[str, float], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
    repeats: int = DEFAULT_REPEATS,
    full: bool = False,
    inject: Sequence[Injection] | None = None,
    tolerance: Override | None = None,
) -> CheckReport:
    """Run the checks `what` names on `case`; `against` (an adapter selector) adds "adapters".

    `rtol`/`atol` override every output's tolerance (validated: ToleranceError, exit 2);
    `tolerance` gives them as an `Override` instead (a forced one). `repeats` is the determinism
    check's run count, `full` runs every check at the case's own size, `inject` replaces the
    default special-value scenarios.
    """
    override = tolerance if tolerance is not None else Override.checked(rtol, atol)
    kinds = parse_what(what)
    if against is not None and "adapters" not in kinds:
        kinds = parse_what((*kinds, "adapters"))
    if repeats < 2:
        raise UserError(f"determinism needs at least 2 runs, got {repeats}")
    t0 = time.perf_counter()
    tell, stop = callbacks(progress, cancelled)
    report = CheckReport(case.name, case.kernel.file, session.adapter.label, dict(case.dims))
    missing = session.missing_features(case.kernel)
    if missing:
        why = f"needs {', '.join(missing)}, which {session.adapter.label} lacks"
        report.results.append(skipped(kinds[0], case.name, why, missing_features=list(missing)))
        report.elapsed_s = time.perf_counter() - t0
        return report

    total = sum(_WEIGHT[k] for k in kinds)
    done = 0.0

    def say_for(kind: str) -> Callable[[str, float], None]:
        base = done

        def say(msg: str, frac: float) -> None:
            tell(f"{case.name}: {msg}", min(1.0, (base + _WEIGHT[kind] * frac) / total))

        return say

    first = None
    try:
        if {"compare", "evidence", "determinism"} & set(kinds):
            tell(f"{case.name}: running", 0.0)
            first = session.run(
                case, tolerance=override, reference="compare" in kinds, cancelled=stop
            )
        for kind in kinds:
            if stop():
                break
            say = say_for(kind)
            if kind == "compare" and first is not None:
                report.results += compare_results(first)
            elif kind == "evidence":
                report.results += evidence_results(session, case, first)
            elif kind == "grad":
                try:
                    report.results += grad_results(session, case, override, full, say, stop)
                except UserError as exc:
                    # A gradient check that cannot run (its forward missing or mismatched) is
                    # skipped with the reason; the kernel's other checks still report.
                    report.results.append(skipped("grad", case.name, str(exc)))
            elif kind == "special":
                report.results += special_results(session, case, inject, full, say, stop)
            elif kind == "determinism":
                report.results += determinism_results(
                    session, case, first, repeats, full, say, stop
                )
            else:
                report.results += adapter_results(session, case, against, first, override, say)
            done += _WEIGHT[kind]
    except Cancelled:  # a run stopped at its next submission: the results so far stay
        report.cancelled = True
    report.cancelled = report.cancelled or stop()
    kinds_by_note: dict[str, list[str]] = {}
    for r in report.results:
        note = r.details.get("note")
        if note and r.kind not in kinds_by_note.setdefault(note, []):
            kinds_by_note[note].append(r.kind)
    report.notes += [f"{', '.join(ks)}: {note}" for note, ks in kinds_by_note.items()]
    report.notes += [n for n in case.notes if n.startswith("warning: ")]
    tolerance_note = override.note()
    if tolerance_note:
        report.notes.append(tolerance_note)
    report.elapsed_s = time.perf_counter() - t0
    tell(f"{case.name}: done", 1.0)
    return report
