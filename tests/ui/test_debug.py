"""The Debug screen on the real default adapter: opened with one key from the kernel view,
another invocation typed into its picker, stepped by its keys (no GPU work per step), the first
non-finite value as one action, and opened from the Diff tab's highlighted element (its last
writer). Snapshots mid-trace and at the non-finite value, at 120x36 and 80x24."""

from __future__ import annotations

import textwrap
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path

import numpy as np
import pytest
from textual.pilot import Pilot
from textual.widgets import Input, Static

from workbench.app import WorkbenchApp
from workbench.screens.debug import DebugScreen
from workbench.session import Session
from workbench.viewmodel.debug import Pick
from workbench.viewmodel.jobs import Context, DebugJob
from workbench.wgsl.corpus import load_corpus
from workbench.widgets.panes.diff import DiffPane
from workbench.workgroups.debug import parse_element

from .conftest import SIZE, SWIGLU, open_at, press_settled, run_async, settle
from .test_inside import PROBED, REVERSE

# A loop that calls a helper, then a division by zero at invocation 36 (and 100): an infinity
# made from finite operands.
DEBUGME = """
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;

fn scale(v: f32, k: f32) -> f32 {
    let s = v * k + 1.0;
    return s * s;
}

@compute @workgroup_size(64)
fn debugme(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    var acc = 0.0;
    for (var k = 0u; k < 2u; k++) {
        acc += scale(x[i], f32(k));
    }
    let gap = f32(i % 64u) - 36.0;
    y[i] = acc / gap;
}
"""
KERNEL = "debugme.wgsl:debugme"
SMALL = (80, 24)


@pytest.fixture
def debug_corpus(tmp_path: Path) -> Path:
    (tmp_path / "debugme.wgsl").write_text(textwrap.dedent(DEBUGME).lstrip(), encoding="utf-8")
    return tmp_path


def _app(corpus: Path) -> WorkbenchApp:
    return WorkbenchApp(corpus=corpus, snapshot=True, watch=False)


async def _debug_at(pilot: Pilot, invocation: str) -> DebugScreen:
    """Open the kernel, open the Debug screen, and trace `invocation` through the picker."""
    await open_at(pilot, KERNEL, n="128")
    await press_settled(pilot, "i")
    screen = pilot.app.screen
    assert isinstance(screen, DebugScreen)
    await press_settled(pilot, "i", *invocation, "enter")
    return screen


def _text(screen: DebugScreen, wid: str) -> str:
    return str(screen.query_one(wid, Static).render())


@run_async
async def test_the_debug_key_traces_an_invocation_and_steps_it_without_the_gpu(debug_corpus):
    app = _app(debug_corpus)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _debug_at(pilot, "36")
        view = screen.view
        assert view is not None and view.trace.invocation == (36, 0, 0)
        # The values the GPU computed, against the kernel's arithmetic replayed in f32.
        x = np.float32(screen.case.inputs["x"][36])
        one = np.float32(1.0)
        s = [one, np.float32(x * one + one)]
        acc = np.float32(np.float32(s[0] * s[0]) + np.float32(s[1] * s[1]))
        assert [st.value for st in view.steps if st.name == "acc"][-1] == float(acc)
        jobs = app.jobs.ticket().number
        await press_settled(pilot, "n", "n", "n", "n")  # into scale: its parameters
        assert "in scale" in _text(screen, "#debug-head")
        assert "scale  debugme.wgsl:4" in _text(screen, "#debug-stack")
        await press_settled(pilot, "A")  # out: back in the caller at acc +=
        assert view.step is not None and (view.step.name, view.step.line) == ("acc", 14)
        assert "* acc" in _text(screen, "#debug-locals")
        await press_settled(pilot, "L", "L")  # the loop's next iteration, then its end
        assert view.step is not None and view.step.name == "end"
        await press_settled(pilot, "W", *"isinf(y[i])", "enter", "z", "G")
        assert view.at == len(view.steps) - 1 and "isinf(y[i]) holds" in _text(screen, "#debug-say")
        await press_settled(pilot, "X", *"acc / gap", "enter")
        assert "acc / gap = inf" in _text(screen, "#debug-watch")
        await press_settled(pilot, "u", "left", "home", "end")
        assert view.at == len(view.steps) - 1
        assert app.jobs.ticket().number == jobs + 1  # stepping ran no job (the +1: this ticket)
        await press_settled(pilot, "escape")
        assert app.screen is app.main


@run_async
async def test_first_nonfinite_is_one_key_and_a_bad_pick_is_said(debug_corpus):
    app = _app(debug_corpus)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _debug_at(pilot, "1,2")
        assert "expected X,Y,Z" in _text(screen, "#debug-say")
        await press_settled(pilot, "i", *"9999", "enter")
        assert "outside the dispatch" in _text(screen, "#debug-say")
        await press_settled(pilot, "F")
        view = screen.view
        assert view is not None and view.trace.invocation == (36, 0, 0)
        assert view.step is not None and view.step.name == "y[i]"
        assert "2 invocations made one" in _text(screen, "#debug-say")


