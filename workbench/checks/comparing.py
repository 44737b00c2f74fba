"""The compare check: each output of one run against its float64 reference, as `CheckResult`s.

The figures come from `workbench.closeness` (max abs/rel error, ULP distance, each with the element
it comes from; count outside tolerance, NaN/Inf by position). The table lists the mismatches worst first with named indices;
when every element is within tolerance it lists the largest errors instead, so there is always
something to look at. The same rendering serves the across-adapters check.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from workbench.checks.result import CheckResult, skipped
from workbench.closeness import Comparison, name_index, ulp_distance
from workbench.session import Run
from workbench.units import NONE, fmt_err, fmt_int, fmt_percent, fmt_val

COLUMNS = ("index", "got", "reference", "|Δ|", "rel", "ULP", "note")
ROWS_SHOWN = 10


def compare_results(run: Run) -> list[CheckResult]:
    """One result per compared output; a skipped one for a kernel without a reference."""
    if run.case.spec is None:
        return [
            skipped(
                "compare",
                run.case.name,
                "no reference: no spec matches this kernel (describe it in workbench.toml)",
            )
        ]
    if not run.case.spec.has_reference:
        why = f"no reference: {run.case.spec.described} gives it no [reference] table"
        return [skipped("compare", run.case.name, why)]
    reference = run.reference or {}
    if not run.compare:
        return [nothing_compared(run)]
    results = []
    for name, cmp in run.compare.items():
        got = run.observed(name)  # a packed output: the values its words hold
        axes = run.case.plan(name).axes if got is run.outputs[name] else ()
        results.append(comparison_result("compare", name, cmp, got, reference[name], axes))
    return [_unwritten(r) if r.name in run.unwritten else r for r in results]


def _unwritten(r: CheckResult) -> CheckResult:
    """A comparison of an output the kernel never wrote: whatever the values, nothing the kernel
    computed was compared (zeros expected and zeros left over agree by accident)."""
    summary = (
        f"{r.name}: the kernel wrote no element (the sentinel run kept every one); {r.summary}"
    )
    return replace(r, ok=False, summary=summary, details=r.details | {"no_work": True})


def nothing_compared(run: Run) -> CheckResult:
    """The reference ran and compared no output: it returned none of the outputs the spec lists
    (a described reference returning `{}`, say). Not a pass: nothing was verified."""
    spec = run.case.spec
    wanted = ", ".join(spec.outputs) if spec is not None else "none"
    got = ", ".join(sorted(run.reference or {})) or "nothing"
    summary = (
        f"{run.case.name}: nothing compared: the reference returned {got}, not the outputs {wanted}"
    )
    details = {"nothing_compared": True, "returned": sorted(run.reference or {})}
    return CheckResult("compare", run.case.name, False, summary, details)


def comparison_result(
    kind: str,
    name: str,
    cmp: Comparison,
    got: np.ndarray,
    ref: np.ndarray,
    axes: tuple[str, ...],
    labels: tuple[str, str] = ("got", "reference"),
) -> CheckResult:
    """A `Comparison` as a result: summary, every figure, and the worst elements as rows."""
    rows: list[tuple[str, ...]] = [
        (
            m.named,
            fmt_val(m.got),
            fmt_val(m.ref),
            fmt_err(m.abs_err),
            fmt_err(m.rel_err),
            "" if m.ulp is None else fmt_int(m.ulp),
            _describe(m.got, m.ref),
        )
        for m in cmp.worst[:ROWS_SHOWN]
    ]
    if cmp.n_bad > len(rows):
        more = f"… {fmt_int(cmp.n_bad - len(rows))} more outside tolerance"
        rows.append((more, "", "", "", "", "", ""))
    largest = [] if cmp.n_bad else _largest_errors(got, ref, axes, cmp.rel_floor)
    if not cmp.n_bad:
        rows = [(*r, "within tolerance") for r in largest]
    details = cmp.to_json() | {"largest": [dict(zip(COLUMNS[:6], r, strict=True)) for r in largest]}
    details["labels"] = list(labels)
    columns = ("index", labels[0], labels[1], "|Δ|", "rel", "ULP", "note")
    return CheckResult(kind, name, cmp.ok, summarize(cmp), details, columns, rows)


def summarize(cmp: Comparison) -> str:
    """`grad_gate: max|Δ| 2.4e-07 at seq=1 d_ff=7 (ref 0.3); rel 3.1e-07, 3 ULP at seq=0 d_ff=2
    (ref 12.5), 0/1,572,864 outside (rtol 1.3e-06, atol 1e-06) ok`: every figure names its element."""
    if cmp.n_total == 0:
        return f"{cmp.name}: empty case: 0 elements, nothing compared"
    line = (
        f"{cmp.name}: {cmp.figures()}, "
        f"{fmt_int(cmp.n_bad)}/{fmt_int(cmp.n_total)} outside (rtol {cmp.rtol:g}, atol {cmp.atol:g})"
    )
    if cmp.n_bad:
        line += f" = {fmt_percent(cmp.frac_bad)}"
    if cmp.n_nonfinite_mismatch:
        line += f", {fmt_int(cmp.n_nonfinite_mismatch)} NaN/Inf not where the reference has them"
    if cmp.worst:
        line += f"; worst {cmp.worst[0].named}"
    return line + (" ok" if cmp.ok else " FAIL")


def _describe(got: float, ref: float) -> str:
    """What kind of mismatch: a value off, or a NaN/Inf where the other side differs."""

    def kind(x: float) -> str:
        if math.isnan(x):
            return "NaN"
        if math.isinf(x):
            return "+Inf" if x > 0 else "-Inf"
        return "finite"

    g, r = kind(got), kind(ref)
    if g == r == "finite":
        return "value"
    return f"{g} where reference is {r}"


def _largest_errors(
    got: np.ndarray, ref: np.ndarray, axes: tuple[str, ...], floor: float, k: int = 5
) -> list[tuple[str, ...]]:
    """The k largest |Δ| among elements finite on both sides, as display rows; rel and ULP only
    where |ref| ≥ `floor` (the relative term governs there), as the comparison measures them."""
    g = np.asarray(got, dtype=np.float64)
    r = np.asarray(ref, dtype=np.float64).reshape(g.shape)
    if g.size == 0:
        return []
    with np.errstate(invalid="ignore"):
        diff = np.where(np.isfinite(g) & np.isfinite(r), np.abs(g - r), -1.0).ravel()
    k = min(k, diff.size)
    top = np.argpartition(-diff, k - 1)[:k]
    top = top[np.argsort(-diff[top], kind="stable")]
    rows: list[tuple[str, ...]] = []
    for flat in top:
        if diff[flat] <= 0:
            break
        idx = tuple(int(v) for v in np.unravel_index(flat, g.shape))
        gv, rv = float(g.ravel()[flat]), float(r.ravel()[flat])
        measured = rv != 0 and abs(rv) >= floor
        ulp = ""
        if measured and got.dtype.kind == "f":
            one = np.asarray(got).ravel()[flat : flat + 1]
            ulp = fmt_int(int(ulp_distance(one, np.array([rv]))[0]))
        rows.append(
            (
                name_index(idx, axes),
                fmt_val(gv),
                fmt_val(rv),
                fmt_err(float(diff[flat])),
                fmt_err(diff[flat] / abs(rv)) if measured else NONE,
                ulp,
            )
        )
    return rows
