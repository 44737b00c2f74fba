"""The first step of a stepped pipeline that made a NaN or infinity from finite inputs, and the
invocation and line inside it.

A step "made" one when a buffer it writes holds more non-finite elements after it than before,
while every buffer it was given was finite. That step is then planned as a case of its own
kernel on exactly what it was given (its dims, grid and the buffers' contents before it) and
searched by `workgroups.debug.first_nonfinite`: the first invocation (smallest linear id) to
make a non-finite value from finite operands, the statement and its operands.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from workbench.pipelines.stepper import Stepper
from workbench.session import Case
from workbench.workgroups.debug import NonFinite, first_nonfinite


@dataclass(frozen=True)
class StepNonFinite:
    """The step, the non-finite elements it added to each buffer, and what the search inside
    it found (None: no invocation made one there, e.g. the instrumented run computed otherwise)."""

    step: int
    kernel: str
    gained: dict[str, int]
    found: NonFinite | None

    def to_json(self) -> dict[str, Any]:
        return {
            "step": self.step,
            "kernel": self.kernel,
            "gained": self.gained,
            "first_nonfinite": self.found.to_json() if self.found else None,
        }


def _nonfinite(a: np.ndarray) -> int:
    return int(np.count_nonzero(~np.isfinite(a))) if a.dtype.kind == "f" else 0


def first_nonfinite_step(stepper: Stepper) -> StepNonFinite | None:
    """Over the steps run so far, the first that made a non-finite value from finite inputs;
    None when none did."""
    for record in stepper.records:
        step = stepper.steps[record.index - 1]
        before = {b: stepper.contents(b, record.index - 1) for b in set(step.bind.values())}
        if any(_nonfinite(a) for b, a in before.items() if b not in step.zero):
            continue
        gained = {
            b: n
            for b in step.writes
            if (n := _nonfinite(stepper.contents(b, record.index)) - _nonfinite(before[b])) > 0
        }
        if gained:
            case = step_case(stepper, record.index)
            found = first_nonfinite(stepper.session, case)
            return StepNonFinite(record.index, step.name, gained, found[0] if found else None)
    return None


def step_case(stepper: Stepper, index: int) -> Case:
    """Step `index` (1-based) as a case of its kernel on what it was given: the buffers before
    it (zeroed where the spec zero-fills them), its dims and grid."""
    step = stepper.steps[index - 1]
    state = stepper.history.state(index - 1)
    inputs: dict[str, np.ndarray] = {}
    for binding, buffer in step.bind.items():
        array = state[buffer]
        if buffer in step.zero:
            array = np.zeros_like(array)
        view = step.views.get(binding)
        inputs[binding] = view.of(array).copy() if view is not None else array.copy()
    if step.spec is not None:
        return stepper.session.case(step.kernel, dims=step.dims, inputs=inputs, grid=step.grid)
    sizes = {b: int(a.size) for b, a in inputs.items()}
    return stepper.session.case(step.kernel, inputs=inputs, sizes=sizes, grid=step.grid)
