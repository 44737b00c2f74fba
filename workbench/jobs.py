"""Running jobs (`workbench.viewmodel.jobs`) off the UI thread, and what becomes of one that fails.

A screen (or the app) that mixes in `RunsJobs` submits a job with the callbacks that take its
outcome: `done` gets the job's typed result (a callback may be a coroutine function), `failed` a `JobFailed` (a one-line reason; `compile`
when the source did not compile). Each job runs in a worker thread of the node that submitted it,
under the app's one `JobRunner` (the GPU lock, the numbering); its progress, result or failure
comes back as a message to that node, which calls the callbacks on the UI thread. `cancel` sets
the job's cancel switch: it stops at its next submission to the GPU, and its outcome is dropped
(`drop=True`, the screen has said "cancelled" already; `freed` then hears when the worker has
stopped) or still delivered (partial results).

An exception nobody caught (a bug below the UI, user code that raises) is a failure with its
type and message, never the end of the app. A worker the node starts itself is started with
`exit_on_error=False`; `SafeWorkers` turns one that raised into a notification.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any, Protocol, TypeVar, cast

from textual.message import Message
from textual.worker import Worker, WorkerState, get_current_worker

from workbench.errors import Cancelled, CompileError, WorkbenchError
from workbench.messages import JobCancelled, JobDone, JobFailed, JobProgress
from workbench.viewmodel.advice import ui_message
from workbench.viewmodel.jobs import Job, JobRunner, Ticket

R = TypeVar("R")


class SafeWorkers:
    """Mixin for an App or Screen that starts workers: a worker that raised is said, not fatal."""

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state is not WorkerState.ERROR:
            return
        worker, error = event.worker, event.worker.error
        what = worker.group if worker.group != "default" else worker.name
        self.notify(  # type: ignore[attr-defined]
            f"internal error in {what}: {type(error).__name__}: {error}",
            title="internal error",
            severity="error",
            markup=False,
            timeout=10,
        )


class HasJobs(Protocol):
    """The app: it owns the one job runner."""

    jobs: JobRunner


@dataclass(frozen=True)
class _Callbacks:
    done: Callable[[Any], object]
    failed: Callable[[JobFailed], object]
    progress: Callable[[JobProgress], object] | None
    cancelled: Callable[[], object] | None


class RunsJobs(SafeWorkers):
    """Mixin for a Screen or the App: submit jobs, get their typed outcomes back."""

    def _waiting(self) -> dict[int, _Callbacks]:
        # Created on first use: a mixin has no say in its host's __init__.
        waiting: dict[int, _Callbacks] | None = self.__dict__.get("_jobs_waiting")
        if waiting is None:
            waiting = self.__dict__["_jobs_waiting"] = {}
        return waiting

    def submit(
        self,
        job: Job[R],
        done: Callable[[R], object],
        failed: Callable[[JobFailed], object],
        progress: Callable[[JobProgress], object] | None = None,
        cancelled: Callable[[], object] | None = None,
    ) -> Ticket:
        """Run `job` in a worker thread; its outcome goes to one of the callbacks."""
        runner = cast(HasJobs, cast(Any, self).app).jobs
        ticket = runner.ticket()
        self._waiting()[ticket.number] = _Callbacks(done, failed, progress, cancelled)
        cast(Any, self).run_worker(
            partial(self._execute, runner, job, ticket),
            thread=True,
            group="jobs",
            name=f"{job.work.noun} #{ticket.number}",
            exit_on_error=False,
        )
        return ticket

    def cancel(
        self, ticket: Ticket, drop: bool = False, freed: Callable[[], object] | None = None
    ) -> None:
        """Stop the job at its next GPU submission; `drop`: forget its outcome, and call `freed`
        (if given) once the worker has stopped, whatever its outcome: the adapter is free again."""
        ticket.stop.set()
        if drop:
            waiting = self._waiting()
            if freed is None or ticket.number not in waiting:
                waiting.pop(ticket.number, None)
                return
            waiting[ticket.number] = _Callbacks(
                lambda _result: freed(), lambda _failure: freed(), None, freed
            )

    def _execute(self, runner: JobRunner, job: Job[Any], ticket: Ticket) -> None:
        worker = get_current_worker()  # cancelled when the node or the app goes away
        post = cast(Any, self).post_message

        def progress(line: str, fraction: float | None) -> None:
            if not ticket.cancelled:
                post(JobProgress(ticket.number, line, fraction))

        ctx = runner.context(ticket, progress, lambda: worker.is_cancelled)
        outcome: Message
        try:
            outcome = JobDone(ticket.number, job.execute(ctx), ctx.cancelled())
        except Cancelled:
            outcome = JobCancelled(ticket.number)
        except CompileError as exc:
            outcome = JobFailed(ticket.number, str(exc), compile=True)
        except WorkbenchError as exc:
            outcome = JobFailed(ticket.number, ui_message(exc))
        except Exception as exc:  # a bug below the UI or in user code: said, never fatal
            outcome = JobFailed(ticket.number, f"internal error: {type(exc).__name__}: {exc}")
        post(outcome)

    # -- outcomes, on the UI thread ----------------------------------------------------------------
    def on_job_progress(self, message: JobProgress) -> None:
        callbacks = self._waiting().get(message.number)
        if callbacks is not None and callbacks.progress is not None:
            callbacks.progress(message)

    async def on_job_done(self, message: JobDone) -> None:
        callbacks = self._waiting().pop(message.number, None)
        if callbacks is not None:  # a partial result of a cancelled job is still a result
            await _call(callbacks.done, message.result)

    async def on_job_failed(self, message: JobFailed) -> None:
        callbacks = self._waiting().pop(message.number, None)
        if callbacks is not None:
            await _call(callbacks.failed, message)

    async def on_job_cancelled(self, message: JobCancelled) -> None:
        callbacks = self._waiting().pop(message.number, None)
        if callbacks is not None and callbacks.cancelled is not None:
            await _call(callbacks.cancelled)


async def _call(callback: Callable[..., object], *args: object) -> None:
    """Call a callback, awaiting it when it is a coroutine function."""
    outcome = callback(*args)
    if inspect.isawaitable(outcome):
        await outcome
