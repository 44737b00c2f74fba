"""The case form: what the user types becomes a planned case as typing pauses.

Planning runs in a worker thread (`plan_case`: no GPU) so derived figures and refusals show
before anything runs; a plan for a form that has moved on is dropped (`KernelState.plan_done`).
Loading an input from a .npy file fills a recipe field.
"""

from __future__ import annotations

import asyncio

from rich.text import Text
from textual import on, work
from textual.widgets import Input, Tabs
from textual.worker import get_current_worker

from workbench.dialogs.load_npy import LoadNpyScreen
from workbench.messages import CasePlanned
from workbench.screens.main.base import MainBase, roles
from workbench.session import Session
from workbench.specs.base import KernelSpec
from workbench.viewmodel.cases import plan_case
from workbench.viewmodel.form import FormState, parse_form
from workbench.wgsl.corpus import Kernel
from workbench.widgets.form.case_form import CaseForm

PLAN_DELAY_S = 0.25


class CaseFormControl(MainBase):
    """The form's edits, planned into the current kernel's case."""

    @on(CaseForm.Changed)
    def _form_changed(self, event: CaseForm.Changed) -> None:
        st = self.current_state()
        if st is None:
            return
        st.form = event.state
        self.schedule_plan()

    @on(CaseForm.Submitted)
    def _form_submitted(self, event: CaseForm.Submitted) -> None:
        st = self.current_state()
        if st is None:
            return
        st.form = event.state
        self.action_run()
        if self.busy is not None:
            # The run started: the keys typed next are commands again, not more digits (the
            # focus goes to the result tabs; `d` comes back). A refused run leaves the focus
            # in the field to fix.
            self.tabs.query_one(Tabs).focus()

    @work(exclusive=True, group="plan-soon", exit_on_error=False)
    async def schedule_plan(self, delay: float = PLAN_DELAY_S) -> None:
        """Plan the current form once typing pauses for `delay` seconds."""
        await asyncio.sleep(delay)
        self._plan_now()

    def _plan_now(self) -> None:
        kernel, st, key_, session = (
            self.kernel(),
            self.current_state(),
            self.current,
            self.wb.session,
        )
        if kernel is None or st is None or key_ is None or session is None:
            return
        if kernel.problem or kernel.entry_point is None:
            self.form.show_derived("")
            return
        spec, _ = self.spec_of(kernel)
        parsed = parse_form(st.form, spec)
        if parsed.problems:
            self.form.show_problems(parsed.problems)
            self.form.show_derived(Text("fix the fields marked below", style="dim"))
            self.form.show_sizes(None)
            return
        if st.case is not None and st.planned:
            self.post_message(CasePlanned(key_, st.form.key, st.case, st.problems))
            return
        self._plan(session, key_, kernel, spec, st.form)

    @work(thread=True, exclusive=True, group="plan", exit_on_error=False)
    def _plan(
        self, session: Session, key_: str, kernel: Kernel, spec: KernelSpec | None, form: FormState
    ) -> None:
        worker = get_current_worker()
        case, problems = plan_case(session, kernel, spec, form)
        if not worker.is_cancelled:
            self.post_message(CasePlanned(key_, form.key, case, problems))

    @on(CasePlanned)
    async def _planned(self, message: CasePlanned) -> None:
        st = self.states.get(message.key)
        if st is None or not st.plan_done(message.form_key, message.case, message.problems):
            return
        if message.key != self.current:
            return
        shown = message.case or st.case
        if shown is not None:
            await self.form.set_roles(roles(shown))
        self.form.show_plan(shown, st.problems)
        self.refresh_view()

    # -- inputs from files -----------------------------------------------------------------------
    @on(CaseForm.LoadNpy)
    def action_load_npy(self) -> None:
        names = self.form.input_names()
        if not names:
            self.notify("this kernel has no input binding to fill")
            return

        def chosen(answer: tuple[str, str] | None) -> None:
            if answer is not None:
                self.form.set_recipe(answer[0], f"npy:{answer[1]}")

        self.app.push_screen(LoadNpyScreen(names, blink=not self.wb.snapshot), chosen)

    # -- focus -----------------------------------------------------------------------------------
    def focus_form(self) -> bool:
        """Focus the first field of the dims form (its text selected); False if none is shown."""
        if self.query_one("#kernel-view").has_class("-empty"):
            return False
        first = next(iter(self.form.query(Input).results(Input)), None)
        if first is not None:
            first.focus()
        return first is not None

    def action_focus_form(self) -> None:
        if not self.focus_form():
            self.notify(
                "no dims form yet: it appears with the kernel view, once the adapter is open"
            )
