"""Typed failures. Each carries the exit code the command line uses and a message meant for people.

Exit codes: 1 a check failed, 2 a user error (bad argument, bad file, compile error, limit), 3 a GPU
or adapter failure. Nothing a user can cause should escape as a traceback.

Messages say what is wrong in the engine's words and never name a command-line flag or a key: an
error that has a remedy carries it as an `Advice`, which the command line and the terminal UI each
word their own way (`--adapter` there, the `a` key here).
"""

from __future__ import annotations

from enum import StrEnum


class Advice(StrEnum):
    """A remedy the user can apply, worded by whoever shows the error."""

    OTHER_ADAPTER = "other_adapter"  # run on another adapter
    RUN_ADHOC = "run_adhoc"  # ignore the spec and run the kernel ad hoc
    CHANGE_DIMS = "change_dims"  # use other (smaller) dims
    SET_UNIFORM = "set_uniform"  # set a uniform's fields instead of sizing it
    OVERWRITE = "overwrite"  # replace what exists
    FORCE_TOLERANCE = "force_tolerance"  # accept a tolerance over the ceiling
    GIVE_OVERRIDE = "give_override"  # give a pipeline-overridable constant a value
    SET_GRID = "set_grid"  # give the dispatch grid explicitly
    LONGER_TIMEOUT = "longer_timeout"  # give a dispatch longer than the watchdog allowed


class WorkbenchError(Exception):
    """Base of every error the tool raises on purpose; `str()` is the whole user-facing message."""

    exit_code = 2

    def __init__(self, message: str = "", advice: Advice | None = None) -> None:
        super().__init__(message)
        self.advice = advice


class UserError(WorkbenchError):
    """Bad arguments, bad files, unknown names: the user can fix it."""


class CorpusError(UserError):
    """A corpus folder, config or WGSL file that cannot be read or understood."""


class ReflectionError(CorpusError):
    """WGSL the scanner/reflector cannot make sense of (with file:line where known)."""


class CompileError(UserError):
    """The shader compiler rejected a module; the message is mapped back to the user's file.

    `str()` is the rendered diagnostic (`file:line:col: message`, the source line and a caret);
    `file`, `line`, `column` (1-based; 0 when the compiler gave no location) and `headline` (the
    message alone) are there for a UI that jumps to the place.
    """

    def __init__(
        self, message: str, *, file: str = "", line: int = 0, column: int = 0, headline: str = ""
    ) -> None:
        super().__init__(message)
        self.file = file
        self.line = line
        self.column = column
        self.headline = headline or message.split("\n", 1)[0]

    @property
    def location(self) -> tuple[str, int, int] | None:
        """(file, line, column) when the compiler located the error."""
        return (self.file, self.line, self.column) if self.file and self.line else None


class MissingFeatureError(UserError):
    """The kernel needs a device feature the chosen adapter lacks."""


class LimitError(UserError):
    """A dimension or binding would exceed an adapter limit; refused before allocation."""


class SpecMismatchError(UserError):
    """A kernel has a spec's name but not its binding signature."""


class GpuError(WorkbenchError):
    """The adapter or device failed (validation at dispatch, device lost, no adapter)."""

    exit_code = 3


class DeviceLostError(GpuError):
    """The device was lost during or after a dispatch."""


class DispatchTimeout(GpuError):
    """A dispatch did not finish within the watchdog time (`--timeout`)."""


class CheckFailed(WorkbenchError):
    """A correctness check did not pass."""

    exit_code = 1


class Cancelled(Exception):
    """Work stopped because its caller's `cancelled()` said so, at the next point it could (between
    two submissions to the GPU, or before the reference). Not a `WorkbenchError`: nothing failed."""
