"""Tolerances from the command line and from fixtures go through the one validator: a NaN, an
infinite or a negative tolerance, or an rtol over the ceiling without --force-tolerance, is a user
error (exit 2, one line) in `check`, `run` and `record`, and a fixture holding one is refused as a
bad fixture (tests/fixtures/test_bad_input.py). A kernel 1.5 times wrong can no longer PASS
through a NaN tolerance."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from workbench.cli import main
from workbench.specs.registry import spec_for
from workbench.wgsl.corpus import SHIPPED

DIMS = ["--dim", "seq=1", "--dim", "d_ff=64"]


@pytest.fixture(scope="module")
def wrong_gelu(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A corpus whose gelu_inplace returns 1.5 times GeLU."""
    root = tmp_path_factory.mktemp("wrong")
    for name in ("wgslconfig.toml", "00_shared.wgsl"):
        shutil.copy(SHIPPED / name, root / name)
    text = (SHIPPED / "06_activation.wgsl").read_text()
    assert text.count("let r = gelu(v);") == 1
    (root / "06_activation.wgsl").write_text(
        text.replace("let r = gelu(v);", "let r = 1.5 * gelu(v);")
    )
    return root


def _check(corpus: Path, *extra: str) -> list[str]:
    return ["check", "gelu_inplace", "--corpus", str(corpus), "--what", "compare", *DIMS, *extra]


def test_the_wrong_kernel_fails_at_its_own_tolerance(
    wrong_gelu: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(_check(wrong_gelu)) == 1
    assert "FAIL" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("given", "why"),
    [
        (["--rtol", "nan", "--atol", "nan"], "--rtol must be a finite number >= 0, got nan"),
        (["--rtol", "inf"], "--rtol must be a finite number >= 0, got inf"),
        (["--rtol", "-1", "--atol", "-1"], "--rtol must be a finite number >= 0, got -1.0"),
        (["--atol", "nan"], "--atol must be a finite number >= 0, got nan"),
        (
            ["--rtol", "2"],
            "--rtol = 2 is over 1: a result off by more than its own size would pass; give --force-tolerance "
            "if you mean it",
        ),
    ],
)
def test_check_refuses_bad_tolerances_with_exit_2(
    wrong_gelu: Path, capsys: pytest.CaptureFixture[str], given: list[str], why: str
) -> None:
    assert main(_check(wrong_gelu, *given)) == 2
    captured = capsys.readouterr()
    lines = [ln for ln in captured.err.splitlines() if ln.strip()]
    assert lines == [f"workbench: {why}"], captured.err
    assert "PASS" not in captured.out


def test_check_rtol_nan_is_one_line_in_a_subprocess(wrong_gelu: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "workbench", *_check(wrong_gelu, "--rtol", "nan", "--atol", "nan")],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
        timeout=300,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "workbench: --rtol must be a finite number >= 0, got nan"
    ]


def test_a_forced_rtol_over_the_ceiling_is_taken(
    wrong_gelu: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 1.5 x GeLU is off by half its size: rtol 2 lets it pass, which is what forcing means.
    assert main(_check(wrong_gelu, "--rtol", "2", "--atol", "0", "--force-tolerance")) == 0
    assert "rtol 2, atol 0" in capsys.readouterr().out


def test_a_lone_rtol_says_which_atol_applies(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "gelu_inplace", *DIMS, "--reps", "0", "--rtol", "1e-3"]) == 0
    captured = capsys.readouterr()
    assert "rtol 0.001 given without atol: each output keeps its own atol" in captured.err
    # The spec's own atol for this output still applies beside the user's rtol.
    spec = spec_for("gelu_inplace")
    assert spec is not None
    tol = spec.tolerance("x", spec.resolve_dims({"seq": 1, "d_ff": 64}))
    assert tol is not None
    assert f"(rtol 0.001, atol {tol.atol:g})" in captured.out


def test_run_and_record_use_the_same_validator(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", "gelu_inplace", *DIMS, "--reps", "0", "--rtol", "nan"]) == 2
    assert "--rtol must be a finite number >= 0, got nan" in capsys.readouterr().err
    out = tmp_path / "g"
    assert main(["record", "gelu_inplace", *DIMS, "--out", str(out), "--atol", "-1"]) == 2
    assert "--atol must be a finite number >= 0, got -1.0" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())
