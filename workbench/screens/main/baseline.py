"""The baseline: this session's runs of each kernel, one of them pinned, and every later run
shown against it (`viewmodel.baseline`). Comparing outputs of millions of elements takes seconds,
so it runs in a worker thread (no GPU) and the bar says "comparing…" until it is done.
"""

from __future__ import annotations

from dataclasses import replace

from textual import on, work

from workbench.dialogs.runs import RunsScreen
from workbench.messages import BaselineCompared
from workbench.screens.main.base import MainBase
from workbench.session import Run
from workbench.viewmodel.baseline import BaselineDiff, RunEntry, RunHistory, baseline_diff
from workbench.viewmodel.keys import key
from workbench.viewmodel.status import kernel_name


class BaselineControl(MainBase):
    """The run history and the pinned run of each kernel."""

    def __init__(self) -> None:
        super().__init__()
        self.history = RunHistory()
        # The pair of runs a worker is comparing now, so a refresh does not start it twice.
        self._comparing: tuple[RunEntry, Run] | None = None

    def remember_run(self, key_: str, run: Run) -> None:
        self.history.add(key_, run)

    def baseline_of(self, key_: str, run: Run | None) -> BaselineDiff | None:
        """The current run against the pinned one (None: nothing pinned); while the outputs are
        compared, a pending diff, and the comparison started."""
        baseline = self.history.diff(key_, run, wait=False)
        if baseline is not None and baseline.pending and run is not None:
            self._compare_with_baseline(key_, baseline.pinned, baseline.number, run)
        return baseline

    def _compare_with_baseline(
        self, key_: str, pinned: RunEntry, number: int | None, run: Run
    ) -> None:
        if not self._is_comparing(pinned, run):
            self._comparing = (pinned, run)
            self._baseline_worker(key_, pinned, number, run)

    def _is_comparing(self, pinned: RunEntry, run: Run) -> bool:
        # By identity: runs hold arrays, and == on them compares elements.
        return self._comparing is not None and (
            self._comparing[0] is pinned and self._comparing[1] is run
        )

    @work(thread=True, group="baseline", exit_on_error=False)
    def _baseline_worker(self, key_: str, pinned: RunEntry, number: int | None, run: Run) -> None:
        """Outputs of millions of elements take seconds to compare: never on the UI thread."""
        try:
            diff = baseline_diff(pinned, number, run)
        except Exception as exc:  # a bug here must not take the UI down: say it in the bar
            failed = f"comparison failed: {type(exc).__name__}: {exc}"
            pending = baseline_diff(pinned, number, run, outputs=False)
            diff = replace(pending, notes=(failed,), pending=False)
        self.post_message(BaselineCompared(key_, run, diff))

    @on(BaselineCompared)
    def _baseline_compared(self, message: BaselineCompared) -> None:
        if self._is_comparing(message.diff.pinned, message.run):
            self._comparing = None
        self.history.remember(message.key, message.run, message.diff)
        self._show_if_current(message.key)

    def action_pin(self) -> None:
        """Pin the run on screen: from now on every run is shown against it."""
        run = self.current_run()
        if run is None or self.current is None:
            self.notify(f"nothing to pin: run the kernel first ({key('run')})", severity="warning")
            return
        entry = self.history.entry(self.current, run) or self.history.add(self.current, run)
        self.history.pin(self.current, entry)
        self.notify(
            f"pinned run #{entry.number}: every run of {run.case.name} is now compared with it "
            f"({key('unpin')} unpins)",
            title="baseline",
        )
        self.refresh_view()

    def action_unpin(self) -> None:
        entry = self.history.unpin(self.current or "")
        if entry is None:
            self.notify(f"no baseline is pinned ({key('pin')} pins the run on screen)")
            return
        self.notify(f"unpinned run #{entry.number}", title="baseline")
        self.refresh_view()

    def action_runs(self) -> None:
        """Pick the baseline among this session's last runs of the kernel."""
        key_ = self.current
        entries = self.history.runs(key_) if key_ else ()
        if key_ is None or not entries:
            self.notify(f"no runs of this kernel yet this session ({key('run')} runs it)")
            return
        pinned = self.history.pinned(key_)

        def chosen(number: int | None) -> None:
            entry = next((e for e in entries if e.number == number), None)
            if entry is not None:
                self.history.pin(key_, entry)
                self.notify(f"pinned run #{entry.number}", title="baseline")
                self.refresh_view()

        self.app.push_screen(
            RunsScreen(
                kernel_name(key_),
                entries,
                pinned.number if pinned else None,
                self.wb.snapshot,
            ),
            chosen,
        )
