"""The command line: JSON fields of `adapters`, `list` and `run`, `--save-outputs`, and exit codes
(0 ok, 1 a wrong output, 2 user errors, 3 GPU failures) with one clear line and never a traceback.
A few commands run as real subprocesses; the long matrix of user mistakes runs `main()` in-process
(same code path, much faster), where anything but a WorkbenchError would surface as an exception."""

from __future__ import annotations

import json

import numpy as np
import pytest

from workbench.cli import main
from workbench.gpu.adapters import choose_adapter, list_adapters
from workbench.specs.registry import spec_for

from .conftest import run_cli, write_corpus
from .test_session import SILU_UP, SWIGLU

SCALE = """
struct Params { scale: f32, bias: f32 }
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> dims: vec4<u32>;
@group(0) @binding(3) var<uniform> params: Params;
@compute @workgroup_size(64)
fn scale(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i < dims.x) {
        y[i] = x[i] * params.scale + params.bias;
    } else if (i < arrayLength(&y)) {
        y[i] = -1.0;
    }
}
"""

HALF = """
@group(0) @binding(0) var<storage, read_write> out: array<f16>;
@compute @workgroup_size(64)
fn half(@builtin(global_invocation_id) gid: vec3<u32>) { out[gid.x] = 1.0h; }
"""

BIG = """
@group(0) @binding(0) var<storage, read_write> out: array<f32>;
@compute @workgroup_size(256)
fn big(@builtin(global_invocation_id) gid: vec3<u32>) { out[gid.x] = 1.0; }
"""

BROKEN = """
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(64)
fn broken(@builtin(global_invocation_id) gid: vec3<u32>) {
    out[gid.x] = 1u +;
}
"""


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """One user corpus for the whole module: good, f16, oversized, broken, unreflectable kernels."""
    root = tmp_path_factory.mktemp("cli")
    return write_corpus(
        root,
        {
            "scale.wgsl": SCALE,
            "half.wgsl": HALF,
            "big.wgsl": BIG,
            "broken.wgsl": BROKEN,
            "noentry.wgsl": "@group(0) var<storage> x: array<f32>;\n",
        },
    )


@pytest.fixture(scope="module")
def swiglu_corpus(tmp_path_factory):
    if spec_for("swiglu_combine") is None:
        pytest.skip("no swiglu_combine spec")
    root = tmp_path_factory.mktemp("swiglu")
    return write_corpus(
        root,
        {
            "right.wgsl": SWIGLU.format(hidden="f32", expr=SILU_UP),
            "wrong.wgsl": SWIGLU.format(hidden="f32", expr="g * up[i]"),
            "abi.wgsl": SWIGLU.format(hidden="u32", expr="u32(g)"),
        },
    )


def has_gl() -> bool:
    return any(a.backend == "OpenGL" for a in list_adapters())


# -- subprocesses --------------------------------------------------------------------------------


def test_adapters_json_lists_every_adapter_with_its_features_and_limits():
    proc = run_cli("adapters", "--json")
    assert proc.returncode == 0
    data = json.loads(proc.stdout)
    rows = data["adapters"]
    assert len(rows) == len(list_adapters()) >= 1
    for r in rows:
        assert {"index", "name", "backend", "type", "features", "limits", "subgroup_size"} <= set(r)
        assert isinstance(r["features"], list) and isinstance(r["limits"], dict)
        assert r["limits"]["max-storage-buffer-binding-size"] > 0
    assert [r["index"] for r in rows if r["default"]] == [data["default"]]
    vulkan = [r for r in rows if r["backend"] == "Vulkan" and "subgroup" in r["features"]]
    for r in vulkan:
        assert r["subgroup_size"] in (4, 8, 16, 32, 64, 128)


