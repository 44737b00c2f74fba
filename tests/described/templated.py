"""A templated corpus written here in the dialect llama.cpp's WebGPU shaders use (not their code):
`#ifdef TYPE_F16` choosing the element type, an op chosen by `#ifdef`/`#elif defined(...)`, the
workgroup size a define, shared declarations `#include`d from a .tmpl file, every entry point named
`main`, inputs declared `read_write`, a struct of parameters with offsets; and the variants and
descriptions of a `workbench.toml`."""

from __future__ import annotations

from pathlib import Path

COMMON_TMPL = """\
// Shared declarations (included).
struct Params {
    ne: u32,
    offset_src: u32,
    offset_dst: u32,
    alpha: f32,
};
"""

UNARY = """\
#ifdef TYPE_F16
enable f16;
#define TYPE f16
#else
#define TYPE f32
#endif

#include "common.tmpl"

@group(0) @binding(0) var<storage, read_write> src: array<TYPE>;
@group(0) @binding(1) var<storage, read_write> dst: array<TYPE>;
@group(0) @binding(2) var<uniform> params: Params;

fn op(x: f32) -> f32 {
#if defined(OP_SILU)
    return x / (1.0 + exp(-x));
#elif defined(OP_RELU)
    return max(x, 0.0);
#elif defined(OP_SCALE)
    return x * params.alpha;
#else
    return x;
#endif
}

@compute @workgroup_size(WG_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i >= params.ne) { return; }
    dst[params.offset_dst + i] = TYPE(op(f32(src[params.offset_src + i])));
}
"""

# Two entry points in one template: each variant gives two kernels, VARIANT:ENTRY.
SUMS = """\
#define WG 64
@group(0) @binding(0) var<storage, read_write> src: array<f32>;
@group(0) @binding(1) var<storage, read_write> dst: array<f32>;
@group(0) @binding(2) var<uniform> params: vec4<u32>;  // rows, cols

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let r = gid.x;
    if (r >= params.x) { return; }
    var s = 0.0;
    for (var c = 0u; c < params.y; c++) {
        s += src[r * params.y + c];
#ifdef CUMSUM
        dst[r * params.y + c] = s;
#endif
    }
#ifndef CUMSUM
    dst[r] = s;
#endif
}

@compute @workgroup_size(WG)
fn zero(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x < params.x) { dst[gid.x] = 0.0; }
}
"""

TOML = """\
[variants.silu_f32]
file = "unary.wgsl"
defines = { TYPE_F32 = true, OP_SILU = true, WG_SIZE = 64 }

[variants.relu_f16]
file = "unary.wgsl"
defines = { TYPE_F16 = true, OP_RELU = true, WG_SIZE = 64 }

[variants.scale_f32]
file = "unary.wgsl"
defines = { OP_SCALE = true, WG_SIZE = 32 }

[variants.cumsum]
file = "sums.wgsl"
defines = { CUMSUM = true }

[kernels.silu_f32]
dims = { n = 1000 }
grid = ["ceil(n / 64)"]
uniforms.params = { ne = "n", offset_src = 0, offset_dst = 0, alpha = 0.0 }
buffers.src = { shape = ["n"], role = "in" }
buffers.dst = { shape = ["n"], role = "out" }
reference = { function = "std:silu", x = "src" }

[kernels.relu_f16]
dims = { n = 500 }
grid = ["ceil(n / 64)"]
uniforms.params = { ne = "n", offset_src = 0, offset_dst = 0, alpha = 0.0 }
buffers.src = { shape = ["n"], role = "in" }
buffers.dst = { shape = ["n"], role = "out" }
reference = { function = "std:relu", x = "src" }

[kernels.scale_f32]
dims = { n = 300 }
grid = ["ceil(n / 32)"]
uniforms.params = { ne = "n", offset_src = 0, offset_dst = 0, alpha = 1.75 }
buffers.src = { shape = ["n"], role = "in" }
buffers.dst = { shape = ["n"], role = "out" }
reference = { function = "std:scale", x = "src", scale = "params.alpha" }

[kernels."cumsum:main"]
dims = { rows = 20, cols = 33 }
grid = ["ceil(rows / 64)"]
uniforms.params = ["rows", "cols", 0, 0]
buffers.src = { shape = ["rows", "cols"], role = "in" }
buffers.dst = { shape = ["rows", "cols"], role = "out" }
reference = { function = "std:cumsum", x = "src" }
"""


def templated_corpus(tmp: Path, unary: str = UNARY, toml: str = TOML, sums: str = SUMS) -> Path:
    root = tmp / "templated"
    root.mkdir(parents=True, exist_ok=True)
    for name, text in (
        ("common.tmpl", COMMON_TMPL),
        ("unary.wgsl", unary),
        ("sums.wgsl", sums),
        ("workbench.toml", toml),
    ):
        (root / name).write_text(text, encoding="utf-8")
    return root
