"""Every key of the main screen answers: why it cannot act now, in one line.

A key that cannot act is never silent and never just greyed out in the footer: the screen asks
`why_not` before acting and shows the answer as a notification. What the screen knows at that
moment is a `Standing`; the reasons name the key that would help (`run it first: r`).
"""

from __future__ import annotations

from dataclasses import dataclass

from workbench.viewmodel.jobs import Work
from workbench.viewmodel.keys import key

# Actions that run the current kernel on the GPU (or open a screen that does).
RUNS = frozenset(
    {
        "run",
        "check",
        "bench",
        "gradcheck",
        "footprint",
        "probe",
        "step_workgroups",
        "bench_variants",
        "debug",
    }
)


@dataclass(frozen=True)
class Standing:
    """What the main screen knows when a key is pressed."""

    opened: bool  # the GPU adapter is open (the session exists)
    kernel: str = ""  # the kernel shown ("" none)
    problem: str = ""  # why it cannot run (a compile error, a missing feature); "" it can
    busy: Work | None = None  # the GPU work in flight
    has_run: bool = False  # results of a run are shown
    stale: str = ""  # why those results are out of date ("" they are not)
    gradient: bool = False  # its spec links a backward kernel to a forward


def why_not(action: str, s: Standing) -> str | None:
    """Why `action` cannot act now, as one line; None when it can."""
    if action in RUNS or action in ("save_fixture", "describe", "edit"):
        if not s.opened:
            return "the GPU adapter is still opening; the kernel view appears when it is ready"
        if not s.kernel:
            return "no kernel is selected: pick one in the kernel list"
    if action in RUNS:
        if s.busy:
            return f"{s.busy.noun} of {s.kernel} in flight: {key('cancel')} cancels it"
        if s.problem:
            return f"{s.kernel} cannot run: {s.problem.splitlines()[0]}"
    if action == "gradcheck" and not s.gradient:
        return (
            f"{s.kernel} has no gradient to check: its spec links no backward kernel to a forward"
        )
    if action == "save_fixture":
        if s.busy:
            return f"wait for the {s.busy.noun} to finish ({key('cancel')} cancels it)"
        if not s.has_run:
            return f"nothing to save yet: a fixture records a run; press {key('run')} first"
        if s.stale:
            return f"the results shown are out of date ({s.stale}): press {key('run')} first"
    return None
