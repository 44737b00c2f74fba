"""The job runner on its own, in a bare Textual app: typed results back on the UI thread,
failures as one line (never the end of the app), cancellation while a job waits for the GPU,
and every job holding the one GPU lock while it works."""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass
from typing import Any, ClassVar

from textual.app import App

from workbench.errors import Cancelled, UserError
from workbench.jobs import RunsJobs
from workbench.messages import JobFailed
from workbench.viewmodel.jobs import Context, Job, JobRunner, Work

from .conftest import run_async

TOY = Work("toy", "toying with")


@dataclass(frozen=True)
class Square(Job[int]):
    """Squares `n` holding the GPU; raises `error` instead when given one."""

    work: ClassVar[Work] = TOY
    n: int
    error: Exception | None = None

    def execute(self, ctx: Context) -> int:
        with ctx.gpu():
            assert ctx.lock.locked()
            if self.error is not None:
                raise self.error
            ctx.progress("squaring", 0.5)
            return self.n * self.n


class Host(RunsJobs, App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.jobs = JobRunner()
        self.seen: list[Any] = []

    def record(self, what: str) -> Any:
        return lambda *args: self.seen.append((what, *args))


@run_async
async def test_results_and_failures_come_back_typed() -> None:
    app = Host()
    async with app.run_test() as pilot:
        first = app.submit(Square(7), app.record("done"), app.record("failed"))
        await app.workers.wait_for_complete()
        await pilot.pause()
        second = app.submit(
            Square(2, UserError("n is odd")), app.record("done"), app.record("failed")
        )
        third = app.submit(Square(2, KeyError("k")), app.record("done"), app.record("failed"))
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.is_running
        assert (first.number, second.number, third.number) == (1, 2, 3)
        assert app.seen[0] == ("done", 49)
        failures = {f.number: f.error for _, f in app.seen[1:] if isinstance(f, JobFailed)}
        assert failures == {2: "n is odd", 3: "internal error: KeyError: 'k'"}


@run_async
async def test_cancelled_while_waiting_for_the_gpu() -> None:
    app = Host()
    async with app.run_test() as pilot:
        with app.jobs.gpu_lock:  # the GPU is busy: both jobs wait
            kept = app.submit(
                Square(3), app.record("done"), app.record("failed"), cancelled=app.record("stop")
            )
            dropped = app.submit(
                Square(4), app.record("done"), app.record("failed"), cancelled=app.record("stop")
            )
            app.cancel(kept)
            app.cancel(dropped, drop=True)
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.seen == [("stop",)]  # neither reached the GPU; the dropped one says nothing


@dataclass(frozen=True)
class Submissions(Job[int]):
    """`n` submissions, each held until the test lets it end (a dispatch under way), asking for
    cancellation between them as the engine does; the result is how many were done."""

    work: ClassVar[Work] = TOY
    n: int
    started: threading.Event
    release: threading.Event
    done: list[int]

    def execute(self, ctx: Context) -> int:
        with ctx.gpu():
            for i in range(self.n):
                if ctx.cancelled():
                    raise Cancelled
                self.started.set()
                self.release.wait(60)
                self.done.append(i)
        return len(self.done)


@run_async
async def test_a_cancelled_job_stops_at_its_next_submission_and_says_when_the_gpu_is_free() -> None:
    app = Host()
    async with app.run_test() as pilot:
        started, release, done = threading.Event(), threading.Event(), []
        job = Submissions(50, started, release, done)
        ticket = app.submit(job, app.record("done"), app.record("x"))
        # The first submission is under way.
        assert await asyncio.get_running_loop().run_in_executor(None, started.wait, 60)
        app.cancel(ticket, drop=True, freed=app.record("free"))
        await pilot.pause()
        assert app.seen == []  # the submission under way holds the adapter still
        release.set()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.seen == [("free",)] and done == [0]  # 1 of 50 submissions, then it stopped
        assert not app.jobs.gpu_lock.locked()


def test_numbers_are_unique_across_threads() -> None:
    runner = JobRunner()
    numbers: list[int] = []

    def take() -> None:
        numbers.extend(runner.ticket().number for _ in range(200))

    threads = [threading.Thread(target=take) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(numbers) == list(range(1, 801))
