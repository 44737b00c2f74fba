"""Correctness checks of a case: compare with the reference, gradients by finite differences,
special values, determinism, and across adapters (`check_case` runs any of them).

    from workbench.checks import check_case, CheckReport, CheckResult, CHECK_KINDS

`workbench.session` imports `workbench.checks.compare`, which runs this file first; the names
that need the session are therefore loaded on first use (PEP 562), not at import.
"""

from __future__ import annotations

from typing import Any

from workbench.checks.result import CHECK_KINDS, DEFAULT_WHAT, CheckReport, CheckResult

__all__ = [
    "CHECK_KINDS",
    "DEFAULT_WHAT",
    "CheckReport",
    "CheckResult",
    "Injection",
    "check_case",
    "parse_injection",
    "parse_what",
]

_LAZY = {
    "check_case": "workbench.checks.runner",
    "parse_what": "workbench.checks.runner",
    "Injection": "workbench.checks.special",
    "parse_injection": "workbench.checks.special",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'workbench.checks' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