@run_async
async def test_from_the_footprint_the_debug_key_traces_the_elements_writer(debug_corpus):
    app = _app(debug_corpus)
    async with app.run_test(size=SIZE) as pilot:
        await open_at(pilot, KERNEL, n="128")
        await press_settled(pilot, "o")  # the footprint: its picture's cursor on y[0]
        assert app.main.tabs.active == "tab-footprint"
        await press_settled(pilot, "i")
        screen = app.screen
        assert isinstance(screen, DebugScreen) and screen.view is not None
        assert screen.view.trace.invocation == (0, 0, 0)
        assert "y[0] was last written by invocation 0,0,0" in _text(screen, "#debug-head")


@run_async
async def test_from_the_diff_tab_the_debug_key_traces_the_worst_elements_writer():
    app = WorkbenchApp(snapshot=True, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await open_at(pilot, SWIGLU, seq="4", d_ff="64")
        await press_settled(pilot, "r", "2", "i")  # run, the Diff tab, debug
        screen = app.screen
        assert isinstance(screen, DebugScreen) and screen.view is not None
        head = _text(screen, "#debug-head")
        worst = app.main.query_one(DiffPane).element()
        assert worst is not None and f"{worst} was last written by invocation" in head
        binding, flat = parse_element(worst, screen.case)
        assert any(
            st.kind == "store" and st.name.startswith(binding) and st.index == flat
            for st in screen.view.steps
        )


@run_async
async def test_from_the_probes_tab_the_debug_key_traces_the_records_invocation(tmp_path: Path):
    (tmp_path / "probed.wgsl").write_text(textwrap.dedent(PROBED).lstrip(), encoding="utf-8")
    app = _app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await open_at(pilot, "probed.wgsl:probed", n="64")
        app.main.query_one("#probes-invocation", Input).value = "1,3"  # workgroup 1, local 3
        await press_settled(pilot, "p")
        assert app.main.tabs.active == "tab-probes"
        await press_settled(pilot, "i")
        screen = app.screen
        assert isinstance(screen, DebugScreen) and screen.view is not None
        assert screen.view.trace.invocation == (35, 0, 0)  # 1 * 32 + 3


@run_async
async def test_workgroup_memory_is_shown_after_the_barrier(tmp_path: Path):
    (tmp_path / "reverse.wgsl").write_text(textwrap.dedent(REVERSE).lstrip(), encoding="utf-8")
    app = _app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await open_at(pilot, "reverse.wgsl:reverse_tiles", n="256")
        await press_settled(pilot, "i", "i", *"70", "enter", "l")  # workgroup 1, at the end
        screen = app.screen
        assert isinstance(screen, DebugScreen) and screen.view is not None
        (seen,) = screen.view.workgroup_memory()
        x = screen.case.inputs["x"]
        assert seen.values == [float(v) for v in x[64:128]]  # workgroup 1's tile
        assert "tile after the barrier at step" in _text(screen, "#debug-shared")


def test_the_debug_job_finds_an_elements_last_writer(debug_corpus, session: Session) -> None:
    mine = Session(load_corpus(debug_corpus), session.gpu)
    case = mine.case("debugme", dims={"n": 128})
    ctx = Context(threading.Lock(), lambda line, fraction: None, lambda: False)
    got = DebugJob(mine, case, Pick(element="y[100]")).execute(ctx)
    assert got.trace.invocation == (100, 0, 0)
    assert got.found == "y[100] was last written by invocation 100,0,0 at debugme.wgsl:17"


def _at(invocation: str, *keys: str) -> Callable[[Pilot], Awaitable[None]]:
    async def before(pilot: Pilot) -> None:
        await _debug_at(pilot, invocation)
        await press_settled(pilot, *keys)
        await settle(pilot)

    return before


def test_debug_screen_mid_trace(snap_compare, debug_corpus) -> None:
    """Invocation 36 inside the second call of scale: the current line lit, scale's locals with
    s just set, the call stack two deep, a breakpoint on line 13, the last loads."""
    keys = ("down", "down", "f9", "G", "G", "n", "n", "n", "n")
    assert snap_compare(_app(debug_corpus), terminal_size=SIZE, run_before=_at("36", *keys))


def test_debug_screen_at_the_nonfinite_value(snap_compare, debug_corpus) -> None:
    assert snap_compare(_app(debug_corpus), terminal_size=SIZE, run_before=_at("0", "F"))


def test_debug_screen_at_80x24(snap_compare, debug_corpus) -> None:
    keys = ("X", *"acc * 2.0", "enter", "n", "n", "n", "n", "n", "n", "n", "n")
    assert snap_compare(_app(debug_corpus), terminal_size=SMALL, run_before=_at("36", *keys))
