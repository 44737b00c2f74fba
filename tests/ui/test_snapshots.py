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


def _own_corpus(tmp_path, described: bool) -> WorkbenchApp:
    from tests.described.corpora import matmul_corpus

    root = matmul_corpus(tmp_path, toml=None if not described else MATMUL_SMALL)
    return WorkbenchApp(corpus=root, snapshot=True, watch=False)


MATMUL_SMALL = """
[kernels.matmul]
doc = "C = A @ B with 16x16 tiles"
dims = { M = 20, N = 40, K = 24 }
grid = ["ceil(N / 16)", "ceil(M / 16)", 1]
[kernels.matmul.uniforms]
dims = ["M", "N", "K", 0]
[kernels.matmul.buffers]
A = { shape = ["M", "K"], input = "randn:1" }
B = { shape = ["K", "N"], input = "uniform:-1:1:2" }
C = { shape = ["M", "N"], output = true }
[kernels.matmul.reference]
function = "refs.py:matmul"
rtol = 1e-5
atol = 1e-5
"""


def test_described_kernel_view(snap_compare, tmp_path) -> None:
    async def before(pilot: Pilot) -> None:
        await settle(pilot)
        await press_settled(pilot, "r")

    app = _own_corpus(tmp_path, described=True)
    assert snap_compare(app, terminal_size=SIZE, run_before=before)


def test_adhoc_kernel_with_editable_uniforms(snap_compare, tmp_path) -> None:
    async def before(pilot: Pilot) -> None:
        await settle(pilot)

    app = _own_corpus(tmp_path, described=False)
    assert snap_compare(app, terminal_size=SIZE, run_before=before)
