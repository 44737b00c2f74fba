"""The special-values check: inject NaN, ±Inf, ±0, denormals, ±100, ±1e4 into inputs, run, and
compare where outputs became non-finite with where the float64 reference does.

An injection is `BINDING=VALUE[@WHERE]`: VALUE is one of `VALUES` (or any number), WHERE is
`all`, a fraction (`0.05` or `5%`) of the elements chosen at random (seeded), or flat indices
(`3,17,40`); the default is 1/32 of the elements, at least one. Without injections given, every
floating-point input of the kernel gets each value in turn.

Verdict per output, against the spec's reference run on the injected inputs (references beyond
the output's float range count as ±Inf, which is what an f32 result is):
- `match` (the default): NaN and ±Inf exactly where the reference has them, of the same kind, and
  finite values within the output's tolerance. The spec's `special` mapping states the intended
  behaviour (e.g. nan_guard zeroing in the FFN backward) and its reference implements it, so a
  kernel that drifts from the stated rule fails.
- `contained`: the kernel may be finite where the reference is not, but never non-finite where
  the reference is finite; NaN and ±Inf may stand for each other; finite values within tolerance.
- `pattern`: `contained` for NaN/±Inf; finite values are reported, not judged (for inputs so large
  that f32 rounding, not the kernel, decides the figures).
Finite values are judged only where the injection changed the reference (the compare check
covers the rest), held to the tolerance with atol scaled by the injected magnitude: an input of
size |V| moves an f32 result's rounding error by as much.

By default every floating-point input is injected except the spec's saved forward results
(`KernelSpec.saved`: attention's LSE, the P/dS scratch), which a real run recomputes; those in
`KernelSpec.resaved` (the attention backward kernels' LSE) are recomputed from the injected Q/K
first, as the forward that saved them would have seen them. Injections given explicitly may
target any input, saved ones included.

The mode of a scenario is `match` unless the spec's `special_rule` says otherwise for that input
and value (the attention specs do, with the reasons beside the rule). causal_conv1d is `match`
throughout: kernels and reference multiply the zero padding by the weight as causal-conv1d's
CUDA kernel does, so a NaN/Inf weight reaches the first W-1 steps too.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from workbench.checks.result import CheckResult, callbacks, skipped
from workbench.checks.sizing import SCENARIOS, dims_text, sized
from workbench.closeness import compare, same_nonfinite, tolerance_for
from workbench.errors import UserError
from workbench.session import Case, Session
from workbench.specs.base import KernelSpec
from workbench.units import fmt_err

VALUES: dict[str, float] = {
    "nan": math.nan,
    "+inf": math.inf,
    "-inf": -math.inf,
    "+0": 0.0,
    "-0": -0.0,
    "+denormal": 1e-40,
    "-denormal": -1e-40,
    "+100": 100.0,
    "-100": -100.0,
    "+1e4": 1e4,
    "-1e4": -1e4,
}
# The denormal for half-precision bindings: f16's smallest normal is 6.1e-5.
DENORMAL_F16 = 1e-6
_ALIASES = {"inf": "+inf", "0": "+0", "denormal": "+denormal", "100": "+100", "1e4": "+1e4"}
DEFAULT_FRACTION = 1 / 32

COLUMNS = (
    "output",
    "non-finite",
    "reference non-finite",
    "misplaced NaN/Inf",
    "finite outside tol",
    "max|Δ| finite",
    "expect",
    "verdict",
)


@dataclass(frozen=True)
class Injection:
    """One value put into one binding at some positions."""

    binding: str
    value: str  # a key of VALUES, or a number as text
    where: str = f"{DEFAULT_FRACTION}"  # "all", a fraction, or "i,j,k" flat indices

    @property
    def label(self) -> str:
        where = self.where
        if _is_fraction(where):
            f = float(where.rstrip("%")) / (100 if where.endswith("%") else 1)
            where = f"1/{round(1 / f)}" if f > 0 and abs(1 / f - round(1 / f)) < 1e-9 else f"{f:g}"
        return f"{self.binding}={self.value}@{where}"

    def number(self, dtype: str | np.dtype[Any]) -> float:
        if self.value in VALUES:
            v = VALUES[self.value]
            if "denormal" in self.value and np.dtype(dtype) == np.float16:
                return math.copysign(DENORMAL_F16, v)
            return v
        return float(self.value)


def parse_injection(text: str) -> Injection:
    """`BINDING=VALUE[@WHERE]` as the command line and the UI write it."""
    head, sep, where = text.partition("@")
    binding, eq, value = head.partition("=")
    binding, value, where = binding.strip(), value.strip().lower(), where.strip()
    if not eq or not binding or not value or (sep and not where):
        raise UserError(f"an injection is BINDING=VALUE[@WHERE], got {text!r}")
    value = _ALIASES.get(value, value)
    if value not in VALUES:
        try:
            float(value)
        except ValueError:
            names = ", ".join(VALUES)
            raise UserError(
                f"injection {text!r}: value must be one of {names}, or a number"
            ) from None
    if sep and where != "all" and not _is_fraction(where):
        try:
            [int(i) for i in where.split(",")]
        except ValueError:
            raise UserError(
                f"injection {text!r}: WHERE is all, a fraction (0.05 or 5%) or flat indices (3,17)"
            ) from None
    return Injection(binding, value, where or f"{DEFAULT_FRACTION}")


def _is_fraction(where: str) -> bool:
    if not where.endswith("%") and "." not in where:
        return False
    try:
        f = float(where.rstrip("%"))
    except ValueError:
        return False
    return 0 < f <= (100 if where.endswith("%") else 1)


def default_injections(case: Case) -> list[Injection]:
    """Each value of VALUES into each floating-point input of the kernel, one at a time."""
    saved = case.spec.saved if case.spec is not None else ()
    names = tuple(
        p.name
        for p in case.bindings
        if p.role in ("input", "inout")
        and p.name not in saved
        and p.name in case.inputs
        and np.dtype(p.dtype).kind == "f"
    )
    return [Injection(b, v) for b in names for v in VALUES]


def positions(inj: Injection, n: int, seed: int) -> np.ndarray:
    """Flat indices the injection touches."""
    if inj.where == "all":
        return np.arange(n)
    if _is_fraction(inj.where):
        f = float(inj.where.rstrip("%")) / (100 if inj.where.endswith("%") else 1)
        k = min(n, max(1, round(n * f)))
        rng = np.random.default_rng([seed, 15485863, sum(map(ord, inj.binding))])
        return np.sort(rng.choice(n, size=k, replace=False))
    idx = np.array([int(i) for i in inj.where.split(",")], dtype=np.int64)
    bad = idx[(idx < 0) | (idx >= n)]
    if bad.size:
        raise UserError(f"injection {inj.label}: index {int(bad[0])} is outside 0..{n - 1}")
    return idx


def special_results(
    session: Session,
    case: Case,
    injections: Sequence[Injection] | None = None,
    full: bool = False,
    say: Callable[[str, float], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> list[CheckResult]:
    """One result per injection scenario."""
    say, stop = callbacks(say, cancelled)
    if case.spec is None:
        return [
            skipped(
                "special",
                case.name,
                "no spec matches this kernel, so there is no reference behaviour",
            )
        ]
    if not case.spec.has_reference:
        why = f"no reference: {case.spec.described} gives it no [reference] table"
        return [skipped("special", case.name, why)]
    if case.spec.special_policy == "skip":
        return [skipped("special", case.name, f'special = "skip" in {case.spec.described}')]
    if injections:
        scase, note = case, None  # injections name positions in the case as given
    else:
        scase, note = sized(session, case, SCENARIOS, None, full)
    todo = list(injections) if injections else default_injections(scase)
    spec = case.spec  # scase is the same kernel, so the same spec
    if not injections and spec.special_policy == "finite":
        # The description promises behaviour for finite inputs only.
        todo = [inj for inj in todo if math.isfinite(VALUES[inj.value])]
    for inj in todo:
        plan = next((p for p in scase.bindings if p.name == inj.binding), None)
        if plan is None or plan.name not in scase.inputs:
            names = ", ".join(p.name for p in scase.bindings if p.name in scase.inputs)
            raise UserError(
                f"injection {inj.label}: {scase.name} has no input {inj.binding!r}; inputs: {names}"
            )
        if np.dtype(plan.dtype).kind != "f":
            raise UserError(f"injection {inj.label}: {inj.binding} holds {plan.dtype}, not floats")
    rule = spec.special_rule
    with np.errstate(all="ignore"):
        clean = spec.reference(scase.dims, {k: v.copy() for k, v in scase.inputs.items()})
    results = []
    for k, inj in enumerate(todo):
        if stop():
            break
        say(f"special: {inj.label}", k / max(1, len(todo)))
        number = inj.number(scase.plan(inj.binding).dtype)
        mode = rule(inj.binding, number) if rule is not None else "match"
        results.append(_scenario(session, scase, spec, inj, mode, clean, note))
    return results


def _scenario(
    session: Session,
    case: Case,
    spec: KernelSpec,
    inj: Injection,
    mode: str,
    clean: dict[str, np.ndarray],
    note: str | None,
) -> CheckResult:
    plan = case.plan(inj.binding)
    arr = case.inputs[inj.binding].copy()
    where = positions(inj, arr.size, case.seed)
    value = inj.number(plan.dtype)
    with np.errstate(over="ignore"):
        arr.reshape(-1)[where] = np.asarray(value).astype(plan.dtype)
    inputs = {**case.inputs, inj.binding: arr}
    resaved = _resave(case, inj.binding, inputs)
    injected = replace(case, inputs={**inputs, **resaved})
    run = session.run(injected, reference=False, evidence=False)
    with np.errstate(all="ignore"):
        ref = spec.reference(case.dims, {k: v.copy() for k, v in injected.inputs.items()})
    scale = max(1.0, abs(value)) if math.isfinite(value) else 1.0
    rows, per_output = [], {}
    compared = 0  # elements compared, over every output
    for name in spec.outputs:
        if name not in run.outputs or name not in ref:
            continue
        got = spec.observed(case.dims, name, run.outputs[name])  # a packed output: its values
        axes = case.plan(name).axes if got is run.outputs[name] else ()
        r = _in_range(np.asarray(ref[name], dtype=np.float64), got.dtype)
        tol = tolerance_for(case.spec, name, case.dims, got.dtype)
        g = got.astype(np.float64)
        g_nf, r_nf = ~np.isfinite(g), ~np.isfinite(r)
        # Finite values are judged where the injection changed the reference; the rest is the
        # compare check's business. A NaN/Inf counts wherever it is.
        before = np.asarray(clean[name], dtype=np.float64).reshape(r.shape)
        with np.errstate(invalid="ignore"):
            affected = ~((r == before) | (np.isnan(r) & np.isnan(before)))
        judged = affected | g_nf
        cmp = compare(
            name,
            np.where(judged, got, 0).astype(got.dtype),
            np.where(judged, r, 0.0),
            axes=axes,
            tol=tol.scaled(1.0, scale, "special"),
        )
        if mode == "match":
            misplaced = int(((g_nf | r_nf) & ~same_nonfinite(g, r)).sum())
        else:
            misplaced = int((g_nf & ~r_nf).sum())
        finite_bad = cmp.n_bad - cmp.n_nonfinite_mismatch
        verdict = misplaced == 0 and (finite_bad == 0 or mode == "pattern")
        compared += cmp.n_total
        per_output[name] = {
            "ok": verdict,
            "nonfinite": int(g_nf.sum()),
            "nonfinite_ref": int(r_nf.sum()),
            "affected": int(affected.sum()),
            "nan": int(np.isnan(g).sum()),
            "inf": int(np.isinf(g).sum()),
            "misplaced": misplaced,
            "finite_where_ref_not": int((~g_nf & r_nf).sum()),
            "finite_outside": finite_bad,
            "compare": cmp.to_json(),
        }
        rows.append(
            (
                name,
                f"{int(g_nf.sum()):,}",
                f"{int(r_nf.sum()):,}",
                f"{misplaced:,}",
                f"{finite_bad:,}",
                fmt_err(cmp.max_abs),
                mode,
                "ok" if verdict else "FAIL",
            )
        )
    if not compared:
        # The reference returned none of the outputs, or they are empty: nothing was compared,
        # and a scenario that compared nothing says so rather than "match".
        why = "empty case: 0 elements" if per_output else "the reference returned no output"
        return skipped("special", inj.label, f"nothing compared ({why})", binding=inj.binding)
    ok = all(d["ok"] for d in per_output.values())
    parts = [
        f"{n} {d['nonfinite']:,} non-finite (reference {d['nonfinite_ref']:,})"
        + (f", {d['misplaced']:,} misplaced" if d["misplaced"] else "")
        + (
            f", {d['finite_outside']:,} finite outside tol"
            + (" (not judged)" if mode == "pattern" else "")
            if d["finite_outside"]
            else ""
        )
        for n, d in per_output.items()
    ]
    at = f" at {dims_text(case.dims)}" if note else ""
    summary = (
        f"{inj.label} ({len(where):,} of {arr.size:,}{at}, {mode}): "
        + "; ".join(parts)
        + (" ok" if ok else " FAIL")
    )
    details: dict[str, Any] = {
        "binding": inj.binding,
        "value": inj.value,
        "number": value,
        "where": inj.where,
        "positions": len(where),
        "size": int(arr.size),
        "mode": mode,
        "atol_scale": scale,
        "resaved": sorted(resaved),
        "dims": dict(case.dims),
        "note": note,
        "outputs": per_output,
    }
    return CheckResult("special", inj.label, ok, summary, details, COLUMNS, rows)


def _resave(case: Case, injected: str, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Saved forward results recomputed from the injected inputs (the spec's `resaved`), cast
    as bound."""
    names = case.spec.resaved if case.spec is not None else ()
    link = case.spec.gradient if case.spec is not None else None
    if not names or injected in names or link is None or link.saved is None:
        return {}
    with np.errstate(all="ignore"):
        saved = link.saved(case.dims, inputs)
    out = {}
    for name in names:
        plan = case.plan(name)
        with np.errstate(all="ignore"):
            out[name] = np.ascontiguousarray(
                np.asarray(saved[name]).reshape(plan.shape).astype(plan.dtype)
            )
    return out


