"""Kernels written here in the style of llama.cpp's WebGPU shaders (not their code): inputs declared
`read_write`, a struct of parameters with offsets and row strides, a float `eps` in the struct,
ggml broadcasting of the second operand. Each is described with a `std:` reference in a few lines.
"""

from __future__ import annotations

from pathlib import Path

from .corpora import write

RMS_NORM = """
struct Params {
    offset_src: u32,
    offset_dst: u32,
    stride_src1: u32,  // elements between rows of src
    ne0: u32,          // columns
    ne1: u32,          // rows
    eps: f32,
};

@group(0) @binding(0) var<storage, read_write> src: array<f32>;
@group(0) @binding(1) var<storage, read_write> dst: array<f32>;
@group(0) @binding(2) var<uniform> params: Params;

var<workgroup> partial: array<f32, 64>;

@compute @workgroup_size(64)
fn rms_norm(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let row = wg.x;
    if (row >= params.ne1) { return; }
    let base = params.offset_src + row * params.stride_src1;
    var s = 0.0;
    for (var c = lid.x; c < params.ne0; c += 64u) {
        let v = src[base + c];
        s += v * v;
    }
    partial[lid.x] = s;
    workgroupBarrier();
    for (var half = 32u; half > 0u; half /= 2u) {
        if (lid.x < half) { partial[lid.x] += partial[lid.x + half]; }
        workgroupBarrier();
    }
    let scale = inverseSqrt(partial[0] / f32(params.ne0) + params.eps);
    for (var c = lid.x; c < params.ne0; c += 64u) {
        dst[params.offset_dst + row * params.ne0 + c] = src[base + c] * scale;
    }
}
"""

RMS_NORM_TOML = """
[kernels.rms_norm]
dims = { rows = 6, cols = 100 }
grid = ["rows"]
uniforms.params = { offset_src = 3, offset_dst = 0, stride_src1 = "cols + 5", ne0 = "cols", ne1 = "rows", eps = 1e-3 }
buffers.src = { shape = ["3 + rows * (cols + 5)"], role = "in" }
buffers.dst = { shape = ["rows", "cols"], role = "out" }
cost = { bytes = "8 * rows * cols", flops = "3 * rows * cols" }
[kernels.rms_norm.reference]
function = "std:rms_norm"
x = { buffer = "src", shape = ["rows", "cols"], strides = ["params.stride_src1", 1], offset = "params.offset_src" }
"""

ADD = """
struct Params {
    ne0: u32, ne1: u32,    // dst and src0: rows ne1 of ne0
    ne10: u32, ne11: u32,  // src1, tiled over src0
};

@group(0) @binding(0) var<storage, read_write> src0: array<f32>;
@group(0) @binding(1) var<storage, read_write> src1: array<f32>;
@group(0) @binding(2) var<storage, read_write> dst: array<f32>;
@group(0) @binding(3) var<uniform> params: Params;

@compute @workgroup_size(64)
fn add(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i >= params.ne0 * params.ne1) { return; }
    let r = i / params.ne0;
    let c = i % params.ne0;
    dst[i] = src0[i] + src1[(r % params.ne11) * params.ne10 + c % params.ne10];
}
"""

ADD_TOML = """
[kernels.add]
dims = { rows = 12, cols = 96, brows = 3, bcols = 32 }
grid = ["ceil(rows * cols / 64)"]
uniforms.params = { ne0 = "cols", ne1 = "rows", ne10 = "bcols", ne11 = "brows" }
buffers.src0 = { shape = ["rows", "cols"], role = "in" }
buffers.src1 = { shape = ["brows", "bcols"], role = "in" }
buffers.dst = { shape = ["rows", "cols"], role = "out" }
reference = { function = "std:add", a = "src0", b = "src1", y = "dst" }
"""


def llama_style_corpus(
    tmp: Path, rms: str = RMS_NORM, add: str = ADD, toml: str | None = None
) -> Path:
    files = {"norm.wgsl": rms, "binary.wgsl": add}
    files["workbench.toml"] = toml if toml is not None else RMS_NORM_TOML + ADD_TOML
    return write(tmp / "llama_style", files)


