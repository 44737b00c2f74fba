"""The UI's describe command without the UI: an ad-hoc case written as a description that loads
with the same grid, uniforms and recipes; a described kernel keeps its expressions, reference and
the rest of the file, with the dims' defaults updated."""

from __future__ import annotations

import tomllib
from pathlib import Path

import numpy as np

from workbench.session import Session
from workbench.specs.described import load_descriptions
from workbench.viewmodel.cases import build_case
from workbench.viewmodel.describe import write_description
from workbench.viewmodel.form import default_form, form_paths
from workbench.wgsl.corpus import load_corpus

from .corpora import MATMUL, MATMUL_TOML, matmul_corpus, write


def test_adhoc_case_written_and_loaded(tmp_path: Path) -> None:
    root = write(tmp_path, {"matmul.wgsl": MATMUL})
    session = Session.open(corpus=root)
    case = session.case(
        "matmul",
        dims={"n": 512},
        sets={"dims.x": 16, "dims.y": 32, "dims.w": 0x01020304},
        grid=(2, 1, 1),
        inputs={"A": "arange"},
    )
    write_description(case, root, "matmul")
    spec = load_descriptions(load_corpus(root))["matmul"]
    dims = spec.resolve_dims()
    # The uniform's lanes are dims named after them, their defaults as the case ran; the arrays
    # hold n (no lane has that value); the grid, which no expression gives, as it ran; a bit
    # pattern past any size stays a value.
    assert dims == {"dims_x": 16, "dims_y": 32, "dims_z": 0, "n": 512}
    assert spec.grid(dims) == (2, 1, 1)
    assert spec.uniforms(dims)["dims"] == [16, 32, 0, 0x01020304]
    assert spec.uniforms(spec.resolve_dims({"dims_x": 7}))["dims"][0] == 7
    assert spec.buffers(dims)["C"].shape == (512,) and spec.outputs == ("C",)
    assert (spec.inputs(dims, 0)["A"][:3] == [0, 1, 2]).all()


SILU = """
struct Params { ne: u32, offset: u32, alpha: f32 };
@group(0) @binding(0) var<storage, read_write> src: array<f32>;
@group(0) @binding(1) var<storage, read_write> dst: array<f32>;
@group(0) @binding(2) var<uniform> params: Params;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= params.ne) { return; }
    let x = src[params.offset + gid.x];
    dst[gid.x] = params.alpha * x / (1.0 + exp(-x));
}
"""


def test_adhoc_case_written_as_expressions_of_named_dims(tmp_path: Path) -> None:
    """What the UI's describe writes for a llama-style kernel (shared `main`, read_write input,
    a struct of parameters): dims named after the integer fields with the case's values, the grid
    and shapes as expressions of them, roles from stores, the float field as it ran, and the
    std: reference the file's name matches; it loads under its FILE:ENTRY name and PASSes."""
    root = write(tmp_path, {"silu.wgsl": SILU, "other.wgsl": SILU.replace("silu", "x")})
    session = Session.open(corpus=root)
    case = session.case(
        "silu.wgsl:main", dims={"n": 300}, sets={"params.ne": 300, "params.alpha": 1.0}
    )
    write_description(case, root, "silu.wgsl:main")
    table = tomllib.loads((root / "workbench.toml").read_text(encoding="utf-8"))["kernels"]
    t = table["silu.wgsl:main"]
    assert t["dims"] == {"ne": 300, "offset": {"default": 0, "lo": 0}}
    assert t["grid"] == ["ceil(ne / 64)"]
    assert t["uniforms"]["params"] == {"ne": "ne", "offset": "offset", "alpha": 1.0}
    assert t["buffers"]["src"]["role"] == "in" and t["buffers"]["src"]["shape"] == ["ne"]
    assert t["buffers"]["dst"] == {"shape": ["ne"], "role": "out"}
    assert t["reference"] == {"function": "std:silu", "x": "src", "y": "dst"}
    fresh = Session.open(corpus=root)
    run = fresh.run("silu.wgsl:main", dims={"ne": 777})
    assert str(run.verdict) == "pass"
    x = run.case.inputs["src"].astype(np.float64)[:777]
    np.testing.assert_allclose(run.outputs["dst"], x / (1 + np.exp(-x)), rtol=1e-5, atol=1e-6)


