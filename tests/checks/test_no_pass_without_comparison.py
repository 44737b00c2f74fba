"""Issue 27, "PASS where nothing was verified": one test per finding, named after it.

The rule every verdict follows (`workbench.verdicts`): PASS (exit 0, `ok: true`, a green mark, a
passing pytest item) only where at least one output element the kernel wrote was compared with a
reference within a bounded tolerance; otherwise the verdict says what was missing. Every test drives
the real command line (in this process) or the engine on the real adapter, with corpora written
here; the references are float64 NumPy from the mathematics (y = 2x), never from the WGSL.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from workbench.cli import main
from workbench.fixtures import SHIPPED_FIXTURES, record_fixture
from workbench.fixtures.manifest import HEADER, kernel_sha256, load_fixture
from workbench.fixtures.replay import replay_fixture
from workbench.safewrite import toml_text
from workbench.session import Session, array_stats
from workbench.wgsl.corpus import load_corpus

# y = 2x over n elements; NOOP is the same kernel with the bound check turned the wrong way round
# (`i > n`), so it writes nothing.
DOUBLE = """
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> n: u32;

@compute @workgroup_size(64)
fn double(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i < n) { y[i] = 2.0 * x[i]; }
}
"""
NOOP = DOUBLE.replace("if (i < n)", "if (i > n)")
# The kernel: y = x + 12345, described with a reference that returns {}.
SCALE = """
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> n: u32;

@compute @workgroup_size(64)
fn scale(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i < n) { y[i] = x[i] + 12345.0; }
}
"""
OVERRIDES = """
override NODEF: i32;
override FLAG: bool = false;
@group(0) @binding(0) var<storage, read_write> y: array<f32>;

@compute @workgroup_size(64)
fn ov(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x < arrayLength(&y)) { y[gid.x] = f32(NODEF) + select(0.0, 1.0, FLAG); }
}
"""


def _toml(kernel: str, function: str, n: str = "1024", extra: str = "") -> str:
    return f"""
[kernels.{kernel}]
dims = {{ N = {n} }}
grid = ["ceil(N / 64)", 1, 1]
[kernels.{kernel}.uniforms]
n = "N"
[kernels.{kernel}.buffers]
x = {{ shape = ["N"], input = "randn:1" }}
y = {{ shape = ["N"], output = true }}
[kernels.{kernel}.reference]
function = "refs.py:{function}"
{extra}"""


REFS = """
def double(x, *, N):
    return {"y": 2.0 * x}


def nothing(x, *, N):
    return {}
