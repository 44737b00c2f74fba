"""Across adapters: lavapipe Vulkan against the OpenGL llvmpipe adapter, same case, same inputs."""

from __future__ import annotations

import pytest

from workbench.checks import check_case
from workbench.gpu.adapters import list_adapters
from workbench.gpu.device import GpuContext


def _gl_can_compute() -> bool:
    gl = [a for a in list_adapters() if a.backend == "OpenGL"]
    return bool(gl) and GpuContext(gl[0]).probe_compute() is None


pytestmark = pytest.mark.skipif(
    not _gl_can_compute(), reason="no OpenGL adapter that runs compute shaders here"
)


def test_same_case_agrees_on_gl(session):
    case = session.case("ffn_swiglu_backward", dims={"seq": 2, "d_ff": 300})
    report = check_case(session, case, what="compare", against="gl")
    adapters = report.of_kind("adapters")
    assert [r.name for r in adapters] == ["grad_gate", "grad_up"]
    for r in adapters:
        assert r.ok, r.summary
        assert r.details["against"].endswith("(OpenGL)")
        assert r.details["rtol"] == pytest.approx(2 * 1.3e-6)
        assert r.details["against_vs_reference"]["ok"]
        assert r.columns[1:3] == ("OpenGL", "Vulkan")
        assert r.summary.startswith("OpenGL vs Vulkan: ")


def test_missing_feature_is_skipped_with_reason(session):
    case = session.case("embed_lookup_w16", dims={"seq": 4, "d_model": 8, "vocab": 16})
    report = check_case(session, case, what="adapters", against="gl")
    (r,) = report.results
    assert r.skipped and r.ok and report.verdict == "skip" and report.verdict.exit_code == 0
    assert "shader-f16" in r.summary and "OpenGL" in r.summary


def test_default_other_adapter(session):
    case = session.case("rope_k", dims={"seq": 4, "n_kv_heads": 1, "head_dim": 8})
    (r,) = check_case(session, case, what="adapters").results
    assert r.ok and r.details["against"] != session.adapter.label
