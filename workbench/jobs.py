"""Work the UI runs off its thread, and what becomes of a worker that raises.

Every worker the UI starts is started with `exit_on_error=False`; the node that started it mixes
in `SafeWorkers`, so an exception nobody caught (a bug below the UI, user code that raises) is a
notification naming the work, and the app, its screens and their state stay as they were.
"""

from __future__ import annotations

from textual.worker import Worker, WorkerState


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
        self.worker_failed(worker)

    def worker_failed(self, worker: Worker[object]) -> None:
        """Undo what the node set up for `worker` (a busy flag); nothing by default."""
