"""Messages that worker threads post to the screen or app that started them.

GPU work, planning, status checks, opening the adapter and saving fixtures run in thread workers;
each tells the UI thread what happened by posting one of these (post_message is thread-safe), never
by calling into widgets. Every message names the kernel it is about (`key`), because the user may
have moved to another kernel by the time it arrives; an outcome of GPU work also names its `job`
(the screen counts what it starts), so the late outcome of work the user cancelled is told apart.
`Progress` replaces a Progress still waiting in the queue, so a fast worker never floods a busy UI
with stale progress lines.

Messages that a widget posts about itself (CaseForm.Changed, KernelBrowser.Selected,
FixturesScreen.OpenCase) stay with that widget.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from textual.message import Message

if TYPE_CHECKING:
    from workbench.bench.ab import ABResult
    from workbench.bench.sweep import SweepResult
    from workbench.checks import CheckReport
    from workbench.fixtures import ReplayResult
    from workbench.pipelines.stepper import Stepper
    from workbench.session import Case, Run, Session, Status
    from workbench.viewmodel.baseline import BaselineDiff
    from workbench.viewmodel.form import FormKey
    from workbench.viewmodel.status import KernelStatus
    from workbench.wgsl.corpus import Corpus
    from workbench.workgroups.footprint import Footprint
    from workbench.workgroups.probes import ProbeRun
    from workbench.workgroups.stepper import WorkgroupStep


class WorkerMessage(Message):
    """Addressed to the node that started the worker: neither it nor a subclass bubbles."""

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(bubble=False, **kwargs)  # type: ignore[arg-type]


class Progress(WorkerMessage):
    """Work in flight moved on: a line to show and how far along (None: indeterminate)."""

    def __init__(self, line: str, fraction: float | None) -> None:
        super().__init__()
        self.line = line
        self.fraction = fraction

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, Progress)


# -- the main screen's kernel work -----------------------------------------------------------------
class CasePlanned(WorkerMessage):
    """A form was planned into a case (None with the problems that stop it)."""

    def __init__(
        self, key: str, form_key: FormKey, case: Case | None, problems: tuple[str, ...]
    ) -> None:
        super().__init__()
        self.key = key
        self.form_key = form_key
        self.case = case
        self.problems = problems


class RunFinished(WorkerMessage):
    """A run or bench of kernel `key` finished."""

    def __init__(self, key: str, kind: str, run: Run, job: int = 0) -> None:
        super().__init__()
        self.key = key
        self.kind = kind
        self.job = job
        self.run = run


class BaselineCompared(WorkerMessage):
    """Run `run` of kernel `key` was compared with the pinned run (outputs element by element)."""

    def __init__(self, key: str, run: Run, diff: BaselineDiff) -> None:
        super().__init__()
        self.key = key
        self.run = run
        self.diff = diff


class CheckFinished(WorkerMessage):
    """A check (the gradient check) of kernel `key` finished."""

    def __init__(self, key: str, kind: str, report: CheckReport, job: int = 0) -> None:
        super().__init__()
        self.key = key
        self.kind = kind
        self.job = job
        self.report = report


class RunFailed(WorkerMessage):
    """GPU work on kernel `key` failed; `compile` when the source did not compile."""

    def __init__(
        self, key: str, kind: str, error: str, compile: bool = False, job: int = 0
    ) -> None:
        super().__init__()
        self.key = key
        self.kind = kind
        self.job = job
        self.error = error
        self.compile = compile


class RunCancelled(WorkerMessage):
    """The user cancelled GPU work on kernel `key`; whatever it produced is dropped."""

    def __init__(self, key: str, kind: str, job: int = 0) -> None:
        super().__init__()
        self.key = key
        self.kind = kind
        self.job = job


class StatusChecked(WorkerMessage):
    """Kernel `key` was compiled on the adapter: its mark, and what `Session.status` found."""

    def __init__(self, key: str, status: KernelStatus, found: Status) -> None:
        super().__init__()
        self.key = key
        self.status = status
        self.found = found


# -- the app: opening, reloading, adapters, fixtures -----------------------------------------------
class CorpusLoaded(WorkerMessage):
    """The corpus was read (the adapter may still be opening)."""

    def __init__(self, corpus: Corpus) -> None:
        super().__init__()
        self.corpus = corpus


class Opening(WorkerMessage):
    """The adapter chosen, its device being opened: what the header says meanwhile."""

    def __init__(self, line: str) -> None:
        super().__init__()
        self.line = line


class SessionOpened(WorkerMessage):
    """Corpus and adapter are ready."""

    def __init__(self, session: Session) -> None:
        super().__init__()
        self.session = session


class OpenFailed(WorkerMessage):
    """The corpus or the adapter could not be opened; `state` is what the header says."""

    def __init__(self, error: str, state: str) -> None:
        super().__init__()
        self.error = error
        self.state = state


class CorpusReloaded(WorkerMessage):
    """The session re-read the corpus (a file changed on disk)."""


class ReloadFailed(WorkerMessage):
    def __init__(self, error: str) -> None:
        super().__init__()
        self.error = error


class AdapterSwitched(WorkerMessage):
    """A session on another adapter is ready; `old` labels the adapter results came from."""

    def __init__(self, session: Session, old: str) -> None:
        super().__init__()
        self.session = session
        self.old = old


class AdapterFailed(WorkerMessage):
    def __init__(self, error: str) -> None:
        super().__init__()
        self.error = error


class FixtureSaved(WorkerMessage):
    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path


class FixtureExists(WorkerMessage):
    """Saving would overwrite a fixture: ask first."""

    def __init__(self, run: Run, path: Path, note: str) -> None:
        super().__init__()
        self.run = run
        self.path = path
        self.note = note


class FixtureNotSaved(WorkerMessage):
    def __init__(self, error: str) -> None:
        super().__init__()
        self.error = error


class FootprintFinished(WorkerMessage):
    """The footprint of kernel `key`'s case: who wrote which element."""

    def __init__(self, key: str, kind: str, footprint: Footprint, job: int = 0) -> None:
        super().__init__()
        self.key = key
        self.kind = kind
        self.job = job
        self.footprint = footprint