def _in_range(ref: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Reference values beyond the output's float range become ±Inf, as the result would."""
    if np.dtype(dtype).kind != "f":
        return ref
    big = float(np.finfo(dtype).max)
    with np.errstate(invalid="ignore"):
        return np.where(np.abs(ref) > big, np.copysign(np.inf, ref), ref)


def spread_specials(case: Case) -> list[str]:
    """Every value of VALUES, once each at evenly spread positions, written into every f32/f16
    input of `case` (the UI's "special values" toggle: one run shows how a kernel treats them all,
    and the reference sees the same inputs). Returns the inputs touched, and notes them."""
    touched = []
    for name, arr in list(case.inputs.items()):
        if str(arr.dtype) not in ("float32", "float16") or arr.size == 0:
            continue
        values = [Injection(name, v).number(str(arr.dtype)) for v in VALUES]
        flat = arr.copy().reshape(-1)
        pos = np.linspace(0, flat.size - 1, min(len(values), flat.size)).astype(np.int64)
        with np.errstate(over="ignore"):
            flat[pos] = np.asarray(values[: pos.size], dtype=np.float64).astype(arr.dtype)
        case.inputs[name] = flat.reshape(arr.shape)
        touched.append(name)
    if touched:
        case.notes.append(f"special values written into {', '.join(touched)}")
    return touched
