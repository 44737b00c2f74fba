"""The evidence check: did the kernel write its outputs at all?

One extra dispatch runs the case with every output pre-filled with the sentinel of
`workbench.written` (a NaN whose payload no arithmetic produces; a fixed bit pattern for integers)
instead of zeros. Comparing it with the zero-filled run of the same case, element by element (the
engine's `Run.unwritten` asks the same question of whole outputs, for every verdict):

- an element holding the sentinel in the one run and zero in the other was never written;
- an element holding the sentinel where the zero-filled run changed, or holding different written
  values in the two runs, depends on what was there before: the kernel reads its output before
  writing it (right for an accumulator, a bug otherwise; a nondeterministic kernel differs too).

An output with elements where none was written (for an in-out buffer: none changed) is `no_work`
("the kernel did nothing"), a failure; a partly unwritten output is a warning with the count and
the first unwritten index by name. Structured outputs and empty ones are passed over.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from workbench.checks.result import CheckResult, skipped
from workbench.closeness import name_index
from workbench.session import Case, Run, Session
from workbench.written import SENTINEL_BITS, sentinel_fill, unchanged, watchable
from workbench.written import bits as _bits
from workbench.written import unwritten as never_written

NO_WORK = "the kernel did nothing: check the dims, grid and uniforms"


def evidence_results(session: Session, case: Case, first: Run | None = None) -> list[CheckResult]:
    """One result per output of `case`; `first` is a run of it with the usual fill, if made."""
    watched = [
        p for p in case.bindings if p.role in ("output", "inout") and watchable(p.dtype, p.shape)
    ]
    if not watched:
        return [skipped("evidence", case.name, "no output that a sentinel can watch")]
    filled = dict(case.inputs)
    for p in watched:
        if p.role == "output":
            filled[p.name] = sentinel_fill(p.shape, np.dtype(p.dtype).name)
    if first is None:
        first = session.run(case, reference=False, evidence=False)
    marked = session.run(replace(case, inputs=filled), reference=False, evidence=False)
    return [_result(case, p.name, p.role, p.axes, first, marked) for p in watched]


def _result(
    case: Case, name: str, role: str, axes: tuple[str, ...], first: Run, marked: Run
) -> CheckResult:
    plain, sent = first.outputs[name], marked.outputs[name]
    total = plain.size
    if role == "inout":
        before = case.inputs[name]
        unwritten = unchanged(plain, before) & unchanged(sent, before)
        differs = np.zeros(plain.shape, dtype=bool)
    else:
        unwritten = never_written(plain, sent)
        held = _bits(sent) == SENTINEL_BITS[plain.dtype.name]
        untouched = unchanged(plain, None)
        differs = (held & ~untouched) | (~held & (_bits(sent) != _bits(plain)))
    n_unwritten, n_differs = int(unwritten.sum()), int(differs.sum())
    details = {
        "role": role,
        "elements": total,
        "unwritten": n_unwritten,
        "reads_before_write": n_differs,
        "no_work": n_unwritten == total,
    }
    if n_unwritten == total:
        verb = "changed" if role == "inout" else "written"
        summary = f"{name}: no element of {total:,} {verb}: {NO_WORK}"
        return CheckResult("evidence", name, False, summary, details)
    parts = []
    if n_unwritten:
        first_at = _first(unwritten, axes)
        details["first_unwritten"] = first_at
        what = "unchanged" if role == "inout" else "never written"
        parts.append(f"warning: {n_unwritten:,} of {total:,} elements {what}, first at {first_at}")
    if n_differs:
        first_at = _first(differs, axes)
        details["first_read_before_write"] = first_at
        parts.append(
            f"{n_differs:,} elements depend on the output's previous contents (first at "
            f"{first_at}): the kernel reads them before writing, right for an accumulator, a "
            "bug otherwise"
        )
    if not parts:
        parts.append(f"all {total:,} elements {'changed' if role == 'inout' else 'written'} ok")
    details["warning"] = bool(n_unwritten or n_differs)
    return CheckResult("evidence", name, True, f"{name}: " + "; ".join(parts), details)


def _first(mask: np.ndarray, axes: tuple[str, ...]) -> str:
    """The first True element of `mask`, named by `axes`."""
    index = np.unravel_index(int(np.argmax(mask)), mask.shape)
    return name_index([int(i) for i in index], axes)
