"""Kernels described with the reference library (`std:`) in a few lines: roles on read_write
buffers, uniform values (float struct fields) reaching the reference by name, strided views of a
binding, a cost model; each PASSes `check` and FAILs with a planted bug, on the real adapter."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from workbench.session import Session
from workbench.viewmodel.diff import closest, tolerance_ratio
from workbench.wgsl.corpus import load_corpus

from .corpora import write
from .llama_style import (
    ADD,
    ADD_TOML,
    DEQUANT,
    DEQUANT_REFS,
    DEQUANT_TOML,
    QUANTIZE,
    QUANTIZE_TOML,
    RMS_NORM,
    RMS_NORM_TOML,
    llama_style_corpus,
)

FAST = "compare,evidence"


def test_rms_norm_with_strided_input_and_float_eps_passes(tmp_path: Path, cli) -> None:
    root = llama_style_corpus(tmp_path)
    res = cli("check", "rms_norm", "--corpus", str(root), "--what", FAST)
    assert res.rc == 0, res.out + res.err
    assert "verdict: PASS" in res.out
    # eps comes from the uniform: a bigger one changes the result, and the reference follows it.
    root = llama_style_corpus(tmp_path / "b", toml=RMS_NORM_TOML.replace("eps = 1e-3", "eps = 0.5"))
    assert cli("check", "rms_norm", "--corpus", str(root), "--what", FAST).rc == 0


@pytest.mark.parametrize(
    "bug",
    [
        ("+ params.eps", "+ 1e-6"),  # eps ignored
        ("let base = params.offset_src + row", "let base = row"),  # the offset ignored
    ],
)
def test_rms_norm_planted_bug_fails(tmp_path: Path, cli, bug: tuple[str, str]) -> None:
    assert bug[0] in RMS_NORM
    root = llama_style_corpus(tmp_path, rms=RMS_NORM.replace(*bug))
    res = cli("check", "rms_norm", "--corpus", str(root), "--what", FAST)
    assert res.rc == 1 and "verdict: FAIL" in res.out


def test_binary_with_ggml_broadcasting_passes_and_a_bug_fails(tmp_path: Path, cli) -> None:
    root = llama_style_corpus(tmp_path)
    assert cli("check", "add", "--corpus", str(root), "--what", FAST).rc == 0
    buggy = ADD.replace("c % params.ne10", "c / params.ne10")
    root = llama_style_corpus(tmp_path / "bug", add=buggy)
    res = cli("check", "add", "--corpus", str(root), "--what", FAST)
    assert res.rc == 1 and "verdict: FAIL" in res.out


def test_read_write_inputs_with_role_in_are_inputs_only(tmp_path: Path, cli) -> None:
    root = llama_style_corpus(tmp_path)
    res = cli("run", "add", "--corpus", str(root), "--reps", "0", "--json")
    assert res.rc == 0, res.err
    roles = {n: b["role"] for n, b in res.json()["bindings"].items() if "role" in b}
    assert roles["src0"] == roles["src1"] == "input" and roles["dst"] == "output"
    assert res.json()["verdict"] == "pass"


def test_cost_expressions_give_bytes_and_flops(tmp_path: Path) -> None:
    root = llama_style_corpus(tmp_path)
    spec = Session.open(corpus=root).described["rms_norm"]
    cost = spec.cost({"rows": 10, "cols": 64})
    assert (cost.bytes, cost.flops) == (8 * 640, 3 * 640)
    # Without a cost key: the bytes of every buffer, no flops.
    add = (
        Session.open(corpus=root)
        .described["add"]
        .cost({"rows": 2, "cols": 4, "brows": 1, "bcols": 2})
    )
    assert (add.bytes, add.flops) == (4 * (8 + 2 + 8), 0)


def test_a_packed_output_is_compared_as_the_values_its_words_hold(
    tmp_path: Path, session: Session
) -> None:
    root = write(
        tmp_path / "q",
        {"q.wgsl": QUANTIZE, "refs.py": DEQUANT_REFS, "workbench.toml": QUANTIZE_TOML},
    )
    mine = session.with_corpus(load_corpus(root))
    run = mine.run("quantize", dims={"nb": 70})
    assert str(run.verdict) == "pass", run.compare
    # Independently of the description: the words decoded here are within half a step of x.
    words = run.outputs["blocks"].reshape(70, 9)
    scale = words[:, 0].copy().view(np.float32).astype(np.float64)
    q = words[:, 1:].copy().view(np.uint8).view(np.int8).reshape(70, 32).astype(np.float64)
    x = run.case.inputs["src"].astype(np.float64).reshape(70, 32)
    step = np.abs(x).max(axis=1) / 127
    assert np.all(np.abs(scale[:, None] * q - x) <= step[:, None] / 2 * (1 + 1e-5))
    assert run.compare["blocks"].n_total == 70 * 32
    # The Diff tab's figures are of the values too.
    assert tolerance_ratio(run, "blocks").shape == (70 * 32,)
    assert [e.ratio <= 1 for e in closest(run, "blocks", 3)] == [True] * 3
    buggy = QUANTIZE.replace("<< (k * 8u)", "<< ((3u - k) * 8u)")  # bytes packed in the wrong order
    (root / "q.wgsl").write_text(buggy, encoding="utf-8")
    bad = session.with_corpus(load_corpus(root)).run("quantize", dims={"nb": 70})
    assert str(bad.verdict) == "fail"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (('function = "std:rms_norm"', 'function = "std:rmsnorm"'), "not in the reference library"),
        (
            ('offset = "params.offset_src"', 'offset = "params.offset"'),
            "unknown name params.offset",
        ),
        (("x = { buffer", "z = 1\nx = { buffer"), "std:rms_norm has no argument z"),
        (('role = "out"', 'role = "output"'), "'output' is not one of in, out, inout"),
        (('role = "in"', 'role = "in", output = true'), "role and output say the same thing"),
        (('flops = "3 * rows * cols"', 'flops = "3 * rows * k"'), "unknown name k"),
    ],
)
def test_mistakes_are_one_line_naming_the_key(
    tmp_path: Path, cli, change: tuple[str, str], message: str
) -> None:
    assert change[0] in RMS_NORM_TOML
    root = llama_style_corpus(tmp_path, toml=RMS_NORM_TOML.replace(*change) + ADD_TOML)
    res = cli("list", "--corpus", str(root))
    assert res.rc == 2 and message in res.err and "kernels.rms_norm" in res.err, res.err
    assert len(res.err.strip().splitlines()) == 1


def test_unmapped_array_and_result_are_named(tmp_path: Path, cli) -> None:
    toml = ADD_TOML.replace('a = "src0", ', "")
    root = llama_style_corpus(tmp_path, toml=RMS_NORM_TOML + toml)
    res = cli("list", "--corpus", str(root))
    assert res.rc == 2 and "kernels.add.reference.a: std:add needs the array a" in res.err


def test_refs_py_gets_mapped_uniform_fields_and_views(tmp_path: Path, cli) -> None:
    toml = RMS_NORM_TOML.replace('function = "std:rms_norm"', 'function = "refs.py:norm"')
    toml = toml.replace("x = { buffer", 'eps = "params.eps"\nsrc = { buffer')
    root = llama_style_corpus(tmp_path, toml=toml + ADD_TOML)
    (root / "refs.py").write_text(
        "import numpy as np\n\n"
        "def norm(src, eps, rows, cols):\n"
        "    return {'dst': src / np.sqrt((src * src).mean(-1, keepdims=True) + eps)}\n"
    )
    res = cli("check", "rms_norm", "--corpus", str(root), "--what", FAST)
    assert res.rc == 0, res.out + res.err


def _dequant_corpus(tmp: Path, source: str = DEQUANT, toml: str = DEQUANT_TOML) -> Path:
    return write(tmp / "q", {"q.wgsl": source, "refs.py": DEQUANT_REFS, "workbench.toml": toml})


def test_packed_blocks_as_words_with_decode_and_encode(tmp_path: Path, cli) -> None:
    root = _dequant_corpus(tmp_path)
    res = cli("check", "dequant", "--corpus", str(root), "--what", FAST)
    assert res.rc == 0 and "verdict: PASS" in res.out, res.out + res.err
    buggy = DEQUANT.replace("(j % 4u) * 8u", "(3u - j % 4u) * 8u")  # bytes read in the wrong order
    res = cli(
        "check", "dequant", "--corpus", str(_dequant_corpus(tmp_path / "b", buggy)), "--what", FAST
    )
    assert res.rc == 1 and "verdict: FAIL" in res.out


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            ('words = "nb * 9"', 'words = "nb * 8"'),
            "are not a whole number of Block (36 bytes each)",
        ),
        (
            ('encode = "refs.py:encode_q8"', 'encode = "refs.py:nope"'),
            "buffers.blocks.encode: refs.py has no function nope",
        ),
        ((', decode = "refs.py:decode_q8"', ""), "buffers.blocks.decode: missing"),
        (
            ('shape = ["nb * 32"], decode', 'role = "inout", shape = ["nb * 32"], decode'),
            'a packed buffer is an input (role = "in") or an output (role = "out")',
        ),
    ],
)
def test_packed_mistakes(tmp_path: Path, cli, change: tuple[str, str], message: str) -> None:
    assert change[0] in DEQUANT_TOML
    root = _dequant_corpus(tmp_path, toml=DEQUANT_TOML.replace(*change))
    res = cli("list", "--corpus", str(root))
    assert res.rc == 2 and message in res.err, res.err


def test_a_view_past_its_binding_is_one_error(tmp_path: Path, cli) -> None:
    toml = RMS_NORM_TOML.replace(
        'strides = ["params.stride_src1", 1]', 'strides = ["cols + 50", 1]'
    )
    root = llama_style_corpus(tmp_path, toml=toml + ADD_TOML)
    res = cli("check", "rms_norm", "--corpus", str(root), "--what", FAST)
    assert res.rc == 2 and "the view of src" in res.err and "past its 633" in res.err, res.err
    assert len(res.err.strip().splitlines()) == 1
