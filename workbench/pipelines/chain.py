"""The whole pipeline in float64 through the specs' references, and where the GPU left it.

The chain starts from the same buffers as the GPU (widened to float64) and feeds each step's
reference the chain's own results, so it carries no f32 rounding at all. Comparing each step's GPU
outputs with the chain at that step (with the spec's tolerance) finds the first step whose outputs
leave it: the answer to "the result at the end is wrong; where did it start?". The chain stops at
the first step without a spec (nothing says what that step should compute) or with a packed output
(the reference gives its values; the words holding them are the kernel's to pack).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from workbench.closeness import Comparison
from workbench.pipelines.plan import PipelinePlan, PlannedStep
from workbench.specs.base import KernelSpec
from workbench.units import fmt_err, fmt_int, fmt_val


@dataclass(frozen=True)
class Divergence:
    """The first step whose outputs leave the float64 chain."""

    step: int
    kernel: str
    buffer: str
    output: str  # the spec's name for the binding
    comparison: Comparison

    @property
    def index(self) -> str:
        return self.comparison.worst[0].named if self.comparison.worst else ""

    @property
    def max_abs(self) -> float:
        return self.comparison.max_abs

    def to_json(self) -> dict[str, Any]:
        worst = self.comparison.worst[0] if self.comparison.worst else None
        return {
            "step": self.step,
            "kernel": self.kernel,
            "buffer": self.buffer,
            "index": self.index,
            "max_abs": self.max_abs,
            "worst": worst.to_json() if worst else None,
            "n_bad": self.comparison.n_bad,
        }

    def summary(self) -> str:
        c = self.comparison
        worst = c.worst[0] if c.worst else None
        where = (
            f" worst at {worst.named}: got {fmt_val(worst.got)}, float64 chain {fmt_val(worst.ref)}"
            if worst
            else ""
        )
        return (
            f"first divergence: step {self.step} {self.kernel}, {self.buffer}: "
            f"{fmt_int(c.n_bad)}/{fmt_int(c.n_total)} outside tolerance, max|Δ| {fmt_err(c.max_abs)};{where}"
        )


def widen(a: np.ndarray) -> np.ndarray:
    return a.astype(np.float64) if a.dtype.kind == "f" else a.copy()


def float64_chain(
    plan: PipelinePlan, initial: dict[str, np.ndarray]
) -> list[dict[str, np.ndarray] | None]:
    """For each step, its outputs (by the spec's name) in the float64 chain; None from the first
    step without a spec on."""
    state = {name: widen(a) for name, a in initial.items()}
    out: list[dict[str, np.ndarray] | None] = []
    for step in plan.steps:
        if step.spec is None or step.spec.packed_outputs or (out and out[-1] is None):
            out.append(None)
            continue
        out.append(advance(step, step.spec, state))
    return out


def advance(
    step: PlannedStep, spec: KernelSpec, state: dict[str, np.ndarray]
) -> dict[str, np.ndarray]:
    """Run one step's reference (`spec`, the step's own) on `state` (changed in place) and return
    its outputs."""
    for name in step.zero:
        state[name] = np.zeros_like(state[name])
    inputs = {key: view.of(state[view.buffer]).copy() for key, view in step.views.items()}
    ref = spec.reference(step.dims, inputs)
    outputs = {}
    for key in spec.outputs:
        if key not in ref:
            continue
        view = step.views[key]
        result = np.asarray(ref[key], dtype=np.float64).reshape(view.shape)
        target = widen(state[view.buffer])
        count = result.size
        target.reshape(-1)[:count] = result.reshape(-1)
        state[view.buffer] = target
        outputs[key] = result
    return outputs
