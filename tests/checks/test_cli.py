"""`workbench check` end to end: exit codes, JSON, --all --quick on the shipped kernels."""

from __future__ import annotations

import json

import pytest

from workbench.cli import main

from .conftest import replace_once


def test_single_kernel_json(capsys):
    rc = main(["check", "ffn_gelu_backward", "--quick", "--json"])
    out = capsys.readouterr().out
    assert rc == 0
    report = json.loads(out)
    assert report["ok"] is True and report["kernel"] == "ffn_gelu_backward"
    assert report["dims"] == {"seq": 4, "d_ff": 300}
    kinds = {r["kind"] for r in report["results"]}
    assert kinds == {"compare", "evidence", "grad", "special", "determinism"}
    grad = next(r for r in report["results"] if r["kind"] == "grad" and r["name"] == "grad_pre")
    assert grad["details"]["samples"] and grad["columns"][0] == "where"


def test_human_output_and_what(capsys):
    rc = main(
        ["check", "rope_q_backward", "--quick", "--what", "grad,determinism", "--repeats", "3"]
    )
    out = capsys.readouterr().out
    assert rc == 0
    assert "grad" in out and "determinism" in out and "special" not in out
    assert "bitwise identical in 3 runs" in out and "verdict: PASS" in out


def test_failing_corpus_exits_1(tmp_path, capsys, altered):
    altered(
        "09_backward_ffn.wgsl",
        replace_once("(1.0 + 3.0 * GELU_COEFF * x2)", "(1.0 + 2.0 * GELU_COEFF * x2)"),
    )
    rc = main(
        [
            "check",
            "ffn_gelu_backward",
            "--corpus",
            str(tmp_path),
            "--quick",
            "--what",
            "compare,grad",
        ]
    )
    out = capsys.readouterr().out
    assert rc == 1
    assert "✗" in out and "verdict: FAIL" in out
    assert "seq=" in out and "d_ff=" in out


@pytest.mark.parametrize(
    "argv",
    [
        ["check"],
        ["check", "gelu_inplace", "--all"],
        ["check", "gelu_inplace", "--what", "bogus"],
        ["check", "gelu_inplace", "--repeats", "1"],
        ["check", "gelu_inplace", "--inject", "x=banana"],
        ["check", "--all", "--dim", "seq=4"],
        ["check", "no_such_kernel"],
    ],
)
def test_user_errors_exit_2(argv, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("workbench: ") or "workbench: " in err
    assert "Traceback" not in err


def test_all_quick_passes_on_shipped_kernels(capsys):
    rc = main(["check", "--all", "--quick"])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "verdict: PASS" in out
    assert out.count("✓ ") >= 17


def test_all_quick_json(capsys):
    rc = main(["check", "--all", "--quick", "--what", "compare", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert rc == 0 and report["ok"] and report["quick"]
    assert len(report["kernels"]) >= 17
    assert all(k["results"][0]["kind"] == "compare" for k in report["kernels"])
