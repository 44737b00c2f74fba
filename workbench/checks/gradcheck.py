"""The gradient check: a backward kernel's outputs against central differences of its forward.

For a backward kernel whose spec declares its `gradient` (a `GradLink`) the loss is
`L = sum_k <upstream_k, forward_k(arrays)>`, so each gradient output g must equal dL/dw for the
array w it differentiates. The kernel is run once (the analytic gradient); the numeric one comes
from central differences `(L(w + h e) - L(w - h e)) / (2h)`:

- of the float64 reference forward, with h = 1e-6 max(1, |w_i|). A gradient of at most 256
  elements is checked at every entry (the full Jacobian row of L); a larger one at 32 sampled
  entries (always the first and last) plus 8 random unit directions u, comparing
  (L(w + h u) - L(w - h u)) / (2h) with <g, u> (gradcheck's fast mode);
- of the GPU forward kernel where one exists (f32), at 8 of those entries, with the step
  h = 2^-7 max(1, |w_i|) (about cbrt of f32's epsilon, where truncation and rounding balance).
  The step actually taken is the difference of the two f32 inputs.

Allowed error, per sample: the backward output's tolerance (the spec's, or the user's rtol/atol)
at the analytic value, plus what the numeric side cannot resolve: float64 rounding of the
changed forward outputs (2^-48 of their upstream-weighted magnitude, over the step) and, for the
GPU forward, that forward's own tolerance on every output the step changed (over the step) and
twice the truncation error of the f32 step, measured with the float64 forward at the same
points. For a direction the element tolerances add up along |u|. A case over the scenario budget
is checked at the link's small dims (`grad_dims`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from workbench.checks.result import CheckResult, Say, callbacks, skipped
from workbench.checks.sizing import SCENARIOS, dims_text, sized
from workbench.closeness import Override, name_index, tolerance_for
from workbench.errors import UserError
from workbench.session import Case, Session, shipped_corpus
from workbench.specs.base import GradLink
from workbench.specs.registry import spec_for
from workbench.units import fmt_err, fmt_val
from workbench.wgsl.corpus import Kernel

EPS64 = 1e-6
EPS32 = 2.0**-7
FULL_MAX = 256
SAMPLES = 32
DIRECTIONS = 8
GPU_SAMPLES = 8
# Float64 rounding allowance, relative to the upstream-weighted magnitude of the changed outputs.
ROUNDING64 = 2.0**-48
COLUMNS = ("where", "analytic", "numeric", "|Δ|", "allowed", "verdict")
ROWS_SHOWN = 10


@dataclass(frozen=True)
class Sample:
    """One comparison of analytic and numeric: an entry of the gradient or a direction."""

    where: str
    analytic: float
    numeric: float
    allowed: float

    @property
    def abs_err(self) -> float:
        if not (math.isfinite(self.analytic) and math.isfinite(self.numeric)):
            return math.inf
        return abs(self.analytic - self.numeric)

    @property
    def rel_err(self) -> float:
        err = self.abs_err
        if self.numeric == 0:
            return 0.0 if err == 0 else math.inf
        return err / abs(self.numeric)

    @property
    def ok(self) -> bool:
        return self.abs_err <= self.allowed

    def to_json(self) -> dict[str, Any]:
        return {
            "where": self.where,
            "analytic": self.analytic,
            "numeric": self.numeric,
            "abs_err": self.abs_err,
            "allowed": self.allowed,
            "ok": self.ok,
        }


class _Problem:
    """Everything both numeric sources share for one case."""

    def __init__(self, link: GradLink, case: Case, arrays: dict[str, np.ndarray]) -> None:
        self.link = link
        self.case = case
        self.dims = case.dims
        self.arrays = arrays
        self.up = {k: np.asarray(arrays[b], dtype=np.float64) for k, b in link.upstream.items()}

    def delta_loss(self, var: str, plus: np.ndarray, minus: np.ndarray) -> tuple[float, float]:
        """L(plus) - L(minus) through the float64 forward, and the upstream-weighted magnitude
        of the outputs that changed (for the rounding allowance)."""
        with np.errstate(all="ignore"):
            fp = self.link.forward_ref(self.dims, {**self.arrays, var: plus})
            fm = self.link.forward_ref(self.dims, {**self.arrays, var: minus})
            return self.delta_of(fp, fm)

    def delta_of(
        self, fp: Mapping[str, np.ndarray], fm: Mapping[str, np.ndarray]
    ) -> tuple[float, float]:
        """<upstream, fp - fm> over the outputs that changed, and their weighted magnitude."""
        delta = magnitude = 0.0
        for k, up in self.up.items():
            a = np.asarray(fp[k], dtype=np.float64).reshape(up.shape)
            b = np.asarray(fm[k], dtype=np.float64).reshape(up.shape)
            changed = a != b
            delta += float(np.sum(up[changed] * (a[changed] - b[changed])))
            magnitude += float(
                np.sum(np.abs(up[changed]) * (np.abs(a[changed]) + np.abs(b[changed])))
            )
        return delta, magnitude


def grad_results(
    session: Session,
    case: Case,
    override: Override | None = None,
    full: bool = False,
    say: Say | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> list[CheckResult]:
    """One result per gradient output and numeric source (float64 reference, GPU forward)."""
    say, stop = callbacks(say, cancelled)
    spec = case.spec
    if spec is not None and spec.gradient_problem:
        return [skipped("grad", case.name, spec.gradient_problem)]
    link = spec.gradient if spec is not None else None
    if link is None:
        return [skipped("grad", case.name, "not a backward kernel with a gradient link")]
    gcase, note = sized(session, case, SCENARIOS, link.grad_dims, full)
    arrays = dict(gcase.inputs)
    if link.primals:
        arrays.update(
            {k: v for k, v in link.primals(gcase.dims, gcase.seed).items() if k not in arrays}
        )
    if link.saved:
        saved = {k: _as_plan(gcase, k, v) for k, v in link.saved(gcase.dims, arrays).items()}
        arrays.update(saved)
        gcase = replace(gcase, inputs={**gcase.inputs, **saved})
    say("grad: backward kernel", 0.05)
    analytic_run = session.run(gcase, reference=False, evidence=False)
    problem = _Problem(link, gcase, arrays)
    forward = _forward_kernel(session, link)

    results = []
    n_out = len(link.wrt)
    for k, (g, var) in enumerate(link.wrt.items()):
        if stop():
            break
        say(f"grad: {g} by float64 differences", 0.1 + 0.9 * k / n_out)
        w = np.asarray(arrays[var])
        target = _Target(
            g,
            var,
            np.asarray(analytic_run.outputs[g], dtype=np.float64).reshape(w.shape),
            gcase.plan(g).axes,
            _tolerance(gcase, g, override),
            gcase.dims,
            note,
        )
        rng = np.random.default_rng([gcase.seed, 104729, k])
        entries = _entries(w.size, rng)
        samples, num64 = _reference_samples(problem, target, w, entries, rng)
        results.append(
            _result(target, g, "float64 reference forward", EPS64, samples, entries, w.size)
        )
        if forward is None:
            continue
        if isinstance(forward, str):
            results.append(skipped("grad", f"{g}/gpu", forward))
            continue
        if stop():
            break
        say(f"grad: {g} by GPU forward {forward.name}", 0.1 + 0.9 * (k + 0.5) / n_out)
        picked = _gpu_entries(entries, rng)
        samples = _gpu_samples(session, problem, forward, target, w, picked, num64)
        source = f"GPU forward {forward.name} (f32)"
        results.append(_result(target, f"{g}/gpu", source, EPS32, samples, picked, w.size))
    return results


@dataclass(frozen=True)
class _Target:
    """One gradient output under check: the kernel's values and how to judge them."""

    output: str
    var: str  # the array it differentiates
    analytic: np.ndarray  # float64, shaped like the array
    axes: tuple[str, ...]
    tol: tuple[float, float]  # (rtol, atol) for the analytic values
    dims: Mapping[str, int]
    note: str | None  # set when the check runs at small dims


