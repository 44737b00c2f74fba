"""The compare check on the real adapter: shipped kernels pass, a wrong constant and a stray NaN
fail with the element named, and tolerances can be overridden per run."""

from __future__ import annotations

import re

from workbench.checks import check_case

from .conftest import replace_once

SMALL = {"seq": 2, "d_ff": 100}


def test_shipped_kernel_passes_with_figures(session):
    report = check_case(session, session.case("ffn_swiglu_backward", dims=SMALL), what="compare")
    assert report.ok
    assert [r.name for r in report.results] == ["grad_gate", "grad_up"]
    for r in report.results:
        assert r.kind == "compare" and r.ok
        d = r.details
        assert d["n_bad"] == 0 and d["n_total"] == 200
        assert 0 < d["max_abs"] < 1e-5
        assert d["max_ulp"] is not None
        # Within tolerance, the table still shows the largest errors, with named indices.
        assert r.rows and re.fullmatch(r"seq=\d d_ff=\d+", r.rows[0][0])
        assert r.rows[0][-1] == "within tolerance"
        assert len(r.columns) == len(r.rows[0])


def test_wrong_constant_fails_with_worst_index(altered):
    sess = altered(
        "09_backward_ffn.wgsl",
        replace_once("(1.0 + 3.0 * GELU_COEFF * x2)", "(1.0 + 2.0 * GELU_COEFF * x2)"),
    )
    report = check_case(sess, sess.case("ffn_gelu_backward", dims=SMALL), what="compare")
    assert not report.ok
    (r,) = report.results
    assert not r.ok and r.details["n_bad"] > 0
    worst = r.details["worst"][0]
    assert re.fullmatch(r"seq=\d d_ff=\d+", worst["named"])
    assert f"worst {worst['named']}" in r.summary and r.summary.endswith("FAIL")
    # Worst first: the first row is the largest error relative to its allowance.
    assert r.rows[0][0] == worst["named"]


def test_nan_where_reference_finite_is_a_mismatch(altered):
    last = "    if (ok.w) { grad_gate[i.w] = out_gate.w; grad_up[i.w] = out_up.w; }\n"
    sess = altered(
        "09_backward_ffn.wgsl",
        replace_once(
            last, last + "    if (i.x == 37u) { grad_up[i.x] = bitcast<f32>(0x7fc00000u); }\n"
        ),
    )
    report = check_case(sess, sess.case("ffn_swiglu_backward", dims=SMALL), what="compare")
    by_name = {r.name: r for r in report.results}
    assert by_name["grad_gate"].ok
    bad = by_name["grad_up"]
    assert not bad.ok
    assert bad.details["n_bad"] == 1 and bad.details["n_nonfinite_mismatch"] == 1
    assert bad.rows[0][0] == "seq=0 d_ff=37"
    assert bad.rows[0][1] == "NaN" and bad.rows[0][-1] == "NaN where reference is finite"


def test_user_tolerance_overrides_the_spec(session):
    case = session.case("gelu_inplace", dims=SMALL)
    assert check_case(session, case, what="compare").ok
    strict = check_case(session, case, what="compare", rtol=0.0, atol=0.0)
    (r,) = strict.results
    assert r.details["rtol"] == 0.0 and r.details["atol"] == 0.0
    assert r.details["why"] == "given on the command line"
    assert not r.ok


def test_mismatch_count_beyond_shown_rows(altered):
    sess = altered(
        "09_backward_ffn.wgsl",
        replace_once("let du = g * (gt * s);", "let du = g * (gt * s) * 1.01;"),
    )
    (r,) = [
        x
        for x in check_case(
            sess, sess.case("ffn_swiglu_backward", dims=SMALL), what="compare"
        ).results
        if x.name == "grad_up"
    ]
    assert r.details["n_bad"] > 10
    assert r.rows[-1][0] == f"… {r.details['n_bad'] - 10:,} more outside tolerance"
