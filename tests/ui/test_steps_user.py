"""The Steps screen on a user's folder, with a pilot on the real adapter: the folder's pipeline file
is listed first and opened, its dims are set in the dims dialog, the failing step opens in the
kernel view with the buffers it was given, a shipped pipeline still steps (on the shipped
kernels) while the folder is open, and a pipeline file elsewhere opens by its path."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from textual.widgets import Input, OptionList

from tests.pipelines.user_corpus import user_corpus
from workbench.app import WorkbenchApp
from workbench.dialogs.ask_line import AskLineScreen
from workbench.screens.steps import StepsScreen
from workbench.wgsl.corpus import SHIPPED

from .conftest import SIZE, press_settled, run_async, settle, verdict


@run_async
async def test_a_user_pipeline_dims_and_a_failing_step_in_the_kernel_view(tmp_path: Path) -> None:
    root = user_corpus(tmp_path / "mine", bug=True)
    app = WorkbenchApp(corpus=root, snapshot=True, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press_settled(pilot, "f4")
        screen = app.screen
        assert isinstance(screen, StepsScreen) and screen.stepper is not None
        listed = screen.query_one("#steps-pipelines", OptionList)
        assert str(listed.get_option_at_index(0).prompt) == "pipelines/chain.toml"
        assert screen.stepper.plan.name == "sqr_scale" and screen.stepper.plan.dims == {"n": 1000}

        await press_settled(pilot, "d")  # the dims, as d is on the kernel screen
        dialog = app.screen
        assert isinstance(dialog, AskLineScreen)
        assert dialog.query_one(Input).value == "n=1000"
        dialog.query_one(Input).value = "n=nine"
        await press_settled(pilot, "enter")  # refused in the dialog, which stays open
        assert app.screen is dialog and "not a whole number" in str(
            dialog.query_one("#ask-problem").render()
        )
        dialog.query_one(Input).value = "n=0x12c"
        await press_settled(pilot, "enter")
        s = screen.stepper
        assert app.screen is screen and s.plan.dims == {"n": 300}

        await press_settled(pilot, "l")  # to the last step
        assert [r.verdict for r in s.records] == ["pass", "fail"]
        assert "scale.wgsl:main" in str(screen.query_one("#steps-list").get_row_at(2)[2])
        await press_settled(pilot, "k")  # the highlighted step: the last one run, the failing one
        assert app.screen is app.main
        run = app.main.current_run()
        assert run is not None and run.case.kernel.file == "scale.wgsl"
        assert run.case.inputs["src"].tobytes() == s.contents("y", 1).tobytes()
        np.testing.assert_array_equal(run.outputs["dst"], s.contents("z", 2))
        assert "FAIL" in verdict(app)


@run_async
async def test_a_shipped_pipeline_and_a_file_elsewhere_while_a_user_folder_is_open(
    tmp_path: Path,
) -> None:
    root = user_corpus(tmp_path / "mine")
    other = tmp_path / "elsewhere.toml"
    other.write_text((root / "pipelines/chain.toml").read_text().replace("sqr_scale", "other"))
    app = WorkbenchApp(corpus=root, snapshot=True, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = StepsScreen("gelu")
        await app.push_screen(screen)
        await settle(pilot)
        s = screen.stepper
        assert s is not None and s.plan.corpus == SHIPPED  # was: no kernel named 'gelu_inplace'
        await press_settled(pilot, "n", "k")
        assert s.records[0].verdict == "pass" and app.screen is screen
        assert "is a shipped kernel" in str(screen.query_one("#steps-diff").render())

        await press_settled(pilot, "ctrl+o")
        dialog = app.screen
        assert isinstance(dialog, AskLineScreen)
        dialog.query_one(Input).value = str(tmp_path / "missing.toml")
        await press_settled(pilot, "enter")
        assert "does not exist" in str(dialog.query_one("#ask-problem").render())
        dialog.query_one(Input).value = str(other)
        await press_settled(pilot, "enter")
        assert app.screen is screen and screen.stepper.plan.name == "other"
        listed = screen.query_one("#steps-pipelines", OptionList)
        assert str(listed.get_option_at_index(listed.highlighted or 0).prompt) == str(other)
