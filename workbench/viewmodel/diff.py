"""The Diff tab's figures: |got - ref| over the tolerance per element, and the elements nearest
to (or furthest beyond) it with their named indices, |Δ|, relative error and ULP distance as
`workbench.closeness` defines them (rel and ULP only where the relative term governs)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from workbench import closeness
from workbench.closeness import name_index, named_index

if TYPE_CHECKING:
    from workbench.session import Run


@dataclass(frozen=True)
class Element:
    """One element of an output against its reference."""

    where: str  # named index: `s=17 h=3 d=40`
    got: float
    ref: float
    ratio: float  # |got - ref| / tolerance; inf for a non-finite mismatch
    rel: float | None = None  # |Δ| / |ref| where rtol·|ref| ≥ atol, else None
    ulp: int | None = None  # the same elements, in the output's dtype
    at: tuple[tuple[str, int], ...] = ()  # `where` by axis: (("s", 17), ("h", 3), ("d", 40))

    @property
    def abs_diff(self) -> float | None:
        finite = np.isfinite(self.got) and np.isfinite(self.ref)
        return abs(self.got - self.ref) if finite else None


def tolerance_ratio(run: Run, name: str) -> np.ndarray:
    """|got - ref| / (atol + rtol |ref|) per element of output `name`, at the tolerance its
    comparison used; a non-finite mismatch counts as inf (`closeness.tolerance_ratio`)."""
    c = run.compare[name]
    reference = run.reference or {}  # a run with comparisons has its reference
    return closeness.tolerance_ratio(run.observed(name), reference[name], c.rtol, c.atol)


def closest(run: Run, name: str, count: int, ratio: np.ndarray | None = None) -> list[Element]:
    """The `count` elements nearest to (or furthest beyond) tolerance, worst first."""
    ratio = (tolerance_ratio(run, name) if ratio is None else ratio).ravel()
    if ratio.size == 0:
        return []
    k = min(count, ratio.size)
    top = np.argpartition(-ratio, k - 1)[:k]
    top = top[np.argsort(-ratio[top], kind="stable")]
    observed = run.observed(name)  # a packed output: the values its words hold
    got = observed.ravel()
    ref = np.asarray((run.reference or {})[name], dtype=np.float64).ravel()
    axes = run.case.plan(name).axes if observed is run.outputs[name] else ()
    shape = observed.shape
    c = run.compare[name]
    floor = closeness.rel_floor(c.rtol, c.atol)
    out = []
    for flat in top:
        idx = tuple(int(v) for v in np.unravel_index(int(flat), shape))
        g, r = float(got[flat]), float(ref[flat])
        measured = bool(np.isfinite(g) and np.isfinite(r) and r != 0 and abs(r) >= floor)
        ulp = None
        if measured and got.dtype.kind == "f":
            ulp = int(closeness.ulp_distance(got[flat : flat + 1], ref[flat : flat + 1])[0])
        rel = abs(g - r) / abs(r) if measured else None
        at = tuple(named_index(idx, axes))
        out.append(Element(name_index(idx, axes), g, r, float(ratio[flat]), rel, ulp, at))
    return out
