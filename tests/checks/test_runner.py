"""check_case itself: kinds, progress, cancellation, reports, and kernels the adapter cannot run."""

from __future__ import annotations

import json

import pytest

from workbench.checks import CHECK_KINDS, CheckReport, CheckResult, check_case, parse_what
from workbench.errors import UserError
from workbench.gpu.adapters import list_adapters

SMALL = {"seq": 2, "d_ff": 300}


def test_parse_what():
    assert parse_what("grad, compare") == ("compare", "grad")
    assert parse_what(["determinism"]) == ("determinism",)
    for bad in ("", "compare,speed"):
        with pytest.raises(UserError):
            parse_what(bad)
    assert CHECK_KINDS == ("compare", "evidence", "grad", "special", "determinism", "adapters")


def test_report_covers_every_kind_and_is_json(session):
    case = session.case("ffn_swiglu_backward", dims=SMALL)
    report = check_case(session, case)
    assert isinstance(report, CheckReport) and report.ok
    assert report.kernel == "ffn_swiglu_backward" and report.adapter == session.adapter.label
    assert {r.kind for r in report.results} == {
        "compare",
        "evidence",
        "grad",
        "special",
        "determinism",
    }
    assert report.elapsed_s > 0
    for r in report.results:
        assert isinstance(r, CheckResult) and r.kind in CHECK_KINDS
        assert r.summary.startswith(r.name) and r.summary.endswith("ok")
        assert all(len(row) == len(r.columns) for row in r.rows)
    data = json.loads(json.dumps(report.to_json(), allow_nan=False))
    assert data["ok"] and len(data["results"]) == len(report.results)


def test_progress_and_cancel(session):
    case = session.case("ffn_gelu_backward", dims=SMALL)
    seen = []
    check_case(session, case, progress=lambda msg, frac: seen.append((msg, frac)))
    assert seen and all(0.0 <= f <= 1.0 for _, f in seen)
    assert seen[-1][1] == 1.0 and all(m.startswith("ffn_gelu_backward: ") for m, _ in seen)
    fracs = [f for _, f in seen]
    assert fracs == sorted(fracs)

    calls = []

    def cancel_after_compare() -> bool:
        calls.append(1)
        return len(calls) > 1

    report = check_case(session, case, cancelled=cancel_after_compare)
    assert report.cancelled and not report.ok
    assert {r.kind for r in report.results} <= {"compare"}


def test_missing_feature_is_skipped(session):
    if not any(a.backend == "OpenGL" for a in list_adapters()):
        pytest.skip("no OpenGL adapter here")
    gl = session.with_adapter("gl")
    case = gl.case("embed_lookup_w16", dims={"seq": 4, "d_model": 8, "vocab": 16})
    report = check_case(gl, case)
    (r,) = report.results
    assert r.skipped and report.verdict == "skip" and "shader-f16" in r.summary
    assert report.verdict.exit_code == 0 and not report.ok  # said as skipped, never a pass


def test_adhoc_kernel_has_no_reference(own_corpus):
    sess = own_corpus(
        """
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read_write> b: array<f32>;
@group(0) @binding(2) var<uniform> n: u32;
@compute @workgroup_size(64)
fn twice(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x < n) { b[gid.x] = 2.0 * a[gid.x]; }
}
"""
    )
    report = check_case(sess, sess.case("twice", dims={"n": 100}))
    kinds = {r.kind: r for r in report.results}
    assert kinds["compare"].skipped and kinds["grad"].skipped and kinds["special"].skipped
    assert kinds["determinism"].ok and kinds["determinism"].details["identical"]
    assert report.verdict == "ran" and not report.ok and not report.failed
