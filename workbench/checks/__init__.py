"""Correctness checks of a case: compare with the reference, gradients by finite differences,
special values, determinism, and across adapters (`check_case` runs any of them).

    from workbench.checks import check_case, CheckReport, CheckResult, CHECK_KINDS

The checks sit above the session and call it to run cases; what "close" means comes from
`workbench.closeness`, below the session, so nothing here is imported by the engine.
"""

from __future__ import annotations

from workbench.checks.result import CHECK_KINDS, DEFAULT_WHAT, CheckReport, CheckResult
from workbench.checks.runner import check_case, parse_what
from workbench.checks.special import Injection, parse_injection

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
