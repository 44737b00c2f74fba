"""Specs of the causal depthwise conv1d kernels in `12_causal_conv1d.wgsl` (seed 002).

Convention (public causal-conv1d / Mamba): weight's last tap multiplies the current step,
`out[b, c, t] = act(bias[c] + sum_k weight[c, k] * x[b, c, t - (W - 1) + k])` with x before t = 0
taken as 0, act = SiLU or identity. The math lives in `refs/conv1d.py`.

Bind group ABI (group 0; seed 002 is HIP, so this ABI is the workbench's own):

causal_conv1d_fwd (grid ceil(batch * dim * seqlen / 256) x 1 x 1, workgroup 256, one output each)
  0 storage read        x: array<f32>        (batch, dim, seqlen) contiguous
  1 storage read        weight: array<f32>   (dim, width)
  2 storage read        bias: array<f32>     (dim); read only when flags.x = 1
  3 storage read_write  out: array<f32>      (batch, dim, seqlen)
  4 uniform             dims: vec4<u32>      (batch, dim, seqlen, width)
  5 uniform             flags: vec4<u32>     (has_bias, silu, 0, 0)

causal_conv1d_bwd (grid dim x batch x ceil(seqlen / 4096), or dim x 1 x 1 when deterministic;
workgroup 256, chunks of 1024 steps, 4 per invocation, 4 chunks per workgroup)
  0 storage read        x: array<f32>                (batch, dim, seqlen)
  1 storage read        weight: array<f32>           (dim, width)
  2 storage read        bias: array<f32>             (dim); read only when flags.x = 1
  3 storage read        dout: array<f32>             (batch, dim, seqlen)
  4 storage read_write  dx: array<f32>               (batch, dim, seqlen)
  5 storage read_write  dweight: array<atomic<u32>>  (dim, width) f32 bits, zero-filled first
  6 storage read_write  dbias: array<atomic<u32>>    (dim) f32 bits, zero-filled first; left 0
                                                     when flags.x = 0
  7 uniform             dims: vec4<u32>              (batch, dim, seqlen, width)
  8 uniform             flags: vec4<u32>             (has_bias, silu, deterministic, 0)

Special values: the zero padding (x before t = 0 in the forward and in dweight, g past seqlen in
dx) is multiplied like any input, rather than skipped, as causal-conv1d's CUDA forward does (it
seeds the history of the first chunk with zeros and runs every tap over it) and as
F.conv1d(padding=W-1) does wherever it materialises the padding (im2col). So a NaN/Inf weight
poisons every step of its channel, the first W - 1 included (Inf x 0 = NaN there), in the
forward and the backward alike: a broken weight shows everywhere it is used instead of hiding
behind the sequence start, and the kernels agree with the model a developer compares them with.

The backward recomputes the pre-activation when SiLU is on (the forward output is not bound).
Its atomic mode adds each workgroup's (b, c, chunk) partial into dweight/dbias with a CAS loop; its
deterministic mode runs one workgroup per channel that walks the batch in order and stores the
sum, so repeated runs are bitwise equal.
"""

from __future__ import annotations

import math

import numpy as np

from workbench.specs.base import Arrays, Buffer, Cost, Dim, Dims, GradLink, KernelSpec, Tol
from workbench.specs.refs import conv1d as ref

FILE = "12_causal_conv1d.wgsl"
WG = 256
F32 = 4
# The sigmoid/SiLU-derivative chain per element when SiLU is on (exp counted as one flop):
# negate, exp, add, divide, then s * (1 + z * (1 - s)) and the product with dout / pre.
SILU_FLOPS = 8

# A CUDA/Vulkan grid dimension holds at most 65,535 workgroups; the backward puts dim on x and
# batch on y unfolded, so both are capped there.
MAX_GRID = 65_535

_SHAPE_DIMS = (
    Dim("batch", 2, 1, MAX_GRID, "sequences; the backward's grid y"),
    Dim("dim", 256, 1, MAX_GRID, "channels (depthwise); the backward's grid x"),
    Dim("seqlen", 2048, 1, 1 << 24, "steps per sequence"),
    Dim("width", 4, 2, 4, "filter taps; the kernels support 2, 3 and 4 like causal-conv1d"),
    Dim("bias", 1, 0, 1, "1 adds bias[c]; 0 treats it as 0 (the buffer is still bound)"),
    Dim("silu", 1, 0, 1, "1 applies SiLU after the convolution"),
)
_DETERMINISTIC = Dim(
    "deterministic", 0, 0, 1, "1: one workgroup per channel, no atomic adds (bitwise reproducible)"
)

