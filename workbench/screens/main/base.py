"""What every part of the main screen shares: its widgets by type, the kernels' states, the
current kernel, and its spec (`MainBase`).

The main screen is put together from one class per concern (`selection`, `case_form`, `work`,
`baseline`, `takeaway`), each a subclass of `MainBase` that owns its own state; what one concern
asks of another is declared here (`refresh_view`, `open_kernel`, `schedule_plan`, `refused`,
`remember_run`), so each module reads on its own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.screen import Screen
from textual.widgets import Static, TabbedContent

from workbench.errors import SpecMismatchError, WorkbenchError
from workbench.jobs import RunsJobs
from workbench.session import Case, Run
from workbench.specs.base import KernelSpec
from workbench.viewmodel.advice import ui_message
from workbench.viewmodel.jobs import Work
from workbench.viewmodel.kernel_state import KernelState, list_verdict
from workbench.viewmodel.status import kernel_key
from workbench.wgsl.corpus import Kernel
from workbench.widgets.browser import KernelBrowser
from workbench.widgets.form.case_form import CaseForm
from workbench.widgets.verdict_bar import VerdictBar

if TYPE_CHECKING:
    from workbench.app import WorkbenchApp


class MainBase(RunsJobs, Screen[None]):
    """The main screen's shared state and the hooks its concerns implement."""

    busy: Work | None  # the GPU work in flight (work)

    def __init__(self) -> None:
        super().__init__()
        self.states: dict[str, KernelState] = {}
        self.current: str | None = None
        self._specs: dict[str, KernelSpec | None] = {}  # each kernel's last readable spec

    @property
    def wb(self) -> WorkbenchApp:
        return self.app  # type: ignore[return-value]

    # -- typed accessors -----------------------------------------------------------------------
    @property
    def browser(self) -> KernelBrowser:
        return self.query_one(KernelBrowser)

    @property
    def form(self) -> CaseForm:
        return self.query_one(CaseForm)

    @property
    def verdict_bar(self) -> VerdictBar:
        return self.query_one(VerdictBar)

    @property
    def tabs(self) -> TabbedContent:
        return self.query_one("#tabs", TabbedContent)

    def current_state(self) -> KernelState | None:
        return self.states.get(self.current or "")

    def current_run(self) -> Run | None:
        st = self.current_state()
        return st.run if st else None

    def kernel(self, key_: str | None = None) -> Kernel | None:
        session = self.wb.session
        key_ = key_ or self.current
        if session is None or key_ is None:
            return None
        return next((k for k in session.corpus.kernels if kernel_key(k) == key_), None)

    def spec_of(self, kernel: Kernel) -> tuple[KernelSpec | None, str]:
        """The kernel's spec (None: ad hoc) and, for a signature mismatch, why it runs ad hoc."""
        spec, mismatch, _ = self._lookup(kernel)
        return spec, mismatch

    def _lookup(self, kernel: Kernel) -> tuple[KernelSpec | None, str, str]:
        """The spec, why it runs ad hoc, and why its description cannot be read ("" it can).

        While the corpus's workbench.toml cannot be used, the kernel keeps the spec it last had
        (its form and results stay) and cannot run until the file is fixed."""
        key_, session = kernel_key(kernel), self.wb.session
        if session is None:  # no kernel is shown before the session opens
            return None, "", ""
        try:
            spec, mismatch = session.spec(kernel), ""
        except SpecMismatchError as exc:
            spec, mismatch = None, str(exc)
        except WorkbenchError as exc:
            return self._specs.get(key_), "", ui_message(exc)
        self._specs[key_] = spec
        return spec, mismatch, ""

    def _show_if_current(self, key_: str) -> None:
        """A kernel's state changed: its line in the list follows, its view if it is shown."""
        st = self.states.get(key_)
        if st is not None:
            self.browser.set_verdict(key_, list_verdict(st))
        if key_ == self.current:
            self.refresh_view()

    def _say_title(self, text: Text) -> None:
        self.query_one("#kv-title", Static).update(text)

    def _say_doc(self, text: Text) -> None:
        self.query_one("#kv-doc", Static).update(text)

    def update_topbar(self) -> None:
        app = self.wb
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append("workbench", style="bold")
        text.append(" · ")
        if app.session is not None:
            if app.session.on_cpu:
                text.append(" CPU ", style="bold black on yellow")
                text.append(" ")
            text.append(app.adapter_label())
        else:
            text.append(app.opening or "opening the GPU adapter…", style="italic")
        text.append(" · corpus ")
        text.append(app.corpus_label())
        if app.corpus_why:
            text.append(f" ({app.corpus_why})", style="dim")
        self.query_one("#topbar", Static).update(text)

    # -- what one concern asks of another --------------------------------------------------------
    def refresh_view(self) -> None:
        """Show the current kernel's state (the screen)."""
        raise NotImplementedError

    async def open_kernel(self, key_: str, rerun: bool = False) -> None:
        """Show a kernel (selection)."""
        raise NotImplementedError

    def schedule_plan(self, delay: float = 0.25) -> object:
        """Plan the form once typing pauses (case form)."""
        raise NotImplementedError

    def refused(self, action: str) -> bool:
        """Whether `action` cannot act now, said (work)."""
        raise NotImplementedError

    def remember_run(self, key_: str, run: Run) -> None:
        """Keep a finished run in the history (baseline)."""
        raise NotImplementedError

    def action_run(self) -> None:
        """Run the current kernel (work)."""
        raise NotImplementedError

    def rerun(self, run: Run) -> None:
        """Run the current kernel again as `run` was made: a bench, or a run (work)."""
        raise NotImplementedError


def roles(case: Case) -> list[tuple[str, str]]:
    """(name, role) of each storage binding of a case: the form's recipe fields."""
    return [(p.name, p.role) for p in case.bindings if p.role != "uniform"]