def test_described_kernel_keeps_its_table_and_the_file(tmp_path: Path) -> None:
    root = matmul_corpus(tmp_path, toml="# mine\n" + MATMUL_TOML)
    session = Session.open(corpus=root)
    case = session.case("matmul", dims={"M": 32})
    write_description(case, root, "matmul")
    text = (root / "workbench.toml").read_text(encoding="utf-8")
    assert text.startswith("# mine\n")
    table = tomllib.loads(text)["kernels"]["matmul"]
    assert table["dims"] == {"M": 32, "N": 192, "K": 128}
    assert table["grid"] == ["ceil(N / 16)", "ceil(M / 16)", 1]
    assert table["reference"]["function"] == "refs.py:matmul"
    assert load_descriptions(load_corpus(root))["matmul"].resolve_dims()["M"] == 32


AFFINE = """
struct Params { ne: u32, alpha: f32, beta: f32 };
@group(0) @binding(0) var<storage, read> src: array<f32>;
@group(0) @binding(1) var<storage, read_write> dst: array<f32>;
@group(0) @binding(2) var<uniform> params: Params;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= params.ne) { return; }
    dst[gid.x] = params.alpha * src[gid.x] + params.beta;
}
"""


def test_every_uniform_field_stays_editable_after_describing(tmp_path: Path) -> None:
    """After the UI's describe, the form holds every uniform field the ad-hoc form had: the
    integer field as a dim, the float fields as fields of their own (the description's values
    their placeholders); a value typed there reaches the kernel and the reference by name."""
    root = write(tmp_path, {"affine.wgsl": AFFINE})
    session = Session.open(corpus=root)
    kernel = session.kernel("main")
    bindings = kernel.runnable_entry_point().bindings
    adhoc = form_paths(None, bindings)
    assert adhoc == ("params.ne", "params.alpha", "params.beta")
    case = session.case(kernel, dims={"n": 300}, sets={"params.ne": 300, "params.alpha": 2.0})
    write_description(case, root, "main")
    toml = (root / "workbench.toml").read_text(encoding="utf-8")
    # The description names the fields a run may set, as `workbench describe` does.
    assert "# params.alpha, params.beta: values, not dims: --set params.alpha=V" in toml
    toml = toml.replace(
        "[kernels.main.uniforms]", 'reference = "refs.py:affine"\n[kernels.main.uniforms]'
    )
    (root / "workbench.toml").write_text(toml, encoding="utf-8")
    (root / "refs.py").write_text(
        "def affine(src, ne, alpha, beta):\n    return {'dst': alpha * src + beta}\n",
        encoding="utf-8",
    )
    session = Session.open(corpus=root)
    spec = session.described["main"]
    fields = form_paths(spec, bindings)
    assert fields == ("params.alpha", "params.beta")
    assert {d.name for d in spec.dims} == {"ne"}
    planned = build_case(session, kernel, spec, default_form(spec))
    assert planned.uniforms["params"] == {"ne": 300, "alpha": 2.0, "beta": 0.0}
    state = (
        default_form(spec).with_field("set-params-alpha", "3").with_field("set-params-beta", "-1.5")
    )
    state = state.with_field("dim-ne", "777")
    run = session.run(build_case(session, kernel, spec, state))
    assert str(run.verdict) == "pass" and run.reference is not None
    x = run.case.inputs["src"].astype(np.float64)
    np.testing.assert_allclose(run.outputs["dst"], 3 * x - 1.5, rtol=1e-6, atol=1e-6)
