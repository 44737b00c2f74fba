"""The Steps screen with a pilot on the real adapter: stepping with keys (next, back, run to the
highlighted step, end, reset), buffers changed at a step marked, a diff between two steps, and
keys that answer while a step runs."""

from __future__ import annotations

import numpy as np
from textual.pilot import Pilot
from textual.widgets import OptionList

from workbench.app import WorkbenchApp
from workbench.pipelines import shipped_names
from workbench.screens.steps import StepsScreen
from workbench.widgets.step_buffers import StepBuffers
from workbench.widgets.step_list import StepList

from .conftest import SIZE, press_settled, run_async, settle


async def open_steps(pilot: Pilot, pipeline: str = "attention") -> StepsScreen:
    """Wait for the first screen, press F4, pick `pipeline`, wait until its buffers are ready."""
    app: WorkbenchApp = pilot.app  # type: ignore[assignment]
    await settle(pilot)
    await press_settled(pilot, "f4")
    screen = app.screen
    assert isinstance(screen, StepsScreen)
    if screen.stepper is None or screen.stepper.plan.name != pipeline:
        pipelines = screen.query_one("#steps-pipelines", OptionList)
        pipelines.highlighted = shipped_names().index(pipeline)
        pipelines.action_select()
        await settle(pilot)
    screen.query_one(StepList).focus()
    await pilot.pause()
    return screen


@run_async
async def test_stepping_with_keys() -> None:
    app = WorkbenchApp(snapshot=True, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_steps(pilot)
        s = screen.stepper
        await press_settled(pilot, "n", "n", "n")
        assert s.position == 3
        assert [r.verdict for r in s.records] == ["pass", "pass", "pass"]
        table = screen.query_one(StepList)
        assert table.cursor_row == 3
        assert str(table.get_row_at(3)[0]) == "▶"
        buffers = screen.query_one(StepBuffers)
        marked = {
            str(buffers.get_row_at(i)[1])
            for i in range(buffers.row_count)
            if str(buffers.get_row_at(i)[0])
        }
        assert marked == {"O", "LSE"}
        await press_settled(pilot, "u")
        assert s.position == 2
        await press_settled(pilot, "l")
        assert s.at_end and all(r.ok for r in s.records)
        await press_settled(pilot, "up", "up", "t")
        assert s.position == len(s.steps) - 2
        await press_settled(pilot, "z")
        assert s.position == 0
        assert s.on_device("Q").tobytes() == s.initial["Q"].tobytes()


@run_async
async def test_diff_between_two_steps() -> None:
    app = WorkbenchApp(snapshot=True, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_steps(pilot)
        await press_settled(pilot, "n")  # rope_q rotates Q
        await press_settled(pilot, "up", "m", "down", "v")  # mark the start, versus step 1
        diff = str(screen.query_one("#steps-diff").render())
        assert "Q step 1 vs 0" in diff and "FAIL" in diff and "seq=" in diff
        want = screen.stepper.diff("Q", 0, 1)
        assert f"{want.n_bad:,}/{want.n_total:,}" in diff
        assert np.any(screen.stepper.contents("Q", 1) != screen.stepper.contents("Q", 0))


@run_async
async def test_keys_answer_while_a_step_runs() -> None:
    app = WorkbenchApp(snapshot=True, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_steps(pilot)
        await press_settled(pilot, "n", "n")  # attention_forward next: the slowest step
        with app.jobs.gpu_lock:  # hold the GPU so the step waits, then press keys meanwhile
            await pilot.press("n")
            await pilot.pause(0.1)
            assert screen.busy
            await pilot.press("m")
            assert screen.mark == 2
            await pilot.press("n")  # refused with a notice, not queued
        await settle(pilot)
        assert screen.stepper.position == 3
