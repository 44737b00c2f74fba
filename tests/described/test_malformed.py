"""Every malformed workbench.toml is one line naming the file, the kernel and the key, exit 2; a
reference that fails at run time is one line naming refs.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from .corpora import MATMUL_TOML, matmul_corpus, write

SCALE4 = """
@group(0) @binding(0) var<storage, read> v: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> w: array<vec4<f32>>;
@compute @workgroup_size(64)
fn scale4(@builtin(global_invocation_id) g: vec3<u32>) {
    if (g.x < arrayLength(&w)) { w[g.x] = 2.0 * v[g.x]; }
}
"""
SCALE4_TOML = """
[kernels.scale4]
dims = { n = 100 }
grid = ["ceil(n / 64)", 1, 1]
[kernels.scale4.buffers]
v = { shape = ["n", 4], input = "randn" }
w = { shape = ["n", 4], output = true }
"""


def _swap(old: str, new: str) -> str:
    assert old in MATMUL_TOML, old
    return MATMUL_TOML.replace(old, new)


CASES = [
    ("unknown name", _swap('"ceil(N / 16)"', '"ceil(Q / 16)"'), "grid[0]", "unknown name Q"),
    ("non-integer grid", _swap('"ceil(N / 16)"', '"N / 5"'), "grid[0]", "not an integer"),
    ("no eval", _swap('"ceil(N / 16)"', "\"__import__('os')\""), "grid[0]", "unexpected"),
    (
        "short grid",
        _swap('grid = ["ceil(N / 16)", "ceil(M / 16)", 1]', "grid = []"),
        "grid",
        "1 to 3",
    ),
    ("no grid", _swap('grid = ["ceil(N / 16)", "ceil(M / 16)", 1]', ""), "grid", "missing"),
    (
        "non-integer shape",
        _swap('shape = ["M", "K"]', 'shape = ["M / 3", "K"]'),
        "buffers.A.shape[0]",
        "not an integer",
    ),
    (
        "output with input",
        _swap("output = true", 'output = true, input = "zeros"'),
        "buffers.C",
        "never an input",
    ),
    (
        "read-only output",
        _swap('input = "randn:1"', "output = true"),
        "buffers.A.output",
        "read-only",
    ),
    ("bad recipe", _swap('"randn:1"', '"gauss:1"'), "buffers.A.input", "unknown input recipe"),
    (
        "unknown buffer key",
        _swap('shape = ["M", "K"]', 'shpae = ["M", "K"]'),
        "buffers.A.shpae",
        "unknown key",
    ),
    (
        "missing buffer",
        _swap('C = { shape = ["M", "N"], output = true }', ""),
        "buffers.C",
        "missing",
    ),
    (
        "unknown binding",
        _swap("C = {", "D = { shape = [1] }\nC = {"),
        "buffers.D",
        "no storage binding",
    ),
    ("dim zero", _swap("M = 256", "M = 0"), "dims.M", "outside [1, "),
    ("dim not integer", _swap("M = 256", "M = 2.5"), "dims.M", "must be an integer"),
    (
        "dim range",
        _swap("M = 256", "M = { default = 9, lo = 10, hi = 20 }"),
        "dims.M",
        "outside [10, 20]",
    ),
    (
        "uniform length",
        _swap('["M", "N", "K", 0]', '["M", "N", "K"]'),
        "uniforms.dims",
        "list of 4",
    ),
    (
        "uniform negative",
        _swap('["M", "N", "K", 0]', '["M", "N", "K", "0 - 1"]'),
        "uniforms.dims",
        "does not fit in u32",
    ),
    ("missing uniform", _swap('dims = ["M", "N", "K", 0]', ""), "uniforms.dims", "missing"),
    ("special", _swap('special = "ieee"', 'special = "strict"'), "special", "not one of"),
    ("unknown key", _swap('doc = "', 'colour = "blue"\ndoc = "'), "colour", "unknown key"),
    (
        "no function",
        _swap("refs.py:matmul", "refs.py:matmull"),
        "reference.function",
        "no function matmull",
    ),
    (
        "no refs file",
        _swap("refs.py:matmul", "others.py:matmul"),
        "reference.function",
        "does not exist",
    ),
    ("bad function text", _swap('"refs.py:matmul"', "3"), "reference.function", "FILE.py:FUNCTION"),
    ("negative rtol", _swap("rtol = 1e-5", "rtol = -1.0"), "reference.rtol", ">= 0"),
    (
        "unknown kernel",
        _swap("[kernels.matmul]", "[kernels.matmull]"),
        "",
        "no kernel named 'matmull'",
    ),
    (
        "override",
        _swap('special = "ieee"', "overrides = { wg = 4 }"),
        "overrides.wg",
        "no override",
    ),
]


@pytest.mark.parametrize(("why", "toml", "key", "msg"), CASES, ids=[c[0] for c in CASES])
def test_malformed_description_is_one_line_exit_2(tmp_path: Path, cli, why, toml, key, msg) -> None:
    root = matmul_corpus(tmp_path, toml=toml)
    res = cli("run", "matmul", "--corpus", str(root), "--reps", "0")
    assert res.rc == 2, res.out
    assert len(res.err.splitlines()) == 1 and "Traceback" not in res.err
    where = "kernels.matmul" + (f".{key}" if key else "")
    if why == "unknown kernel":
        where = "kernels.matmull"
    assert f"workbench.toml: {where}: " in res.err and msg in res.err


def test_not_toml_and_shape_against_element_type(tmp_path: Path, cli) -> None:
    root = matmul_corpus(tmp_path, toml="[kernels.matmul\n")
    res = cli("run", "matmul", "--corpus", str(root))
    assert res.rc == 2 and "workbench.toml: not valid TOML" in res.err
    root = write(tmp_path / "vec", {"scale4.wgsl": SCALE4, "workbench.toml": SCALE4_TOML})
    res = cli("check", "scale4", "--corpus", str(root), "--what", "evidence", "--json")
    assert res.rc == 1 and res.json()["verdict"] == "ran"  # evidence only: nothing compared
    bad = SCALE4_TOML.replace('v = { shape = ["n", 4]', 'v = { shape = ["n"]')
    (root / "workbench.toml").write_text(bad, encoding="utf-8")
    res = cli("run", "scale4", "--corpus", str(root))
    assert res.rc == 2 and len(res.err.splitlines()) == 1
    assert "kernels.scale4.buffers.v.shape: does not match the element type vec4<f32>" in res.err


@pytest.mark.parametrize(
    ("body", "msg"),
    [
        ("raise ValueError('bad')", "refs.py:matmul raised ValueError: bad"),
        ("return {'C': A}", "refs.py:matmul returned C with shape (256, 128)"),
        ("return {'D': A @ B}", "refs.py:matmul returned 'D', which is not an output"),
        ("return A @ B", "refs.py:matmul must return a dict"),
    ],
)
def test_reference_errors_name_refs_py(tmp_path: Path, cli, body: str, msg: str) -> None:
    root = matmul_corpus(tmp_path)
    write(root, {"refs.py": f"def matmul(A, B, *, M, N, K):\n    {body}\n"})
    res = cli("run", "matmul", "--corpus", str(root), "--reps", "0")
    assert res.rc == 2 and len(res.err.splitlines()) == 1 and msg in res.err, res.err


def test_refs_py_that_cannot_be_imported(tmp_path: Path, cli) -> None:
    root = matmul_corpus(tmp_path)
    write(root, {"refs.py": "import no_such_module_here\n"})
    res = cli("run", "matmul", "--corpus", str(root))
    assert res.rc == 2 and "importing refs.py raised ModuleNotFoundError" in res.err
