"""Snapshot tests of the Steps screen at 120x36 (snapshot mode masks timings; seeds are fixed):
the attention pipeline stepped to the middle, and a buffer diffed between two steps. Regenerate
with `pytest tests/ui/test_steps_snapshots.py --snapshot-update` and look at the SVGs first."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from textual.pilot import Pilot

from workbench.app import WorkbenchApp

from .conftest import SIZE, press_settled
from .test_steps import open_steps


def _app() -> WorkbenchApp:
    return WorkbenchApp(snapshot=True, watch=False)


def _attention(*keys: str) -> Callable[[Pilot], Awaitable[None]]:
    async def before(pilot: Pilot) -> None:
        await open_steps(pilot)
        await press_settled(pilot, *keys)

    return before


def test_steps_list_mid_way(snap_compare) -> None:
    """Three of seven steps done: the current one marked, verdicts, what each changed, and the
    buffers after step 3 with O and LSE marked as changed there."""
    assert snap_compare(_app(), terminal_size=SIZE, run_before=_attention("n", "n", "n"))


def test_steps_buffer_diff_between_two_steps(snap_compare) -> None:
    """Q after rope_q (step 1) against the start: the diff's figures and worst elements by named
    index, and the changed elements marked in the array view."""
    assert snap_compare(
        _app(), terminal_size=SIZE, run_before=_attention("n", "n", "up", "up", "m", "down", "v")
    )
