"""Kernels of one's own, described in workbench.toml: checked against refs.py, failing where a bug is
planted, sized by their dims, with gradients checked through a described forward; and `describe`
output that loads and runs unchanged. All on the real adapter, with corpora written here."""

from __future__ import annotations

from pathlib import Path

from .corpora import (
    MATMUL,
    MATMUL_TOML,
    ROWNORM,
    ROWNORM_TOML,
    matmul_corpus,
    rownorm_corpus,
    write,
)

FAST = "compare,evidence,determinism"


def _result(report: dict, kind: str) -> list[dict]:
    return [r for r in report["results"] if r["kind"] == kind]


def test_matmul_described_passes_check(tmp_path: Path, cli) -> None:
    root = matmul_corpus(tmp_path)
    res = cli("check", "matmul", "--corpus", str(root), "--what", FAST, "--json")
    assert res.rc == 0, res.err
    report = res.json()
    assert report["verdict"] == "pass" and report["dims"] == {"M": 256, "N": 192, "K": 128}
    (compare,) = _result(report, "compare")
    assert compare["ok"] and not compare["skipped"] and compare["details"]["rtol"] == 1e-5
    (evidence,) = _result(report, "evidence")
    assert evidence["details"]["unwritten"] == 0 and evidence["details"]["elements"] == 256 * 192


def test_matmul_run_dispatches_the_described_2d_grid(tmp_path: Path, cli) -> None:
    root = matmul_corpus(tmp_path)
    res = cli("run", "matmul", "--corpus", str(root), "--dim", "M=40", "--reps", "0", "--json")
    assert res.rc == 0, res.err
    run = res.json()
    assert run["grid"] == [12, 3, 1] and run["ok"] is True
    assert run["bindings"]["C"]["shape"] == [40, 192] and run["bindings"]["C"]["role"] == "output"


def test_matmul_planted_indexing_bug_fails(tmp_path: Path, cli) -> None:
    buggy = MATMUL.replace("a = A[row * K + ak];", "a = A[row * N + ak];")
    assert buggy != MATMUL
    root = matmul_corpus(tmp_path, source=buggy)
    res = cli("check", "matmul", "--corpus", str(root), "--what", FAST)
    assert res.rc == 1
    assert "compare      ✗ C:" in res.out and "verdict: FAIL" in res.out
    assert "M=" in res.out and "N=" in res.out  # mismatches named by the described axes


def test_dims_are_at_least_one(tmp_path: Path, cli) -> None:
    root = matmul_corpus(tmp_path)
    res = cli("run", "matmul", "--corpus", str(root), "--dim", "M=0")
    assert res.rc == 2 and "dim M=0 is outside [1, " in res.err
    root = matmul_corpus(tmp_path / "zero", toml=MATMUL_TOML.replace("M = 256", "M = 0"))
    res = cli("run", "matmul", "--corpus", str(root))
    assert res.rc == 2 and "kernels.matmul.dims.M: 0 is outside [1, " in res.err


def test_adhoc_with_dims_uniform_at_zero_is_no_work(tmp_path: Path, cli) -> None:
    root = matmul_corpus(tmp_path, toml=None)
    res = cli("check", "matmul", "--corpus", str(root), "--json")
    assert res.rc == 1
    report = res.json()
    assert report["verdict"] == "no_work" and report["ok"] is False
    (evidence,) = _result(report, "evidence")
    assert evidence["details"]["no_work"] and "the kernel did nothing" in evidence["summary"]
    human = cli("check", "matmul", "--corpus", str(root), "--what", "evidence")
    assert human.rc == 1 and "verdict: NO_WORK" in human.out
    run = cli("run", "matmul", "--corpus", str(root), "--reps", "0")
    assert run.rc == 1 and "the kernel wrote nothing into C" in run.out
    assert "verdict: NO_WORK" in run.out


def test_rownorm_one_workgroup_per_row_with_vec4_dims(tmp_path: Path, cli) -> None:
    root = rownorm_corpus(tmp_path)
    res = cli("check", "rownorm", "--corpus", str(root), "--json", "--what", FAST + ",special")
    assert res.rc == 0, res.err
    report = res.json()
    assert report["verdict"] == "pass" and report["dims"] == {"R": 24, "C": 200}
    run = cli("run", "rownorm", "--corpus", str(root), "--dim", "R=3", "--reps", "0", "--json")
    assert run.json()["grid"] == [3, 1, 1] and run.json()["ok"] is True


def test_gradient_check_of_described_backward(tmp_path: Path, cli) -> None:
    root = rownorm_corpus(tmp_path)
    res = cli("check", "rownorm_bwd", "--corpus", str(root), "--what", "compare,grad", "--json")
    assert res.rc == 0, res.err
    report = res.json()
    (grad,) = _result(report, "grad")
    assert grad["ok"] and not grad["skipped"] and grad["details"]["wrt"] == "x"
    assert report["verdict"] == "pass"


