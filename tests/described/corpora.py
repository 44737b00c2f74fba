"""Kernels of a user's own corpus, their descriptions and float64 NumPy references, written by the
tests into temporary folders (none of them is a shipped kernel).

The references are written from the mathematics (A @ B, x / rms(x) and its derivative), never
transliterated from the WGSL.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

MATMUL = """
@group(0) @binding(0) var<uniform> dims: vec4<u32>;  // M, N, K, unused
@group(0) @binding(1) var<storage, read> A: array<f32>;
@group(0) @binding(2) var<storage, read> B: array<f32>;
@group(0) @binding(3) var<storage, read_write> C: array<f32>;

const TILE: u32 = 16u;
var<workgroup> As: array<f32, 256>;
var<workgroup> Bs: array<f32, 256>;

@compute @workgroup_size(16, 16)
fn matmul(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let M = dims.x;
    let N = dims.y;
    let K = dims.z;
    let row = wg.y * TILE + lid.y;
    let col = wg.x * TILE + lid.x;
    var acc = 0.0;
    let tiles = (K + TILE - 1u) / TILE;
    for (var t = 0u; t < tiles; t++) {
        let ak = t * TILE + lid.x;
        let bk = t * TILE + lid.y;
        var a = 0.0;
        if (row < M && ak < K) { a = A[row * K + ak]; }
        var b = 0.0;
        if (bk < K && col < N) { b = B[bk * N + col]; }
        As[lid.y * TILE + lid.x] = a;
        Bs[lid.y * TILE + lid.x] = b;
        workgroupBarrier();
        for (var k = 0u; k < TILE; k++) {
            acc += As[lid.y * TILE + k] * Bs[k * TILE + lid.x];
        }
        workgroupBarrier();
    }
    if (row < M && col < N) {
        C[row * N + col] = acc;
    }
}
"""

# The description, word for word in its shape.
MATMUL_TOML = """
[kernels.matmul]
doc = "C = A @ B with 16x16 tiles"
dims = { M = 256, N = 192, K = 128 }
grid = ["ceil(N / 16)", "ceil(M / 16)", 1]
special = "ieee"
[kernels.matmul.uniforms]
dims = ["M", "N", "K", 0]
[kernels.matmul.buffers]
A = { shape = ["M", "K"], input = "randn:1" }
B = { shape = ["K", "N"], input = "uniform:-1:1:2" }
C = { shape = ["M", "N"], output = true }
[kernels.matmul.reference]
function = "refs.py:matmul"
rtol = 1e-5
atol = 1e-5
"""

ROWNORM = """
@group(0) @binding(0) var<uniform> dims: vec4<u32>;  // rows, cols
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;

const WG: u32 = 64u;
const EPS: f32 = 1e-5;
var<workgroup> partial: array<f32, 64>;

// One workgroup per row: the threads stride over the columns, then reduce in shared memory.
@compute @workgroup_size(64)
fn rownorm(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let row = wg.x;
    let cols = dims.y;
    if (row >= dims.x) { return; }
    var s = 0.0;
    for (var c = lid.x; c < cols; c += WG) {
        let v = x[row * cols + c];
        s += v * v;
    }
    partial[lid.x] = s;
    workgroupBarrier();
    for (var half = WG / 2u; half > 0u; half /= 2u) {
        if (lid.x < half) { partial[lid.x] += partial[lid.x + half]; }
        workgroupBarrier();
    }
    let r = inverseSqrt(partial[0] / f32(cols) + EPS);
    for (var c = lid.x; c < cols; c += WG) {
        y[row * cols + c] = x[row * cols + c] * r;
    }
}

