"""Snapshot tests at 80x24, the smallest terminal the UI is made for: the kernel view after a
run (the kernel list hidden, the form in as many columns as fit), help over it, and the fixtures
screen. Snapshot mode fixes the adapter name and masks timings, so the pictures are the same on
every run on the same adapter. Regenerate with `--snapshot-update` and look at the SVGs first.
"""

from __future__ import annotations

from textual.pilot import Pilot

from workbench.app import WorkbenchApp

from .conftest import SWIGLU, open_at, press_settled, settle

SMALL = (80, 24)


def _app() -> WorkbenchApp:
    return WorkbenchApp(snapshot=True, watch=False)


async def _ran(pilot: Pilot) -> None:
    await open_at(pilot, SWIGLU, seq="4", d_ff="64")
    await press_settled(pilot, "r")


def test_main_at_80x24(snap_compare) -> None:
    assert snap_compare(_app(), terminal_size=SMALL, run_before=_ran)


def test_help_at_80x24(snap_compare) -> None:
    async def before(pilot: Pilot) -> None:
        await _ran(pilot)
        await press_settled(pilot, "question_mark")

    assert snap_compare(_app(), terminal_size=SMALL, run_before=before)


def test_fixtures_at_80x24(snap_compare, monkeypatch) -> None:
    # The title names the user's fixtures folder, beside the configuration: one fixed path.
    monkeypatch.setenv("WORKBENCH_CONFIG", "/tmp/workbench-snapshot/config.toml")

    async def before(pilot: Pilot) -> None:
        await settle(pilot)
        # F3, the fixtures key's other binding: a field that has the focus would take `x`.
        await press_settled(pilot, "f3")

    assert snap_compare(_app(), terminal_size=SMALL, run_before=before)
