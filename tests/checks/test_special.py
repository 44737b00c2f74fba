"""Special values on the real adapter: injections parse and land where asked, shipped kernels
behave as their specs state, and a kernel that loses its nan_guard is caught."""

from __future__ import annotations

import math

import numpy as np
import pytest

from workbench.checks import check_case, parse_injection
from workbench.checks.special import (
    VALUES,
    Injection,
    default_injections,
    positions,
    spread_specials,
)
from workbench.errors import UserError

from .conftest import replace_once

SMALL = {"seq": 2, "d_ff": 100}


def test_parse_injection():
    assert parse_injection("x=nan") == Injection("x", "nan")
    assert parse_injection("gate=inf@all") == Injection("gate", "+inf", "all")
    assert parse_injection("up=-1e4@5%").label == "up=-1e4@1/20"
    assert parse_injection("Q=0.5@3,17").where == "3,17"
    assert parse_injection("x=-0@0.25").number("float32") == 0.0
    assert math.copysign(1, parse_injection("x=-0").number("float32")) < 0
    assert parse_injection("t=denormal").number("float16") == pytest.approx(1e-6)
    for bad in ("x", "x=", "x=banana", "x=nan@", "x=nan@two"):
        with pytest.raises(UserError):
            parse_injection(bad)


def test_positions():
    assert positions(Injection("x", "nan", "all"), 5, 0).tolist() == [0, 1, 2, 3, 4]
    assert positions(Injection("x", "nan", "1,3"), 5, 0).tolist() == [1, 3]
    frac = positions(Injection("x", "nan", "0.25"), 100, 0)
    assert len(frac) == 25 and len(set(frac.tolist())) == 25
    assert len(positions(Injection("x", "nan"), 10, 0)) == 1  # at least one
    with pytest.raises(UserError):
        positions(Injection("x", "nan", "7"), 5, 0)


def test_default_injections_skip_integers_and_saved(session):
    embed = session.case("embed_backward", dims={"seq": 4, "d_model": 8, "vocab": 16})
    assert {i.binding for i in default_injections(embed)} == {"grad_out"}
    attn = session.case(
        "attention_backward",
        dims={"seq": 8, "n_heads": 2, "n_kv_heads": 1, "head_dim": 8, "docs": 1},
    )
    assert {i.binding for i in default_injections(attn)} == {"Q", "K", "V", "dO"}
    assert len(default_injections(attn)) == 4 * len(VALUES)


def test_spread_specials_writes_each_value_once_into_float_inputs(session):
    embed = session.case("embed_backward", dims={"seq": 4, "d_model": 8, "vocab": 16})
    before = {k: v.copy() for k, v in embed.inputs.items()}
    touched = spread_specials(embed)
    assert touched == ["grad_out"]  # the token ids are integers: left alone
    np.testing.assert_array_equal(embed.inputs["tokens"], before["tokens"])
    flat = embed.inputs["grad_out"].reshape(-1)
    pos = np.linspace(0, flat.size - 1, len(VALUES)).astype(np.int64)
    expected = np.array(list(VALUES.values()), dtype=np.float32)
    np.testing.assert_array_equal(flat[pos], expected)  # NaN == NaN, -0 == +0 here
    assert np.signbit(flat[pos[4]]) and not np.signbit(flat[pos[3]])
    rest = np.setdiff1d(np.arange(flat.size), pos)
    np.testing.assert_array_equal(flat[rest], before["grad_out"].reshape(-1)[rest])
    assert "special values written into grad_out" in embed.notes


def test_shipped_kernel_follows_its_special_rule(session):
    case = session.case("ffn_gelu_backward", dims=SMALL)
    report = check_case(session, case, what="special")
    assert report.ok
    assert len(report.results) == 2 * len(VALUES)
    nan = next(r for r in report.results if r.name.startswith("pre_gelu=nan"))
    out = nan.details["outputs"]["grad_pre"]
    # nan_guard: the kernel and the reference both give 0, never NaN.
    assert out["nonfinite"] == 0 and out["nonfinite_ref"] == 0 and nan.details["mode"] == "match"


def test_lost_nan_guard_is_caught(altered):
    sess = altered(
        "09_backward_ffn.wgsl",
        replace_once(
            "let out = select(vec4<f32>(0.0), nan_guard4(r), is_finite4(pg));", "let out = r;"
        ),
    )
    case = sess.case("ffn_gelu_backward", dims=SMALL)
    assert check_case(sess, case, what="compare").ok  # ordinary inputs cannot tell
    report = check_case(
        sess, case, what="special", inject=[parse_injection("grad_hidden=nan@3,40")]
    )
    (r,) = report.results
    assert not r.ok
    out = r.details["outputs"]["grad_pre"]
    assert out["nan"] == 2 and out["nonfinite_ref"] == 0 and out["misplaced"] == 2
    assert r.rows[0][0] == "grad_pre" and r.rows[0][-1] == "FAIL"


def test_explicit_injection_everywhere(session):
    case = session.case("gelu_inplace", dims=SMALL)
    (r,) = check_case(session, case, what="special", inject=[parse_injection("x=-inf@all")]).results
    assert r.ok and r.details["positions"] == 200
    # gelu(-Inf) = 0 by the spec's rule: nothing non-finite comes out.
    assert r.details["outputs"]["x"]["nonfinite"] == 0


def test_attention_nan_matches_the_reference_exactly(session):
    dims = {"seq": 24, "n_heads": 2, "n_kv_heads": 1, "head_dim": 8, "docs": 2}
    case = session.case("attention_backward", dims=dims)
    inject = [parse_injection(t) for t in ("Q=nan", "K=+1e4", "V=-100", "LSE=nan@0", "LSE=-100@0")]
    report = check_case(session, case, what="special", inject=inject)
    modes = [(r.details["binding"], r.details["mode"]) for r in report.results]
    assert modes == [
        ("Q", "match"),
        ("K", "pattern"),
        ("V", "match"),
        ("LSE", "match"),
        ("LSE", "contained"),
    ]
    assert report.ok, [r.summary for r in report.failed]
    q = report.results[0]
    assert q.details["resaved"] == ["LSE"]
    assert q.details["outputs"]["dQ"]["nonfinite"] > 0
    assert q.details["outputs"]["dQ"]["misplaced"] == 0


def test_unknown_binding_is_a_user_error(session):
    case = session.case("gelu_inplace", dims=SMALL)
    with pytest.raises(UserError, match="no input 'y'"):
        check_case(session, case, what="special", inject=[parse_injection("y=nan")])
    emb = session.case("embed_lookup", dims={"seq": 4, "d_model": 8, "vocab": 16})
    with pytest.raises(UserError, match="not floats"):
        check_case(session, emb, what="special", inject=[parse_injection("tokens=nan")])


def test_results_are_strict_json(session):
    import json

    case = session.case("swiglu_combine", dims=SMALL)
    report = check_case(session, case, what="special", inject=[parse_injection("gate=nan@all")])
    text = json.dumps(report.to_json(), allow_nan=False)
    assert '"nan"' in text
    assert np.isfinite(report.elapsed_s)
