"""Gradient checks on the real adapter: every shipped backward kernel agrees with central
differences of its float64 forward and of its GPU forward kernel; wrong derivatives are caught
with the worst element named; big cases are checked at the link's small dims."""

from __future__ import annotations

import re

import pytest

from workbench.checks import check_case
from workbench.checks.gradcheck import DIRECTIONS, FULL_MAX, SAMPLES
from workbench.session import shipped_corpus
from workbench.specs.base import GradLink
from workbench.specs.registry import all_specs, spec_for

from .conftest import replace_once

# Every shipped backward kernel declares its gradient link with its spec.
LINKED = sorted(name for name, spec in all_specs().items() if spec.gradient is not None)


def grad_link(name: str) -> GradLink:
    link = spec_for(name).gradient
    assert link is not None
    return link


def test_every_shipped_backward_kernel_has_a_link():
    assert LINKED == [
        "attention_backward",
        "attention_backward_short",
        "attention_backward_short_dKdV",
        "causal_conv1d_bwd",
        "embed_backward",
        "ffn_gelu_backward",
        "ffn_swiglu_backward",
        "rope_k_backward",
        "rope_q_backward",
    ]


@pytest.mark.parametrize("name", LINKED)
def test_link_names_exist(name):
    link = grad_link(name)
    spec = spec_for(name)
    buffers = spec.buffers(spec.resolve_dims(link.grad_dims))
    assert set(link.wrt) <= set(spec.outputs)
    assert set(link.upstream.values()) <= set(buffers)
    fwd = spec_for(link.forward_kernel)
    assert fwd is not None and set(link.upstream) <= set(fwd.outputs)
    assert any(k.name == link.forward_kernel for k in shipped_corpus().kernels)


@pytest.mark.parametrize("name", LINKED)
def test_shipped_backward_kernels_pass(session, name):
    link = grad_link(name)
    case = session.case(name, dims=link.grad_dims)
    report = check_case(session, case, what="grad")
    names = [r.name for r in report.results]
    assert names == [n for g in link.wrt for n in (g, f"{g}/gpu")]
    for r in report.results:
        assert r.ok, r.summary
        assert r.details["wrt"] == link.wrt[r.name.split("/")[0]]
        assert r.details["max_abs"] <= max(s["allowed"] for s in r.details["samples"])
        if r.name.endswith("/gpu"):
            assert r.details["eps"] == 2.0**-7 and "GPU forward" in r.details["source"]
        else:
            size = r.details["size"]
            assert r.details["entries"] == min(size, SAMPLES if size > FULL_MAX else size)
            assert r.details["directions"] == (DIRECTIONS if size > FULL_MAX else 0)


def test_wrong_gelu_derivative_fails_both_sources(altered):
    sess = altered(
        "09_backward_ffn.wgsl",
        replace_once("(1.0 + 3.0 * GELU_COEFF * x2)", "(1.0 + 2.0 * GELU_COEFF * x2)"),
    )
    report = check_case(
        sess, sess.case("ffn_gelu_backward", dims={"seq": 2, "d_ff": 100}), what="grad"
    )
    by_name = {r.name: r for r in report.results}
    for name in ("grad_pre", "grad_pre/gpu"):
        r = by_name[name]
        assert not r.ok, r.summary
        worst = r.rows[0]
        assert re.fullmatch(r"seq=\d d_ff=\d+", worst[0]) and worst[-1] == "FAIL"
        assert f"worst {worst[0]} FAIL" in r.summary
    # The gelu_inplace forward comes from the shipped corpus: the temporary one lacks it.
    assert "gelu_inplace" in by_name["grad_pre/gpu"].details["source"]


def test_wrong_rope_backward_fails_entries_and_directions(altered):
    sess = altered(
        "11_rope.wgsl",
        replace_once("g.a * c + g.b * sn", "g.a * c - g.b * sn"),
    )
    link = grad_link("rope_q_backward")
    report = check_case(sess, sess.case("rope_q_backward", dims=link.grad_dims), what="grad")
    r = report.results[0]
    assert r.name == "dQ" and not r.ok
    bad = [s for s in r.details["samples"] if not s["ok"]]
    assert any(s["where"].startswith("direction") for s in bad)
    assert any(re.fullmatch(r"seq=\d+ n_heads=\d head_dim=\d+", s["where"]) for s in bad)


def test_big_case_uses_grad_dims_unless_full(session):
    report = check_case(session, session.case("ffn_swiglu_backward"), what="grad")
    assert report.ok
    for r in report.results:
        assert r.details["dims"] == {"seq": 4, "d_ff": 300}
        assert "scenario budget" in r.details["note"]
    assert any("scenario budget" in n for n in report.notes)
    case = session.case("ffn_gelu_backward", dims={"seq": 64, "d_ff": 1100})
    full = check_case(session, case, what="grad", full=True)
    assert full.ok and all(
        r.details["dims"] == case.dims and r.details["note"] is None for r in full.results
    )


def test_grad_is_skipped_for_forward_kernels(session):
    (r,) = check_case(
        session, session.case("gelu_inplace", dims={"seq": 1, "d_ff": 10}), what="grad"
    ).results
    assert r.skipped and r.ok and "gradient link" in r.summary
