"""What "close" means, in one place: tolerances, where each value came from, and the comparison.

Closeness is `|got - ref| <= atol + rtol * |ref|` with NaN and ±Inf compared by position: a NaN
where the reference is finite is a mismatch, and so is +Inf where the reference has -Inf.

The figures of a comparison, each with the element it comes from (`Comparison.at_abs`, `at_rel`,
`at_ulp`, named like `s=17 h=3 d=40`):
- max |Δ| = |got - ref| over the elements finite on both sides;
- max rel = |Δ| / |ref| and max ULP, both over the elements where the relative term of the
  tolerance governs (rtol·|ref| ≥ atol, `rel_floor`): nearer zero atol decides, and a relative error
  or a ULP count there (|Δ| 1e-6 at ref 1e-6 is "rel 1", millions of ULP) says nothing about the
  verdict. With no such element both are None, shown as `—` with the reason;
- ULP: how many representable values of the output's dtype lie between got and the float64
  reference rounded to that dtype (`ulp_distance`; `ULP_MEANING`).

Tolerances come from one precision table (`DEFAULT_TOLERANCES`, torch.testing.assert_close's: f32
rtol 1.3e-6 atol 1e-5, f16 rtol 1e-3 atol 1e-5; integers exact), from a spec's per-output `Tol`
(with its reason), or from an `Override` the user or a fixture gives. `tolerance_for` resolves
them in that order, value by value, and the `Tolerance` it returns records who set each value,
so a lone user rtol is shown beside the atol that still applies. Every tolerance that enters from
outside goes through `validate_tolerance`: finite, >= 0, rtol at most `RTOL_CEILING` and atol at
most `ATOL_CEILING` unless forced — a NaN tolerance would pass everything, a negative one fail
everything, and an unbounded one pass anything.

The module sits below the engine: the session, the checks, the fixtures and the UI all use it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import numpy as np
import numpy.typing as npt

from workbench.errors import Advice, UserError
from workbench.specs.base import KernelSpec, Tol
from workbench.units import NONE, fmt_err, fmt_int, fmt_ulp, fmt_val

# dtype -> (rtol, atol), as torch.testing.assert_close picks them; other dtypes compare exactly.
DEFAULT_TOLERANCES: Mapping[str, tuple[float, float]] = {
    "float16": (1e-3, 1e-5),
    "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7),
}
# An rtol above 1 lets a result be off by more than its own size: refused unless forced.
RTOL_CEILING = 1.0
# atol is the error allowed where the reference is near zero (where rtol·|ref| vanishes), in the
# output's own units. At 1 it already passes a kernel that writes zeros wherever the reference is
# within ±1, which is every normalised activation, probability and most gradients the shipped
# kernels make (their largest atol is 0.035, RoPE at long positions); above it, an atol is no
# longer a tolerance but "anything passes" (`--atol 1e300 --rtol 0` passed a kernel 1.2e4 off).
# Outputs of large magnitude are held by rtol. Refused over it unless forced, like rtol; one
# check for the command line, workbench.toml and fixtures (which cannot force).
ATOL_CEILING = 1.0
WORST_SHOWN = 10
DEFAULTS_WHY = "torch.testing.assert_close defaults"

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


class ToleranceError(UserError):
    """A tolerance that is not a finite number >= 0, or over the ceiling without being forced."""


class Origin(StrEnum):
    """Who set a tolerance value."""

    SPEC = "spec"
    DEFAULT = "dtype default"
    USER = "user"
    FIXTURE = "fixture"


@dataclass(frozen=True)
class Tolerance:
    """The tolerance one output is judged by, and who set each of its two values."""

    rtol: float
    atol: float
    why: str = ""
    rtol_from: Origin = Origin.DEFAULT
    atol_from: Origin = Origin.DEFAULT

    def allowed(self, ref: npt.ArrayLike) -> FloatArray:
        """`atol + rtol * |ref|` per element (non-finite reference values count as 0)."""
        r = np.asarray(ref, dtype=np.float64)
        return self.atol + self.rtol * np.abs(np.where(np.isfinite(r), r, 0.0))

    def describe(self) -> str:
        """`rtol 1e-3 (user), atol 1e-05 (dtype default)`."""
        return f"rtol {self.rtol:g} ({self.rtol_from}), atol {self.atol:g} ({self.atol_from})"

    def scaled(self, rtol_by: float, atol_by: float, why: str) -> Tolerance:
        """The same tolerance with each value multiplied, for a derived comparison."""
        return Tolerance(
            self.rtol * rtol_by, self.atol * atol_by, why, self.rtol_from, self.atol_from
        )


@dataclass(frozen=True)
class Override:
    """Tolerance values given from outside a spec (either may be None: not given).

    Build one with `Override.checked`, which validates; `forced` lifts the rtol ceiling.
    """

    rtol: float | None = None
    atol: float | None = None
    forced: bool = False
    origin: Origin = Origin.USER

    @classmethod
    def checked(
        cls,
        rtol: float | None,
        atol: float | None,
        forced: bool = False,
        origin: Origin = Origin.USER,
        labels: tuple[str, str] = ("rtol", "atol"),
    ) -> Override:
        validate_tolerance(rtol, atol, forced=forced, labels=labels)
        return cls(rtol, atol, forced, origin)

    @property
    def empty(self) -> bool:
        return self.rtol is None and self.atol is None

    @property
    def lone_rtol(self) -> bool:
        """An rtol without an atol: each output keeps its own atol (spec or dtype default)."""
        return self.rtol is not None and self.atol is None

    def note(self) -> str | None:
        """What applies beside a value given alone, for the user to read."""
        if self.lone_rtol:
            return (
                f"rtol {self.rtol:g} given without atol: each output keeps its own atol "
                "(the spec's, else its dtype's default), shown beside each result"
            )
        if self.rtol is None and self.atol is not None:
            return (
                f"atol {self.atol:g} given without rtol: each output keeps its own rtol "
                "(the spec's, else its dtype's default), shown beside each result"
            )
        return None


def validate_tolerance(
    rtol: float | None,
    atol: float | None,
    *,
    forced: bool = False,
    labels: tuple[str, str] = ("rtol", "atol"),
) -> None:
    """Refuse (ToleranceError, one line) a value that is not finite, is < 0, an rtol over
    `RTOL_CEILING` or an atol over `ATOL_CEILING` unless `forced`. None means "not given" and
    passes."""
    for label, value in zip(labels, (rtol, atol), strict=True):
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ToleranceError(f"{label} must be a number, got {value!r}")
        if not math.isfinite(value) or value < 0:
            raise ToleranceError(f"{label} must be a finite number >= 0, got {value}")
    if rtol is not None and rtol > RTOL_CEILING and not forced:
        raise ToleranceError(
            f"{labels[0]} = {rtol:g} is over {RTOL_CEILING:g}: a result off by more than its own "
            "size would pass",
            advice=Advice.FORCE_TOLERANCE,
        )
    if atol is not None and atol > ATOL_CEILING and not forced:
        raise ToleranceError(
            f"{labels[1]} = {atol:g} is over {ATOL_CEILING:g}: a kernel writing zeros would pass "
            f"wherever the reference is within ±{atol:g} (hold large outputs with rtol)",
            advice=Advice.FORCE_TOLERANCE,
        )


def default_tolerance(dtype: str | np.dtype[Any]) -> tuple[float, float]:
    """(rtol, atol) from the precision table; dtypes outside it compare exactly."""
    return DEFAULT_TOLERANCES.get(str(np.dtype(dtype)), (0.0, 0.0))


def resolve_tolerance(
    dtype: str | np.dtype[Any], spec_tol: Tol | None = None, override: Override | None = None
) -> Tolerance:
    """Each value from the override if given, else the spec's, else the dtype's default."""
    d_rtol, d_atol = default_tolerance(dtype)
    rtol, rtol_from = (spec_tol.rtol, Origin.SPEC) if spec_tol else (d_rtol, Origin.DEFAULT)
    atol, atol_from = (spec_tol.atol, Origin.SPEC) if spec_tol else (d_atol, Origin.DEFAULT)
    why = spec_tol.why if spec_tol else DEFAULTS_WHY
    if override is not None and not override.empty:
        if override.rtol is not None:
            rtol, rtol_from = override.rtol, override.origin
        if override.atol is not None:
            atol, atol_from = override.atol, override.origin
        why = _override_why(override, why)
    return Tolerance(float(rtol), float(atol), why, rtol_from, atol_from)


def tolerance_for(
    spec: KernelSpec | None,
    output: str,
    dims: Mapping[str, int],
    dtype: str | np.dtype[Any],
    override: Override | None = None,
) -> Tolerance:
    """The tolerance of `output`: override, then the spec's (at these dims), then the default."""
    spec_tol = spec.tolerance(output, dims) if spec is not None else None
    return resolve_tolerance(dtype, spec_tol, override)


