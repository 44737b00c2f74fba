"""GPU work on the current kernel: run, bench, gradient check, footprint and probes, each a job
(`workbench.viewmodel.jobs`) whose typed result goes into the kernel's state; one at a time, shown
in the verdict bar while in flight, cancelled with escape. Every key acts or says why it cannot
(`refused`, from `viewmodel.feedback`). The bench, workgroup-stepping and check-all screens are
asked of the app with a message (`OpenBench`, `OpenWorkgroupSteps`, `OpenCheck`,
`OpenCheckAll`).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TypeVar

from workbench.errors import WorkbenchError
from workbench.messages import (
    JobFailed,
    JobProgress,
    OpenBench,
    OpenCheck,
    OpenCheckAll,
    OpenDebug,
    OpenWorkgroupSteps,
)
from workbench.screens.main.base import MainBase
from workbench.session import Case, Run
from workbench.specs.refworker import cancel_all as cancel_references
from workbench.viewmodel.advice import ui_message
from workbench.viewmodel.cases import build_case
from workbench.viewmodel.debug import Pick
from workbench.viewmodel.feedback import Standing, why_not
from workbench.viewmodel.form import FormKey, default_form, parse_form
from workbench.viewmodel.jobs import (
    BenchJob,
    FootprintJob,
    GradcheckJob,
    KernelJob,
    ProbesJob,
    RunJob,
    Target,
    Ticket,
    Work,
    ui_budget,
)
from workbench.viewmodel.kernel_state import KernelState
from workbench.viewmodel.keys import key
from workbench.viewmodel.status import kernel_key
from workbench.widgets.panes.diff import DiffPane
from workbench.widgets.panes.footprint import FootprintPane
from workbench.widgets.panes.probes import ProbesPane

R = TypeVar("R")


class KernelWork(MainBase):
    """The job in flight on the current kernel, and the keys that start one."""

    def __init__(self) -> None:
        super().__init__()
        self.busy: Work | None = None  # the GPU work in flight
        self.in_flight: Ticket | None = None  # its job
        self._busy_key: str | None = None  # the kernel it works on

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # Every key acts or says why it cannot (`refused`), so none is disabled; escape cancels
        # work in flight, else leaves a field.
        if action == "cancel":
            return self.busy is not None
        if action == "leave_field":
            return self.busy is None
        return True

    def standing(self) -> Standing:
        """What the screen knows now, for `why_not`."""
        session = self.wb.session
        kernel = self.kernel() if session else None
        st = self.current_state()
        if session is None or kernel is None:
            return Standing(opened=session is not None)
        problem = kernel.problem or ("" if kernel.entry_point else "no entry point to run")
        spec, _, unreadable = self._lookup(kernel) if not problem else (None, "", "")
        problem = problem or unreadable
        return Standing(
            opened=True,
            kernel=kernel.name,
            problem=problem,
            busy=self.busy,
            has_run=st is not None and st.run is not None,
            stale=(st.stale or "") if st else "",
            gradient=spec is not None and spec.gradient is not None,
        )

    def refused(self, action: str) -> bool:
        """True (and a notification saying why) when `action` cannot act now."""
        why = why_not(action, self.standing())
        if why is not None:
            self.notify(why, title=action.replace("_", " "), severity="warning")
        return why is not None

    def action_run(self) -> None:
        target = self._target("run")
        if target is not None:
            key_, form = target.key, target.form.key
            self._start(RunJob(target), lambda st, run: self._ran(key_, st, run, form))

    def action_bench(self) -> None:
        target = self._target("bench")
        if target is not None:
            key_, form = target.key, target.form.key
            budget = ui_budget(self.wb.config, self.wb.config["bench_ms"])
            job = BenchJob(target, budget=budget)
            self._start(job, lambda st, run: self._ran(key_, st, run, form))

    def action_gradcheck(self) -> None:
        target = self._target("gradcheck")
        if target is not None:
            self._start(GradcheckJob(target), KernelState.checked)

    def action_footprint(self) -> None:
        target = self._target("footprint")
        if target is not None:
            self._start(FootprintJob(target), KernelState.footprinted)

    def action_probe(self) -> None:
        target = self._target("probe")
        if target is not None:
            pane = self.query_one(ProbesPane)
            job = ProbesJob(target, invocation=pane.invocation, capacity=pane.capacity)
            self._start(job, KernelState.probed)

    def rerun(self, run: Run) -> None:
        if run.timing and run.timing.reps:
            self.action_bench()
        else:
            self.action_run()

    def _target(self, action: str) -> Target | None:
        """The current kernel and its form, for a job; None (and why, said) when `action`
        cannot act now or the form has a problem."""
        session = self.wb.session
        kernel = self.kernel()
        st = self.current_state()
        if self.refused(action) or session is None or kernel is None or st is None:
            return None
        spec, _ = self.spec_of(kernel)
        parsed = parse_form(st.form, spec)
        if parsed.problems:
            self.form.show_problems(parsed.problems)
            self.notify("fix the form first: " + parsed.problems[0], severity="error")
            return None
        planned = st.case if st.planned else None
        return Target(session, kernel_key(kernel), kernel, spec, st.form, planned)

    def _start(self, job: KernelJob[R], apply: Callable[[KernelState, R], None]) -> None:
        """Submit `job`; its result goes into the kernel's state with `apply`. The screen says
        what is in flight, and escape cancels it (`action_cancel`)."""
        key_, work, name = job.target.key, job.work, job.target.kernel.name
        self.busy, self._busy_key = work, key_
        self.refresh_bindings()
        self.verdict_bar.busy(f"{work.doing} {name}: preparing inputs", None)
        if work.tab:
            self.tabs.active = f"tab-{work.tab}"

        def done(result: R) -> None:
            st = self._work_done(key_)
            if st is not None:
                apply(st, result)
                self._show_if_current(key_)

        def failed(failure: JobFailed) -> None:
            st = self._work_done(key_)
            if st is None:
                return
            if failure.compile:
                st.compile_failed(failure.error)
            else:
                st.failed(failure.error)
            self._show_if_current(key_)
            if failure.compile and key_ == self.current:
                self.tabs.active = "tab-source"

        def cancelled() -> None:
            st = self._work_done(key_)
            if st is not None:
                st.cancel(work)
                self._show_if_current(key_)

        def progress(message: JobProgress) -> None:
            if self.busy:
                self.verdict_bar.busy(f"{work.doing} {name}: {message.line}", message.fraction)

        self.in_flight = self.submit(job, done, failed, progress, cancelled)

    def _ran(self, key_: str, st: KernelState, run: Run, form: FormKey) -> None:
        self.remember_run(key_, run)
        st.ran(run, form)

    def _work_done(self, key_: str) -> KernelState | None:
        """The work in flight is over: the state its outcome goes into."""
        self.busy, self.in_flight = None, None
        self.refresh_bindings()
        return self.states.get(key_)

    def action_cancel(self) -> None:
        """Cancel the work in flight now: the screen says so at once, and drops its outcome.
        The worker stops at its next submission (a dispatch under way cannot be interrupted);
        work started meanwhile waits for the GPU until then, and a second notification says when
        the adapter is free again."""
        work, st, ticket = self.busy, self.states.get(self._busy_key or ""), self.in_flight
        if work is None or ticket is None:
            return

        def freed() -> None:
            self.notify(f"the adapter is free again (the {work.noun} stopped)", title=work.noun)

        self.cancel(ticket, drop=True, freed=freed)
        cancel_references()  # a corpus's refs.py in a loop stops now, not after its time limit
        self.busy, self.in_flight = None, None
        self.refresh_bindings()
        if st is not None:
            st.cancel(work)
        self.refresh_view()
        self.notify(
            f"cancelled the {work.noun}: it stops at its next submission to the adapter "
            "(a dispatch under way finishes first)",
            title=work.noun,
        )

    # -- other screens on the current kernel -----------------------------------------------------
    def action_check(self) -> None:
        """Every check of the current kernel at its form's dims, on the check screen."""
        target = self._target("check")
        if target is not None:
            self.post_message(OpenCheck(target.session, target.kernel.name, target.case))

    def action_bench_variants(self) -> None:
        """Sweep an override or A/B the current kernel on the bench screen."""
        session = self.wb.session
        kernel = self.kernel()
        st = self.current_state()
        if self.refused("bench_variants") or session is None or kernel is None or st is None:
            return
        case = st.case if st.planned else None
        if case is None:
            spec, _ = self.spec_of(kernel)
            try:
                case = build_case(session, kernel, spec, st.form)
            except WorkbenchError as exc:
                self.notify("fix the form first: " + ui_message(exc), severity="error")
                return
        self.post_message(OpenBench(session, case))

    def action_next_footprint_output(self) -> None:
        st = self.current_state()
        if st is None or st.footprint is None:
            self.notify(
                f"no footprint yet: press {key('footprint')} to find who writes what",
                severity="warning",
            )
            return
        self.tabs.active = "tab-footprint"
        self.query_one(FootprintPane).next_output()

    def action_step_workgroups(self) -> None:
        """Open the workgroup stepper on the planned case."""
        session, st = self.wb.session, self.current_state()
        if self.refused("step_workgroups") or session is None or st is None:
            return
        if st.case is None or not st.planned:
            self.notify(
                "no case yet: fix the form, or wait for it to be planned", severity="warning"
            )
            return
        self.post_message(OpenWorkgroupSteps(session, st.case))

    def action_debug(self) -> None:
        """Open the Debug screen on the planned case, at what the tab on show points to: the
        Diff tab's highlighted element, the Footprint's element under the cursor (their last
        writer), the Probes tab's record (its invocation); else invocation 0,0,0."""
        session, st = self.wb.session, self.current_state()
        if self.refused("debug") or session is None or st is None:
            return
        if st.case is None or not st.planned:
            self.notify(
                "no case yet: fix the form, or wait for it to be planned", severity="warning"
            )
            return
        tab = self.tabs.active
        pick = None
        element = None
        if tab == "tab-diff":
            element = self.query_one(DiffPane).element()
        elif tab == "tab-footprint":
            element = self.query_one(FootprintPane).element()
        elif tab == "tab-probes" and (record := self.query_one(ProbesPane).record()) is not None:
            size = st.case.kernel.entry_point.workgroup_size if st.case.kernel.entry_point else ()
            gid = [w * n + v for w, n, v in zip(record.workgroup, size, record.local, strict=True)]
            pick = Pick(invocation=(gid[0], gid[1], gid[2]))
        if element is not None:
            pick = Pick(element=element)
        self.post_message(OpenDebug(session, st.case, pick))

    def action_check_all(self) -> None:
        """Every check of every kernel with a spec, each at the dims of its form."""
        session = self.wb.session
        if session is None:
            self.notify("the adapter is still opening")
            return
        cases: list[tuple[str, Callable[[], Case]]] = []
        for k in session.corpus.kernels:
            try:
                spec = session.spec(k)
            except WorkbenchError:
                continue
            if spec is None:
                continue
            st = self.states.get(kernel_key(k))
            form = st.form if st is not None else default_form(spec)

            cases.append((k.name, partial(build_case, session, k, spec, form)))
        self.post_message(OpenCheckAll(session, cases))