def test_gradient_check_fails_with_planted_derivative_bug(tmp_path: Path, cli) -> None:
    buggy = ROWNORM.replace("let k = r * r * r * dots[0]", "let k = r * r * dots[0]")
    assert buggy != ROWNORM
    root = rownorm_corpus(tmp_path, source=buggy)
    res = cli("check", "rownorm_bwd", "--corpus", str(root), "--what", "grad", "--json")
    assert res.rc == 1
    (grad,) = _result(res.json(), "grad")
    assert not grad["ok"] and grad["details"]["n_bad"] > 0


def test_gradient_that_cannot_run_is_skipped_and_others_report(tmp_path: Path, cli) -> None:
    toml = ROWNORM_TOML.replace('forward = "rownorm"', 'forward = "no_such_forward"')
    root = rownorm_corpus(tmp_path, toml=toml)
    res = cli("check", "rownorm_bwd", "--corpus", str(root), "--what", "compare,grad", "--json")
    assert res.rc == 0, res.err
    report = res.json()
    (grad,) = _result(report, "grad")
    assert grad["skipped"] and "no forward: no_such_forward" in grad["summary"]
    assert _result(report, "compare")[0]["ok"] and report["verdict"] == "pass"
    mismatched = ROWNORM_TOML.replace('upstream = { y = "dy" }', 'upstream = { z = "dy" }')
    root = rownorm_corpus(tmp_path / "mismatch", toml=mismatched)
    res = cli("check", "rownorm_bwd", "--corpus", str(root), "--what", "compare,grad", "--json")
    (grad,) = _result(res.json(), "grad")
    assert res.rc == 0 and grad["skipped"] and "mismatched forward" in grad["summary"]


def test_describe_output_saved_unchanged_loads_and_runs(tmp_path: Path, cli) -> None:
    root = write(tmp_path, {"matmul.wgsl": MATMUL, "rownorm.wgsl": ROWNORM})
    text = ""
    for kernel in ("matmul", "rownorm", "rownorm_bwd"):
        res = cli("describe", kernel, "--corpus", str(root))
        assert res.rc == 0 and f"[kernels.{kernel}]" in res.out
        text += res.out
    (root / "workbench.toml").write_text(text, encoding="utf-8")
    for kernel in ("matmul", "rownorm", "rownorm_bwd"):
        res = cli("run", kernel, "--corpus", str(root), "--reps", "0", "--json")
        # The dims feed the uniform by name (dims.x, dims.y, ...), the first sized to run: the
        # kernel writes its outputs; with no reference yet the verdict is `ran`, never a pass.
        assert res.rc == 0 and res.json()["verdict"] == "ran", res.err
        assert res.json()["spec"] is True
        assert res.json()["dims"] == {"dims_x": 1024, "dims_y": 1, "dims_z": 1, "dims_w": 1}
        assert res.json()["uniforms"]["dims"] == [1024, 1, 1, 1]


def test_check_all_counts_verdicts(tmp_path: Path, cli) -> None:
    small = MATMUL_TOML.replace("M = 256, N = 192, K = 128", "M = 20, N = 24, K = 16")
    # rownorm is described without a reference (RAN); rownorm_bwd is ad hoc (its dims stay 0).
    no_reference = ROWNORM_TOML[: ROWNORM_TOML.index("[kernels.rownorm.reference]")]
    root = matmul_corpus(tmp_path, toml=small + no_reference)
    write(root, {"rownorm.wgsl": ROWNORM})
    res = cli("check", "--all", "--corpus", str(root), "--what", FAST)
    assert res.rc == 1
    lines = res.out.strip().splitlines()
    assert lines[-1] == (
        "1 pass · 1 ran (no reference: describe them in workbench.toml) · 1 no_work · 0 fail"
    )
    assert any(ln.startswith("○ rownorm ") and "RAN" in ln for ln in lines)
    res = cli("check", "--all", "--corpus", str(root), "--what", FAST, "--json")
    data = res.json()
    assert {k: n for k, n in data["verdicts"].items() if n} == {"pass": 1, "ran": 1, "no_work": 1}
    verdicts = {k["kernel"]: k["verdict"] for k in data["kernels"]}
    assert verdicts == {"matmul": "pass", "rownorm": "ran", "rownorm_bwd": "no_work"}


def test_described_tolerances_go_through_the_one_validator(tmp_path: Path, cli) -> None:
    for bad, why in (
        ("rtol = nan", "reference.rtol: must be a finite number >= 0, got nan"),
        ("rtol = 1e300", "reference.rtol: 1e+300 is over 1"),
        ("atol = -1", "reference.atol: must be a finite number >= 0, got -1.0"),
    ):
        key = bad.split(" ")[0]
        toml = MATMUL_TOML.replace(f"{key} = 1e-5", bad)
        assert toml != MATMUL_TOML
        root = matmul_corpus(tmp_path / key, toml=toml)
        res = cli("run", "matmul", "--corpus", str(root), "--reps", "0")
        assert res.rc == 2, res.err
        lines = res.err.strip().splitlines()
        assert len(lines) == 1 and why in lines[0] and "workbench.toml" in lines[0], res.err