def _override_why(override: Override, underneath: str) -> str:
    given = "given on the command line" if override.origin is Origin.USER else "from the fixture"
    if override.rtol is not None and override.atol is not None:
        return given
    which = "rtol" if override.rtol is not None else "atol"
    other = "atol" if which == "rtol" else "rtol"
    return f"{which} {given}; {other}: {underneath or DEFAULTS_WHY}"


# -- element-wise maths ---------------------------------------------------------------------------


def same_nonfinite(got: npt.ArrayLike, ref: npt.ArrayLike) -> BoolArray:
    """Where both sides are non-finite and the same (NaN and NaN, +Inf and +Inf, -Inf and -Inf)."""
    g = np.asarray(got, dtype=np.float64)
    r = np.asarray(ref, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        same: BoolArray = (
            ~np.isfinite(g) & ~np.isfinite(r) & ((np.isnan(g) & np.isnan(r)) | (g == r))
        )
    return same


def bad_mask(got: npt.ArrayLike, ref: npt.ArrayLike, rtol: float, atol: float) -> BoolArray:
    """Elements outside `atol + rtol * |ref|`, and NaN/Inf not where the reference has them."""
    g = np.asarray(got, dtype=np.float64)
    r = np.asarray(ref, dtype=np.float64).reshape(g.shape)
    both = np.isfinite(g) & np.isfinite(r)
    with np.errstate(invalid="ignore", over="ignore"):
        value_bad = both & (np.abs(g - r) > atol + rtol * np.abs(np.where(both, r, 0.0)))
    bad: BoolArray = value_bad | (~both & ~same_nonfinite(g, r))
    return bad


def tolerance_ratio(got: npt.ArrayLike, ref: npt.ArrayLike, rtol: float, atol: float) -> FloatArray:
    """|got - ref| / (atol + rtol |ref|) per element: 1 and above fail; a NaN/Inf mismatch, or
    any difference where nothing is allowed, counts as inf."""
    g = np.asarray(got, dtype=np.float64)
    r = np.asarray(ref, dtype=np.float64).reshape(g.shape)
    both = np.isfinite(g) & np.isfinite(r)
    allowed = atol + rtol * np.abs(np.where(np.isfinite(r), r, 0.0))
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        diff = np.where(both, np.abs(g - r), 0.0)
        ratio = np.where(allowed > 0, diff / np.where(allowed > 0, allowed, 1.0), 0.0)
    ratio = np.where(both & (allowed == 0) & (diff > 0), np.inf, ratio)
    return np.where(~both & ~same_nonfinite(g, r), np.inf, ratio)


def ulp_distance(got: np.ndarray, ref: npt.ArrayLike) -> npt.NDArray[np.int64]:
    """Units in the last place between `got` and `ref` rounded to got's precision (finite values;
    non-finite ones count as 0 on both sides)."""
    itype: type[np.signedinteger[Any]]
    if got.dtype == np.float16:
        itype, sign = np.int16, np.int64(0x8000)
    elif got.dtype == np.float32:
        itype, sign = np.int32, np.int64(0x80000000)
    else:
        itype, sign = np.int64, None
    with np.errstate(over="ignore", invalid="ignore"):
        r = np.nan_to_num(np.asarray(ref), nan=0.0, posinf=0.0, neginf=0.0).astype(got.dtype)
    g = np.nan_to_num(got, nan=0.0, posinf=0.0, neginf=0.0).astype(got.dtype)

    def ordered(a: np.ndarray) -> npt.NDArray[np.int64]:
        bits = a.view(itype).astype(np.int64)
        if sign is None:
            return np.where(bits < 0, np.int64(-(2**62)) - bits, bits)
        return np.where(bits < 0, -(bits & (sign - 1)), bits)

    distance: npt.NDArray[np.int64] = np.abs(ordered(g) - ordered(r))
    return distance


ULP_MEANING = "{dtype} steps between the output and the reference rounded to {dtype}"


def rel_floor(rtol: float, atol: float) -> float:
    """The |ref| from which the relative term governs (rtol·|ref| ≥ atol): relative errors and
    ULPs are measured at and above it. 0 when both are 0 (exact), inf when only atol applies."""
    if rtol > 0:
        return atol / rtol
    return 0.0 if atol == 0 else math.inf


def named_index(index: Sequence[int], axes: Sequence[str]) -> list[tuple[str, int]]:
    """(axis, position) of each axis of a multi-index: the output's axis names, or `i` (one
    axis), `i0`, `i1`… where it has none."""
    if len(axes) != len(index):
        axes = [f"i{k}" for k in range(len(index))] if len(index) > 1 else ["i"]
    return [(a, int(i)) for a, i in zip(axes, index, strict=True)]


def name_index(index: Sequence[int], axes: Sequence[str]) -> str:
    """`s=17 h=3 d=40` for a multi-index with named axes (`i=…` without names)."""
    return " ".join(f"{a}={i}" for a, i in named_index(index, axes))


# -- one output against its reference -------------------------------------------------------------


@dataclass(frozen=True)
class Mismatch:
    """One element and its figures: a mismatch, or the element a maximum comes from."""

    index: tuple[int, ...]
    named: str
    got: float
    ref: float
    abs_err: float
    rel_err: float
    ulp: int | None
    kind: str = "value"  # "value", or "non-finite" when exactly one side is NaN/Inf

    def to_json(self) -> dict[str, Any]:
        return {
            "index": list(self.index),
            "named": self.named,
            "got": _json_float(self.got),
            "ref": _json_float(self.ref),
            "abs_err": _json_float(self.abs_err),
            "rel_err": _json_float(self.rel_err),
            "ulp": self.ulp,
            "kind": self.kind,
        }


@dataclass(frozen=True)
class Comparison:
    """Every figure of one output against its reference."""

    name: str
    shape: tuple[int, ...]
    dtype: str
    rtol: float
    atol: float
    why: str
    max_abs: float
    max_rel: float | None  # where rtol·|ref| ≥ atol; None when no element is there
    max_ulp: int | None  # the same elements; None also for an integer output
    n_bad: int
    n_total: int
    n_nonfinite_mismatch: int
    worst: tuple[Mismatch, ...] = field(default=())
    rtol_from: Origin = Origin.DEFAULT
    atol_from: Origin = Origin.DEFAULT
    # The element each maximum comes from (None when the maximum is 0 or there is no figure).
    at_abs: Mismatch | None = None
    at_rel: Mismatch | None = None
    at_ulp: Mismatch | None = None
    max_ratio: float = 0.0  # the largest |Δ| / (atol + rtol·|ref|): 1 and above fail

    @property
    def ok(self) -> bool:
        return self.n_bad == 0

    @property
    def frac_bad(self) -> float:
        return self.n_bad / self.n_total if self.n_total else 0.0

    @property
    def tolerance(self) -> Tolerance:
        return Tolerance(self.rtol, self.atol, self.why, self.rtol_from, self.atol_from)

    @property
    def rel_floor(self) -> float:
        return rel_floor(self.rtol, self.atol)

    @property
    def has_ulp(self) -> bool:
        return self.dtype.startswith("float")

    def ulp_meaning(self) -> str:
        """What a ULP of this output is: `float32 steps between the output and the reference…`."""
        return ULP_MEANING.format(dtype=self.dtype) if self.has_ulp else "none for integers"

    def about(self) -> str:
        """Where rel and ULP are measured and what a ULP is, in one line."""
        floor = self.rel_floor
        if math.isinf(floor):
            where = "rel and ULP not measured: rtol is 0, so atol decides every element"
        elif floor == 0:
            where = "rel and ULP over every element with a nonzero reference (exact comparison)"
        else:
            where = f"rel and ULP where rtol·|ref| ≥ atol (|ref| ≥ {floor:.3g}); atol decides below"
        return f"{where}; ULP: {self.ulp_meaning()}"

    def figures(self) -> str:
        """The error figures, each with the element it comes from, said once per element:
        `max|Δ| 1.8e+22, rel 1.5e-07, 2 ULP at i=5 (ref -1.2e+29)`; `—` for rel and ULP where no
        element is in their zone, with the reason."""
        items: list[tuple[str, Mismatch | None]] = [
            (f"max|Δ| {fmt_err(self.max_abs)}", self.at_abs)
        ]
        if self.max_rel is not None:
            items.append((f"rel {fmt_err(self.max_rel)}", self.at_rel))
        if self.max_ulp is not None:
            items.append((fmt_ulp(self.max_ulp), self.at_ulp))
        groups: dict[str, tuple[list[str], Mismatch | None]] = {}
        for text, at in items:
            groups.setdefault(at.named if at else text, ([], at))[0].append(text)
        parts = [
            ", ".join(texts) + (f" at {at.named} (ref {fmt_val(at.ref)})" if at else "")
            for texts, at in groups.values()
        ]
        if self.max_rel is None and self.has_ulp:
            parts.append(f"rel, ULP {NONE} (no element has rtol·|ref| ≥ atol)")
        return "; ".join(parts)

    def nonfinite_text(self) -> str:
        """`NaN/Inf positions differ: 101`: elements NaN or Inf on one side only, or unlike."""
        return f"NaN/Inf positions differ: {fmt_int(self.n_nonfinite_mismatch)}"

    def summary(self) -> str:
        if self.n_total == 0:
            return f"{self.name}: empty case: 0 elements, nothing compared"
        verdict = (
            "ok"
            if self.ok
            else f"FAIL {fmt_int(self.n_bad)}/{fmt_int(self.n_total)} outside tolerance"
        )
        if self.n_nonfinite_mismatch:
            verdict += f"; {self.nonfinite_text()}"
        tol = f"(rtol {self.rtol:g}, atol {self.atol:g})"
        if self.n_nonfinite_mismatch == self.n_total:
            # Every element is NaN/Inf on one side only: there is no difference to measure.
            return f"{self.name}: no element is finite on both sides  {tol}  {verdict}"
        return f"{self.name}: {self.figures()}  {tol}  {verdict}"

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "shape": list(self.shape),
            "dtype": self.dtype,
            "rtol": self.rtol,
            "atol": self.atol,
            "why": self.why,
            "rtol_from": str(self.rtol_from),
            "atol_from": str(self.atol_from),
            "max_abs": _json_float(self.max_abs),
            "max_rel": None if self.max_rel is None else _json_float(self.max_rel),
            "max_ulp": self.max_ulp,
            "max_abs_at": self.at_abs.to_json() if self.at_abs else None,
            "max_rel_at": self.at_rel.to_json() if self.at_rel else None,
            "max_ulp_at": self.at_ulp.to_json() if self.at_ulp else None,
            "max_ratio": _json_float(self.max_ratio),
            "rel_floor": _json_float(self.rel_floor),
            "ulp_meaning": self.ulp_meaning(),
            "n_bad": self.n_bad,
            "n_total": self.n_total,
            "frac_bad": self.frac_bad,
            "n_nonfinite_mismatch": self.n_nonfinite_mismatch,
            "ok": self.ok,
            "worst": [m.to_json() for m in self.worst],
        }