def _as_plan(case: Case, name: str, value: np.ndarray) -> np.ndarray:
    plan = case.plan(name)
    return np.ascontiguousarray(np.asarray(value).reshape(plan.shape).astype(plan.dtype))


def _tolerance(case: Case, name: str, override: Override | None) -> tuple[float, float]:
    tol = tolerance_for(case.spec, name, case.dims, case.plan(name).dtype, override)
    return tol.rtol, tol.atol


def _entries(n: int, rng: np.random.Generator) -> list[int]:
    """Every flat index of a small gradient; else a seeded sample plus the first and last."""
    if n <= FULL_MAX:
        return list(range(n))
    picked = rng.choice(np.arange(1, n - 1), size=SAMPLES - 2, replace=False)
    return [int(i) for i in picked] + [0, n - 1]


def _gpu_entries(entries: list[int], rng: np.random.Generator) -> list[int]:
    """A seeded subset of the float64 entries for the (slower) GPU forward."""
    if len(entries) <= GPU_SAMPLES:
        return list(entries)
    return [int(i) for i in rng.choice(entries, size=GPU_SAMPLES, replace=False)]


def _reference_samples(
    problem: _Problem,
    target: _Target,
    w: np.ndarray,
    entries: list[int],
    rng: np.random.Generator,
) -> tuple[list[Sample], dict[int, float]]:
    """Entries (and, for a big gradient, directions) against the float64 forward; also the
    numeric value at each entry, which the GPU source uses to measure its truncation error."""
    rtol, atol = target.tol
    analytic = target.analytic
    w64 = w.astype(np.float64)
    samples, numeric = [], {}
    for i in entries:
        h = EPS64 * max(1.0, abs(float(w64.flat[i])))
        plus, minus = w64.copy(), w64.copy()
        plus.flat[i] += h
        minus.flat[i] -= h
        step = float(plus.flat[i] - minus.flat[i])
        delta, magnitude = problem.delta_loss(target.var, plus, minus)
        num = delta / step
        numeric[i] = num
        ana = float(analytic.flat[i])
        allowed = atol + rtol * abs(ana) + ROUNDING64 * magnitude / step
        samples.append(Sample(_where(i, w.shape, target.axes), ana, num, allowed))
    if w.size > FULL_MAX:
        # Each element moves by about EPS64 times the array's scale.
        h = EPS64 * math.sqrt(w.size) * max(1.0, float(np.sqrt(np.mean(w64**2))))
        for d in range(DIRECTIONS):
            u = rng.standard_normal(w.shape)
            u /= np.linalg.norm(u)
            delta, magnitude = problem.delta_loss(target.var, w64 + h * u, w64 - h * u)
            with np.errstate(all="ignore"):
                ana = float(np.sum(analytic * u))
                allowed = float(np.sum(np.abs(u) * (atol + rtol * np.abs(analytic))))
            allowed += ROUNDING64 * magnitude / (2 * h)
            samples.append(Sample(f"direction {d + 1}", ana, delta / (2 * h), allowed))
    return samples, numeric


