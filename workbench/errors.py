"""Typed failures. Each carries the exit code the command line uses and a message meant for people.

Exit codes: 1 a check failed, 2 a user error (bad argument, bad file, compile error, limit), 3 a GPU
or adapter failure. Nothing a user can cause should escape as a traceback.
"""

from __future__ import annotations


class WorkbenchError(Exception):
    """Base of every error the tool raises on purpose; `str()` is the whole user-facing message."""

    exit_code = 2


class UserError(WorkbenchError):
    """Bad arguments, bad files, unknown names: the user can fix it."""


class CorpusError(UserError):
    """A corpus folder, config or WGSL file that cannot be read or understood."""


class ReflectionError(CorpusError):
    """WGSL the scanner/reflector cannot make sense of (with file:line where known)."""


class CompileError(UserError):
    """The shader compiler rejected a module; the message is mapped back to the user's file."""


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


class CheckFailed(WorkbenchError):
    """A correctness check did not pass."""

    exit_code = 1
