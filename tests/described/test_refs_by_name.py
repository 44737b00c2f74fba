"""A corpus's own reference (refs.py) takes a uniform's value by its field's name (`eps`,
`offset_src`), as a `std:` reference does: the worker process binds the names the function has
as parameters, so nothing of the user's code runs in the tool. Checked against a float64
computation written here, and shown to fail when the kernel ignores the value."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from workbench.specs.described import load_descriptions
from workbench.wgsl.corpus import load_corpus

from .llama_style import RMS_NORM, llama_style_corpus

TOML = """
[kernels.rms_norm]
dims = { rows = 6, cols = 100 }
grid = ["rows"]
uniforms.params = { offset_src = 3, offset_dst = 0, stride_src1 = "cols + 5", ne0 = "cols", ne1 = "rows", eps = EPS }
buffers.src = { shape = ["3 + rows * (cols + 5)"], role = "in" }
buffers.dst = { shape = ["rows", "cols"], role = "out" }
reference = "refs.py:rms_norm"
"""

# Takes rows and cols (dims) and src (the input) as every refs.py function does, and three
# fields of the params struct by their names; ne0, ne1 and offset_dst it does not name.
REFS = """
import numpy as np

def rms_norm(src, rows, cols, offset_src, stride_src1, eps):
    at = offset_src + np.arange(rows)[:, None] * stride_src1 + np.arange(cols)[None, :]
    x = src[at.astype(np.int64)]
    return {"dst": x / np.sqrt((x * x).mean(axis=1, keepdims=True) + eps)}
"""


def _corpus(tmp: Path, eps: float, wgsl: str = RMS_NORM, refs: str = REFS) -> Path:
    root = llama_style_corpus(tmp, rms=wgsl, toml=TOML.replace("EPS", repr(eps)))
    (root / "refs.py").write_text(refs, encoding="utf-8")
    return root


def _expected(src: np.ndarray, rows: int, cols: int, eps: float) -> np.ndarray:
    """Row by row with math.fsum, from the description's layout: row r starts at 3 + r (cols + 5)."""
    out = np.empty((rows, cols))
    for r in range(rows):
        x = [float(src[3 + r * (cols + 5) + c]) for c in range(cols)]
        scale = 1 / math.sqrt(math.fsum(v * v for v in x) / cols + eps)
        out[r] = [v * scale for v in x]
    return out


def test_a_refs_function_gets_uniform_fields_by_name(tmp_path: Path) -> None:
    for eps in (1e-3, 0.5):
        root = _corpus(tmp_path / str(eps), eps)
        spec = load_descriptions(load_corpus(root))["rms_norm"]
        dims = spec.resolve_dims({"rows": 4, "cols": 33})
        inputs = spec.inputs(dims, 7)
        got = spec.reference(dims, inputs)["dst"]
        want = _expected(inputs["src"].astype(np.float64), 4, 33, eps)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)
    # The value is the one the description gives: 1e-3 and 0.5 give different references.
    assert not np.allclose(_expected(inputs["src"], 4, 33, 1e-3), want)


def test_a_dim_or_mapped_argument_of_the_same_name_comes_first(tmp_path: Path) -> None:
    root = _corpus(tmp_path, 1e-3)
    toml = (root / "workbench.toml").read_text(encoding="utf-8")
    mapped = toml.replace(
        'reference = "refs.py:rms_norm"',
        'reference = { function = "refs.py:rms_norm", eps = 0.25 }',
    )
    (root / "workbench.toml").write_text(mapped, encoding="utf-8")
    spec = load_descriptions(load_corpus(root))["rms_norm"]
    dims = spec.resolve_dims({"rows": 2, "cols": 16})
    inputs = spec.inputs(dims, 1)
    got = spec.reference(dims, inputs)["dst"]
    np.testing.assert_allclose(got, _expected(inputs["src"], 2, 16, 0.25), rtol=1e-12)


def test_check_passes_and_a_kernel_ignoring_eps_fails(tmp_path: Path, cli) -> None:
    root = _corpus(tmp_path / "ok", 0.5)
    res = cli("check", "rms_norm", "--corpus", str(root), "--what", "compare,evidence")
    assert res.rc == 0 and "verdict: PASS" in res.out, res.out + res.err
    bug = RMS_NORM.replace("+ params.eps", "+ 1e-6")
    root = _corpus(tmp_path / "bug", 0.5, wgsl=bug)
    res = cli("check", "rms_norm", "--corpus", str(root), "--what", "compare,evidence")
    assert res.rc == 1 and "verdict: FAIL" in res.out, res.out + res.err


def test_a_value_set_on_a_described_field_reaches_the_kernel_and_the_reference(
    tmp_path: Path,
) -> None:
    """`eps` (and the integer fields written as values) are fields a case may set; the value
    set is the kernel's and the reference's: described with eps = 1e-3, run with 0.5, the
    output matches a float64 computation with 0.5, and the verdict is PASS."""
    from workbench.session import Session

    root = _corpus(tmp_path, 1e-3)
    session = Session.open(corpus=root)
    spec = session.described["rms_norm"]
    assert spec.settable == ("params.offset_src", "params.offset_dst", "params.eps")
    run = session.run("rms_norm", dims={"rows": 4, "cols": 33}, sets={"params.eps": 0.5})
    assert run.case.uniforms["params"]["eps"] == 0.5
    assert not any("does not see" in n for n in run.case.notes)
    want = _expected(run.case.inputs["src"].astype(np.float64), 4, 33, 0.5)
    np.testing.assert_allclose(run.outputs["dst"].reshape(4, 33), want, rtol=1e-5, atol=1e-6)
    assert str(run.verdict) == "pass"
    # A field fed by a dim is the dim's: set in the case alone, and the case says so.
    other = session.case("rms_norm", sets={"params.ne0": 7})
    assert other.spec is not None and other.spec.uniforms(other.dims)["params"]["ne0"] != 7
    assert any("does not see" in n for n in other.notes)


def test_check_with_a_set_value_passes_and_a_kernel_ignoring_it_fails(tmp_path: Path, cli) -> None:
    args = ("check", "rms_norm", "--set", "params.eps=0.5", "--what", "compare,evidence")
    root = _corpus(tmp_path / "ok", 1e-3)
    res = cli(*args, "--corpus", str(root))
    assert res.rc == 0 and "verdict: PASS" in res.out, res.out + res.err
    bug = RMS_NORM.replace("+ params.eps", "+ 1e-3")
    root = _corpus(tmp_path / "bug", 1e-3, wgsl=bug)
    res = cli(*args, "--corpus", str(root))
    assert res.rc == 1 and "verdict: FAIL" in res.out, res.out + res.err