# causal-conv1d's own tests compare its fp32 kernels with a PyTorch reference at these
# tolerances; we adopt them as peer tolerances. out/dx sum only W <= 4 products, but with SiLU
# they go through WGSL's exp (a few ULP, larger relative error where pre is near a zero of silu or
# silu') and a division.
_TOL_ELEMENTWISE = Tol(
    3e-4,
    1e-3,
    "causal-conv1d fp32 test tolerance for out/dx: W-term sums plus WGSL exp/divide in SiLU",
)
# dweight/dbias sum batch * seqlen terms in f32 (per invocation, then a tree, then atomics in
# any order): the rounding grows with the count, so the looser weight-gradient tolerance applies.
_TOL_REDUCED = Tol(
    1e-3,
    1e-3,
    "causal-conv1d fp32 test tolerance for dweight/dbias: f32 sums over batch * seqlen terms "
    "in a varying (atomic) order",
)


def _act_shape(d: Dims) -> tuple[tuple[str, int], ...]:
    return (("batch", d["batch"]), ("dim", d["dim"]), ("seqlen", d["seqlen"]))


def _param_buffers(d: Dims) -> dict[str, Buffer]:
    return {
        "weight": Buffer((("dim", d["dim"]), ("width", d["width"]))),
        "bias": Buffer((("dim", d["dim"]),)),
    }