// dx = r (dy - x r^2 <dy, x> / cols), r = 1 / sqrt(mean(x^2) + eps).
@compute @workgroup_size(64)
fn rownorm_bwd(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let row = wg.x;
    let cols = dims.y;
    if (row >= dims.x) { return; }
    var s = 0.0;
    var d = 0.0;
    for (var c = lid.x; c < cols; c += WG) {
        let v = x[row * cols + c];
        s += v * v;
        d += v * dy[row * cols + c];
    }
    partial[lid.x] = s;
    dots[lid.x] = d;
    workgroupBarrier();
    for (var half = WG / 2u; half > 0u; half /= 2u) {
        if (lid.x < half) {
            partial[lid.x] += partial[lid.x + half];
            dots[lid.x] += dots[lid.x + half];
        }
        workgroupBarrier();
    }
    let r = inverseSqrt(partial[0] / f32(cols) + EPS);
    let k = r * r * r * dots[0] / f32(cols);
    for (var c = lid.x; c < cols; c += WG) {
        dx[row * cols + c] = r * dy[row * cols + c] - k * x[row * cols + c];
    }
}
@group(0) @binding(3) var<storage, read> dy: array<f32>;
@group(0) @binding(4) var<storage, read_write> dx: array<f32>;
var<workgroup> dots: array<f32, 64>;
"""

ROWNORM_TOML = """
[kernels.rownorm]
doc = "y = x / sqrt(mean(x^2) + 1e-5) per row, one workgroup per row"
dims = { R = 24, C = 200 }
grid = ["R", 1, 1]
[kernels.rownorm.uniforms]
dims = ["R", "C", 0, 0]
[kernels.rownorm.buffers]
x = { shape = ["R", "C"], input = "randn:3" }
y = { shape = ["R", "C"], output = true }
[kernels.rownorm.reference]
function = "refs.py:rownorm"
rtol = 1e-5
atol = 1e-6

[kernels.rownorm_bwd]
doc = "dx of L = <dy, rownorm(x)>"
dims = { R = 6, C = 40 }
grid = ["R", 1, 1]
[kernels.rownorm_bwd.uniforms]
dims = ["R", "C", 0, 0]
[kernels.rownorm_bwd.buffers]
x = { shape = ["R", "C"], input = "randn:4" }
dy = { shape = ["R", "C"], input = "randn:5" }
dx = { shape = ["R", "C"], output = true }
[kernels.rownorm_bwd.reference]
function = "refs.py:rownorm_bwd"
rtol = 1e-4
atol = 1e-5
[kernels.rownorm_bwd.gradient]
forward = "rownorm"
upstream = { y = "dy" }
wrt = { dx = "x" }
"""

REFS = """
import numpy as np

EPS = 1e-5


def matmul(A, B, *, M, N, K):
    return {"C": np.einsum("mk,kn->mn", A, B)}


def rownorm(x, *, R, C):
    return {"y": x / np.sqrt(np.mean(x * x, axis=1, keepdims=True) + EPS)}


def rownorm_bwd(x, dy, *, R, C):
    # The Jacobian of y_j = x_j s, s = (mean(x^2) + eps)^(-1/2): dy_j/dx_i = s d_ij - x_j x_i s^3 / C.
    s = 1.0 / np.sqrt(np.mean(x * x, axis=1, keepdims=True) + EPS)
    jac = s[:, :, None] * np.eye(C)[None] - np.einsum("rj,ri->rji", x, x) * (s**3)[:, :, None] / C
    return {"dx": np.einsum("rj,rji->ri", dy, jac)}
"""


def write(root: Path, files: dict[str, str]) -> Path:
    """Write `files` (relative path -> text, dedented) under `root` and return `root`."""
    root.mkdir(parents=True, exist_ok=True)
    for rel, text in files.items():
        (root / rel).write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return root


def matmul_corpus(root: Path, source: str = MATMUL, toml: str | None = MATMUL_TOML) -> Path:
    files = {"matmul.wgsl": source, "refs.py": REFS}
    if toml is not None:
        files["workbench.toml"] = toml
    return write(root, files)


def rownorm_corpus(root: Path, source: str = ROWNORM, toml: str = ROWNORM_TOML) -> Path:
    return write(root, {"rownorm.wgsl": source, "refs.py": REFS, "workbench.toml": toml})