def test_list_json_and_text_show_each_kernels_status(corpus):
    proc = run_cli("list", str(corpus), "--json")
    assert proc.returncode == 0
    data = json.loads(proc.stdout)
    assert data["corpus"] == str(corpus)
    rows = {r["name"]: r for r in data["kernels"]}
    assert set(rows) == {"scale", "half", "big", "broken", "noentry"}
    assert rows["scale"]["status"] == "ok" and rows["scale"]["spec"] is False
    assert rows["scale"]["workgroup_size"] == [64, 1, 1]
    assert [
        (b["binding"], b["name"], b["space"], b["type"]) for b in rows["scale"]["bindings"]
    ] == [
        (0, "x", "storage", "array<f32>"),
        (1, "y", "storage", "array<f32>"),
        (2, "dims", "uniform", "vec4<u32>"),
        (3, "params", "uniform", "Params"),
    ]
    assert rows["half"]["features"] == ["shader-f16"]
    assert rows["broken"]["status"].startswith("compile error: broken.wgsl:4:22: ")
    assert rows["noentry"]["status"].startswith("error: noentry.wgsl:1: ")
    if not has_gl():
        pytest.skip("no OpenGL adapter")
    proc = run_cli("list", str(corpus), "--adapter", "gl")
    assert proc.returncode == 0
    line = next(ln for ln in proc.stdout.splitlines() if ln.strip().startswith("half "))
    assert line.rstrip().endswith("needs shader-f16")


def test_list_on_gl_marks_the_shipped_f16_kernels(session, capsys):
    if not has_gl():
        pytest.skip("no OpenGL adapter")
    needs_f16 = {k.name for k in session.corpus.kernels if "shader-f16" in k.features}
    if not needs_f16:
        pytest.skip("no shipped kernel uses f16")
    assert main(["list", "--adapter", "gl", "--json"]) == 0
    rows = {r["name"]: r["status"] for r in json.loads(capsys.readouterr().out)["kernels"]}
    assert {name for name, status in rows.items() if status == "needs shader-f16"} == needs_f16


