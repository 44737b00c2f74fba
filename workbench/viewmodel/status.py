"""Kernel keys and the mark each kernel gets in the browser (from `Session.status`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from workbench.session import Status
    from workbench.wgsl.corpus import Kernel

# Mark kinds, in the order the help explains them.
KINDS = ("spec", "adhoc", "needs", "error", "mismatch", "pending")


@dataclass(frozen=True)
class KernelStatus:
    """What the browser shows for one kernel: a mark kind (one of KINDS) and the reason."""

    kind: str
    detail: str = ""


PENDING = KernelStatus("pending")


def kernel_key(kernel: Kernel) -> str:
    """`file:name`; a repeated section of one file is told apart by its line (`name#L40`)."""
    key = f"{kernel.file}:{kernel.name}"
    if kernel.problem.startswith("duplicate kernel section"):
        key += f"#L{kernel.line}"
    return key


def kernel_name(key: str) -> str:
    """The browser's label of a key: the kernel's name (`name#L40` for a repeated section)."""
    return key.rsplit(":", 1)[1]


def status_kind(status: Status, has_spec: bool, mismatch: bool) -> KernelStatus:
    """Turn a `Session.status` into a mark. (`StatusKind` is a StrEnum: compared by value, so
    the view model needs no session, and no GPU, at run time.)"""
    if status.ok:
        if mismatch:
            return KernelStatus("mismatch", "binding signature differs from the shipped kernel")
        return KernelStatus("spec" if has_spec else "adhoc")
    if status.kind == "needs":
        return KernelStatus("needs", status.text)
    return KernelStatus("error", status.text.split("\n", 1)[0])
