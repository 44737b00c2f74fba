"""The runs kept per kernel, the pinned baseline, and a run's diff against it (view model, no
Textual): figures are checked against NumPy computed here, on runs made on the real adapter."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from workbench.session import Run, Session, Timing
from workbench.viewmodel.baseline import (
    RunHistory,
    baseline_diff,
    output_diff,
    timing_diff,
)
from workbench.widgets.baseline_bar import baseline_text

KEY = "09_backward_ffn.wgsl:ffn_swiglu_backward"


@pytest.fixture(scope="module")
def run(session: Session) -> Run:
    return session.run("ffn_swiglu_backward", dims={"seq": 4, "d_ff": 64})


def _with(run: Run, name: str, changes: dict[tuple[int, int], float]) -> Run:
    """A copy of `run` whose output `name` has the given elements set."""
    out = run.outputs[name].copy()
    for at, value in changes.items():
        out[at] = value
    return replace(run, outputs={**run.outputs, name: out})


def test_history_keeps_the_last_runs_newest_first_and_the_pinned_one(run: Run) -> None:
    history = RunHistory(keep=3)
    entries = [history.add(KEY, replace(run)) for _ in range(5)]
    assert [e.number for e in history.runs(KEY)] == [5, 4, 3]
    assert history.runs("other.wgsl:k") == ()
    history.pin(KEY, entries[2])
    for _ in range(4):
        history.add(KEY, replace(run))
    assert 3 not in [e.number for e in history.runs(KEY)]
    assert history.pinned(KEY) is entries[2]
    assert history.entry(KEY, entries[2].run) is entries[2]
    assert history.unpin(KEY) is entries[2] and history.unpin(KEY) is None


def test_identical_outputs_say_so(run: Run) -> None:
    d = output_diff("grad_up", replace(run), run)
    assert d.identical and d.changed == 0 and d.total == run.outputs["grad_up"].size
    assert d.text().startswith("identical")


def test_changed_elements_max_delta_and_worst_named_index(run: Run) -> None:
    base = run.outputs["grad_up"]
    one_ulp = float(np.nextafter(base[0, 0], np.float32(np.inf)))
    far = float(base[2, 17]) + 0.5
    changed = _with(run, "grad_up", {(0, 0): one_ulp, (2, 17): far})
    d = output_diff("grad_up", changed, run)
    assert d.changed == 2
    # One ULP is within tolerance (f32 defaults), half a unit is not.
    assert d.beyond == 1
    expected = abs(np.float64(np.float32(far)) - np.float64(base[2, 17]))
    assert d.max_abs == pytest.approx(expected, rel=1e-12)
    assert d.worst == "seq=2 d_ff=17"
    assert "2/256 changed, 1 beyond tol" in d.text() and "seq=2 d_ff=17" in d.text()


def test_nan_where_nan_was_is_unchanged_and_a_new_nan_is_worst(run: Run) -> None:
    pinned = _with(run, "grad_gate", {(1, 1): float("nan")})
    same = _with(run, "grad_gate", {(1, 1): float("nan")})
    assert output_diff("grad_gate", same, pinned).identical
    new_nan = _with(same, "grad_gate", {(3, 5): float("nan"), (0, 2): 123.0})
    d = output_diff("grad_gate", new_nan, pinned)
    assert d.changed == 2 and d.beyond == 2 and d.worst == "seq=3 d_ff=5"


def test_another_shape_is_not_compared(session: Session, run: Run) -> None:
    other = session.run("ffn_swiglu_backward", dims={"seq": 2, "d_ff": 64})
    d = output_diff("grad_up", other, run)
    assert not d.identical and d.note == "shape 4×64 → 2×64: not comparable"


def _timing(center: float, n: int = 40, method: str = "timestamp") -> Timing:
    rng = np.random.default_rng(int(center * 1000))
    samples = tuple(float(x) for x in center * (1 + 0.01 * rng.standard_normal(n)))
    return Timing(method, samples, warmup=3)


def test_timing_ratio_and_noise() -> None:
    faster = timing_diff(_timing(0.5), _timing(1.0))
    assert faster.ratio == pytest.approx(0.5, rel=0.02) and faster.beyond_noise is True
    assert "faster, beyond noise" in faster.text()
    same = timing_diff(_timing(1.0), _timing(1.0))
    assert same.ratio == pytest.approx(1.0, rel=1e-9) and same.beyond_noise is False
    assert "within noise" in same.text()
    few = timing_diff(_timing(2.0, n=3), _timing(1.0, n=3))
    assert few.ratio == pytest.approx(2.0, rel=0.05) and few.beyond_noise is None
    assert "noise cannot be told" in few.text()
    assert timing_diff(None, _timing(1.0)).ratio is None
    assert "not timed" in timing_diff(_timing(1.0), None).text()
    assert "neither run was timed" in timing_diff(None, None).text()
    assert "#.##×" in faster.text(snapshot=True) and "0.5" not in faster.text(snapshot=True)


def test_diff_against_the_pinned_run_names_what_else_differs(session: Session, run: Run) -> None:
    history = RunHistory()
    first = history.add(KEY, run)
    history.pin(KEY, first)
    assert history.diff(KEY, run) is not None and history.diff(KEY, run).is_pinned_run
    assert history.diff(KEY, None) is None and history.diff("other", run) is None
    again = history.add(KEY, _with(run, "grad_up", {(0, 0): 9.0}))
    diff = history.diff(KEY, again.run)
    assert diff is not None and diff.number == again.number and not diff.is_pinned_run
    assert [d.name for d in diff.outputs] == ["grad_gate", "grad_up"]
    assert diff.outputs[0].identical and diff.outputs[1].changed == 1
    assert diff.notes == () and history.diff(KEY, again.run) is diff
    other = session.run("ffn_swiglu_backward", dims={"seq": 2, "d_ff": 64}, seed=1)
    assert history.diff(KEY, other).notes == ("case differs: pinned seq=4 d_ff=64 seed 0",)


def test_a_run_on_another_adapter_says_so_first_and_is_no_speedup(run: Run) -> None:
    history = RunHistory()
    history.pin(KEY, history.add(KEY, replace(run, timing=_timing(1.0))))
    elsewhere = replace(run.adapter, backend="OpenGL")
    assert elsewhere.label != run.adapter.label
    faster = replace(run, adapter=elsewhere, timing=_timing(0.5))
    diff = history.diff(KEY, history.add(KEY, faster).run)
    assert diff is not None and diff.across == run.adapter.label
    # Outputs are still compared; the times are not a ratio, let alone "faster".
    assert all(d.identical for d in diff.outputs)
    assert diff.timing.ratio is None and diff.timing.beyond_noise is None
    assert "different adapters" in diff.timing.text() and "faster" not in diff.timing.text()
    # The bar's first line, never cut at its right edge, says so.
    lines = baseline_text(diff, snapshot=False).plain.split("\n")
    assert lines[0] == f"pinned on another adapter: {run.adapter.label}"
    assert "×" not in lines[-1]
    same = history.diff(KEY, history.add(KEY, replace(run, timing=_timing(0.5))).run)
    assert same is not None and same.across == "" and same.timing.ratio is not None


def test_a_diff_asked_for_without_waiting_is_pending_until_remembered(run: Run) -> None:
    history = RunHistory()
    history.pin(KEY, history.add(KEY, run))
    # The pinned run against itself needs no comparison: never pending.
    assert not history.diff(KEY, run, wait=False).pending
    again = history.add(KEY, _with(run, "grad_up", {(0, 0): 9.0}))
    pending = history.diff(KEY, again.run, wait=False)
    assert pending is not None and pending.pending and pending.outputs == ()
    # The cheap parts are there at once.
    assert pending.number == again.number
    assert pending.timing == timing_diff(again.run.timing, run.timing)
    assert history.diff(KEY, again.run, wait=False) is pending  # asked again: not recomputed
    assert not history.diff(KEY, again.run).pending  # waiting compares, pending or not
    done = baseline_diff(pending.pinned, pending.number, again.run)
    assert not done.pending and [d.changed for d in done.outputs] == [0, 1]
    history.remember(KEY, again.run, done)
    assert history.diff(KEY, again.run, wait=False) is done
    # A diff against a pin that was replaced meanwhile is not kept.
    history.pin(KEY, again)
    history.remember(KEY, again.run, done)
    assert history.diff(KEY, again.run, wait=False) is not done


def test_struct_outputs_count_the_records_that_differ(run: Run) -> None:
    layout = np.dtype([("value", "<f4"), ("count", "<u4")])
    records = np.zeros(run.outputs["grad_up"].shape, dtype=layout)
    records["value"] = run.outputs["grad_up"]
    pinned = replace(run, outputs={**run.outputs, "grad_up": records})
    assert output_diff("grad_up", pinned, pinned).identical
    moved = records.copy()
    moved[1, 7]["count"] = 3
    moved[3, 0]["value"] = -1.0
    d = output_diff("grad_up", replace(run, outputs={**run.outputs, "grad_up": moved}), pinned)
    assert d.changed == 2 and d.worst == "seq=1 d_ff=7" and not d.identical
    assert d.text() == "2/256 structs changed (no |Δ| for structs) · first seq=1 d_ff=7"
