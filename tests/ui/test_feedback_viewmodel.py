"""`why_not`: what each key of the main screen says when it cannot act (no Textual, no GPU)."""

from __future__ import annotations

import pytest

from workbench.viewmodel.feedback import RUNS, Standing, why_not
from workbench.viewmodel.jobs import BENCH, GRADCHECK

READY = Standing(opened=True, kernel="saxpy", gradient=True)


@pytest.mark.parametrize("action", sorted(RUNS | {"save_fixture", "describe", "edit"}))
def test_nothing_acts_before_the_adapter_opens_or_without_a_kernel(action: str) -> None:
    assert "still opening" in (why_not(action, Standing(opened=False)) or "")
    assert "no kernel is selected" in (why_not(action, Standing(opened=True)) or "")


@pytest.mark.parametrize("action", sorted(RUNS))
def test_gpu_work_waits_for_the_work_in_flight_and_a_runnable_kernel(action: str) -> None:
    assert why_not(action, READY) is None
    busy = why_not(action, Standing(opened=True, kernel="saxpy", busy=GRADCHECK))
    assert busy == "gradient check of saxpy in flight: esc cancels it"
    broken = Standing(opened=True, kernel="saxpy", problem="a.wgsl:3:1: bad\n  detail")
    assert why_not(action, broken) == "saxpy cannot run: a.wgsl:3:1: bad"


def test_gradcheck_needs_a_gradient_link() -> None:
    why = why_not("gradcheck", Standing(opened=True, kernel="scale"))
    assert why is not None and why.startswith("scale has no gradient to check")


def test_a_fixture_needs_a_fresh_run() -> None:
    assert "nothing to save yet" in (why_not("save_fixture", READY) or "")
    ran = Standing(opened=True, kernel="saxpy", has_run=True)
    assert why_not("save_fixture", ran) is None
    stale = Standing(opened=True, kernel="saxpy", has_run=True, stale="ran on gpu 0")
    assert "out of date (ran on gpu 0)" in (why_not("save_fixture", stale) or "")
    busy = Standing(opened=True, kernel="saxpy", has_run=True, busy=BENCH)
    assert "wait for the bench" in (why_not("save_fixture", busy) or "")


def test_keys_that_always_act_are_never_refused() -> None:
    for action in ("filter", "toggle_module", "fixtures", "adapter", "tab"):
        assert why_not(action, Standing(opened=False)) is None
