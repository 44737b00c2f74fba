"""Stepping a planned pipeline on the GPU one dispatch at a time: next, back, run to a step, run to
the end, reset.

The buffers live on the device between steps. After a step only the buffers it may write
(read_write bindings, by reflection) are read back; those that changed are kept in the
copy-on-write history (`snapshots`), the rest are shared with the step before. Stepping back
uploads the earlier contents of exactly those buffers, so stepping forward again starts from the
same bytes. Each step records its GPU time, the buffers it changed (and how many elements), and
its verdict: its outputs against the spec's float64 reference computed from the inputs that step
actually received. With `divergence`, each step is also compared with the whole pipeline run in
float64 (`chain`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from workbench.closeness import Comparison, compare, tolerance_for
from workbench.errors import UserError
from workbench.pipelines.chain import Divergence, float64_chain
from workbench.pipelines.plan import PipelinePlan, PlannedStep, kernel_session
from workbench.pipelines.snapshots import DEFAULT_CAP, History
from workbench.session import Case, Session
from workbench.specs.base import KernelSpec
from workbench.verdicts import Verdict, decide_comparisons


@dataclass
class StepRecord:
    """What one step did."""

    index: int
    kernel: str
    ms: float
    timing: str  # "timestamp" or "wall"
    written: dict[str, int]  # buffer -> elements changed (0: written, unchanged)
    compare: dict[str, Comparison]  # the spec's outputs against its reference on this step's inputs
    kept_bytes: int  # bytes this step added to the history
    chain: dict[str, Comparison] = field(default_factory=dict)  # against the float64 chain

    @property
    def ok(self) -> bool | None:
        """True for a pass; None when there was no reference (ad hoc); False otherwise (a
        failure, or outputs with no element: an empty step)."""
        verdict = self.verdict
        return None if verdict is Verdict.RAN else verdict.ok

    @property
    def verdict(self) -> Verdict:
        """By the one rule (`workbench.verdicts`); a step with no comparison had no reference."""
        return decide_comparisons(self.compare, reference=bool(self.compare))

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "kernel": self.kernel,
            "ms": self.ms,
            "timing": self.timing,
            "written": self.written,
            "ok": self.ok,
            "verdict": str(self.verdict),
            "compare": {k: c.to_json() for k, c in self.compare.items()},
            "kept_bytes": self.kept_bytes,
        }


def changed_elements(before: np.ndarray, after: np.ndarray) -> int:
    """Elements whose bits differ (a NaN that stays the same NaN is unchanged)."""
    width = before.dtype.itemsize
    as_int = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[width]
    return int(np.count_nonzero(before.view(as_int) != after.view(as_int)))


class Stepper:
    """A planned pipeline on a session's GPU, steppable both ways."""

    def __init__(
        self,
        session: Session,
        plan: PipelinePlan,
        cap_bytes: int = DEFAULT_CAP,
        divergence: bool = False,
    ) -> None:
        self.session = session
        self.plan = plan
        self.initial = plan.initial
        self.history = History(self.initial, cap_bytes)
        self.records: list[StepRecord] = []
        self._chain = float64_chain(plan, self.initial) if divergence else None
        self._device = {name: session.allocate(b.nbytes) for name, b in plan.buffers.items()}
        self.reset()

    # -- where we are ----------------------------------------------------------------------
    @property
    def position(self) -> int:
        """Steps done: 0 at the start, len(steps) at the end."""
        return len(self.records)

    @property
    def steps(self) -> tuple[PlannedStep, ...]:
        return self.plan.steps

    @property
    def at_end(self) -> bool:
        return self.position == len(self.steps)

    @property
    def ok(self) -> bool:
        return all(r.ok is not False for r in self.records)

    # -- moving --------------------------------------------------------------------------------
    def reset(self) -> None:
        """Back to the start: every device buffer holds its starting contents again."""
        for name, arr in self.initial.items():
            self.session.upload(self._device[name], arr)
        self.records.clear()
        self.history.reset()

    def next(self) -> StepRecord:
        """Run the next step."""
        if self.at_end:
            raise UserError(f"{self.plan.name}: already at the end ({len(self.steps)} steps)")
        step = self.steps[self.position]
        before = self.history.state(self.position)
        given = dict(before)
        for name in step.zero:
            self.session.upload(self._device[name], None)
            given[name] = np.zeros_like(before[name])
        ms, method = self.session.dispatch_on(
            step.kernel,
            step.uniforms,
            {binding: self._device[buf] for binding, buf in step.bind.items()},
            step.grid,
        )
        raw = self.session.download({name: self._device[name] for name in step.writes})
        after, written, changed = dict(before), {}, {}
        for name in step.writes:
            b = self.plan.buffers[name]
            arr = np.frombuffer(raw[name], dtype=b.dtype).reshape(b.shape)
            written[name] = changed_elements(before[name], arr)
            if written[name]:
                after[name] = changed[name] = arr
        record = StepRecord(
            step.index,
            step.name,
            ms,
            method,
            written,
            self._check(step, given, after),
            sum(a.nbytes for a in changed.values()),
        )
        chained = self._chain[step.index - 1] if self._chain is not None else None
        if chained is not None and step.spec is not None:
            record.chain = self._against(step, step.spec, chained, after)
        self.records.append(record)
        self.history.record(step.index, changed)
        return record

    def back(self) -> None:
        """Undo the last step: its buffers get their earlier contents back on the device."""
        if not self.records:
            raise UserError(f"{self.plan.name}: already at the start")
        step = self.steps[self.position - 1]
        earlier = self.history.state(self.position - 1)
        for name in step.writes:
            self.session.upload(self._device[name], earlier[name])
        self.records.pop()
        self.history.truncate(self.position)

    def run_to(self, k: int) -> None:
        """Step forward or back until `k` steps are done."""
        if not 0 <= k <= len(self.steps):
            raise UserError(
                f"{self.plan.name}: step {k} does not exist; steps are 1 to {len(self.steps)} "
                "(0 is the start)"
            )
        while self.position > k:
            self.back()
        while self.position < k:
            self.next()

    def run_to_end(self) -> None:
        self.run_to(len(self.steps))

    # -- looking -------------------------------------------------------------------------------
    def contents(self, buffer: str, step: int | None = None) -> np.ndarray:
        """A buffer's contents after `step` (default: now); 0 is the start."""
        if buffer not in self.plan.buffers:
            raise UserError(
                f"{self.plan.name} has no buffer {buffer!r}; buffers: {', '.join(self.plan.buffers)}"
            )
        return self.history.state(self.position if step is None else step)[buffer]

    def on_device(self, buffer: str) -> np.ndarray:
        """A buffer's contents read back from the device now: what the next step will see."""
        b = self.plan.buffers[buffer]
        raw = self.session.download({buffer: self._device[buffer]})[buffer]
        return np.frombuffer(raw, dtype=b.dtype).reshape(b.shape)

    def changed_at(self, step: int) -> dict[str, int]:
        """Buffers step `step` wrote, with the count of elements it changed."""
        return self.records[step - 1].written if 0 < step <= self.position else {}

    def diff(self, buffer: str, a: int, b: int) -> Comparison:
        """`buffer` after step `b` against after step `a`, compared as the Diff tab does."""
        old, new = self.contents(buffer, a), self.contents(buffer, b)
        axes = self.plan.buffers[buffer].axes
        return compare(f"{buffer} step {b} vs {a}", new, old.astype(np.float64), axes=axes)

    def case(self, index: int) -> Case:
        """Step `index` as a case of its own, for the kernel view: its kernel, dims, uniforms and
        grid, with what the step was given (its buffers before it ran) as the inputs."""
        last = min(self.position + 1, len(self.steps))
        if not 1 <= index <= last:
            raise UserError(
                f"{self.plan.name}: step {index} cannot be opened yet; steps 1 to {last} can "
                "(a step opens with the buffers it is given, so the steps before it must have run)"
            )
        step = self.steps[index - 1]
        given = self.history.state(index - 1)
        session = kernel_session(self.plan.pipeline, self.session)
        adhoc = step.spec is None
        args: dict[str, Any] = {"dims": step.dims, "adhoc": adhoc}
        if adhoc:
            ep = step.kernel.entry_point
            assert ep is not None  # a planned step has one
            args["sizes"] = {
                b.name: given[step.bind[b.name]].nbytes // b.element_stride
                for b in ep.bindings
                if b.space != "uniform" and b.runtime_sized
            }
            args["dims"] = {"n": min(args["sizes"].values(), default=1)}
            args["grid"] = step.grid
        shape = session.case(step.kernel, **args)
        if shape.grid != step.grid:  # the step gives its own grid
            args["grid"] = step.grid
        inputs = {}
        for p in shape.bindings:
            if p.role not in ("input", "inout", "output") or not isinstance(p.dtype, str):
                continue
            if adhoc:
                raw = given[step.bind[p.binding.name]].reshape(-1).view(np.uint8)
                inputs[p.name] = raw[: p.nbytes].view(p.dtype).reshape(p.shape)
            elif p.role != "output":
                view = step.views[p.name]
                inputs[p.name] = view.of(given[view.buffer])
        case = session.case(step.kernel, inputs=inputs, **args)
        for p in case.bindings:
            value = step.uniforms.get(p.binding.name)
            if p.role == "uniform" and value is not None and value != case.uniforms.get(p.name):
                case.uniforms[p.name] = value
                if not adhoc:
                    case.notes.append(
                        f"uniform {p.name} as step {index} sets it, not as the spec does; the "
                        "reference does not see it"
                    )
        case.notes.append(
            f"step {index} of pipeline {self.plan.name}: its inputs are what the step was given"
        )
        return case

    @property
    def cap_bytes(self) -> int:
        return self.history.cap_bytes

    def set_cap(self, cap_bytes: int) -> list[int]:
        """A new memory cap; returns the steps it evicted."""
        return self.history.set_cap(cap_bytes)

    @property
    def first_divergence(self) -> Divergence | None:
        """The first step run so far whose outputs leave the float64 chain (needs divergence)."""
        for r in self.records:
            for key, c in r.chain.items():
                if not c.ok:
                    view = self.steps[r.index - 1].views[key]
                    return Divergence(r.index, r.kernel, view.buffer, key, c)
        return None

    @property
    def divergence_checked(self) -> bool:
        return self._chain is not None

    # -- checks --------------------------------------------------------------------------------
    def _check(
        self, step: PlannedStep, given: dict[str, np.ndarray], after: dict[str, np.ndarray]
    ) -> dict[str, Comparison]:
        """The step's outputs against its spec's reference on exactly what it was given."""
        if step.spec is None:
            return {}
        inputs = {key: view.of(given[view.buffer]).copy() for key, view in step.views.items()}
        ref = step.spec.reference(step.dims, inputs)
        return self._against(step, step.spec, ref, after)

    def _against(
        self,
        step: PlannedStep,
        spec: KernelSpec,
        ref: dict[str, np.ndarray],
        after: dict[str, np.ndarray],
    ) -> dict[str, Comparison]:
        out = {}
        for key in spec.outputs:
            if key not in ref:
                continue
            view = step.views[key]
            raw = view.of(after[view.buffer])
            got = spec.observed(step.dims, key, raw)  # a packed output: its values
            tol = tolerance_for(spec, key, step.dims, got.dtype)
            axes = view.axes if got is raw else ()
            out[key] = compare(key, got, ref[key], axes=axes, tol=tol)
        return out
