"""Kernels written for the debugger's tests, each with a known execution to replay in NumPy:
a loop with an early break, a helper called twice, a tiled matmul with barriers, a tree
reduction in workgroup memory, an f16 kernel, an atomic histogram, a planted NaN and a planted
divergence. Sessions reuse the real adapter's device."""

from __future__ import annotations

import textwrap

import pytest

from workbench.session import Session
from workbench.wgsl.corpus import load_corpus

EARLY_BREAK = """
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;

@compute @workgroup_size(64)
fn early_break(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    let n = arrayLength(&x);
    var acc = 0.0;
    for (var k = 0u; k < 16u; k++) {
        let v = x[(i + k) % n];
        if (acc + v > 4.0) {
            break;
        }
        acc += v * 0.5;
    }
    y[i] = acc;
}
"""
HELPER = """
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;

fn scale(v: f32, k: f32) -> f32 {
    let s = v * k + 1.0;
    return s * s;
}

@compute @workgroup_size(64)
fn helper(@builtin(global_invocation_id) gid: vec3<u32>) {
    let a = scale(x[gid.x], 0.5);
    let b = scale(a, -0.25);
    y[gid.x] = a - b;
}
"""
MATMUL = """
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
const N: u32 = 32u;
const T: u32 = 8u;
var<workgroup> ta: array<f32, 64>;
var<workgroup> tb: array<f32, 64>;

@compute @workgroup_size(8, 8)
fn matmul(@builtin(global_invocation_id) gid: vec3<u32>,
          @builtin(local_invocation_id) lid: vec3<u32>) {
    let row = gid.y;
    let col = gid.x;
    var acc = 0.0;
    for (var t = 0u; t < N / T; t++) {
        ta[lid.y * T + lid.x] = a[row * N + t * T + lid.x];
        tb[lid.y * T + lid.x] = b[(t * T + lid.y) * N + col];
        workgroupBarrier();
        for (var k = 0u; k < T; k++) {
            acc += ta[lid.y * T + k] * tb[k * T + lid.x];
        }
        workgroupBarrier();
    }
    c[row * N + col] = acc;
}
"""
REDUCE = """
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> sums: array<f32>;
var<workgroup> part: array<f32, 64>;

@compute @workgroup_size(64)
fn reduce(@builtin(global_invocation_id) gid: vec3<u32>,
          @builtin(local_invocation_index) lid: u32,
          @builtin(workgroup_id) wg: vec3<u32>) {
    part[lid] = x[gid.x];
    workgroupBarrier();
    var stride = 32u;
    while (stride > 0u) {
        if (lid < stride) {
            part[lid] = part[lid] + part[lid + stride];
        }
        workgroupBarrier();
        stride = stride / 2u;
    }
    if (lid == 0u) {
        sums[wg.x] = part[0];
    }
}
"""
HALF = """
enable f16;
@group(0) @binding(0) var<storage, read> x: array<f16>;
@group(0) @binding(1) var<storage, read_write> y: array<f16>;

@compute @workgroup_size(64)
fn half(@builtin(global_invocation_id) gid: vec3<u32>) {
    let v = x[gid.x];
    var p = vec2<f16>(v, v * 2.0h);
    p = p * 0.75h + vec2<f16>(1.0h, -1.0h);
    y[gid.x] = p.x * p.y;
}
"""
HISTOGRAM = """
@group(0) @binding(0) var<storage, read> x: array<u32>;
@group(0) @binding(1) var<storage, read_write> bins: array<atomic<u32>, 8>;

@compute @workgroup_size(64)
fn histogram(@builtin(global_invocation_id) gid: vec3<u32>) {
    let bin = x[gid.x] % 8u;
    let before = atomicAdd(&bins[bin], 1u);
    _ = before;
}
"""
# With num all ones, a denominator planted at zero makes 0/0 at the `let q` line.
PLANTED_NAN = """
@group(0) @binding(0) var<storage, read> num: array<f32>;
@group(0) @binding(1) var<storage, read> den: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(64)
fn planted_nan(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    let top = num[i] - 1.0;
    let q = top / den[i];
    out[i] = q + 1.0;
}
"""
# Invocations with odd index take the other branch: a planted divergence for --compare.
DIVERGE = """
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;

@compute @workgroup_size(64)
fn diverge(@builtin(global_invocation_id) gid: vec3<u32>) {
    var v = x[gid.x % 4u];
    if ((gid.x & 1u) == 1u) {
        v = v * 3.0;
    } else {
        v = v + 1.0;
    }
    y[gid.x] = v;
}
"""
# No global_invocation_id parameter (the tracer adds one), a switch, and `loop` with `continuing`
# and `break if`.
SWITCHED = """
@group(0) @binding(0) var<storage, read_write> y: array<i32>;

@compute @workgroup_size(4)
fn switched(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let i = wg.x * 4u + lid;
    var total = 0i;
    var k = 0u;
    loop {
        switch (k + i) % 3u {
            case 0u: { total += 5i; }
            case 1u, 2u: { total -= i32(k); }
            default: { }
        }
        continuing {
            k++;
            break if k >= 3u;
        }
    }
    y[i] = total;
}
"""
# Arrays inside storage structs.
MEMBERS = """
struct Data { scale: f32, values: array<f32> }
@group(0) @binding(0) var<storage, read> src: Data;
@group(0) @binding(1) var<storage, read_write> dst: Data;

@compute @workgroup_size(64)
fn members(@builtin(global_invocation_id) gid: vec3<u32>) {
    let v = src.values[gid.x] * 2.0;
    dst.values[gid.x] = v;
}
"""
# A transpose through a two-index workgroup tile.
TRANSPOSE = """
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
var<workgroup> tile: array<array<f32, 8>, 8>;

@compute @workgroup_size(8, 8)
fn transpose(@builtin(global_invocation_id) gid: vec3<u32>,
             @builtin(local_invocation_id) lid: vec3<u32>) {
    tile[lid.y][lid.x] = x[gid.y * 8u + gid.x];
    workgroupBarrier();
    y[gid.y * 8u + gid.x] = tile[lid.x][lid.y];
}
"""
# A struct with a matrix member, built, passed to a helper, changed and returned; a matrix.
COMPOSITE = """
struct Body {
    pos: vec2<f32>,
    mass: f32,
    rot: mat2x2<f32>,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;

fn push(b: Body, t: f32) -> Body {
    var q = b;
    q.pos = q.rot * q.pos * t;
    return q;
}

@compute @workgroup_size(64)
fn composite(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    let v = x[i];
    let m = mat2x2<f32>(v, 2.0, 3.0, f32(i));
    let b = Body(vec2<f32>(v, 1.0), v * 2.0, m);
    let q = push(b, 0.5);
    y[i] = q.pos.x + m[1].y * b.mass;
}
"""
KERNELS = {
    "early_break": EARLY_BREAK,
    "helper": HELPER,
    "matmul": MATMUL,
    "reduce": REDUCE,
    "half": HALF,
    "histogram": HISTOGRAM,
    "planted_nan": PLANTED_NAN,
    "diverge": DIVERGE,
    "switched": SWITCHED,
    "members": MEMBERS,
    "transpose": TRANSPOSE,
    "composite": COMPOSITE,
}


@pytest.fixture(scope="module")
def debug_session(tmp_path_factory: pytest.TempPathFactory, session: Session) -> Session:
    """A session over the debugger's test kernels, on the default adapter's device."""
    root = tmp_path_factory.mktemp("debug")
    for name, text in KERNELS.items():
        (root / f"{name}.wgsl").write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return Session(load_corpus(root), session.gpu)
