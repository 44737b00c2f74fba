"""Results taken away from the UI, driven with the pilot: save the case (.npz) or one buffer (.npy)
with a path prompt that will not overwrite without asking, copy a value or a selection of the
Outputs table, jump to an element by named or flat index, export the Diff tab's tables; each from
its key, and from the command palette."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from textual.pilot import Pilot
from textual.widgets import Input, Select

from workbench.app import WorkbenchApp
from workbench.dialogs.ask_line import AskLineScreen
from workbench.dialogs.confirm import ConfirmScreen
from workbench.dialogs.save_path import SavePathScreen
from workbench.widgets.array_view import ArrayView

from .conftest import SIZE, SWIGLU, Recording, open_at, press_settled, run_async, settle

ROPE = "11_rope.wgsl:rope_q"


async def _submit_path(pilot: Pilot, path: Path) -> None:
    app: WorkbenchApp = pilot.app  # type: ignore[assignment]
    box = app.screen.query_one("#save-path", Input)
    box.value = str(path)
    await pilot.pause()
    await press_settled(pilot, "enter")


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Relative paths (the dialogs' defaults) land in this test's folder."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


@run_async
async def test_save_case_and_one_buffer_asking_before_overwriting(in_tmp: Path) -> None:
    app = Recording(snapshot=True, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await open_at(pilot, SWIGLU, seq="4", d_ff="64")
        await press_settled(pilot, "S")
        assert "no results yet" in app.notices[-1]
        await press_settled(pilot, "r", "S")
        assert isinstance(app.screen, SavePathScreen)
        box = app.screen.query_one("#save-path", Input)
        assert box.value == "ffn_swiglu_backward-seq4-d_ff64.npz"
        await press_settled(pilot, "enter")
        run = app.main.current_run()
        saved = in_tmp / "ffn_swiglu_backward-seq4-d_ff64.npz"
        with np.load(saved, allow_pickle=False) as z:
            np.testing.assert_array_equal(z["outputs.grad_gate"], run.outputs["grad_gate"])
            np.testing.assert_array_equal(z["inputs.up"], run.inputs["up"])
        assert f"to {saved}" in app.notices[-1]
        # The same name again: asked first; "no" keeps the file as it was.
        before = saved.read_bytes()
        await press_settled(pilot, "S", "enter")
        assert isinstance(app.screen, ConfirmScreen)
        await press_settled(pilot, "n")
        assert "kept the existing" in app.notices[-1] and saved.read_bytes() == before
        # One buffer as .npy: the default follows the choice; a wrong ending is refused inline.
        await press_settled(pilot, "S")
        app.screen.query_one("#save-what", Select).value = "outputs.grad_up"
        await settle(pilot)
        assert app.screen.query_one("#save-path", Input).value.endswith("-grad_up.npy")
        await _submit_path(pilot, in_tmp / "up.npz")
        assert isinstance(app.screen, SavePathScreen)
        assert "must end in .npy" in str(app.screen.query_one("#save-problem").render())
        await _submit_path(pilot, in_tmp / "up.npy")
        np.testing.assert_array_equal(np.load(in_tmp / "up.npy"), run.outputs["grad_up"])


@run_async
async def test_copy_a_value_and_a_selection(in_tmp: Path) -> None:
    app = Recording(snapshot=True, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await open_at(pilot, SWIGLU, seq="4", d_ff="64")
        await press_settled(pilot, "y")
        assert "no array on show" in app.notices[-1]
        await press_settled(pilot, "r")
        grad_gate = app.main.current_run().outputs["grad_gate"]
        table = app.main.query_one(ArrayView)
        table.focus()
        await press_settled(pilot, "down", "right", "right", "y")
        assert table.cursor == (1, 2)
        assert np.float32(app.clipboard) == grad_gate[1, 2]
        assert app.notices[-1] == f"copied grad_gate at seq=1 d_ff=2 = {app.clipboard}"
        await press_settled(pilot, "shift+down", "shift+right", "y")
        rows = [line.split("\t") for line in app.clipboard.split("\n")]
        np.testing.assert_array_equal(np.array(rows, dtype=np.float32), grad_gate[1:3, 2:4])
        assert "2×2 values of grad_gate, seq=1 d_ff=2 to seq=2 d_ff=3" in app.notices[-1]


@run_async
async def test_jump_to_a_named_or_flat_index_and_say_what_is_wrong() -> None:
    app = Recording(snapshot=True, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await open_at(pilot, ROPE, seq="4", n_heads="3", head_dim="16")
        await press_settled(pilot, "r", "j")
        assert isinstance(app.screen, AskLineScreen)
        field = app.screen.query_one("#ask-line", Input)
        field.value = "seq=2 n_heads=5 head_dim=1"
        await press_settled(pilot, "enter")
        assert "n_heads=5 is outside 0–2" in str(app.screen.query_one("#ask-problem").render())
        field.value = "seq=2 n_heads=1 head_dim=9"
        await press_settled(pilot, "enter")
        assert not isinstance(app.screen, AskLineScreen)
        table = app.main.query_one(ArrayView)
        assert app.main.query_one("#out-slice", Input).value == "seq=2"
        assert table.cursor == (1, 9) and table.has_focus
        await press_settled(pilot, "y")
        q = app.main.current_run().outputs["Q"]
        assert np.float32(app.clipboard) == q[2, 1, 9]
        # A flat index names the same kind of element: 3*(3*16) + 2*16 + 15.
        await press_settled(pilot, "j")
        app.screen.query_one("#ask-line", Input).value = str(3 * 48 + 2 * 16 + 15)
        await press_settled(pilot, "enter", "y")
        assert np.float32(app.clipboard) == q[3, 2, 15]
        assert "seq=3 n_heads=2 head_dim=15" in app.notices[-1]


@run_async
async def test_export_the_diff_table_from_the_palette(in_tmp: Path) -> None:
    app = Recording(snapshot=True, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await open_at(pilot, SWIGLU, seq="4", d_ff="64")
        await press_settled(pilot, "r", "ctrl+p")
        await pilot.press(*"export diff")
        await pilot.pause(0.5)
        await press_settled(pilot, "enter")
        assert isinstance(app.screen, SavePathScreen)
        assert app.screen.query_one("#save-path", Input).value.endswith("-diff.csv")
        await press_settled(pilot, "enter")
        csv_text = (in_tmp / "ffn_swiglu_backward-seq4-d_ff64-diff.csv").read_text()
        assert csv_text.startswith("output,verdict,max |Δ|")
        await press_settled(pilot, "E")
        await _submit_path(pilot, in_tmp / "diff.md")
        assert (in_tmp / "diff.md").read_text().startswith("# ffn_swiglu_backward seq=4")
        assert "saved the diff of 2 outputs" in app.notices[-1]
