"""The UI's describe command without the UI: an ad-hoc case written as a description that loads
with the same grid, uniforms and recipes; a described kernel keeps its expressions, reference and
the rest of the file, with the dims' defaults updated."""

from __future__ import annotations

import tomllib
from pathlib import Path

from workbench.session import Session
from workbench.specs.described import load_descriptions
from workbench.viewmodel.describe import write_description
from workbench.wgsl.corpus import load_corpus

from .corpora import MATMUL, MATMUL_TOML, matmul_corpus, write


def test_adhoc_case_written_and_loaded(tmp_path: Path) -> None:
    root = write(tmp_path, {"matmul.wgsl": MATMUL})
    session = Session.open(corpus=root)
    case = session.case(
        "matmul",
        dims={"n": 512},
        sets={"dims.x": 16, "dims.y": 32},
        grid=(2, 1, 1),
        inputs={"A": "arange"},
    )
    write_description(case, root)
    spec = load_descriptions(load_corpus(root))["matmul"]
    dims = spec.resolve_dims()
    assert dims == {"n": 512} and spec.grid(dims) == (2, 1, 1)
    assert spec.uniforms(dims)["dims"][:2] == [16, 32]
    assert spec.buffers(dims)["C"].shape == (512,) and spec.outputs == ("C",)
    assert (spec.inputs(dims, 0)["A"][:3] == [0, 1, 2]).all()


def test_described_kernel_keeps_its_table_and_the_file(tmp_path: Path) -> None:
    root = matmul_corpus(tmp_path, toml="# mine\n" + MATMUL_TOML)
    session = Session.open(corpus=root)
    case = session.case("matmul", dims={"M": 32})
    write_description(case, root)
    text = (root / "workbench.toml").read_text(encoding="utf-8")
    assert text.startswith("# mine\n")
    table = tomllib.loads(text)["kernels"]["matmul"]
    assert table["dims"] == {"M": 32, "N": 192, "K": 128}
    assert table["grid"] == ["ceil(N / 16)", "ceil(M / 16)", 1]
    assert table["reference"]["function"] == "refs.py:matmul"
    assert load_descriptions(load_corpus(root))["matmul"].resolve_dims()["M"] == 32
