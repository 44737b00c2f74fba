"""Verdicts, in one place: the words a result ends in, and the one rule that decides them.

The rule: PASS only where at least one output element the kernel wrote was compared with a
reference within a bounded tolerance (`workbench.closeness` bounds every tolerance). Anything else
says what was missing and is not a pass: an output the kernel never wrote (`no_work`, from the
sentinel evidence of `workbench.written`), a case whose outputs have no element (`empty`), a
reference or a fixture that compared no output (`nothing_compared`), no reference at all (`ran`).

Everything that decides a verdict calls `decide`: `Session.run` (and through it `run`, bench and
the terminal UI), the checks' `CheckReport`, fixture replay (and through it the pytest plugin) and
the pipeline steps. Everything that shows one uses `Verdict`'s word, text and mark, and everything
that ends in an exit code uses `Verdict.exit_code`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from enum import StrEnum

from workbench.closeness import Comparison


class Verdict(StrEnum):
    """What a run, a check report, a replayed fixture or a pipeline step verified."""

    PASS = "pass"  # written elements compared with a reference, every one within tolerance
    FAIL = "fail"  # an element outside tolerance, or a check that failed
    NO_WORK = "no_work"  # an output of which the kernel wrote no element
    EMPTY = "empty"  # every compared output has 0 elements: an empty case
    NOTHING_COMPARED = "nothing_compared"  # a reference (or fixture) compared no output
    RAN = "ran"  # no reference to compare with: it ran, nothing was verified
    SKIP = "skip"  # not run: the adapter lacks a feature the kernel needs
    ERROR = "error"  # it could not be checked at all

    @property
    def ok(self) -> bool:
        """True for PASS alone: `ok: true`, a green mark, a passing pytest item."""
        return self is Verdict.PASS

    @property
    def exit_code(self) -> int:
        """0 pass (and skip: nothing ran, and it says so), 2 error, 1 every other verdict."""
        return _EXIT.get(self, 1)

    @property
    def word(self) -> str:
        """`PASS`, `NO_WORK`, …: the verdict as printed."""
        return self.value.upper()

    @property
    def text(self) -> str:
        """The word and, for every verdict that is not a plain pass or fail, what was missing."""
        why = _WHY.get(self)
        return f"{self.word} ({why})" if why else self.word

    @property
    def mark(self) -> str:
        return _MARK[self]


_EXIT = {Verdict.PASS: 0, Verdict.SKIP: 0, Verdict.ERROR: 2}
_WHY = {
    Verdict.NO_WORK: "the kernel wrote no element of an output: check the dims, grid and uniforms",
    Verdict.EMPTY: "empty case: the outputs have 0 elements, so nothing was compared",
    Verdict.NOTHING_COMPARED: "no output was compared with a reference: nothing was verified",
    Verdict.RAN: "nothing compared with a reference: a kernel without one is described in "
    "workbench.toml",
    Verdict.ERROR: "nothing could be checked",
}
_MARK = {
    Verdict.PASS: "✓",
    Verdict.FAIL: "✗",
    Verdict.NO_WORK: "∅",
    Verdict.EMPTY: "∅",
    Verdict.NOTHING_COMPARED: "○",
    Verdict.RAN: "○",
    Verdict.SKIP: "–",
    Verdict.ERROR: "✗",
}


# Least to most serious: what a collection of verdicts (`check --all`, a replay) sums up to.
SEVERITY = (
    Verdict.PASS,
    Verdict.SKIP,
    Verdict.RAN,
    Verdict.EMPTY,
    Verdict.NOTHING_COMPARED,
    Verdict.NO_WORK,
    Verdict.FAIL,
    Verdict.ERROR,
)


def worst(verdicts: Iterable[Verdict]) -> Verdict:
    """The most serious of `verdicts` (PASS for none)."""
    return max(verdicts, key=SEVERITY.index, default=Verdict.PASS)


def decide(
    compared: Iterable[int],
    *,
    failed: bool = False,
    no_work: bool = False,
    nothing_compared: bool = False,
    verified: bool = False,
) -> Verdict:
    """The one rule.

    `compared`: for each output compared with a reference, how many elements were compared.
    `failed`: an element outside tolerance, or a check that failed. `no_work`: an output the
    kernel wrote no element of (sentinel evidence). `nothing_compared`: there was a reference (or
    a fixture's expected outputs) and it compared no output. `verified`: another check compared
    values the kernel wrote with a reference (gradients, special values).
    """
    counts = list(compared)
    if no_work:
        return Verdict.NO_WORK
    if failed:
        return Verdict.FAIL
    if nothing_compared:
        return Verdict.NOTHING_COMPARED
    if counts and not any(counts):
        return Verdict.EMPTY
    if verified or any(counts):
        return Verdict.PASS
    return Verdict.RAN


def decide_comparisons(
    comparisons: Mapping[str, Comparison] | Iterable[Comparison],
    *,
    unwritten: Iterable[str] = (),
    reference: bool = True,
    failed: bool = False,
    verified: bool = False,
) -> Verdict:
    """`decide` for outputs compared with `workbench.closeness.compare`; `reference`: whether
    there was a reference to compare with (without one, no comparison is `ran`)."""
    cmps = list(comparisons.values() if isinstance(comparisons, Mapping) else comparisons)
    return decide(
        (c.n_total for c in cmps),
        failed=failed or any(not c.ok for c in cmps),
        no_work=any(True for _ in unwritten),
        nothing_compared=reference and not cmps and not verified,
        verified=verified,
    )
