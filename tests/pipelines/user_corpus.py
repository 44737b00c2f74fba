"""A user's corpus with a pipeline of its own (written here, in llama.cpp's style: every entry
point is `main`, inputs are `read_write`, parameters are a struct): `sqr.wgsl:main` squares,
`scale.wgsl:main` scales and shifts, both described with `std:` references in workbench.toml, and
`pipelines/chain.toml` runs one after the other. `BIAS_BUG` plants a bug in the second step."""

from __future__ import annotations

from pathlib import Path

SQR = """
struct Params { ne: u32 };
@group(0) @binding(0) var<storage, read_write> src: array<f32>;
@group(0) @binding(1) var<storage, read_write> dst: array<f32>;
@group(0) @binding(2) var<uniform> params: Params;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= params.ne) { return; }
    dst[gid.x] = src[gid.x] * src[gid.x];
}
"""

SCALE = """
struct Params { ne: u32, scale: f32, bias: f32 };
@group(0) @binding(0) var<storage, read_write> src: array<f32>;
@group(0) @binding(1) var<storage, read_write> dst: array<f32>;
@group(0) @binding(2) var<uniform> params: Params;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= params.ne) { return; }
    dst[gid.x] = src[gid.x] * params.scale + params.bias;
}
"""

BIAS_BUG = ("+ params.bias", "- params.bias")

DESCRIBED = """
[kernels."sqr.wgsl:main"]
dims = { n = 1000 }
grid = ["ceil(n / 64)"]
uniforms.params = { ne = "n" }
buffers.src = { shape = ["n"], role = "in" }
buffers.dst = { shape = ["n"], role = "out" }
reference = { function = "std:sqr", x = "src" }

[kernels."scale.wgsl:main"]
dims = { n = 1000 }
grid = ["ceil(n / 64)"]
uniforms.params = { ne = "n", scale = 0.5, bias = 2.0 }
buffers.src = { shape = ["n"], role = "in" }
buffers.dst = { shape = ["n"], role = "out" }
reference = { function = "std:scale", x = "src" }
"""

CHAIN = """
name = "sqr_scale"
doc = "square, then scale and shift"
[dims]
n = { default = 1000, min = 1, max = 100000 }
[buffers]
x = { shape = ["n"], init = "randn:1" }
y = { shape = ["n"] }
z = { shape = ["n"] }
[[steps]]
kernel = "sqr.wgsl:main"
bind = { src = "x", dst = "y" }
[[steps]]
kernel = "scale.wgsl:main"
bind = { src = "y", dst = "z" }
"""


def user_corpus(root: Path, bug: bool = False) -> Path:
    """The corpus in `root` (with the planted bug in scale.wgsl when `bug`)."""
    (root / "pipelines").mkdir(parents=True, exist_ok=True)
    scale = SCALE.replace(*BIAS_BUG) if bug else SCALE
    files = {
        "sqr.wgsl": SQR,
        "scale.wgsl": scale,
        "workbench.toml": DESCRIBED,
        "pipelines/chain.toml": CHAIN,
    }
    for rel, text in files.items():
        (root / rel).write_text(text.lstrip("\n"), encoding="utf-8")
    return root
