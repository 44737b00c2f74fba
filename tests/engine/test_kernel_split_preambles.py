"""A corpus shaped like real ones: two preamble files, the second kernel-split with kernels of its own
whose bindings (`dst`, `n`) carry the same names as the other files' bindings. Only a preamble's own
preamble (the text before its first marker) may reach the other files, or every module redeclares them."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.errors import CompileError

INFRA = """
// Infrastructure kernels, and helpers every file may use.
fn ceil_div(a: u32, b: u32) -> u32 { return (a + b - 1u) / b; }
// --- KERNEL: fill_const ---
@group(0) @binding(0) var<storage, read_write> dst: array<f32>;
@group(0) @binding(1) var<uniform> n: u32;
@compute @workgroup_size(64)
fn fill_const(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x < n) { dst[gid.x] = HALF * 5.0; }
}
// --- KERNEL: scale ---
@group(0) @binding(0) var<storage, read_write> dst: array<f32>;
@group(0) @binding(1) var<uniform> n: u32;
@compute @workgroup_size(64)
fn scale(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x < n) { dst[gid.x] = dst[gid.x] * 3.0; }
}
"""

SHARED = """
const HALF: f32 = 0.5;
fn twice(x: f32) -> f32 { return 2.0 * x; }
"""

SQUARES = """
// --- KERNEL: square_plus ---
@group(0) @binding(0) var<storage, read> src: array<f32>;
@group(0) @binding(1) var<storage, read_write> dst: array<f32>;
@group(0) @binding(2) var<uniform> n: u32;
@compute @workgroup_size(32)
fn square_plus(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x < n) { dst[gid.x] = twice(src[gid.x] * src[gid.x]) + f32(ceil_div(gid.x, 4u)); }
}
// --- KERNEL: broken ---
@group(0) @binding(0) var<storage, read_write> dst: array<f32>;
@compute @workgroup_size(32)
fn broken(@builtin(global_invocation_id) gid: vec3<u32>) {
    dst[gid.x] = gid.x + 1.0;
}
"""

CONFIG = """
[preamble]
files = ["00_shared.wgsl", "00_infrastructure.wgsl"]
auto_inject_into = ["*.wgsl"]
"""


@pytest.fixture
def two_preambles(make_corpus, on_corpus):
    root = make_corpus(
        {
            "wgslconfig.toml": CONFIG,
            "00_shared.wgsl": SHARED,
            "00_infrastructure.wgsl": INFRA,
            "10_squares.wgsl": SQUARES,
        }
    )
    return on_corpus(root)


def test_every_kernel_of_both_files_lists_with_status_ok(two_preambles):
    sess = two_preambles
    names = [(k.file, k.name) for k in sess.corpus.kernels]
    assert names == [
        ("00_infrastructure.wgsl", "fill_const"),
        ("00_infrastructure.wgsl", "scale"),
        ("10_squares.wgsl", "square_plus"),
        ("10_squares.wgsl", "broken"),
    ]
    statuses = {k.name: sess.status(k).text for k in sess.corpus.kernels}
    assert statuses["fill_const"] == statuses["scale"] == statuses["square_plus"] == "ok"


def test_only_the_text_before_the_first_marker_reaches_other_files(two_preambles):
    square = two_preambles.kernel("square_plus")
    assert [p.file for p in square.pieces] == [
        "00_shared.wgsl",
        "00_infrastructure.wgsl",
        "10_squares.wgsl",
    ]
    text = square.text
    assert "fn ceil_div" in text and "fn twice" in text
    assert "fn fill_const" not in text and "fn scale" not in text
    assert text.count("var<storage, read_write> dst") == 1


def test_a_preamble_kernel_and_a_file_kernel_run_with_correct_outputs(two_preambles):
    sess = two_preambles
    # fill_const: the earlier preamble's constant reaches the kernel-split preamble's own kernels.
    filled = sess.run("fill_const", dims={"n": 100}).outputs["dst"]
    assert np.array_equal(filled, np.full(100, 2.5, dtype=np.float32))

    src = np.linspace(-3.0, 3.0, 77)
    run = sess.run("square_plus", dims={"n": 77}, inputs={"src": src.astype(np.float32)})
    idx = np.arange(77)
    expected = 2.0 * src.astype(np.float32).astype(np.float64) ** 2 + np.ceil(idx / 4.0)
    np.testing.assert_allclose(run.outputs["dst"], expected, rtol=1e-6, atol=1e-6)


def test_a_compile_error_in_a_file_kernel_names_its_own_file_and_line(two_preambles):
    sess = two_preambles
    with pytest.raises(CompileError) as err:
        sess.run("broken", dims={"n": 8})
    # `gid.x + 1.0` is line 13 of 10_squares.wgsl, whatever the preambles in front of it.
    assert str(err.value).startswith("10_squares.wgsl:13:5:")