def test_run_json_has_every_field_and_saves_outputs(corpus, tmp_path):
    saved = tmp_path / "outs"
    proc = run_cli(
        "run", "scale", "--corpus", str(corpus), "--dim", "n=1000", "--set", "dims.x=512",
        "--set", "params.scale=0.5", "--set", "params.bias=1", "--input", "x=arange",
        "--reps", "3", "--json", "--save-outputs", str(saved),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["kernel"] == "scale" and data["file"] == "scale.wgsl"
    assert data["corpus"] == str(corpus) and data["spec"] is False and data["ok"] is None
    assert {"name", "backend", "type", "features"} <= set(data["adapter"])
    assert data["dims"] == {"n": 1000}
    assert data["grid"] == [16, 1, 1] and data["workgroup_size"] == [64, 1, 1]
    b = data["bindings"]
    assert (b["x"]["role"], b["x"]["shape"], b["x"]["dtype"], b["x"]["source"]) == (
        "input", [1000], "float32", "arange",
    )  # fmt: skip
    assert (b["y"]["role"], b["y"]["shape"], b["y"]["dtype"], b["y"]["bytes"]) == (
        "output", [1000], "float32", 4000,
    )  # fmt: skip
    assert b["dims"]["role"] == "uniform" and b["dims"]["bytes"] == 16
    assert data["uniforms"] == {"dims": [512, 0, 0, 0], "params": {"scale": 0.5, "bias": 1}}
    want = np.where(np.arange(1000) < 512, np.arange(1000) * 0.5 + 1, -1.0)
    stats = data["outputs"]["y"]
    assert stats["count"] == 1000 and stats["min"] == -1.0 and stats["max"] == want.max()
    assert stats["mean"] == pytest.approx(want.mean()) and stats["nan"] == stats["inf"] == 0
    assert list(data["outputs"]) == ["y"]
    t = data["timing"]
    assert t["reps"] == 3 and t["method"] in ("timestamp", "wall")
    assert 0 <= t["p10_ms"] <= t["median_ms"] <= t["p90_ms"]
    # --save-outputs: one .npy per output, exactly what was computed.
    assert sorted(p.name for p in saved.iterdir()) == ["y.npy"]
    np.testing.assert_array_equal(np.load(saved / "y.npy"), want.astype(np.float32))


def test_a_wrong_spec_kernel_exits_1_and_a_right_one_0(swiglu_corpus):
    proc = run_cli(
        "run", "wrong.wgsl:swiglu_combine", "--corpus", str(swiglu_corpus),
        "--dim", "seq=4", "--dim", "d_ff=64", "--reps", "0",
    )  # fmt: skip
    assert proc.returncode == 1
    assert "verdict: FAIL" in proc.stdout and "outside tolerance" in proc.stdout
    rc = main(["run", "right.wgsl:swiglu_combine", "--corpus", str(swiglu_corpus), "--dim",
               "seq=4", "--dim", "d_ff=64", "--reps", "0", "--json"])  # fmt: skip
    assert rc == 0


def test_a_compile_error_exits_2_with_the_located_message(corpus):
    proc = run_cli("run", "broken", "--corpus", str(corpus))
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert lines[-3].startswith("workbench: broken.wgsl:4:22: expected expression")
    assert lines[-2] == "4 |     out[gid.x] = 1u +;"
    assert lines[-1] == " " * len("4 |     out[gid.x] = 1u +") + "^"


def test_argparse_mistakes_exit_2_without_a_traceback():
    proc = run_cli("run")
    assert proc.returncode == 2 and "usage:" in proc.stderr


def test_no_adapter_at_all_is_a_gpu_failure_exiting_3(corpus):
    # Hide every driver: Vulkan ICDs and the EGL vendor libraries behind the GL adapter.
    env = {
        "VK_ICD_FILENAMES": "/nonexistent/icd.json",
        "VK_DRIVER_FILES": "/nonexistent/icd.json",
        "__EGL_VENDOR_LIBRARY_FILENAMES": "/nonexistent/egl.json",
        "WORKBENCH_ADAPTER": "",
    }
    proc = run_cli("run", "scale", "--corpus", str(corpus), "--reps", "0", env=env)
    if proc.returncode == 0:
        pytest.skip("an adapter is still visible with the drivers hidden")
    assert proc.returncode == 3
    assert proc.stderr.strip().splitlines()[-1].startswith("workbench: no GPU adapter found")


# -- in-process: every user mistake is exit 2 and one line ---------------------------------------

_STORAGE_CAP = choose_adapter().limits["max-storage-buffer-binding-size"]

USER_ERRORS = [
    (["run", "no_such_kernel"], "no kernel named"),
    (["run", "scale", "--dim", "n=abc"], "is not an integer"),
    (["run", "scale", "--dim", "m=4"], "only dim is n"),
    (["run", "scale", "--dim", "n=-4"], "n must be >= 0"),
    (["run", "scale", "--set", "params.nope=1"], "no field 'nope'"),
    (["run", "scale", "--set", "params.scale"], "expects NAME=VALUE"),
    (["run", "scale", "--set", "dims.x=nan"], "not an integer"),
    (["run", "scale", "--set", "dims.x=1e20"], "does not fit in u32"),
    (["run", "scale", "--set", "dims.q=1"], "no component 'q'"),
    (["run", "scale", "--set", "nope=1"], "no uniform 'nope'"),
    (["run", "scale", "--input", "x=bogus"], "unknown input recipe"),
    (["run", "scale", "--input", "x=npy:/nonexistent/a.npy"], "does not exist"),
    (["run", "scale", "--input", "x=randint:5:1"], "LO < HI"),
    (["run", "scale", "--input", "x=const:abc"], "bad number"),
    (["run", "scale", "--input", "dims=zeros"], "is a uniform"),
    (["run", "scale", "--input", "q=zeros"], "no storage binding 'q'"),
    (["run", "scale", "--size", "x=-1"], "sizes must be >= 0"),
    (["run", "scale", "--size", "q=3"], "has no binding q"),
    (["run", "scale", "--size", "dims=3"], "a uniform has a fixed size"),
    (["run", "scale", "--seed", "-1"], "seed must be >= 0"),
    (["run", "scale", "--reps", "-1"], "must be >= 0"),
    (["run", "scale", "--rtol", "-1"], "--rtol must be a finite number"),
    (["run", "scale", "--atol", "nan"], "--atol must be a finite number"),
    (["run", "scale", "--adapter", "99"], "adapter index 99 does not exist"),
    (["run", "scale", "--adapter", "no-such-gpu"], "no adapter matches"),
    (["run", "noentry"], "noentry.wgsl:1: resource variable 'x' needs @group and @binding"),
    (["run", "big", "--dim", f"n={_STORAGE_CAP // 4 + 1}"], "max-storage-buffer-binding-size"),
    (["run", "broken"], "broken.wgsl:4:22"),
]


@pytest.mark.parametrize(
    ("argv", "why"), USER_ERRORS, ids=[" ".join(a[1:]) for a, _ in USER_ERRORS]
)
def test_user_mistakes_exit_2_with_one_clear_line(corpus, capsys, argv, why):
    if "no_such_kernel" not in argv:
        argv = [*argv, "--corpus", str(corpus)]
    assert main([*argv, "--reps", "0"] if "--reps" not in argv else argv) == 2
    err = capsys.readouterr().err
    last = [ln for ln in err.splitlines() if ln.startswith("workbench: ")][-1]
    assert why in last, err


def test_corpus_problems_exit_2(tmp_path, capsys):
    write_corpus(tmp_path / "toml", {"wgslconfig.toml": "[preamble\n", "a.wgsl": SCALE})
    assert main(["list", str(tmp_path / "toml")]) == 2
    assert "not valid TOML" in capsys.readouterr().err
    assert main(["run", "a", "--corpus", str(tmp_path / "missing")]) == 2
    assert "does not exist" in capsys.readouterr().err
    (tmp_path / "file.txt").write_text("x")
    assert main(["list", str(tmp_path / "file.txt")]) == 2
    assert "not a .wgsl file" in capsys.readouterr().err


def test_save_outputs_into_a_file_path_is_a_user_error(corpus, tmp_path, capsys):
    target = tmp_path / "taken"
    target.write_text("a file, not a folder")
    argv = ["run", "scale", "--corpus", str(corpus), "--reps", "0", "--save-outputs", str(target)]
    assert main(argv) == 2
    assert "--save-outputs" in capsys.readouterr().err


def test_spec_mismatch_runs_ad_hoc_and_missing_feature_exits_2(swiglu_corpus, corpus, capsys):
    argv = ["run", "abi.wgsl:swiglu_combine", "--corpus", str(swiglu_corpus), "--reps", "0"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "not its binding signature" in out and "runs ad hoc" in out
    if not has_gl():
        pytest.skip("no OpenGL adapter")
    assert main(["run", "half", "--corpus", str(corpus), "--adapter", "gl"]) == 2
    assert "needs the shader-f16 feature" in capsys.readouterr().err


def test_nan_and_inf_outputs_are_counted_in_run_json(corpus, capsys):
    argv = ["run", "scale", "--corpus", str(corpus), "--dim", "n=100", "--set", "dims.x=60",
            "--set", "params.bias=inf", "--input", "x=const:nan", "--reps", "0", "--json"]  # fmt: skip
    assert main(argv) == 0
    stats = json.loads(capsys.readouterr().out)["outputs"]["y"]
    # nan * 0 + inf is NaN for the first 60; the other 40 are -1.
    assert (stats["nan"], stats["inf"], stats["min"], stats["max"]) == (60, 0, -1.0, -1.0)
    argv[argv.index("x=const:nan")] = "x=ones"
    assert main(argv) == 0
    stats = json.loads(capsys.readouterr().out)["outputs"]["y"]
    assert (stats["nan"], stats["inf"]) == (0, 60)


def test_run_text_output_names_the_kernel_bindings_and_verdict(swiglu_corpus, capsys):
    argv = ["run", "right.wgsl:swiglu_combine", "--corpus", str(swiglu_corpus), "--dim", "seq=2",
            "--dim", "d_ff=32", "--reps", "2"]  # fmt: skip
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert out.startswith("swiglu_combine  (right.wgsl, spec)  on ")
    assert "[2] hidden" in out and "verdict: PASS" in out and "median" in out
