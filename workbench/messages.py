"""Messages that worker threads post to the screen or app that started them, as dataclasses.

GPU work runs as jobs (`workbench.jobs`): a job's progress, result, failure or cancellation comes
back as a `Job…` message carrying its number, which the submitting node turns into a call of the
callback it gave. The other workers (opening the corpus and the adapter, planning a case,
comparing with the baseline, saving a fixture) post the messages below. Every message names what
it is about (the kernel `key`, the job `number`), because the user may have moved on by the time
it arrives. A screen asks the app for another screen with an `Open…` message (screens do not
import each other). `JobProgress` replaces one still waiting in the queue, so a fast worker never floods a
busy UI with stale progress lines.

Messages that a widget posts about itself (CaseForm.Changed, KernelBrowser.Selected,
FixturesScreen.OpenCase) stay with that widget, dataclasses too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.message import Message

if TYPE_CHECKING:
    from workbench.session import Case, Run, Session
    from workbench.viewmodel.baseline import BaselineDiff
    from workbench.viewmodel.debug import Pick
    from workbench.viewmodel.form import FormKey
    from workbench.wgsl.corpus import Corpus


class WorkerMessage(Message):
    """Addressed to the node that started the worker: neither it nor a subclass bubbles."""

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(bubble=False, **kwargs)  # type: ignore[arg-type]


# -- jobs ------------------------------------------------------------------------------------------
@dataclass
class JobProgress(WorkerMessage):
    """Job `number` moved on: a line to show and how far along (None: indeterminate)."""

    number: int
    line: str
    fraction: float | None

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, JobProgress) and message.number == self.number


@dataclass
class JobDone(WorkerMessage):
    """Job `number` returned `result` (`cancelled`: it was cancelled on the way; partial)."""

    number: int
    result: Any
    cancelled: bool = False


@dataclass
class JobFailed(WorkerMessage):
    """Job `number` failed: one line saying why; `compile` when the source did not compile."""

    number: int
    error: str
    compile: bool = False


@dataclass
class JobCancelled(WorkerMessage):
    """Job `number` was cancelled before it reached the GPU."""

    number: int


# -- the main screen: planning and the baseline (no GPU) -------------------------------------------
@dataclass
class CasePlanned(WorkerMessage):
    """A form was planned into a case (None with the problems that stop it)."""

    key: str
    form_key: FormKey
    case: Case | None
    problems: tuple[str, ...]


@dataclass
class BaselineCompared(WorkerMessage):
    """The run of kernel `key` compared with its pinned baseline."""

    key: str
    run: Run
    diff: BaselineDiff


# -- the app: opening the corpus and the adapter, saving fixtures ----------------------------------
@dataclass
class CorpusLoaded(WorkerMessage):
    """The corpus was read (the adapter may still be opening)."""

    corpus: Corpus


@dataclass
class Opening(WorkerMessage):
    """The adapter chosen, its device being opened: what the header says meanwhile."""

    line: str


@dataclass
class SessionOpened(WorkerMessage):
    """Corpus and adapter are ready."""

    session: Session


@dataclass
class OpenFailed(WorkerMessage):
    """The corpus or the adapter could not be opened; `state` is what the header says."""

    error: str
    state: str


@dataclass
class FixtureSaved(WorkerMessage):
    path: Path


@dataclass
class FixtureExists(WorkerMessage):
    """The fixture file exists: ask before overwriting it."""

    run: Run
    path: Path
    note: str


@dataclass
class FixtureNotSaved(WorkerMessage):
    error: str


# -- a screen asking the app for another screen (these bubble up to the app) -----------------------
@dataclass
class OpenBench(Message):
    """Sweep or A/B `case` on the bench screen."""

    session: Session
    case: Case


@dataclass
class OpenWorkgroupSteps(Message):
    """Step the dispatch of `case` workgroup by workgroup."""

    session: Session
    case: Case


@dataclass
class OpenDebug(Message):
    """Step one invocation of `case` line by line: the one `pick` names (None: 0,0,0)."""

    session: Session
    case: Case
    pick: Pick | None = None


@dataclass
class OpenCheck(Message):
    """Every check of one kernel (`name`) on the case `make_case` builds."""

    session: Session
    name: str
    make_case: Callable[[], Case]


@dataclass
class OpenCheckAll(Message):
    """Check every kernel with a spec: (name, a function building its case) each."""

    session: Session
    cases: list[tuple[str, Callable[[], Case]]]
