"""The determinism check: run one case N times (default 5) and compare the outputs bit for bit.

An output that differs between runs is a failure unless it is expected to vary: outputs held in
`array<atomic<...>>` bindings are summed with compare-and-swap float adds, whose order (and so
whose rounding) changes from run to run; they are reported as varying, with the spread, and pass.
A spec's `deterministic_when` says for which dims its atomic outputs are nonetheless promised
reproducible (causal_conv1d_bwd with deterministic=1 stores one workgroup's sum per channel), and
there a difference fails. Cases over the repeat budget run at the kernel's small dims.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from workbench.checks.result import CheckResult, callbacks
from workbench.checks.sizing import REPEATS, dims_text, sized
from workbench.closeness import name_index
from workbench.session import Case, Run, Session
from workbench.units import fmt_err, fmt_val

DEFAULT_REPEATS = 5
ROWS_SHOWN = 10
COLUMNS = ("index", "min", "max", "spread", "distinct values")


def may_vary(case: Case, name: str) -> bool:
    """Whether `name` may legitimately differ between runs of `case` (float atomics)."""
    rule = case.spec.deterministic_when if case.spec is not None else None
    if rule is not None and rule(case.dims):
        return False
    el = case.plan(name).binding.element
    return el is not None and el.kind == "atomic"


def determinism_results(
    session: Session,
    case: Case,
    first: Run | None = None,
    repeats: int = DEFAULT_REPEATS,
    full: bool = False,
    say: Callable[[str, float], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> list[CheckResult]:
    """One result per output. `first` (a run of `case` already made) counts as run 1."""
    say, stop = callbacks(say, cancelled)
    dcase, note = sized(session, case, REPEATS, None, full)
    runs = [first] if first is not None and dcase is case else []
    while len(runs) < max(2, repeats) and not stop():
        say(f"determinism: run {len(runs) + 1}/{repeats}", len(runs) / repeats)
        runs.append(session.run(dcase, reference=False, evidence=False))
    if len(runs) < 2:
        return []
    out = []
    for name in runs[0].outputs:
        out.append(_result(dcase, name, [r.outputs[name] for r in runs], note))
    return out


def _bits(a: np.ndarray) -> np.ndarray:
    """The raw bits of each element, so NaN payloads and -0 count (structs as bytes)."""
    if a.dtype.names:
        return a.view(np.dtype((np.void, a.dtype.itemsize)))
    if a.dtype.kind == "f":
        return a.view(f"u{a.dtype.itemsize}")
    return a


def _result(case: Case, name: str, outs: list[np.ndarray], note: str | None) -> CheckResult:
    n = len(outs)
    bits = np.stack([_bits(o) for o in outs])
    differ = (bits != bits[0]).any(axis=0)
    n_differ = int(differ.sum())
    expected = may_vary(case, name)
    at = f" at {dims_text(case.dims)}" if note else ""
    details: dict[str, Any] = {
        "runs": n,
        "identical": n_differ == 0,
        "n_differ": n_differ,
        "n_total": int(differ.size),
        "may_vary": expected,
        "max_spread": 0.0,
        "dims": dict(case.dims),
        "note": note,
    }
    if n_differ == 0:
        why = " (atomic adds may reorder; they did not here)" if expected else ""
        summary = f"{name}: bitwise identical in {n} runs{why}{at} ok"
        return CheckResult("determinism", name, True, summary, details, COLUMNS, [])
    rows = []
    if outs[0].dtype.names:
        details["max_spread"] = math.inf
    else:
        stack = np.stack([o.astype(np.float64) for o in outs])
        with np.errstate(invalid="ignore"):
            lo, hi = np.nanmin(stack, axis=0), np.nanmax(stack, axis=0)
        # A NaN in some runs only is an unbounded spread.
        nan_mixed = np.isnan(stack).any(axis=0) & ~np.isnan(stack).all(axis=0)
        spread = np.where(differ, np.where(nan_mixed, np.inf, hi - lo), 0.0)
        details["max_spread"] = float(spread.max())
        axes = case.plan(name).axes
        for flat in np.argsort(-spread.ravel(), kind="stable")[:ROWS_SHOWN]:
            if not differ.ravel()[flat]:
                break
            idx = tuple(int(v) for v in np.unravel_index(flat, differ.shape))
            distinct = len(set(bits.reshape(n, -1)[:, flat].tolist()))
            rows.append(
                (
                    name_index(idx, axes),
                    fmt_val(float(lo[idx])),
                    fmt_val(float(hi[idx])),
                    fmt_err(float(spread[idx])),
                    str(distinct),
                )
            )
    if n_differ > len(rows):
        rows.append((f"… {n_differ - len(rows):,} more differ", "", "", "", ""))
    head = (
        f"{name}: differs across {n} runs in {n_differ:,}/{differ.size:,} elements, "
        f"max spread {fmt_err(details['max_spread'])}{at}"
    )
    if expected:
        verdict = ": CAS float atomics reorder additions (expected) ok"
    else:
        verdict = ": expected bitwise identical FAIL"
    return CheckResult("determinism", name, expected, head + verdict, details, COLUMNS, rows)
