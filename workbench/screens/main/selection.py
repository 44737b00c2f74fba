"""Kernel selection: which kernel is shown, its title, and every kernel's mark in the browser.

Owns the marks (`_statuses`: one `StatusJob` per kernel, in turn, after every corpus read or
adapter switch) and what the app tells the screen about the corpus and the adapter.
"""

from __future__ import annotations

from rich.text import Text
from textual import on

from workbench.errors import SpecMismatchError, WorkbenchError
from workbench.messages import JobFailed
from workbench.screens.main.base import MainBase, roles
from workbench.session import Case, Run, Session, Status, StatusKind
from workbench.specs.base import KernelSpec
from workbench.viewmodel.form import FormState, default_form, dims_of, form_paths
from workbench.viewmodel.jobs import StatusJob, Ticket
from workbench.viewmodel.kernel_state import KernelState, needs_text
from workbench.viewmodel.keys import key
from workbench.viewmodel.status import PENDING, KernelStatus, kernel_key, kernel_name, status_kind
from workbench.wgsl.corpus import Corpus, Kernel
from workbench.widgets.browser import KernelBrowser


class KernelSelection(MainBase):
    """The kernel shown, and the marks of all of them."""

    def __init__(self) -> None:
        super().__init__()
        self._statuses: dict[str, KernelStatus] = {}
        self._status_ticket: Ticket | None = None

    # -- what the app tells us -----------------------------------------------------------------
    def show_corpus(self, corpus: Corpus) -> None:
        """The corpus is loaded (before the adapter is ready): fill the browser."""
        browser = self.browser
        browser.set_corpus(corpus, self._statuses)
        wanted = self.wb.first_kernel
        known = {kernel_key(k) for k in corpus.kernels}
        first = self.current or (wanted if wanted in known else None) or browser.first_key()
        if first:
            browser.select(first)
            self.current = first
        self._say_title(
            Text("opening the GPU adapter… (the kernel view appears when it is ready)", style="dim")
        )

    async def session_ready(self) -> None:
        self.update_topbar()
        self.refresh_statuses()
        key_ = self.current or self.browser.first_key()
        if key_:
            await self.open_kernel(key_)

    async def corpus_reloaded(self) -> None:
        """The files changed on disk and the session re-read them."""
        session = self.wb.session
        if session is None:
            return
        browser = self.browser
        browser.set_corpus(session.corpus, self._statuses)
        for st in self.states.values():
            st.forget_case()
        keys = {kernel_key(k) for k in session.corpus.kernels}
        key_ = self.current if self.current in keys else browser.first_key()
        self.refresh_statuses()
        if key_ is None:
            return
        browser.select(key_)
        await self.open_kernel(key_, rerun=True)

    async def adapter_switched(self, old_label: str) -> None:
        """A new session on another adapter: statuses change, old results are from elsewhere."""
        self.update_topbar()
        for key_, st in self.states.items():
            if key_ == self.current:
                st.forget_case()
            else:
                st.ran_elsewhere(old_label)
        self.refresh_statuses()
        if self.current:
            await self.open_kernel(self.current, rerun=True)

    def switching_corpus(self, path: object) -> None:
        """The app opens another corpus: say so where the verdict goes."""
        self.verdict_bar.busy(f"opening {path}…", None)

    async def corpus_opened(self) -> None:
        """Another corpus on the same adapter: nothing of the last one is kept."""
        session = self.wb.session
        if session is None:
            return
        self.states.clear()
        self._specs.clear()
        self._statuses.clear()
        self.current = self.browser.current = None
        self.update_topbar()
        self.show_corpus(session.corpus)
        await self.session_ready()
        if self.current:
            self.wb.remember_kernel(self.current)

    def corpus_unreadable(self, error: str) -> None:
        """A file of the corpus changed and cannot be read: the results shown stay, marked
        stale, with the reason where the verdict goes, until the file is fixed."""
        st = self.current_state()
        if st is not None:
            st.compile_failed(error)
        self.refresh_view()

    # -- the kernel shown ------------------------------------------------------------------------
    @on(KernelBrowser.Selected)
    async def _selected(self, event: KernelBrowser.Selected) -> None:
        if event.key == self.current and self.current_state() is not None:
            return  # already shown: the cursor came back to it (a rebuilt tree, a fixture)
        await self.open_kernel(event.key)

    async def open_kernel(self, key_: str, rerun: bool = False) -> None:
        """Show a kernel: its form (remembered per kernel), its last results, and plan its case."""
        self.current = key_
        kernel = self.kernel(key_)
        if kernel is None:
            return
        self.wb.remember_kernel(key_)
        spec, mismatch, unreadable = self._lookup(kernel)
        before = st = self.states.get(key_)
        if st is None or set(st.form.dims) != {d.name for d in dims_of(spec)}:
            # First visit, or the kernel gained/lost its spec with an edit: start from defaults.
            st = self.states[key_] = KernelState(form=default_form(spec))
        status = self._statuses.get(key_, PENDING)
        if kernel.problem:
            problem = kernel.problem
            located = problem.startswith(f"{kernel.file}:")
            st.source_problem(problem if located else f"{kernel.file}: {problem}")
        elif unreadable:
            st.compile_failed(unreadable)
        elif status.kind == "needs":
            st.source_problem(self._needs(kernel.name, status))
        else:
            st.source_fine(status)
        self._title(kernel, spec, mismatch)
        self.query_one("#kernel-view").remove_class("-empty")
        known = st.case or (st.run.case if st.run else None)
        await self.form.set_kernel(
            spec,
            st.form,
            form_paths(spec, kernel.entry_point.bindings) if kernel.entry_point else (),
            tuple(kernel.module.overrides) if kernel.module else (),
            roles=roles(known) if known else None,
            kernel=key_,
        )
        self.refresh_view()
        self.refresh_bindings()
        # A kernel just described runs again as described, so verdict and title agree.
        ran = st.run or (before.run if before is not None else None)
        if rerun and ran is not None and not kernel.problem:
            self.rerun(ran)
        else:
            self.schedule_plan(0.01)

    def _title(self, kernel: Kernel, spec: KernelSpec | None, mismatch: str) -> None:
        title = Text()
        title.append(kernel.name, style="bold")
        title.append(f"  {kernel.file}:{kernel.line}", style="cyan")
        status = self._statuses.get(kernel_key(kernel), PENDING)
        if spec is not None:
            title.append("  spec'd ✓", style="green")
        else:
            title.append("  ad hoc ○", style="cyan")
        if status.kind == "needs":
            title.append(f"  ⚠ {status.detail}", style="yellow")
        elif status.kind == "error":
            kind = status.detail.split(":", 1)[0] if status.detail else "error"
            title.append(f"  ✗ {kind}", style="red")
        title.append(f"  on {self.wb.adapter_label()}", style="dim")
        self._say_title(title)
        if mismatch:
            doc = Text(f"runs ad hoc: {mismatch}", style="magenta")
        elif spec is not None:
            doc = Text(spec.doc or "")
        else:
            doc = Text(
                "no spec: one size n for every runtime-sized array, no reference to compare with"
            )
        self._say_doc(doc)

    async def show_case(self, case: Case, run: Run | None, error: str | None = None) -> None:
        """Show a case made elsewhere (a fixture) and its run, as if it had been run here.

        The form gets the case's dims and seed; its inputs (arrays from the fixture) are kept
        with the case and used until the form is edited."""
        key_ = kernel_key(case.kernel)
        form = FormState(dims={k: str(v) for k, v in case.dims.items()}, seed=str(case.seed))
        st = self.states[key_] = KernelState(form=form, case=case, case_key=form.key)
        st.run, st.run_form = run, form.key
        st.set_error(error)
        self.browser.select(key_)
        await self.open_kernel(key_)

    # -- statuses ------------------------------------------------------------------------------
    def refresh_statuses(self) -> None:
        """Check every kernel of the session (one job each, in turn); a newer check replaces
        one under way."""
        session = self.wb.session
        if session is None:
            return
        if self._status_ticket is not None:
            self.cancel(self._status_ticket, drop=True)
        self._check_next(session, list(session.corpus.kernels))

    def _check_next(self, session: Session, kernels: list[Kernel]) -> None:
        if not kernels:
            self._status_ticket = None
            return
        k, rest = kernels[0], kernels[1:]

        def checked(found: Status) -> None:
            self._status(session, k, found)
            self._check_next(session, rest)

        def failed(failure: JobFailed) -> None:
            self._status(session, k, Status(StatusKind.ERROR, detail=failure.error))
            self._check_next(session, rest)

        self._status_ticket = self.submit(StatusJob(session, k), checked, failed)

    def _status(self, session: Session, k: Kernel, found: Status) -> None:
        try:
            spec = session.spec(k)
            mismatch = False
        except SpecMismatchError:
            spec, mismatch = None, True
        except WorkbenchError:  # an unreadable workbench.toml: `found` says so
            spec, mismatch = None, False
        key_, status = kernel_key(k), status_kind(found, spec is not None, mismatch)
        self._statuses[key_] = status
        self.browser.set_status(key_, status)
        if key_ != self.current:
            return
        st = self.states.get(key_)
        if st is None:
            return
        before = st.error
        if found.kind is StatusKind.COMPILE_ERROR or (
            status.kind == "error" and found.error is not None
        ):
            st.compile_failed(found.message)
        elif status.kind == "needs":
            st.source_problem(self._needs(kernel_name(key_), status))
        else:
            st.source_fine(status)
        kernel = self.kernel(key_)
        if kernel is not None:
            self._title(kernel, *self.spec_of(kernel))
        if st.error != before and not self.busy:
            self.refresh_view()

    def _needs(self, name: str, status: KernelStatus) -> str:
        return needs_text(name, status, self.wb.adapter_label(), key("adapter"))
