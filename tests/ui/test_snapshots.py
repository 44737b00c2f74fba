"""Snapshot tests of the terminal UI at 120x36: the first screen, and every tab of a spec'd kernel.

Snapshot mode fixes the adapter name and masks timings; seeds are fixed, so the pictures show the
same numbers on every run on the same adapter (lavapipe in CI). Regenerate with
`pytest tests/ui/test_snapshots.py --snapshot-update` and look at the SVGs before committing them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest
from textual.pilot import Pilot

from workbench.app import WorkbenchApp

from .conftest import SIZE, SWIGLU, open_at, press_settled, settle


def _app() -> WorkbenchApp:
    return WorkbenchApp(snapshot=True, watch=False)


def _swiglu(keys: tuple[str, ...]) -> Callable[[Pilot], Awaitable[None]]:
    """Open ffn_swiglu_backward at 4×64, run it, then press `keys`, each waited for."""

    async def before(pilot: Pilot) -> None:
        await open_at(pilot, SWIGLU, seq="4", d_ff="64")
        await press_settled(pilot, "r", *keys)

    return before


def test_first_screen(snap_compare) -> None:
    async def before(pilot: Pilot) -> None:
        await settle(pilot)

    assert snap_compare(_app(), terminal_size=SIZE, run_before=before)


@pytest.mark.parametrize(
    "keys",
    [
        pytest.param((), id="outputs"),
        pytest.param(("2",), id="diff"),
        pytest.param(("g",), id="gradients"),
        pytest.param(("b",), id="timing"),
        pytest.param(("5",), id="source"),
        pytest.param(("6",), id="bindings"),
    ],
)
def test_tab(snap_compare, keys: tuple[str, ...]) -> None:
    assert snap_compare(_app(), terminal_size=SIZE, run_before=_swiglu(keys))