# Quantized blocks: 32 values as a f32 scale and 32 signed bytes, four to a u32 (written here).
DEQUANT = """
struct Block {
    scale: f32,
    q: array<u32, 8>,
};

@group(0) @binding(0) var<storage, read_write> blocks: array<Block>;
@group(0) @binding(1) var<storage, read_write> dst: array<f32>;
@group(0) @binding(2) var<uniform> params: vec4<u32>;  // values

@compute @workgroup_size(64)
fn dequant(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i >= params.x) { return; }
    let b = blocks[i / 32u];
    let j = i % 32u;
    let byte = extractBits(i32(b.q[j / 4u]), (j % 4u) * 8u, 8u);
    dst[i] = b.scale * f32(byte);
}
"""

DEQUANT_TOML = """
[kernels.dequant]
dims = { nb = 10 }
grid = ["ceil(nb * 32 / 64)"]
uniforms.params = ["nb * 32", 0, 0, 0]
buffers.blocks = { words = "nb * 9", shape = ["nb * 32"], decode = "refs.py:decode_q8", encode = "refs.py:encode_q8" }
buffers.dst = { shape = ["nb * 32"], role = "out" }
reference = { function = "std:cpy_f32", x = "blocks" }
"""

DEQUANT_REFS = '''
import numpy as np


def encode_q8(values):
    """Blocks of 32: scale = max|v| / 127 (as f32), q = round(v / scale) as signed bytes."""
    v = values.reshape(-1, 32)
    scale = (np.abs(v).max(axis=1) / 127).astype(np.float32)
    q = np.round(v / np.where(scale == 0, 1, scale)[:, None]).astype(np.int8)
    words = np.empty((v.shape[0], 9), np.uint32)
    words[:, 0] = scale.view(np.uint32)
    words[:, 1:] = q.view(np.uint8).reshape(-1, 8, 4).view("<u4")[..., 0]
    return {"words": words.reshape(-1)}


def decode_q8(words):
    w = words.astype(np.uint32).reshape(-1, 9)  # the worker sends arrays as float64
    scale = w[:, 0].copy().view(np.float32).astype(np.float64)
    q = w[:, 1:].copy().view(np.uint8).view(np.int8).reshape(-1, 32)
    return {"values": (scale[:, None] * q).reshape(-1)}
'''


# The other way: f32 values quantized into the same blocks (written here), a packed output.
QUANTIZE = """
struct Block {
    scale: f32,
    q: array<u32, 8>,
};

@group(0) @binding(0) var<storage, read_write> src: array<f32>;
@group(0) @binding(1) var<storage, read_write> blocks: array<Block>;
@group(0) @binding(2) var<uniform> params: vec4<u32>;  // blocks

@compute @workgroup_size(64)
fn quantize(@builtin(global_invocation_id) gid: vec3<u32>) {
    let b = gid.x;
    if (b >= params.x) { return; }
    var amax = 0.0;
    for (var j = 0u; j < 32u; j++) { amax = max(amax, abs(src[b * 32u + j])); }
    let scale = amax / 127.0;
    let inv = select(0.0, 1.0 / scale, scale > 0.0);
    blocks[b].scale = scale;
    for (var w = 0u; w < 8u; w++) {
        var word = 0u;
        for (var k = 0u; k < 4u; k++) {
            let q = i32(round(src[b * 32u + w * 4u + k] * inv));
            word |= (u32(q) & 0xffu) << (k * 8u);
        }
        blocks[b].q[w] = word;
    }
}
"""

# Compared as the values the words hold: within half a quantization step (max|x| / 254) of x.
QUANTIZE_TOML = """
[kernels.quantize]
dims = { nb = 10 }
grid = ["ceil(nb / 64)"]
uniforms.params = ["nb", 0, 0, 0]
buffers.src = { shape = ["nb * 32"], role = "in" }
buffers.blocks = { words = "nb * 9", shape = ["nb * 32"], decode = "refs.py:decode_q8", role = "out" }
reference = { function = "std:cpy_f32", x = "src", y = "blocks", rtol = 0, atol = 0.02 }
"""
