"""Stepping inside one dispatch: run its workgroups a range at a time over buffers that persist.

Each step dispatches the next `count` workgroups (by linear id) over what the writable buffers held
after the previous step, so a scatter or an accumulation can be watched building up; `back` returns
to the state before the last step. States share the arrays a step did not change (copy on write);
the oldest are dropped past `keep` states, which bounds how far back one can go.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from workbench.errors import UserError
from workbench.session import Case, Session
from workbench.workgroups.guarded import (
    GuardedRunner,
    Selection,
    initial_buffers,
    linear_to_xyz,
)


@dataclass(frozen=True)
class WorkgroupStep:
    """The state after a step: workgroups [lo, hi) ran, over the state before it."""

    lo: int
    hi: int
    buffers: dict[str, np.ndarray]
    changed: dict[str, np.ndarray] = field(default_factory=dict)  # flat indices changed by it

    @property
    def done(self) -> int:
        return self.hi


class WorkgroupStepper:
    """One dispatch of `case`, run `count` workgroups per step."""

    def __init__(self, session: Session, case: Case, keep: int = 64) -> None:
        self.runner = GuardedRunner(session, case)
        self.case = case
        self.keep = max(keep, 1)
        self.states = [WorkgroupStep(0, 0, initial_buffers(case))]

    @property
    def total(self) -> int:
        return self.runner.total

    @property
    def current(self) -> WorkgroupStep:
        return self.states[-1]

    @property
    def finished(self) -> bool:
        return self.current.done >= self.total

    def workgroup_id(self, index: int) -> tuple[int, int, int]:
        return linear_to_xyz(index, self.case.grid)

    def source(self) -> str:
        return self.runner.source()

    def kernel_line(self) -> int:
        """The line of `source` where the kernel's own text starts."""
        return self.runner.kernel_line()

    def step(self, count: int = 1) -> WorkgroupStep:
        """Run the next `count` workgroups; at the end of the grid, nothing more runs."""
        if count < 1:
            raise UserError(f"a step runs at least one workgroup, got {count}")
        before = self.current
        if self.finished:
            return before
        lo, hi = before.done, min(before.done + count, self.total)
        after = self.runner.run(Selection(lo, hi), before.buffers)
        buffers, changed = {}, {}
        for name, new in after.items():
            old = before.buffers[name]
            diff = _changed(old, new)
            # Copy on write: an untouched buffer stays the previous state's array.
            buffers[name] = new if diff.size else old
            changed[name] = diff
        self.states.append(WorkgroupStep(lo, hi, buffers, changed))
        if len(self.states) > self.keep + 1:
            del self.states[0]
        return self.current

    def back(self) -> WorkgroupStep | None:
        """Undo the last step; None when there is none to undo (at the start, or dropped)."""
        if len(self.states) < 2:
            return None
        self.states.pop()
        return self.current

    def run_to_end(self, count: int = 1) -> WorkgroupStep:
        while not self.finished:
            self.step(count)
        return self.current


def _changed(old: np.ndarray, new: np.ndarray) -> np.ndarray:
    """Flat indices of the elements whose bits differ (NaNs compare by their bits)."""
    a = np.ascontiguousarray(old).reshape(-1).view(np.uint8)
    b = np.ascontiguousarray(new).reshape(-1).view(np.uint8)
    item = max(old.dtype.itemsize, 1)
    if a.size != b.size or item == 0:
        return np.arange(new.size)
    diff = (a != b).reshape(-1, item).any(axis=1)
    return np.flatnonzero(diff)
