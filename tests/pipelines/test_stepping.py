"""The stepper on the CPU adapter: every shipped pipeline steps to the end with every step's check
passing (each step judged against its spec's float64 reference on its own inputs), back restores
the device buffers so forward again gives the same bytes, the attention branches agree, the
memory cap evicts the oldest snapshots and says so, and diffs between steps name their elements."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from workbench.closeness import Origin, Tolerance, compare
from workbench.errors import UserError
from workbench.pipelines import load_pipeline, shipped_names
from workbench.pipelines.model import load
from workbench.pipelines.plan import plan
from workbench.pipelines.report import step_pipeline
from workbench.pipelines.stepper import Stepper
from workbench.session import Session
from workbench.specs.refs import activation as act_ref
from workbench.specs.refs import rope as rope_ref
from workbench.wgsl.corpus import load_corpus

DOUBLE = """
@group(0) @binding(0) var<storage, read_write> x: array<f32>;
@compute @workgroup_size(256)
fn double(@builtin(global_invocation_id) gid: vec3<u32>) { x[gid.x] = 2.0 * x[gid.x]; }
"""

PATHS = [
    (name, branch) for name in shipped_names() for branch in (None, *load_pipeline(name).branches)
]


@pytest.fixture
def doubling(session: Session, tmp_path: Path) -> Stepper:
    """A user pipeline of four in-place doublings of x (1,024 f32) on an ad-hoc kernel."""
    corpus = tmp_path / "mine"
    corpus.mkdir()
    (corpus / "double.wgsl").write_text(DOUBLE, encoding="utf-8")
    path = tmp_path / "double.toml"
    steps = '[[steps]]\nkernel = "double"\nbind = { x = "x" }\ngrid = [4]\n' * 4
    path.write_text(
        f'[buffers]\nx = {{ shape = [1024], init = "ones" }}\n{steps}', encoding="utf-8"
    )
    mine = Session(load_corpus(corpus), session.gpu)
    return Stepper(mine, plan(load(path), mine))


def stepper(session: Session, name: str, branch: str | None = None, **kw) -> Stepper:
    return Stepper(session, plan(load_pipeline(name), session, branch=branch), **kw)


def test_the_shipped_pipelines_cover_every_seed_chain() -> None:
    chains = {name: [s.kernel for s in load_pipeline(name).steps] for name in shipped_names()}
    assert chains == {
        "attention": [
            "rope_q",
            "rope_k",
            "attention_forward",
            "attention_backward_short",
            "attention_backward_short_dKdV",
            "rope_q_backward",
            "rope_k_backward",
        ],
        "conv1d": ["causal_conv1d_fwd", "causal_conv1d_bwd"],
        "embedding": ["embed_lookup", "embed_lookup_w16", "embed_backward"],
        "gelu": ["gelu_inplace", "ffn_gelu_backward"],
        "swiglu": ["swiglu_combine", "ffn_swiglu_backward"],
    }
    streaming = load_pipeline("attention").branches["streaming"]
    assert [s.kernel for s in streaming.steps] == ["attention_backward"]


@pytest.mark.parametrize(("name", "branch"), PATHS)
def test_every_shipped_pipeline_steps_to_the_end_with_every_check_passing(
    session: Session, name: str, branch: str | None
) -> None:
    s = stepper(session, name, branch, divergence=True)
    s.run_to_end()
    assert s.at_end and s.position == len(s.steps)
    for r in s.records:
        assert r.ok is True, (r.index, r.kernel, {k: c.summary() for k, c in r.compare.items()})
        assert r.compare, f"step {r.index} was not compared with a reference"
        assert r.ms > 0
        assert any(r.written.values()), f"step {r.index} changed nothing"
    assert s.first_divergence is None


def test_a_step_is_judged_on_the_inputs_it_was_given(session: Session) -> None:
    """gelu_inplace's check, redone here from its input: the step's output is the float64 GeLU of
    what pre_gelu held, and ffn_gelu_backward reads pre_gelu (kept) rather than the activated h."""
    s = stepper(session, "gelu")
    s.next()
    x = s.contents("pre_gelu", 0).astype(np.float64)
    np.testing.assert_allclose(s.contents("h"), act_ref.gelu_inplace_ref(x), rtol=1e-5, atol=1e-5)
    assert s.changed_at(1) == {"h": x.size}
    s.next()
    want = act_ref.ffn_gelu_backward_ref(s.contents("grad_hidden").astype(np.float64), x)
    np.testing.assert_allclose(s.contents("grad_pre"), want, rtol=1e-5, atol=2e-5)


@pytest.mark.parametrize("name", ["gelu", "swiglu", "attention", "conv1d"])
def test_back_then_forward_reproduces_bit_identical_buffers(session: Session, name: str) -> None:
    s = stepper(session, name)
    s.run_to_end()
    first = {b: s.on_device(b).copy() for b in s.plan.buffers}
    s.run_to(1)
    for b, start in s.initial.items():
        if b not in s.steps[0].writes:
            assert s.on_device(b).tobytes() == start.tobytes(), f"{b} not restored on the device"
    s.run_to_end()
    for b, arr in first.items():
        assert s.on_device(b).tobytes() == arr.tobytes(), f"{b} differs after back and forward"


def test_back_restores_the_device_buffers_of_every_pipeline(session: Session) -> None:
    """Kernels with atomic adds (embed_backward) need not repeat their bits when run again, but
    stepping back must restore the exact earlier bytes on the device whatever the kernel."""
    for name in shipped_names():
        s = stepper(session, name)
        s.run_to_end()
        while s.position:
            s.back()
            for b in s.plan.buffers:
                assert s.on_device(b).tobytes() == s.contents(b).tobytes(), (name, s.position, b)
        for b, start in s.initial.items():
            assert s.on_device(b).tobytes() == start.tobytes()


def test_the_rope_step_matches_an_independent_rotation(session: Session) -> None:
    s = stepper(session, "attention")
    s.next()
    q0 = s.contents("Q", 0).astype(np.float64)
    np.testing.assert_allclose(
        s.contents("Q", 1), rope_ref.rope_forward(q0, 0, 10000.0), rtol=1e-5, atol=1e-4
    )
    assert s.changed_at(1) == {"Q": int(np.count_nonzero(s.contents("Q", 1) != s.contents("Q", 0)))}


def test_split_and_streaming_attention_branches_agree(session: Session) -> None:
    report = step_pipeline(session, plan(load_pipeline("attention"), session))
    assert report.ok
    assert [a.what for a in report.agree] == [
        "dQ: streaming vs main",
        "dK: streaming vs main",
        "dV: streaming vs main",
    ]
    for a in report.agree:
        assert a.ok, a.comparison.summary()
        assert a.comparison.n_total > 0
    # The check can fail: with the same tolerance, a dV of zeros does not agree with the split path.
    dv = report.stepper.contents("dV")
    tol = report.agree[2].comparison
    zeros = compare(
        "dV",
        np.zeros_like(dv),
        dv.astype(np.float64),
        tol=Tolerance(tol.rtol, tol.atol, "", Origin.USER, Origin.USER),
    )
    assert not zeros.ok


def test_the_memory_cap_evicts_the_oldest_steps_and_says_so(doubling: Stepper) -> None:
    """Four in-place doublings of one 4 KiB buffer: each step keeps one new array, so a cap of
    two arrays keeps steps 3 and 4 and evicts 1 and 2, oldest first."""
    s = doubling
    s.set_cap(2 * 4096)
    s.run_to(3)
    assert s.history.evicted == [1]
    s.next()
    assert s.history.evicted == [1, 2]
    assert s.history.kept_bytes == 2 * 4096
    assert s.history.describe_evicted() == "steps 1–2"
    with pytest.raises(
        UserError,
        match=r"step 2 can no longer be shown: the memory cap of 8\.0 KiB evicted steps 1–2",
    ):
        s.contents("x", 2)
    with pytest.raises(UserError, match="step 1 can no longer be shown"):
        s.diff("x", 1, 4)
    np.testing.assert_array_equal(s.diff("x", 3, 4).max_abs, np.abs(s.contents("x", 3)).max())
    np.testing.assert_array_equal(s.contents("x", 0), s.initial["x"])  # the start stays
    s.back()  # back to 3: kept
    with pytest.raises(UserError, match="step 2 can no longer be shown"):
        s.back()
    # A cap below one step keeps only the latest.
    s.set_cap(0)
    assert s.history.evicted == [1, 2] and s.history.kept_bytes == 4096
    s.reset()
    assert s.history.evicted == [] and s.position == 0


def test_the_cap_on_a_shipped_pipeline(session: Session) -> None:
    """COW: an old state shares every array a later state still holds, so evicting it frees only
    what was rewritten since; the cap still drops the oldest first and names them."""
    s = stepper(session, "attention")
    s.run_to_end()
    total = s.history.kept_bytes
    assert total == sum(r.kept_bytes for r in s.records)
    evicted = s.set_cap(total - 1)
    assert evicted == list(range(1, len(evicted) + 1)) and evicted
    assert s.history.kept_bytes < total
    gone = evicted[-1]
    with pytest.raises(UserError, match=f"step {gone} can no longer be shown"):
        s.contents("dQ", gone)
    s.contents("dQ", gone + 1)


def test_diff_between_two_steps_names_elements(session: Session) -> None:
    s = stepper(session, "attention")
    s.run_to(2)
    d = s.diff("Q", 0, 1)
    assert not d.ok and d.n_bad > 0
    assert d.worst[0].named.startswith("seq=")
    assert set(d.worst[0].named.split()[1:]) <= {
        f"{a}={i}" for a, i in zip(("n_heads", "head_dim"), d.worst[0].index[1:], strict=True)
    }
    same = s.diff("Q", 1, 2)
    assert same.ok and same.max_abs == 0.0


def test_stepping_is_refused_past_either_end(session: Session) -> None:
    s = stepper(session, "gelu")
    with pytest.raises(UserError, match="already at the start"):
        s.back()
    s.run_to_end()
    with pytest.raises(UserError, match="already at the end"):
        s.next()
    with pytest.raises(UserError, match="step 3 does not exist"):
        s.run_to(3)
    s.reset()
    assert s.position == 0 and s.on_device("h").tobytes() == s.initial["h"].tobytes()
