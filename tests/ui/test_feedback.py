"""Every key answers: a key that cannot act says why in a notification, the status line leads with
the last thing done (a gradient check), and escape says "cancelled" at once.

Real adapter (lavapipe). Cancel is tested with the GPU lock held by the test, so the run stays in
flight until escape has been handled, whatever the machine's load: no timing is asserted.
"""

from __future__ import annotations

from pathlib import Path

from workbench.dialogs.save_fixture import SaveFixtureScreen
from workbench.viewmodel.jobs import RUN

from .conftest import (
    SIZE,
    SWIGLU,
    Recording,
    open_at,
    post_key,
    press_settled,
    run_async,
    settle,
    verdict,
)

ATTENTION = "10_backward_attention.wgsl:attention_backward"


@run_async
async def test_save_fixture_before_any_run_says_why() -> None:
    app = Recording(snapshot=True, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await open_at(pilot, SWIGLU, seq="4", d_ff="64")
        await press_settled(pilot, "f")
        assert not isinstance(app.screen, SaveFixtureScreen)
        assert any("nothing to save yet" in n and "press r" in n for n in app.notices)
        await press_settled(pilot, "r", "f")  # with a run, the same key saves
        assert isinstance(app.screen, SaveFixtureScreen)


@run_async
async def test_status_leads_with_the_gradient_check_just_run() -> None:
    app = Recording(snapshot=True, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await open_at(pilot, SWIGLU, seq="4", d_ff="64")
        await press_settled(pilot, "g")
        line = verdict(app)
        assert line.startswith("gradients ✓") and "not run yet" not in line
        await press_settled(pilot, "r")
        line = verdict(app)
        assert line.startswith(" PASS ") and "gradients ✓" in line
        await press_settled(pilot, "g")
        assert verdict(app).startswith("gradients ✓") and "last run:  PASS" in verdict(app)


@run_async
async def test_escape_says_cancelled_at_once() -> None:
    app = Recording(snapshot=True, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await open_at(pilot, ATTENTION, seq="128")
        with app.jobs.gpu_lock:  # the run waits for the GPU until escape has been handled
            await post_key(pilot, "r", lambda: app.main.busy is RUN)
            # The notification arrives as a message of its own, after the verdict has changed.
            await post_key(
                pilot,
                "escape",
                lambda: (
                    "CANCELLED" in verdict(app)
                    and any("cancelled the run" in n for n in app.notices)
                ),
            )
            # Said while the cancelled work still waits for the GPU: the screen is free again.
            assert app.main.busy is None and "cancelling" not in verdict(app)
            assert not any("free again" in n for n in app.notices)  # the worker still waits
        await settle(pilot)
        # Once the worker has stopped, the screen says the adapter is free again.
        assert any("the adapter is free again" in n for n in app.notices)
        # The cancelled run's late outcome changes nothing.
        assert app.main.current_run() is None and "CANCELLED" in verdict(app)
        await press_settled(pilot, "r")
        assert app.main.current_run() is not None and "CANCELLED" not in verdict(app)


@run_async
async def test_keys_that_cannot_act_say_why(tmp_path: Path) -> None:
    (tmp_path / "scale.wgsl").write_text(
        "@group(0) @binding(0) var<storage, read> x: array<f32>;\n"
        "@group(0) @binding(1) var<storage, read_write> y: array<f32>;\n"
        "@compute @workgroup_size(64)\n"
        "fn scale(@builtin(global_invocation_id) gid: vec3<u32>) {\n"
        "    if (gid.x < arrayLength(&y)) { y[gid.x] = 2.0 * x[gid.x]; }\n"
        "}\n"
    )
    app = Recording(tmp_path, snapshot=True, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await open_at(pilot, "scale.wgsl:scale", n="64")
        await press_settled(pilot, "g", "right_square_bracket", "escape")
        notices = app.notices
        assert any("scale has no gradient to check" in n for n in notices)
        assert any("no footprint yet: press o" in n for n in notices)
        assert any("nothing is running" in n for n in notices)
        await press_settled(pilot, "r")
        assert "ran ad hoc" in verdict(app)
