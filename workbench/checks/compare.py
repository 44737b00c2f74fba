"""Comparing an output with its reference: the figures a kernel developer trusts.

Closeness is `|got - ref| <= atol + rtol * |ref|` with torch.testing.assert_close's defaults (f32 rtol
1.3e-6 atol 1e-5, f16 rtol 1e-3 atol 1e-5) unless a spec or the user says otherwise. NaN and ±Inf are
compared by position: a NaN where the reference is finite is a mismatch, reported as such. ULP
distances are counted in the output's own precision against the reference rounded to it. Mismatches
are listed worst first (by how many tolerances away they are) with named indices such as `s=17 h=3`.
The max ULP figure covers elements where the relative term governs (|ref|·rtol ≥ atol).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

DEFAULT_TOLERANCE = {"float32": (1.3e-6, 1e-5), "float16": (1e-3, 1e-5), "float64": (1e-7, 1e-7)}
WORST_SHOWN = 10


@dataclass(frozen=True)
class Mismatch:
    """One element outside tolerance."""

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
    max_rel: float
    max_ulp: int | None
    n_bad: int
    n_total: int
    n_nonfinite_mismatch: int
    worst: tuple[Mismatch, ...] = field(default=())

    @property
    def ok(self) -> bool:
        return self.n_bad == 0

    @property
    def frac_bad(self) -> float:
        return self.n_bad / self.n_total if self.n_total else 0.0

    def summary(self) -> str:
        verdict = "ok" if self.ok else f"FAIL {self.n_bad:,}/{self.n_total:,} outside tolerance"
        ulp = f"  max {self.max_ulp:,} ULP" if self.max_ulp is not None else ""
        return (
            f"{self.name}: max|Δ| {self.max_abs:.3g}  max rel {self.max_rel:.3g}{ulp}  "
            f"(rtol {self.rtol:g}, atol {self.atol:g})  {verdict}"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "shape": list(self.shape),
            "dtype": self.dtype,
            "rtol": self.rtol,
            "atol": self.atol,
            "why": self.why,
            "max_abs": _json_float(self.max_abs),
            "max_rel": _json_float(self.max_rel),
            "max_ulp": self.max_ulp,
            "n_bad": self.n_bad,
            "n_total": self.n_total,
            "frac_bad": self.frac_bad,
            "n_nonfinite_mismatch": self.n_nonfinite_mismatch,
            "ok": self.ok,
            "worst": [m.to_json() for m in self.worst],
        }


def default_tolerance(dtype: str) -> tuple[float, float]:
    """(rtol, atol) as torch.testing.assert_close picks them; integers compare exactly."""
    return DEFAULT_TOLERANCE.get(str(np.dtype(dtype)), (0.0, 0.0))


def name_index(index: Sequence[int], axes: Sequence[str]) -> str:
    """`s=17 h=3 d=40` for a multi-index with named axes (`i=…` without names)."""
    if len(axes) != len(index):
        axes = [f"i{k}" for k in range(len(index))] if len(index) > 1 else ["i"]
    return " ".join(f"{a}={i}" for a, i in zip(axes, index, strict=True))


def compare(
    name: str,
    got: np.ndarray,
    ref: np.ndarray,
    axes: Sequence[str] = (),
    rtol: float | None = None,
    atol: float | None = None,
    why: str = "",
    worst: int = WORST_SHOWN,
) -> Comparison:
    """Compare `got` (the kernel's output, in its own dtype) with `ref` (float64, same shape)."""
    got = np.asarray(got)
    dtype = str(got.dtype)
    d_rtol, d_atol = default_tolerance(dtype)
    rtol = d_rtol if rtol is None else rtol
    atol = d_atol if atol is None else atol
    why = why or ("torch.testing.assert_close defaults" if (rtol, atol) == (d_rtol, d_atol) else "")
    ref = np.asarray(ref, dtype=np.float64).reshape(got.shape)
    g = got.astype(np.float64)

    g_fin, r_fin = np.isfinite(g), np.isfinite(ref)
    both = g_fin & r_fin
    # Non-finite values must sit where the reference has the same non-finite value.
    same_special = (~g_fin & ~r_fin) & ((np.isnan(g) & np.isnan(ref)) | (g == ref))
    nonfinite_bad = ~both & ~same_special

    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.where(both, np.abs(g - ref), 0.0)
    allowed = atol + rtol * np.abs(np.where(r_fin, ref, 0.0))
    value_bad = both & (diff > allowed)
    bad = value_bad | nonfinite_bad
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(
            both & (ref != 0), diff / np.abs(ref), np.where(both & (diff > 0), np.inf, 0.0)
        )

    ulps = _ulp_distance(got, ref) if got.dtype.kind == "f" else None
    # ULPs mean something only where the relative criterion governs; near zero every absolute
    # error is millions of ULP, and atol is the figure that counts there.
    rel_zone = both & (np.abs(ref) * rtol >= atol) if rtol > 0 else both
    max_ulp = None
    if ulps is not None:
        max_ulp = int(ulps[rel_zone].max()) if rel_zone.any() else 0

    n_bad = int(bad.sum())
    shown: list[Mismatch] = []
    if n_bad:
        flat_bad = np.flatnonzero(bad)
        with np.errstate(divide="ignore", invalid="ignore"):
            score = np.where(
                nonfinite_bad.ravel()[flat_bad], np.inf, (diff / allowed).ravel()[flat_bad]
            )
        order = flat_bad[np.argsort(-score, kind="stable")[:worst]]
        for flat in order:
            idx = tuple(int(v) for v in np.unravel_index(flat, got.shape))
            shown.append(
                Mismatch(
                    index=idx,
                    named=name_index(idx, axes),
                    got=float(g.ravel()[flat]),
                    ref=float(ref.ravel()[flat]),
                    abs_err=float(np.abs(g.ravel()[flat] - ref.ravel()[flat]))
                    if both.ravel()[flat]
                    else float("nan"),
                    rel_err=float(rel.ravel()[flat]) if both.ravel()[flat] else float("nan"),
                    ulp=int(ulps.ravel()[flat])
                    if ulps is not None and both.ravel()[flat]
                    else None,
                    kind="value" if both.ravel()[flat] else "non-finite",
                )
            )
    return Comparison(
        name=name,
        shape=tuple(got.shape),
        dtype=dtype,
        rtol=float(rtol),
        atol=float(atol),
        why=why,
        max_abs=float(diff.max()) if diff.size else 0.0,
        max_rel=float(rel.max()) if rel.size else 0.0,
        max_ulp=max_ulp,
        n_bad=n_bad,
        n_total=int(got.size),
        n_nonfinite_mismatch=int(nonfinite_bad.sum()),
        worst=tuple(shown),
    )


def _ulp_distance(got: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Units in the last place between got and ref rounded to got's precision (finite values)."""
    if got.dtype == np.float16:
        itype, sign = np.int16, np.int64(0x8000)
    elif got.dtype == np.float32:
        itype, sign = np.int32, np.int64(0x80000000)
    else:
        itype, sign = np.int64, None
    with np.errstate(over="ignore", invalid="ignore"):
        r = np.nan_to_num(ref, nan=0.0, posinf=0.0, neginf=0.0).astype(got.dtype)
    gg = np.nan_to_num(got, nan=0.0, posinf=0.0, neginf=0.0).astype(got.dtype)

    def ordered(a: np.ndarray) -> np.ndarray:
        bits = a.view(itype).astype(np.int64)
        if sign is None:
            return np.where(bits < 0, np.int64(-(2**62)) - bits, bits)
        return np.where(bits < 0, -(bits & (sign - 1)), bits)

    return np.abs(ordered(gg) - ordered(r))


def _json_float(x: float) -> float | str:
    if np.isnan(x):
        return "nan"
    if np.isinf(x):
        return "inf" if x > 0 else "-inf"
    return float(x)