class ProbesFinished(WorkerMessage):
    """A probe run of kernel `key`: its records."""

    def __init__(self, key: str, kind: str, probes: ProbeRun, job: int = 0) -> None:
        super().__init__()
        self.key = key
        self.kind = kind
        self.job = job
        self.probes = probes


# -- screens with their own workers ----------------------------------------------------------------
class KernelChecked(WorkerMessage):
    """Check all: one kernel's row (`ok` None for an error)."""

    def __init__(self, name: str, ok: bool | None, summary: str) -> None:
        super().__init__()
        self.name = name
        self.ok = ok
        self.summary = summary


class FixtureReplayed(WorkerMessage):
    """The fixtures screen: one fixture's replay result."""

    def __init__(self, result: ReplayResult) -> None:
        super().__init__()
        self.result = result


class BenchFinished(WorkerMessage):
    """The bench screen: a sweep or A/B finished (`cancelled`: partial results)."""

    def __init__(self, result: SweepResult | ABResult, cancelled: bool) -> None:
        super().__init__()
        self.result = result
        self.cancelled = cancelled


class BenchFailed(WorkerMessage):
    """The bench screen: the sweep or A/B could not run (one line)."""

    def __init__(self, error: str) -> None:
        super().__init__()
        self.error = error


# -- the Steps screen --------------------------------------------------------------------------------
class StepperReady(WorkerMessage):
    """A pipeline was planned and its buffers put on the GPU."""

    def __init__(self, stepper: Stepper) -> None:
        super().__init__()
        self.stepper = stepper


class Stepped(WorkerMessage):
    """The stepper moved (next, back, run to a step, to the end, reset); `what` says how."""

    def __init__(self, what: str) -> None:
        super().__init__()
        self.what = what


class StepFailed(WorkerMessage):
    """Planning or stepping a pipeline failed; `error` is the one-line reason."""

    def __init__(self, error: str) -> None:
        super().__init__()
        self.error = error


class WorkgroupStepped(WorkerMessage):
    """The workgroup stepper ran a step (or reached the end)."""

    def __init__(self, state: WorkgroupStep) -> None:
        super().__init__()
        self.state = state


class WorkgroupStepFailed(WorkerMessage):
    def __init__(self, error: str) -> None:
        super().__init__()
        self.error = error
