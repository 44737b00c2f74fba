"""Cancel stops the work at the next point it can (issue 31): a run asks its `cancelled()` between
its submissions, so a run cancelled after its dispatch makes no evidence dispatch and computes no
reference. Behaviour only: what the run reports it did (its progress lines), never how long it
took. Real adapter."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.engine.conftest import write_corpus
from workbench.errors import Cancelled
from workbench.session import Session
from workbench.wgsl.corpus import load_corpus

# Writes nothing (the bound check the wrong way round): every run of it dispatches a second time,
# into sentinel-filled outputs, to tell "never written" from "wrote what was there".
NOOP = """
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> n: u32;

@compute @workgroup_size(64)
fn noop(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i > n) { y[i] = 2.0 * x[i]; }
}
"""


def _heard() -> tuple[list[str], Callable[[str, float], None]]:
    heard: list[str] = []
    return heard, lambda message, _fraction: heard.append(message)


def _after(heard: list[str], step: str) -> Callable[[], bool]:
    """A cancel switch that flips once the run has said `step` (it is asked after that step)."""
    return lambda: step in heard


def test_a_run_cancelled_after_its_dispatch_makes_no_evidence_dispatch(
    session: Session, tmp_path: Path
) -> None:
    own = session.with_corpus(load_corpus(write_corpus(tmp_path, {"noop.wgsl": NOOP})))
    case = own.case("noop", adhoc=True)
    full, say = _heard()
    assert own.run(case, progress=say).unwritten == ("y",)
    assert any(m.startswith("evidence") for m in full)
    heard, say = _heard()
    with pytest.raises(Cancelled):
        own.run(case, progress=say, cancelled=_after(heard, "dispatching"))
    assert heard == full[: heard.index("dispatching") + 1]  # the same run, up to its dispatch
    assert not any(m.startswith("evidence") for m in heard)


def test_a_run_cancelled_after_its_dispatch_computes_no_reference(session: Session) -> None:
    case = session.case("ffn_swiglu_backward", dims={"seq": 4, "d_ff": 64})
    full, say = _heard()
    assert session.run(case, progress=say).ok
    assert "reference" in full
    heard, say = _heard()
    with pytest.raises(Cancelled):
        session.run(case, progress=say, cancelled=_after(heard, "dispatching"))
    assert "reference" not in heard and "done" not in heard
    # Cancelled before anything: nothing is dispatched.
    heard, say = _heard()
    with pytest.raises(Cancelled):
        session.run(case, progress=say, cancelled=lambda: True)
    assert "dispatching" not in heard
