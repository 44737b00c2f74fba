"""A case run on a chosen set of workgroups: the guarded copy of its kernel, dispatched by Session.

A `Selection` picks the workgroups whose linear id is in `[lo, hi)` and has `(id & mask) == want`;
every other workgroup returns at the guard before touching memory. The buffers a kernel may write
(read_write storage) can be given per run, so a caller can keep them between runs (stepping) or fill
them with a sentinel (footprints).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from workbench.session import BindingPlan, Case, Session
from workbench.wgsl.instrument import GUARD_NAME, InstrumentedKernel, instrument


@dataclass(frozen=True)
class Selection:
    """Workgroups with linear id in [lo, hi) and (id & mask) == want."""

    lo: int
    hi: int
    mask: int = 0
    want: int = 0

    def words(self) -> list[int]:
        return [self.lo, self.hi, self.mask, self.want]


def writable(case: Case) -> list[BindingPlan]:
    """The bindings a kernel may write: read_write storage."""
    return [
        p
        for p in case.bindings
        if p.binding.space == "storage" and p.binding.access == "read_write"
    ]


def initial_buffers(case: Case) -> dict[str, np.ndarray]:
    """What each writable binding holds before a dispatch: its input, or zeros."""
    return {
        p.name: case.inputs[p.name] if p.name in case.inputs else np.zeros(p.shape, p.dtype)
        for p in writable(case)
    }


def linear_to_xyz(index: int, grid: tuple[int, int, int]) -> tuple[int, int, int]:
    """The workgroup id (x, y, z) of a linear workgroup id in `grid`."""
    gx, gy, _ = grid
    return index % gx, (index // gx) % gy, index // (gx * gy)


def with_instrumentation(
    case: Case,
    kernel: InstrumentedKernel,
    uniforms: Mapping[str, Any],
    buffers: Mapping[str, tuple[np.ndarray, str]],
) -> Case:
    """`case` on `kernel`, with values for its added uniforms and (array, source) per added buffer;
    `buffers` may also replace what an existing binding holds."""
    added = {b.name: b for b in kernel.runnable_entry_point().bindings}
    # Every binding the kernel may write is read back, even one its spec calls an input.
    plans = [
        replace(p, role="inout") if p in writable(case) and p.role == "input" else p
        for p in case.bindings
    ]
    inputs = dict(case.inputs)
    for name, _group, _binding in kernel.bindings_added:
        b = added[name]
        if b.space == "uniform":
            size = b.type.size(True)
            plans.append(BindingPlan(b, name, "uniform", (), (), "", size, "workbench"))
        else:
            arr, source = buffers[name]
            plans.append(
                BindingPlan(b, name, "inout", arr.shape, (), str(arr.dtype), arr.nbytes, source)
            )
    for name, (arr, _source) in buffers.items():
        inputs[name] = arr
    return replace(
        case,
        kernel=kernel,
        bindings=plans,
        inputs=inputs,
        uniforms={**case.uniforms, **uniforms},
        notes=list(case.notes),
    )


class GuardedRunner:
    """Runs `case` on selections of its workgroups; counts the dispatches it made."""

    def __init__(self, session: Session, case: Case) -> None:
        self.session = session
        self.case = case
        self.kernel = instrument(case.kernel, guard=True)
        self.total = math.prod(case.grid)
        self.dispatches = 0

    def source(self) -> str:
        """The instrumented module as compiled (viewable beside the user's source)."""
        return self.kernel.assemble(self.session.adapter.features)[0]

    def kernel_line(self) -> int:
        """The line of `source` where the kernel's own text starts (after the preambles)."""
        _, smap = self.kernel.assemble(self.session.adapter.features)
        return smap.module_line(self.kernel.file, self.kernel.line) or 1

    def run(
        self, selection: Selection, buffers: Mapping[str, np.ndarray] | None = None
    ) -> dict[str, np.ndarray]:
        """Dispatch the selected workgroups over `buffers` (default: the case's own); returns every
        writable binding afterwards."""
        given = {name: (arr, "given") for name, arr in (buffers or {}).items()}
        case = with_instrumentation(self.case, self.kernel, {GUARD_NAME: selection.words()}, given)
        run = self.session.run(case, reference=False, evidence=False)
        self.dispatches += 1
        return {p.name: run.outputs[p.name] for p in writable(self.case)}