def _forward_kernel(session: Session, link: GradLink) -> Kernel | str | None:
    """The GPU forward kernel (the session's corpus first, else the shipped one), a reason it
    cannot run, or None when the link names none."""
    name = link.forward_kernel
    if name is None:
        return None
    kernel = next((k for k in session.corpus.kernels if k.name == name), None)
    if kernel is None:
        kernel = next((k for k in shipped_corpus().kernels if k.name == name), None)
    if kernel is None:
        return f"the forward kernel {name} is in neither this corpus nor the shipped one"
    missing = session.missing_features(kernel)
    if missing:
        return f"the forward kernel {name} needs {', '.join(missing)}, which {session.adapter.label} lacks"
    return kernel


def _gpu_samples(
    session: Session,
    problem: _Problem,
    forward: Kernel,
    target: _Target,
    w: np.ndarray,
    entries: list[int],
    num64: Mapping[int, float],
) -> list[Sample]:
    """Entries against central differences of the GPU forward kernel, f32 step."""
    link = problem.link
    fspec = spec_for(forward.name)
    if fspec is None:
        raise UserError(f"gradient link: the forward kernel {forward.name} has no spec")
    fdims = {d.name: problem.dims[d.name] for d in fspec.dims if d.name in problem.dims}
    base = session.case(forward, dims=fdims, seed=problem.case.seed)
    source = {b: link.forward_inputs.get(b, b) for b in base.inputs}
    binding = next((b for b, a in source.items() if a == target.var), None)
    if binding is None:
        raise UserError(f"gradient link: {forward.name} has no input for {target.var}")
    inputs = {b: _as_plan(base, b, problem.arrays[a]) for b, a in source.items()}
    rtol, atol = target.tol
    samples = []
    for i in entries:
        w32 = inputs[binding]
        h = EPS32 * max(1.0, abs(float(w32.flat[i])))
        plus, minus = w32.copy(), w32.copy()
        plus.flat[i] = np.float32(float(w32.flat[i]) + h)
        minus.flat[i] = np.float32(float(w32.flat[i]) - h)
        step = float(plus.flat[i]) - float(minus.flat[i])
        fp = session.run(
            replace(base, inputs={**inputs, binding: plus}), reference=False, evidence=False
        ).outputs
        fm = session.run(
            replace(base, inputs={**inputs, binding: minus}), reference=False, evidence=False
        ).outputs
        delta, _ = problem.delta_of(fp, fm)
        # What the forward's own tolerance lets each changed output be off by, on both sides.
        noise = 0.0
        for k, up in problem.up.items():
            ftol = tolerance_for(fspec, k, base.dims, fp[k].dtype)
            f_rtol, f_atol = ftol.rtol, ftol.atol
            a = fp[k].astype(np.float64).reshape(up.shape)
            b = fm[k].astype(np.float64).reshape(up.shape)
            changed = a != b
            noise += float(
                np.sum(
                    np.abs(up[changed])
                    * (2 * f_atol + f_rtol * (np.abs(a[changed]) + np.abs(b[changed])))
                )
            )
        # The truncation error of this step, measured with the float64 forward at the same points.
        ref_delta, magnitude = problem.delta_loss(
            target.var,
            plus.astype(np.float64).reshape(w.shape),
            minus.astype(np.float64).reshape(w.shape),
        )
        truncation = abs(ref_delta / step - num64[i])
        ana = float(target.analytic.flat[i])
        allowed = atol + rtol * abs(ana) + (noise + ROUNDING64 * magnitude) / step + 2 * truncation
        samples.append(Sample(_where(i, w.shape, target.axes), ana, delta / step, allowed))
    return samples


