"""A verdict is always for the case on screen or marked stale (issue 31, item 3): a run whose
form has changed since is stale, with the dims it was for; the kernel list shows each kernel's
last verdict (dimmed once stale), not only what the kernel is; a failed output with NaN/Inf where
the reference differs says FAIL and that first, so a small max|Δ| of the rest never reads as a
pass. View model and verdict line alone: no app, no adapter."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from rich.style import Style

from workbench.closeness import compare
from workbench.verdicts import Verdict
from workbench.viewmodel.form import FormState
from workbench.viewmodel.kernel_state import KernelState, list_verdict, view_of
from workbench.widgets.verdict_bar import verdict_text


def _run(verdict: Verdict, **dims: int) -> SimpleNamespace:
    return SimpleNamespace(timing=None, case=SimpleNamespace(cost=None, dims=dims), verdict=verdict)


def test_a_run_is_stale_once_the_form_no_longer_says_what_it_was_made_of() -> None:
    st = KernelState(form=FormState(dims={"seq": "64"}))
    st.ran(_run(Verdict.PASS, seq=64))  # type: ignore[arg-type]
    assert view_of(st, None).stale is None
    assert list_verdict(st) == ("PASS", "spec")
    st.form = st.form.with_dim("seq", "128")
    assert view_of(st, None).stale == "results for seq=64, not the form as it is now"
    assert list_verdict(st) == ("PASS", "pending")  # dimmed: not for the form on screen
    st.form = st.form.with_dim("seq", "64")  # the same case again
    assert view_of(st, None).stale is None


def test_a_run_started_from_an_older_form_is_stale_when_it_ends() -> None:
    st = KernelState(form=FormState(dims={"seq": "128"}))
    started = FormState(dims={"seq": "64"}).key
    st.ran(_run(Verdict.FAIL, seq=64), started)  # type: ignore[arg-type]
    assert view_of(st, None).stale == "results for seq=64, not the form as it is now"


def test_the_list_shows_the_last_verdict_of_each_kernel() -> None:
    st = KernelState(form=FormState())
    assert list_verdict(st) is None
    st.ran(_run(Verdict.FAIL))  # type: ignore[arg-type]
    assert list_verdict(st) == ("FAIL", "error")
    st.ran(_run(Verdict.RAN))  # type: ignore[arg-type]
    assert list_verdict(st) == ("RAN", "adhoc")
    st.failed("refused: too big")
    assert list_verdict(st) == ("ERROR", "error")


def test_a_failure_of_nan_positions_reads_as_a_failure() -> None:
    ref = np.linspace(1.0, 2.0, 1000)
    got = (ref + 6e-8).astype(np.float32)
    got[:101] = np.nan  # NaN where the reference is finite; the rest within 6e-8
    c = compare("y", got, ref)
    run = SimpleNamespace(
        ok=False,
        verdict=Verdict.FAIL,
        compare={"y": c},
        timing=None,
        wall_s=0.001,
        unwritten_note=None,
    )
    line = verdict_text(lambda _part: Style(), run, None, None, True, False, None).plain  # type: ignore[arg-type]
    assert (
        "✗ y FAIL 101/1,000 outside tol, NaN/Inf positions differ: 101; max|Δ| of the finite"
        in (line)
    )
