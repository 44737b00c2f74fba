"""The trace instrumentation's text: every line of the user's module stays on its line (so the
compiler's messages and the source map still name the user's file and line), and the location
table points at the statements it records."""

from __future__ import annotations

import textwrap

import pytest

from tests.debug.conftest import KERNELS
from workbench.session import Session
from workbench.wgsl.lexer import token_texts
from workbench.wgsl.trace import KINDS, instrument_trace


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_every_line_keeps_its_number(debug_session: Session, name):
    kernel = debug_session.kernel(name)
    plan = instrument_trace(kernel)
    original = kernel.text.splitlines()
    edited = plan.kernel.edited.splitlines()
    assert len(edited) == len(original)
    for before, after in zip(original, edited, strict=True):
        # Each line keeps its own tokens, in order; the edits only add to it.
        added = iter(token_texts(after))
        assert all(any(tok == a for a in added) for tok in token_texts(before)), (before, after)


def test_locations_name_the_statements_they_record(debug_session: Session):
    kernel = debug_session.kernel("helper")
    plan = instrument_trace(kernel)
    text = textwrap.dedent(KERNELS["helper"]).lstrip()
    starts = {(loc.kind, text[loc.offset : loc.offset + 12]) for loc in plan.locations}
    assert ("assign", "let s = v * ") in starts
    assert ("return", "return s * s") in starts
    assert ("store", "y[gid.x] = a") in starts
    assert {loc.kind for loc in plan.locations} <= set(KINDS)


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_untraced_invocations_run_a_plain_copy_unless_a_barrier_is_reachable(
    debug_session: Session, name
):
    # Where no barrier (or subgroup operation) is reachable from the entry point, the invocations
    # that are not traced leave for an uninstrumented copy of the user's functions; otherwise
    # every invocation must run the same code and the recorders return early instead.
    kernel = debug_session.kernel(name)
    plan = instrument_trace(kernel)
    collective = any(
        word in kernel.text for word in ("workgroupBarrier", "storageBarrier", "subgroup")
    )
    copied = f"fn wb_plain_{kernel.entry}(" in plan.kernel.appended
    assert copied != collective
    if copied:
        assert "wb_rec_" not in plan.kernel.appended.split("fn wb_plain_", 1)[1]
