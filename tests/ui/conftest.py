"""Helpers for the terminal UI tests: a copy of the shipped corpus to edit, and waiting for the app.

The app does its GPU work, planning and status checks in workers; `settle` waits until no worker
is in flight and the messages they posted are handled, so a test looks at finished results, never
at a half-drawn one.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import shutil
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import pytest
from textual import events
from textual.app import App
from textual.message_pump import MessagePump
from textual.pilot import Pilot
from textual.screen import Screen
from textual.worker import Worker, WorkerState

import workbench.app
from workbench.app import WorkbenchApp
from workbench.config import DEFAULTS, Config
from workbench.wgsl.corpus import SHIPPED
from workbench.widgets.browser import KernelBrowser

SWIGLU = "09_backward_ffn.wgsl:ffn_swiglu_backward"
SIZE = (120, 36)


def quick_bench() -> Config:
    """The default configuration without the bench's warm-up (a second of GPU work per bench
    by default, which test_bench_warmup.py covers): for tests of what a bench shows, not of
    how it warms up."""
    return Config(values=DEFAULTS | {"warmup_ms": 0.0})


@pytest.fixture
def corpus_copy(tmp_path: Path) -> Path:
    """The shipped kernels in a folder the test may edit."""
    dest = tmp_path / "corpus"
    shutil.copytree(SHIPPED, dest)
    return dest


def run_async(fn: Callable[..., Coroutine[Any, Any, None]]) -> Callable[..., None]:
    """Run an async test body in its own event loop (no asyncio pytest plugin is installed)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> None:
        asyncio.run(fn(*args, **kwargs))

    return wrapper


def _in_flight(app: WorkbenchApp) -> list[Worker]:
    return [w for w in app.workers if w.state in (WorkerState.PENDING, WorkerState.RUNNING)]


def _live(app: App[object], node: MessagePump) -> bool:
    """Whether `node` still handles messages: the app while it runs, a screen while it is on the
    stack (a screen being dismissed accepts a message it will never run), a widget while it is
    attached."""
    if not node.is_running or node is app:
        return node.is_running
    if isinstance(node, Screen):
        return node in app.screen_stack
    return node.is_attached


async def handled(app: App[object], node: MessagePump, limit: float = 240.0) -> None:
    """Return once `node` has handled every message queued for it before this call, or at once
    if it no longer handles messages (waiting on one it never runs hung whole suites)."""
    done = asyncio.Event()
    if not node.call_later(done.set):
        return
    t0 = time.perf_counter()
    while not done.is_set() and _live(app, node):
        if time.perf_counter() - t0 > limit:
            raise AssertionError(f"{node!r} handled nothing for {limit} s")
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(done.wait(), 0.05)


async def settle(pilot: Pilot, limit: float = 120.0) -> None:
    """Wait until no worker is in flight and the app and its screens have handled what the
    workers posted (a handler may start the next worker: a plan after a run, so look again)."""
    app: WorkbenchApp = pilot.app  # type: ignore[assignment]
    t0 = time.perf_counter()
    quiet = False
    while not quiet:
        while app.keys_pending:  # typed keys are handled one after the other
            if time.perf_counter() - t0 > limit:
                raise AssertionError(f"typed keys were not handled in {limit} s")
            await asyncio.sleep(0.02)
        while busy := _in_flight(app):
            if time.perf_counter() - t0 > limit:
                names = ", ".join(f"{w.group}:{w.name}" for w in busy)
                raise AssertionError(f"the app did not settle in {limit} s (in flight: {names})")
            await asyncio.sleep(0.02)
        for node in (app, app.main, app.screen):
            await handled(app, node)
        await pilot.pause()  # and whatever those handlers scheduled after a refresh
        quiet = not _in_flight(app) and not app.keys_pending
    await pilot.pause(0.05)


async def open_kernel(pilot: Pilot, key: str) -> None:
    """Move the browser onto `key` and wait until its view is planned."""
    app: WorkbenchApp = pilot.app  # type: ignore[assignment]
    app.main.query_one(KernelBrowser).select(key)
    t0 = time.perf_counter()
    while app.main.current != key:
        if time.perf_counter() - t0 > 10:
            raise AssertionError(f"{key} was not opened")
        await pilot.pause(0.05)
    await settle(pilot)


async def open_at(pilot: Pilot, key: str, **dims: str) -> None:
    """Wait for the first screen, open `key`, type each of `dims` into its field, and give the
    browser the focus so that keys reach the app's bindings."""
    app: WorkbenchApp = pilot.app  # type: ignore[assignment]
    await settle(pilot)
    await open_kernel(pilot, key)
    for name, value in dims.items():
        await type_into(pilot, f"#dim-{name}", value)
    app.main.query_one(KernelBrowser).kernel_tree.focus()


async def press_settled(pilot: Pilot, *keys: str) -> None:
    """Press each key in turn and wait until the app settles after it."""
    for key in keys:
        await pilot.press(key)
        await settle(pilot)


async def type_into(pilot: Pilot, selector: str, text: str) -> None:
    """Focus a field (its text gets selected) and type over it, as a user would."""
    app: WorkbenchApp = pilot.app  # type: ignore[assignment]
    field = app.main.query_one(selector)
    field.focus()
    await pilot.pause()
    field.select_all()
    await pilot.press(*list(text))
    await settle(pilot)


async def post_key(pilot: Pilot, key: str, until: Callable[[], bool], limit: float = 120.0) -> None:
    """Post one key to the app, as the terminal driver does, and wait until `until()` holds.

    Unlike `pilot.press` this does not wait for the whole process to go idle (a worker thread
    busy on the GPU keeps it from ever going idle). The limit only stops a broken test from
    hanging: how fast a key is answered is measured by benchmarks/bench_ui.py, not here.
    """
    app: WorkbenchApp = pilot.app  # type: ignore[assignment]
    event = events.Key(key, key if len(key) == 1 else None)
    event.set_sender(app)
    t0 = time.perf_counter()
    app.post_message(event)
    while not until():
        if time.perf_counter() - t0 > limit:
            raise AssertionError(f"key {key!r} had no effect")
        await asyncio.sleep(0.01)


def verdict(app: WorkbenchApp) -> str:
    return str(app.main.query_one("#verdict").render())


class Recording(WorkbenchApp):
    """The app, keeping the text of every notification it shows (`notices`)."""

    CSS_PATH = str(Path(workbench.app.__file__).with_name(WorkbenchApp.CSS_PATH))

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.notices: list[str] = []

    def notify(self, message: str, *args: Any, **kwargs: Any) -> None:  # type: ignore[override]
        self.notices.append(message)
        super().notify(message, *args, **kwargs)