def _where(flat: int, shape: tuple[int, ...], axes: tuple[str, ...]) -> str:
    return name_index(tuple(int(v) for v in np.unravel_index(flat, shape)), axes)


def _result(
    target: _Target,
    name: str,
    source: str,
    eps: float,
    samples: list[Sample],
    entries: list[int],
    size: int,
) -> CheckResult:
    ok = all(s.ok for s in samples)
    n_dir = sum(1 for s in samples if s.where.startswith("direction"))
    max_abs = max((s.abs_err for s in samples), default=0.0)
    max_rel = max((s.rel_err for s in samples), default=0.0)
    n_bad = sum(1 for s in samples if not s.ok)
    how = "every entry" if len(entries) == size else f"{len(entries)} of {size:,} entries"
    if n_dir:
        how += f" + {n_dir} directions"
    at = f" at {dims_text(target.dims)}" if target.note else ""
    summary = (
        f"{name}: analytic vs numeric max|Δ| {fmt_err(max_abs)} rel {fmt_err(max_rel)} "
        f"(d/d{target.var}, eps {eps:.1e}, {how}, {source}{at})"
    )
    ordered = sorted(samples, key=_badness, reverse=True)
    if n_bad:
        summary += f" {n_bad} outside; worst {ordered[0].where} FAIL"
    else:
        summary += " ok"
    rows = [
        (
            s.where,
            fmt_val(s.analytic),
            fmt_val(s.numeric),
            fmt_err(s.abs_err),
            fmt_err(s.allowed),
            "ok" if s.ok else "FAIL",
        )
        for s in ordered[:ROWS_SHOWN]
    ]
    if len(ordered) > ROWS_SHOWN:
        rows.append(
            (
                f"… {len(ordered) - ROWS_SHOWN} more samples ({n_bad} outside in all)",
                "",
                "",
                "",
                "",
                "",
            )
        )
    details = {
        "wrt": target.var,
        "source": source,
        "eps": eps,
        "entries": len(entries),
        "directions": n_dir,
        "size": size,
        "rtol": target.tol[0],
        "atol": target.tol[1],
        "max_abs": max_abs,
        "max_rel": max_rel,
        "n_bad": n_bad,
        "dims": dict(target.dims),
        "note": target.note,
        "samples": [s.to_json() for s in ordered],
    }
    return CheckResult("grad", name, ok, summary, details, COLUMNS, rows)


def _badness(s: Sample) -> float:
    err = s.abs_err
    if err == 0:
        return 0.0
    return math.inf if s.allowed == 0 else err / s.allowed
