"""Small corpora for the inside-one-dispatch tests: kernels with a known footprint, a barrier
kernel for stepping, and a kernel that probes. Sessions reuse the real adapter's device."""

from __future__ import annotations

import textwrap

import pytest

from workbench.session import Session
from workbench.wgsl.corpus import load_corpus

# Each workgroup owns 64 elements but its bounds check is off by one (<= 64): it also writes the
# first element of the next workgroup's range.
OVERLAP = """
@group(0) @binding(0) var<storage, read_write> out: array<f32>;
@group(0) @binding(1) var<uniform> n: u32;

@compute @workgroup_size(64)
fn overlap(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let start = wg.x * 64u;
    for (var i = lid; i <= 64u; i = i + 64u) {
        let j = start + i;
        if (j < n) { out[j] = f32(wg.x); }
    }
}
"""
# One element per invocation, the grid sized from n: a binding sized past n is a grid too short.
COVER = """
@group(0) @binding(0) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(64)
fn cover(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x < arrayLength(&out)) { out[gid.x] = 1.0; }
}
"""
# Writes exactly the value a zeroed output already holds.
ZERO = """
@group(0) @binding(0) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(64)
fn zero(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x < arrayLength(&out)) { out[gid.x] = 0.0; }
}
"""
# Reverses each 64-element tile through workgroup memory: needs its barrier.
REVERSE = """
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
var<workgroup> tile: array<f32, 64>;

@compute @workgroup_size(64)
fn reverse_tiles(@builtin(workgroup_id) wg: vec3<u32>,
                 @builtin(local_invocation_index) lid: u32) {
    tile[lid] = x[wg.x * 64u + lid];
    workgroupBarrier();
    y[wg.x * 64u + lid] = tile[63u - lid] * 2.0;
}
"""
# Probes: the user's own no-op definitions (the documented two lines) and every probe kind.
PROBED = """
@group(0) @binding(0) var<storage, read_write> out: array<f32>;
fn wb_probe(tag: u32, value: f32) {} fn wb_probe_u32(tag: u32, value: u32) {}
fn wb_probe_i32(tag: u32, value: i32) {} fn wb_probe_vec4(tag: u32, value: vec4<f32>) {}

@compute @workgroup_size(32)
fn probed(@builtin(global_invocation_id) gid: vec3<u32>) {
    var acc = 0.0;
    for (var k = 0u; k < 4u; k = k + 1u) {
        acc = acc + f32(gid.x) * 0.5 + f32(k);
        wb_probe(k, acc);
    }
    wb_probe_u32(10u, gid.x);
    wb_probe_i32(11u, -i32(gid.x));
    wb_probe_vec4(12u, vec4<f32>(1.0, 2.0, f32(gid.x), acc));
    out[gid.x] = acc;
}
"""
# Probes without definitions: the workbench supplies no-ops for an ordinary run.
BARE_PROBE = """
@group(0) @binding(0) var<storage, read_write> out: array<u32>;

@compute @workgroup_size(8)
fn bare(@builtin(global_invocation_id) gid: vec3<u32>) {
    wb_probe_u32(1u, gid.x);
    out[gid.x] = gid.x * 3u;
}
"""


@pytest.fixture(scope="module")
def inside(tmp_path_factory: pytest.TempPathFactory, session: Session) -> Session:
    """A session over the test kernels, on the default adapter's device."""
    root = tmp_path_factory.mktemp("inside")
    kernels = {
        "overlap": OVERLAP,
        "cover": COVER,
        "zero": ZERO,
        "reverse": REVERSE,
        "probed": PROBED,
        "bare": BARE_PROBE,
    }
    for name, text in kernels.items():
        (root / f"{name}.wgsl").write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return Session(load_corpus(root), session.gpu)
