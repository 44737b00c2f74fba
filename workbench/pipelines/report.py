"""A whole pipeline stepped for the command line: every step, the agree checks, the first
divergence, and the JSON the `step` command prints.

An agree check with a branch steps the other path (the main one, or the branch) to the end on
fresh buffers and compares the named buffers at the end; a `pair` check compares two buffers of
the stepped path. Both use the same compare as every other check, with the tolerance the
pipeline file gives and says why.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from workbench.closeness import Comparison, Origin, Tolerance, compare
from workbench.pipelines.model import Agree
from workbench.pipelines.plan import PipelinePlan, plan
from workbench.pipelines.snapshots import DEFAULT_CAP
from workbench.pipelines.stepper import Stepper
from workbench.session import Session


@dataclass(frozen=True)
class AgreeResult:
    agree: Agree
    what: str  # "dK: streaming vs main" or "out_w16 vs out"
    comparison: Comparison

    @property
    def ok(self) -> bool:
        return self.comparison.ok

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.agree.index,
            "branch": self.agree.branch,
            "what": self.what,
            "ok": self.ok,
            "compare": self.comparison.to_json(),
        }


@dataclass
class PipelineReport:
    stepper: Stepper
    agree: list[AgreeResult] = field(default_factory=list)
    agree_skipped: str = ""  # why the agree checks did not run (stopped before the end)

    @property
    def plan(self) -> PipelinePlan:
        return self.stepper.plan

    @property
    def ok(self) -> bool:
        """Every step's check and every agree check passed, and nothing left the float64 chain."""
        return (
            self.stepper.ok
            and all(a.ok for a in self.agree)
            and self.stepper.first_divergence is None
        )

    def to_json(self, adapter: str) -> dict[str, Any]:
        s = self.stepper
        div = s.first_divergence
        return {
            "pipeline": self.plan.name,
            "file": self.plan.pipeline.file,
            "branch": self.plan.branch,
            "adapter": adapter,
            "dims": self.plan.dims,
            "steps": [r.to_json() for r in s.records],
            "agree": [a.to_json() for a in self.agree],
            "agree_skipped": self.agree_skipped or None,
            "divergence_checked": s.divergence_checked,
            "first_divergence": div.to_json() if div else None,
            "memory": {
                "cap_bytes": s.cap_bytes,
                "kept_bytes": s.history.kept_bytes,
                "initial_bytes": sum(a.nbytes for a in s.initial.values()),
                "evicted_steps": sorted(s.history.evicted),
            },
            "ok": self.ok,
        }


def step_pipeline(
    session: Session,
    planned: PipelinePlan,
    to: int | None = None,
    divergence: bool = False,
    cap_bytes: int = DEFAULT_CAP,
) -> PipelineReport:
    """Step `planned` to step `to` (default: the end) and run the agree checks at the end."""
    stepper = Stepper(session, planned, cap_bytes=cap_bytes, divergence=divergence)
    stepper.run_to(len(planned.steps) if to is None else to)
    report = PipelineReport(stepper)
    if not stepper.at_end:
        if planned.pipeline.agree:
            report.agree_skipped = f"stopped at step {stepper.position}; agree checks need the end"
        return report
    report.agree = agree_checks(session, stepper, cap_bytes)
    return report


def agree_checks(session: Session, stepper: Stepper, cap_bytes: int) -> list[AgreeResult]:
    """The pipeline's agree checks against `stepper`, which has stepped to the end."""
    planned = stepper.plan
    finals: dict[str | None, dict[str, np.ndarray]] = {
        planned.branch: stepper.history.state(stepper.position)
    }

    def final(branch: str | None) -> dict[str, np.ndarray]:
        if branch not in finals:
            other = Stepper(
                session,
                plan(planned.pipeline, session, planned.dims, branch),
                cap_bytes=cap_bytes,
            )
            other.run_to_end()
            finals[branch] = other.history.state(other.position)
        return finals[branch]

    results = []
    for a in planned.pipeline.agree:
        if a.pair is not None:
            first, second = a.pair
            state = final(planned.branch)
            pairs = [(f"{second} vs {first}", state[second], state[first], first)]
        else:
            main, alt = final(None), final(a.branch)
            pairs = [(f"{b}: {a.branch} vs main", alt[b], main[b], b) for b in a.buffers]
        for what, got, ref, axes_of in pairs:
            c = compare(
                what,
                got,
                ref.astype(np.float64),
                axes=planned.buffers[axes_of].axes,
                tol=Tolerance(a.rtol, a.atol, a.why, Origin.USER, Origin.USER),
            )
            results.append(AgreeResult(a, what, c))
    return results
