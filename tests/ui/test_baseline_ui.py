"""Pinning a baseline in the UI: pin a run, edit the kernel (live reload re-runs it), and the run
is shown against the pinned one; pick another from the session's runs; unpin. The snapshot shows
the pinned-baseline diff (timings masked by snapshot mode)."""

from __future__ import annotations

from pathlib import Path

from textual.pilot import Pilot

from workbench.app import WorkbenchApp
from workbench.dialogs.runs import RunsScreen

from .conftest import SIZE, SWIGLU, Recording, open_at, press_settled, run_async, settle

FFN = "09_backward_ffn.wgsl"
# The same maths with the product associated the other way: some elements move by an ULP.
BEFORE = "let du = g * (gt * s);"
AFTER = "let du = (g * gt) * s;"


def _bar(app: WorkbenchApp) -> str:
    return str(app.main.query_one("#baseline").render())


async def _edit_and_rerun(pilot: Pilot, corpus: Path) -> None:
    path = corpus / FFN
    text = path.read_text(encoding="utf-8")
    assert BEFORE in text
    path.write_text(text.replace(BEFORE, AFTER), encoding="utf-8")
    app: WorkbenchApp = pilot.app  # type: ignore[assignment]
    app.action_reload()
    await settle(pilot)


def _pinned_then_edited(corpus: Path):
    async def before(pilot: Pilot) -> None:
        await open_at(pilot, SWIGLU, seq="4", d_ff="64")
        await press_settled(pilot, "r", "P")
        await _edit_and_rerun(pilot, corpus)
        await press_settled(pilot, "2")
        pilot.app.clear_notifications()
        await pilot.pause()

    return before


def test_pinned_baseline_diff_snapshot(snap_compare, corpus_copy: Path) -> None:
    app = WorkbenchApp(corpus=corpus_copy, snapshot=True, watch=False)
    assert snap_compare(app, terminal_size=SIZE, run_before=_pinned_then_edited(corpus_copy))


@run_async
async def test_pin_edit_rerun_shows_the_diff_then_pick_and_unpin(corpus_copy: Path) -> None:
    app = Recording(corpus=corpus_copy, snapshot=True, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await open_at(pilot, SWIGLU, seq="4", d_ff="64")
        await press_settled(pilot, "P", "U")
        assert any("nothing to pin" in n for n in app.notices)
        assert any("no baseline is pinned" in n for n in app.notices)
        assert not app.main.query_one("#baseline").display
        await press_settled(pilot, "r", "P")
        assert "pinned run #1" in app.notices[-1]
        assert app.main.query_one("#baseline").display
        assert "(this run;" in _bar(app)
        await _edit_and_rerun(pilot, corpus_copy)
        bar = _bar(app)
        assert "← run #2" in bar and "source edited since the pin" in bar
        diff = app.main.view.baseline
        assert diff is not None and diff.pinned.number == 1 and diff.number == 2
        up = {d.name: d for d in diff.outputs}["grad_up"]
        assert up.changed > 0 and up.beyond == 0 and up.worst in bar
        assert "identical" in bar  # grad_gate does not use the edited line
        # H lists both runs, newest first, the pinned one marked; enter pins the newest.
        await press_settled(pilot, "H")
        assert isinstance(app.screen, RunsScreen)
        assert [e.number for e in app.screen.entries] == [2, 1] and app.screen.pinned == 1
        await press_settled(pilot, "enter")
        assert not isinstance(app.screen, RunsScreen)
        assert "pinned run #2" in app.notices[-1] and "(this run;" in _bar(app)
        await press_settled(pilot, "U")
        assert "unpinned run #2" in app.notices[-1]
        assert app.main.view.baseline is None and not app.main.query_one("#baseline").display