def _params(d: Dims, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """x ~ N(0, 1); weight and bias ~ U(-1/sqrt(W), 1/sqrt(W)) like PyTorch's Conv1d init for a
    depthwise filter (fan_in = W). Bias is drawn even when off, so ignoring it is tested."""
    bound = 1.0 / math.sqrt(d["width"])
    x = rng.standard_normal((d["batch"], d["dim"], d["seqlen"])).astype(np.float32)
    weight = rng.uniform(-bound, bound, (d["dim"], d["width"])).astype(np.float32)
    bias = rng.uniform(-bound, bound, (d["dim"],)).astype(np.float32)
    return {"x": x, "weight": weight, "bias": bias}


def _bias_or_none(d: Dims, inputs: Arrays) -> np.ndarray | None:
    return inputs["bias"] if d["bias"] else None


def _dims_uniform(d: Dims) -> list[int]:
    return [d["batch"], d["dim"], d["seqlen"], d["width"]]


# ---- causal_conv1d_fwd -------------------------------------------------------------------


def _fwd_buffers(d: Dims) -> dict[str, Buffer]:
    act = _act_shape(d)
    return {"x": Buffer(act), **_param_buffers(d), "out": Buffer(act)}


def _fwd_inputs(d: Dims, seed: int) -> dict[str, np.ndarray]:
    return _params(d, np.random.default_rng(seed))


def _fwd_uniforms(d: Dims) -> dict[str, object]:
    return {"dims": _dims_uniform(d), "flags": [d["bias"], d["silu"], 0, 0]}


def _fwd_grid(d: Dims) -> tuple[int, int, int]:
    return (math.ceil(d["batch"] * d["dim"] * d["seqlen"] / WG), 1, 1)


def _fwd_reference(d: Dims, inputs: Arrays) -> dict[str, np.ndarray]:
    out = ref.causal_conv1d_fwd(
        inputs["x"], inputs["weight"], _bias_or_none(d, inputs), bool(d["silu"])
    )
    return {"out": out}


def _fwd_cost(d: Dims) -> Cost:
    n = d["batch"] * d["dim"] * d["seqlen"]
    w = d["width"]
    # Read x once (the W overlapping taps hit in cache) and write out; weight and bias once.
    moved = F32 * (2 * n + d["dim"] * (w + d["bias"]))
    flops = n * (2 * w + d["bias"] + (SILU_FLOPS if d["silu"] else 0))
    return Cost(bytes=moved, flops=flops)


# ---- causal_conv1d_bwd -------------------------------------------------------------------


def _bwd_buffers(d: Dims) -> dict[str, Buffer]:
    act = _act_shape(d)
    params = _param_buffers(d)
    return {
        "x": Buffer(act),
        **params,
        "dout": Buffer(act),
        "dx": Buffer(act),
        "dweight": params["weight"],
        "dbias": params["bias"],
    }


def _bwd_inputs(d: Dims, seed: int) -> dict[str, np.ndarray]:
    # Same draws as the forward for x, weight, bias (same seed, same order), then dout ~ N(0, 1).
    rng = np.random.default_rng(seed)
    out = _params(d, rng)
    out["dout"] = rng.standard_normal((d["batch"], d["dim"], d["seqlen"])).astype(np.float32)
    return out


def _bwd_uniforms(d: Dims) -> dict[str, object]:
    return {"dims": _dims_uniform(d), "flags": [d["bias"], d["silu"], d["deterministic"], 0]}


# Steps of one row a backward workgroup owns: CHUNK (256 invocations x 4) x CHUNKS_PER_GROUP (4)
# in the WGSL.
BWD_STEPS_PER_GROUP = 1024 * 4


def _bwd_grid(d: Dims) -> tuple[int, int, int]:
    if d["deterministic"]:
        return (d["dim"], 1, 1)
    return (d["dim"], d["batch"], math.ceil(d["seqlen"] / BWD_STEPS_PER_GROUP))


def _bwd_reference(d: Dims, inputs: Arrays) -> dict[str, np.ndarray]:
    return ref.causal_conv1d_bwd(
        inputs["x"],
        inputs["weight"],
        _bias_or_none(d, inputs),
        inputs["dout"],
        bool(d["silu"]),
    )


def _bwd_cost(d: Dims) -> Cost:
    # Seed 002, section 10: per element 2W flops for dx, 2W for dweight, 1 for dbias
    # (~4 * batch * dim * seqlen * W); SiLU adds the recomputed convolution and its derivative.
    n = d["batch"] * d["dim"] * d["seqlen"]
    w = d["width"]
    flops = n * (4 * w + 1)
    if d["silu"]:
        flops += n * (2 * w + d["bias"] + SILU_FLOPS)
    # Section 10.2: read x and dout, write dx (3 passes over the activations), plus weight and
    # bias read once per channel and dweight/dbias written once per channel.
    moved = F32 * (3 * n + 2 * d["dim"] * (w + 1))
    return Cost(bytes=moved, flops=flops)


_FWD_SPECIAL = {
    "out": "IEEE propagation with the zero padding multiplied (as causal-conv1d): a "
    "NaN/Inf weight[c, k] or bias[c] reaches every step of channel c, the first W - 1 too "
    "(Inf x 0 = NaN); a NaN/Inf x[t] reaches steps t..t+W-1; silu(+Inf) = +Inf, silu(-Inf) = "
    "-Inf x 0 = NaN",
}
_BWD_SPECIAL = {
    "dx": "IEEE propagation; the look-ahead past seqlen multiplies zeros by the weight, so a "
    "NaN/Inf weight reaches every dx of its channel; a NaN/Inf g[t] reaches dx at t-W+1..t",
    "dweight": "a NaN/Inf in a channel's x, dout (or, with SiLU, its pre-activation) reaches "
    "its dweight; x's zero padding is multiplied by g, so a NaN/Inf g in the first W - 1 steps "
    "reaches every tap",
    "dbias": "the sum of g over the channel: any NaN/Inf g of the channel reaches it; 0 when "
    "bias is off",
}

_FWD_DOC = (
    "Causal depthwise conv1d forward (causal-conv1d convention: weight[:, W-1] multiplies the "
    "current step), optional bias and SiLU. One invocation per output element."
)
_BWD_DOC = (
    "Causal depthwise conv1d backward (seed 002): dx, dweight, dbias; recomputes the "
    "pre-activation for SiLU; independent chunks of 1024 steps of each (batch, channel) row; "
    "dweight/dbias "
    "reduced per workgroup then CAS-added, or stored by one workgroup per channel when "
    "deterministic."
)

# Two chunks of the backward's reverse walk (1,024 steps each), the second partial.
SMALL_DIMS = {"batch": 2, "dim": 8, "seqlen": 1030}
# The gradient check differentiates weight and bias numerically: fewer channels keep it quick.
GRAD_DIMS = {**SMALL_DIMS, "dim": 4}


def _forward(d: Dims, arrays: Arrays) -> dict[str, np.ndarray]:
    bias = arrays["bias"] if d["bias"] else None
    return {"out": ref.causal_conv1d_fwd(arrays["x"], arrays["weight"], bias, bool(d["silu"]))}


SPECS = [
    KernelSpec(
        name="causal_conv1d_fwd",
        small_dims=SMALL_DIMS,
        file=FILE,
        dims=_SHAPE_DIMS,
        buffers=_fwd_buffers,
        inputs=_fwd_inputs,
        uniforms=_fwd_uniforms,
        grid=_fwd_grid,
        outputs=("out",),
        reference=_fwd_reference,
        tolerances={"out": _TOL_ELEMENTWISE},
        cost=_fwd_cost,
        zeroed=("out",),
        special=_FWD_SPECIAL,
        doc=_FWD_DOC,
    ),
    KernelSpec(
        name="causal_conv1d_bwd",
        small_dims=SMALL_DIMS,
        gradient=GradLink(
            forward_ref=_forward,
            upstream={"out": "dout"},
            wrt={"dx": "x", "dweight": "weight", "dbias": "bias"},
            forward_kernel="causal_conv1d_fwd",
            grad_dims=GRAD_DIMS,
            doc="L = <dout, causal_conv1d(x, weight, bias)>, SiLU and bias per the dims",
        ),
        # deterministic=1 stores one workgroup's sum per channel: no float atomics reorder.
        deterministic_when=lambda d: bool(d.get("deterministic")),
        file=FILE,
        dims=(*_SHAPE_DIMS, _DETERMINISTIC),
        buffers=_bwd_buffers,
        inputs=_bwd_inputs,
        uniforms=_bwd_uniforms,
        grid=_bwd_grid,
        outputs=("dx", "dweight", "dbias"),
        reference=_bwd_reference,
        tolerances={"dx": _TOL_ELEMENTWISE, "dweight": _TOL_REDUCED, "dbias": _TOL_REDUCED},
        cost=_bwd_cost,
        zeroed=("dx", "dweight", "dbias"),
        special=_BWD_SPECIAL,
        doc=_BWD_DOC,
    ),
]