"""


def corpus(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (root / name).write_text(text, encoding="utf-8")
    return root


def double_corpus(root: Path, source: str = DOUBLE, n: str = "1024") -> Path:
    return corpus(
        root,
        {
            "double.wgsl": source,
            "workbench.toml": _toml("double", "double", n),
            "refs.py": REFS,
        },
    )


class Result:
    def __init__(self, rc: int, out: str, err: str) -> None:
        self.rc, self.out = rc, out
        self.err = "\n".join(
            ln for ln in err.splitlines() if ln and not ln.startswith("workbench: no GPU found")
        )

    def json(self) -> Any:
        return json.loads(self.out)


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., Result]:
    def run(*argv: str) -> Result:
        rc = main(list(argv))
        captured = capsys.readouterr()
        return Result(rc, captured.out, captured.err)

    return run


# -- 1 ---------------------------------------------------------------------------------------------


def test_reference_returning_empty_dict_is_not_a_pass(tmp_path: Path, cli) -> None:
    root = corpus(
        tmp_path / "c",
        {"scale.wgsl": SCALE, "workbench.toml": _toml("scale", "nothing"), "refs.py": REFS},
    )
    res = cli("check", "scale", "--corpus", str(root))
    assert res.rc == 1, res.out
    assert "verdict: PASS" not in res.out and "NOTHING_COMPARED" in res.out
    assert "nothing compared" in res.out
    # Special values compared nothing either: no "✓ 11 scenarios match".
    assert "scenarios match" not in res.out
    data = cli("check", "scale", "--corpus", str(root), "--json").json()
    assert data["ok"] is False and data["verdict"] == "nothing_compared"
    only = cli("check", "scale", "--corpus", str(root), "--what", "compare", "--json")
    assert only.rc == 1 and only.json()["ok"] is False
    every = cli("check", "--all", "--corpus", str(root), "--json")
    assert every.rc == 1 and every.json()["verdicts"]["pass"] == 0
    assert every.json()["verdicts"]["nothing_compared"] == 1
    run = cli("run", "scale", "--corpus", str(root), "--reps", "0", "--json")
    assert run.rc == 1 and run.json()["ok"] is False


# -- 2 ---------------------------------------------------------------------------------------------


def test_zero_sized_dims_are_an_empty_case_not_a_pass(tmp_path: Path, cli) -> None:
    res = cli("check", "gelu_inplace", "--dim", "seq=0", "--what", "compare")
    assert res.rc == 1 and "verdict: EMPTY" in res.out and "empty case" in res.out
    assert "PASS" not in res.out
    data = cli("check", "gelu_inplace", "--dim", "seq=0", "--json").json()
    assert data["ok"] is False and data["verdict"] == "empty"
    run = cli("run", "gelu_inplace", "--dim", "seq=0", "--reps", "0", "--json").json()
    assert run["ok"] is False and run["verdict"] == "empty"
    # The engine reports the statistics of an empty array as empty: no `min nan max nan`.
    assert run["outputs"]["x"] == {"count": 0}
    assert array_stats(np.zeros((0, 4), np.float32)) == {"count": 0}
    human = cli("run", "gelu_inplace", "--dim", "seq=0", "--reps", "0")
    assert "min nan" not in human.out and "x: empty (0 elements)" in human.out
    # A description whose dim defaults to 0 is the same empty case.
    root = double_corpus(tmp_path / "zero", n="{ default = 0, lo = 0 }")
    zero = cli("check", "double", "--corpus", str(root), "--json")
    assert zero.rc == 1 and zero.json()["verdict"] == "empty"


def test_record_refuses_a_fixture_that_compares_nothing(tmp_path: Path, cli) -> None:
    out = tmp_path / "rec" / "empty"
    res = cli("record", "gelu_inplace", "--dim", "seq=0", "--out", str(out))
    assert res.rc == 2 and "0 elements" in res.err and len(res.err.splitlines()) == 1
    assert not out.with_suffix(".toml").exists() and not out.with_suffix(".npz").exists()


# -- 3 ---------------------------------------------------------------------------------------------


def test_kernel_that_writes_nothing_cannot_pass_on_zero_expected_outputs(
    tmp_path: Path, cli
) -> None:
    root = double_corpus(tmp_path / "noop", NOOP)
    args = ("--corpus", str(root), "--input", "x=zeros")
    run = cli("run", "double", *args, "--reps", "0")
    assert run.rc == 1 and "verdict: PASS" not in run.out and "verdict: NO_WORK" in run.out
    assert "wrote nothing into y" in run.out
    data = cli("run", "double", *args, "--reps", "0", "--json").json()
    assert data["ok"] is False and data["unwritten"] == ["y"]
    compare = cli("check", "double", *args, "--what", "compare", "--json")
    assert compare.rc == 1 and compare.json()["verdict"] == "no_work"
    rec = cli("record", "double", *args, "--out", str(tmp_path / "rec" / "noop"))
    assert rec.rc == 2 and "wrote nothing into y" in rec.err


def test_fixture_of_zeros_does_not_replay_pass_against_a_kernel_that_writes_nothing(
    tmp_path: Path, session: Session
) -> None:
    good = Session.on_adapter(load_corpus(double_corpus(tmp_path / "good")), session.adapter)
    case = good.case("double", inputs={"x": "zeros"})
    manifest = record_fixture(good.run(case), tmp_path / "fx" / "zeros")
    assert replay_fixture(good, manifest).status == "pass"
    noop = Session.on_adapter(load_corpus(double_corpus(tmp_path / "noop", NOOP)), session.adapter)
    result = replay_fixture(noop, manifest)
    assert result.status == "no_work" and not result.ok and result.exit_code == 1
    assert "y" in result.worst()


def test_pytest_plugin_fails_a_zeros_fixture_of_a_kernel_that_writes_nothing(
    tmp_path: Path, session: Session
) -> None:
    good = Session.on_adapter(load_corpus(double_corpus(tmp_path / "good")), session.adapter)
    record_fixture(good.run(good.case("double", inputs={"x": "zeros"})), tmp_path / "fx" / "zeros")
    noop = double_corpus(tmp_path / "noop", NOOP)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:workbench",
            "-p",
            "workbench.pytest_plugin",
            "--workbench-fixtures",
            str(tmp_path / "fx"),
            "--workbench-corpus",
            str(noop),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "1 failed" in proc.stdout and "NO_WORK" in proc.stdout


# -- 4 ---------------------------------------------------------------------------------------------


def test_fixture_with_only_determinism_and_no_expected_does_not_replay_pass(
    tmp_path: Path, session: Session
) -> None:
    case = session.case("gelu_inplace", dims={"seq": 1, "d_ff": 512})
    manifest = record_fixture(session.run(case), tmp_path / "hand_edited")
    # Edited by hand: determinism only, [expected] emptied, and the npz rewritten to match.
    data = tomllib.loads(manifest.read_text(encoding="utf-8"))
    data["checks"], data["expected"] = ["determinism"], {}
    data.pop("arrays_sha256")
    manifest.write_text(toml_text(data, HEADER), encoding="utf-8")
    keep = {e["array"] for e in data["inputs"].values() if "array" in e}
    with np.load(manifest.with_suffix(".npz")) as npz:
        arrays = {k: npz[k] for k in npz.files if k in keep}
    np.savez(manifest.with_suffix(".npz"), **arrays)
    result = replay_fixture(session, load_fixture(manifest))
    assert result.status == "nothing_compared" and not result.ok and result.exit_code == 1


# -- 5 ---------------------------------------------------------------------------------------------


def test_atol_has_a_ceiling_in_the_cli_workbench_toml_and_fixtures(tmp_path: Path, cli) -> None:
    res = cli("check", "gelu_inplace", "--atol", "1e300", "--rtol", "0")
    assert res.rc == 2 and "--atol = 1e+300 is over 1" in res.err
    assert len(res.err.splitlines()) == 1
    root = double_corpus(tmp_path / "toml")
    toml = root / "workbench.toml"
    toml.write_text(toml.read_text() + "atol = 1e300\n", encoding="utf-8")
    described = cli("check", "double", "--corpus", str(root))
    assert described.rc == 2 and "reference.atol" in described.err and "over 1" in described.err
    rec = cli("record", "gelu_inplace", "--dim", "seq=1", "--out", str(tmp_path / "fx" / "g"))
    assert rec.rc == 0, rec.err
    manifest = tmp_path / "fx" / "g.toml"
    text = manifest.read_text(encoding="utf-8")
    head, sep, rest = text.partition("[expected.x]")
    rest = "\n".join("atol = 1e300" if ln.startswith("atol = ") else ln for ln in rest.splitlines())
    manifest.write_text(head + sep + rest + "\n", encoding="utf-8")
    replay = cli("replay", str(manifest))
    assert replay.rc == 2 and "atol = 1e+300 is over 1" in replay.out + replay.err


# -- 6 ---------------------------------------------------------------------------------------------


def test_override_fraction_into_integer_or_bool_is_refused(tmp_path: Path, cli) -> None:
    root = corpus(tmp_path / "ov", {"ov.wgsl": OVERRIDES})
    res = cli("run", "ov", "--corpus", str(root), "--override", "NODEF=1.5", "--reps", "0")
    assert res.rc == 2 and "override NODEF: 1.5 is not an integer (i32)" in res.err
    assert len(res.err.splitlines()) == 1
    flag = ("--override", "NODEF=1", "--override", "FLAG=0.5", "--reps", "0")
    res = cli("run", "ov", "--corpus", str(root), *flag)
    assert res.rc == 2 and "override FLAG: 0.5 is not an integer (bool)" in res.err
    ok = cli("run", "ov", "--corpus", str(root), "--override", "NODEF=3", "--reps", "0", "--json")
    assert ok.rc == 0 and ok.json()["outputs"]["y"]["max"] == 3.0


# -- 7 ---------------------------------------------------------------------------------------------


def test_run_does_not_say_wrote_nothing_when_the_kernel_wrote_zeros(tmp_path: Path, cli) -> None:
    root = double_corpus(tmp_path / "good")
    res = cli("run", "double", "--corpus", str(root), "--input", "x=zeros", "--reps", "0")
    assert res.rc == 0 and "wrote nothing" not in res.out and "verdict: PASS" in res.out
    data = cli("run", "double", "--corpus", str(root), "--input", "x=zeros", "--json").json()
    assert data["unwritten"] == [] and data["ok"] is True


# -- source identity -------------------------------------------------------------------------------


def test_unchanged_shipped_kernel_does_not_report_source_changed(session: Session) -> None:
    result = replay_fixture(session, SHIPPED_FIXTURES / "gelu_inplace_gpt2.toml")
    assert result.status == "pass" and not result.source_changed
    assert not any("source changed" in line for line in result.info)


def test_source_identity_ignores_comments_and_whitespace_but_not_code(
    tmp_path: Path, session: Session
) -> None:
    good = Session.on_adapter(load_corpus(double_corpus(tmp_path / "good")), session.adapter)
    manifest = record_fixture(good.run(good.case("double")), tmp_path / "fx" / "double")
    reformatted = DOUBLE.replace("    let i = gid.x;", "  // the element\n\n  let i   =  gid.x ;")
    same = Session.on_adapter(
        load_corpus(double_corpus(tmp_path / "same", reformatted)), session.adapter
    )
    assert kernel_sha256(same.kernel("double").text) == kernel_sha256(good.kernel("double").text)
    assert not replay_fixture(same, manifest).source_changed
    edited = DOUBLE.replace("2.0 * x[i]", "x[i] * 2.0")
    other = Session.on_adapter(
        load_corpus(double_corpus(tmp_path / "other", edited)), session.adapter
    )
    assert replay_fixture(other, manifest).source_changed


def test_no_shipped_fixture_reports_source_changed(session: Session) -> None:
    corpus_ = session.corpus
    for manifest in sorted(SHIPPED_FIXTURES.glob("*.toml")):
        fx = load_fixture(manifest)
        (kernel,) = [k for k in corpus_.kernels if k.name == fx.kernel and k.file == fx.source]
        assert fx.source_sha256 == kernel_sha256(kernel.text), manifest.name