def compare(
    name: str,
    got: npt.ArrayLike,
    ref: npt.ArrayLike,
    axes: Sequence[str] = (),
    tol: Tolerance | None = None,
    worst: int = WORST_SHOWN,
) -> Comparison:
    """Compare `got` (the kernel's output, in its own dtype) with `ref` (float64, same size).

    Mismatches are listed worst first (by how many tolerances away they are) with named indices;
    max rel and max ULP cover the elements where the relative term governs (rtol·|ref| ≥ atol),
    and each maximum keeps the element it comes from.
    """
    got = np.asarray(got)
    if tol is None:
        tol = resolve_tolerance(got.dtype)
    rtol, atol = tol.rtol, tol.atol
    r = np.asarray(ref, dtype=np.float64).reshape(got.shape)
    g = got.astype(np.float64)

    both = np.isfinite(g) & np.isfinite(r)
    nonfinite_bad = ~both & ~same_nonfinite(g, r)
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.where(both, np.abs(g - r), 0.0)
    allowed = tol.allowed(r)
    bad = (both & (diff > allowed)) | nonfinite_bad
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(both & (r != 0), diff / np.abs(r), np.where(both & (diff > 0), np.inf, 0.0))

    ulps = ulp_distance(got, r) if got.dtype.kind == "f" else None
    # Relative errors and ULPs mean something only where the relative term governs; near zero a
    # tiny absolute error is "rel 1" or millions of ULP, and atol is the figure that counts there.
    with np.errstate(invalid="ignore", over="ignore"):
        rel_zone = both & (r != 0) & (np.abs(r) * rtol >= atol)

    def element(flat: int) -> Mismatch:
        idx = tuple(int(v) for v in np.unravel_index(flat, got.shape))
        finite = bool(both.ravel()[flat])
        return Mismatch(
            index=idx,
            named=name_index(idx, axes),
            got=float(g.ravel()[flat]),
            ref=float(r.ravel()[flat]),
            abs_err=float(diff.ravel()[flat]) if finite else math.nan,
            rel_err=float(rel.ravel()[flat]) if finite else math.nan,
            ulp=int(ulps.ravel()[flat]) if ulps is not None and finite else None,
            kind="value" if finite else "non-finite",
        )

    def argmax_in(values: np.ndarray, where: BoolArray) -> int | None:
        """The flat index of the largest value where `where` holds (None when nowhere)."""
        if not where.any():
            return None
        masked = np.where(where, values, -np.inf if values.dtype.kind == "f" else -1).ravel()
        return int(np.argmax(masked))

    at_abs = argmax_in(diff, both & (diff > 0))
    at_rel = argmax_in(rel, rel_zone)
    at_ulp = argmax_in(ulps, rel_zone) if ulps is not None else None

    ratio = tolerance_ratio(g, r, rtol, atol)
    n_bad = int(bad.sum())
    shown: list[Mismatch] = []
    if n_bad:
        flat_bad = np.flatnonzero(bad)
        with np.errstate(divide="ignore", invalid="ignore"):
            score = np.where(
                nonfinite_bad.ravel()[flat_bad], np.inf, (diff / allowed).ravel()[flat_bad]
            )
        shown = [element(int(f)) for f in flat_bad[np.argsort(-score, kind="stable")[:worst]]]
    return Comparison(
        name=name,
        shape=tuple(got.shape),
        dtype=str(got.dtype),
        rtol=float(rtol),
        atol=float(atol),
        why=tol.why,
        max_abs=float(diff.max()) if diff.size else 0.0,
        max_rel=float(rel.ravel()[at_rel]) if at_rel is not None else None,
        max_ulp=(int(ulps.ravel()[at_ulp]) if at_ulp is not None else None)
        if ulps is not None
        else None,
        n_bad=n_bad,
        n_total=int(got.size),
        n_nonfinite_mismatch=int(nonfinite_bad.sum()),
        worst=tuple(shown),
        rtol_from=tol.rtol_from,
        atol_from=tol.atol_from,
        at_abs=element(at_abs) if at_abs is not None else None,
        at_rel=element(at_rel) if at_rel is not None else None,
        at_ulp=element(at_ulp) if at_ulp is not None else None,
        max_ratio=float(ratio.max()) if ratio.size else 0.0,
    )


def _json_float(x: float) -> float | str:
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return float(x)
