"""The UI's bench warms up as long as `workbench bench` does (a second by default, `warmup_ms` in the
configuration), shows it, and stops it at the next submission on escape or when the app exits; a
corpus that loads before the kernel list has its tree no longer kills the app at start-up.
Real adapter (lavapipe); progress messages are counted, never timed."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.widget import Widget
from textual.worker import Worker

from workbench.app import WorkbenchApp
from workbench.config import DEFAULTS, Config
from workbench.messages import JobProgress
from workbench.viewmodel.jobs import BENCH, Ticket
from workbench.widgets.browser import KernelBrowser

from .conftest import SIZE, SWIGLU, Recording, open_at, post_key, run_async, settle

WARMING = "warming up the adapter"


def _long_warm_up() -> Config:
    """A minute's warm-up: a cancel that did not reach it would show as hundreds of submissions."""
    return Config(values=DEFAULTS | {"warmup_ms": 60_000.0})


def _spy(app: WorkbenchApp, posted: list[Any]) -> list[Any]:
    """Record every message the main screen's workers post to it, in order, into `posted`."""
    post = app.main.post_message

    def record(message: Any) -> bool:
        posted.append(message)
        return post(message)

    app.main.post_message = record  # type: ignore[method-assign]
    return posted


def _warm_ups(app: WorkbenchApp, stopped: Callable[[], bool]) -> list[bool]:
    """Every warm-up submission of the app's timings from now on, counted where the engine reports
    it (whatever the screen then shows), each with whether `stopped()` held when it was reported:
    a submission reported after the stop began before it, so at most one may be."""
    session = app.session
    assert session is not None
    seen: list[bool] = []
    time_cases = session.time_cases

    def counted(
        cases: Any, budget: Any, progress: Any = None, cancelled: Any = None, warming: Any = None
    ) -> Any:
        def submitted(part: float) -> None:
            seen.append(stopped())
            if warming is not None:
                warming(part)

        return time_cases(cases, budget, progress, cancelled, submitted)

    session.time_cases = counted  # type: ignore[method-assign]
    return seen


def _warming(messages: list[Any]) -> list[str]:
    return [m.line for m in messages if isinstance(m, JobProgress) and WARMING in m.line]


@run_async
async def test_escape_during_the_bench_warm_up_stops_it_at_the_next_submission() -> None:
    app = Recording(snapshot=True, watch=False, config=_long_warm_up())
    async with app.run_test(size=SIZE) as pilot:
        await open_at(pilot, SWIGLU, seq="2", d_ff="64")
        posted = _spy(app, [])
        bench: list[Ticket] = []  # the bench job, once it is in flight
        submissions = _warm_ups(app, lambda: bool(bench) and bench[0].cancelled)
        await post_key(pilot, "b", until=lambda: bool(_warming(posted)))
        assert "warming up the adapter for 60.0 s" in _warming(posted)[0]
        assert app.main.in_flight is not None
        bench.append(app.main.in_flight)
        await post_key(pilot, "escape", until=lambda: bench[0].cancelled)
        await settle(pilot)
        # Only the submission in flight when escape came may finish after it.
        assert sum(submissions) <= 1 and len(submissions) >= 1
        assert app.main.busy is None
        assert any("cancelled" in n for n in app.notices)
        assert app.main.current_run() is None  # the cancelled bench's run is not shown


def test_leaving_the_app_during_the_bench_warm_up_stops_it() -> None:
    app = Recording(snapshot=True, watch=False, config=_long_warm_up())
    bench: list[Worker[None]] = []
    seen: list[list[bool]] = []

    @run_async
    async def body() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await open_at(pilot, SWIGLU, seq="2", d_ff="64")
            submissions = _warm_ups(app, lambda: bool(bench) and bench[0].is_cancelled)
            seen.append(submissions)
            await post_key(pilot, "b", until=lambda: bool(submissions))
            bench.extend(w for w in app.workers if w.name.startswith(f"{BENCH.noun} #"))

    body()
    # The worker's thread outlives the app and holds the GPU lock while it times: it lets go at
    # the next submission because the app cancelled its workers on the way out (the timeout only
    # bounds a broken test).
    assert app.jobs.gpu_lock.acquire(timeout=120), "the warm-up went on after the app exited"
    app.jobs.gpu_lock.release()
    assert len(bench) == 1 and bench[0].is_cancelled
    assert sum(seen[0]) <= 1


@run_async
async def test_a_bench_with_the_default_warm_up_says_it_warms_up() -> None:
    app = Recording(snapshot=True, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await open_at(pilot, SWIGLU, seq="2", d_ff="64")
        posted = _spy(app, [])
        await post_key(pilot, "b", until=lambda: app.main.busy is not None)
        await settle(pilot)
        lines = _warming(posted)
        assert lines and all("warming up the adapter for 1.00 s" in line for line in lines)
        run = app.main.current_run()
        assert run is not None and run.timing is not None and run.timing.reps > 0
        assert run.timing.warmup > 1  # the compile pass and a second's rounds


@run_async
async def test_a_corpus_loaded_before_the_kernel_list_is_composed_still_opens(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "double.wgsl").write_text(
        "@group(0) @binding(0) var<storage, read_write> y: array<f32>;\n"
        "@compute @workgroup_size(64)\n"
        "fn double(@builtin(global_invocation_id) gid: vec3<u32>) {\n"
        "    if (gid.x < arrayLength(&y)) { y[gid.x] = 2.0 * y[gid.x]; }\n"
        "}\n"
    )
    mount = KernelBrowser.mount_composed_widgets
    delayed: list[KernelBrowser] = []

    async def late(self: KernelBrowser, widgets: list[Widget]) -> None:
        # A loaded machine mounts the list late; a one-file corpus is read long before.
        delayed.append(self)
        await asyncio.sleep(0.5)
        await mount(self, widgets)

    # Textual's public hook between compose() and mounting what it made (textual.lazy uses it).
    monkeypatch.setattr(KernelBrowser, "mount_composed_widgets", late)
    app = Recording(corpus=tmp_path, snapshot=True, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        browser = app.main.query_one(KernelBrowser)
        assert delayed == [browser]
        assert browser.kernel_keys() == ["double.wgsl:double"]
        assert app.main.current == "double.wgsl:double"
