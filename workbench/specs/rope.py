"""Specs of the rotary position embedding kernels in 11_rope.wgsl: rope_q, rope_k (forward, in
place) and rope_q_backward, rope_k_backward (the transpose rotation, in place on the gradient).

Convention: interleaved pairs (2i, 2i+1) of each head vector, theta_i = rope_base^(-2i/head_dim),
as in RoFormer and Meta's LLaMA; the token at sequence index s sits at position s + pos_offset.
Layout [seq, heads, head_dim] row-major, heads = n_heads for Q and n_kv_heads for K. Uniforms:
dims = vec4<u32>(seq, heads, head_dim, pos_offset), params = vec4<f32>(rope_base, 0, 0, 0) with
rope_base fixed at 10000 (the seeds' value; it is a model constant, not a size). Grid: the seed's,
one pair per invocation, ceil(seq * heads * head_dim / 2 / 256); the shipped kernels declare
ELEMENTS_PER_INVOCATION = 4 pairs, which divides it (`KernelSpec.launch_grid`).
"""

from __future__ import annotations

import numpy as np

from workbench.errors import UserError
from workbench.specs.base import (
    Arrays,
    Buffer,
    Cost,
    Dim,
    Dims,
    GradLink,
    KernelSpec,
    Tol,
    primal_rng,
)
from workbench.specs.refs import rope as ref

FILE = "11_rope.wgsl"
WG = 256
ROPE_BASE = 10000.0

# The error is in the angle, not in the rotation. theta_i = pow(base, -2i/head_dim) is a few ULP
# off and pos * theta_i is rounded to f32, so the angle is off by about c * 2^-24 * pos * theta_i
# with theta_i <= 1; the output moves by |pair| times that, |pair| = |(x[2i], x[2i+1])| < 6 for
# N(0,1) inputs. So atol grows linearly with the largest position, seq + pos_offset, over a floor
# for sin/cos at small angles and the rotation's own rounding. This is how an f32 RoPE behaves
# (PyTorch's included); the kernel is not at fault, and a fixed atol is either too loose near
# position 0 (a wrong theta would pass) or too tight far out.
#
# Measured max |got - ref| / (seq + pos_offset), N(0,1) inputs, all four kernels alike:
#   lavapipe, seq 512, 12 heads of 64, pos_offset 0 .. 2^20: 2.2e-7 .. 3.9e-7 (max |got - ref|
#     1.2e-4 at offset 0, 1.0e-3 at 3000, 2.9e-3 at 8192, 1.0e-2 at 32768, 0.41 at 2^20);
#   lavapipe, head_dim 1024, 32768 tokens at pos_offset 2^20: 6.7e-7 (max 0.72), the worst seen;
#   lavapipe, 2^20 tokens of head_dim 16 at pos_offset 2^20 (positions up to 2^21 - 1): 2.4e-7;
#   H100, seq 512 at pos_offset 3000: 1.0e-3 .. 1.4e-3, i.e. 2.9e-7 .. 4.0e-7.
# That is c of about 1.4 (H100, head_dim 64) to 1.9 (lavapipe, head_dim 1024) ULP per position
# for the largest pairs; the slope below takes c = 4 and |pair| = 6.
_PAIR_BOUND = 6.0
_ANGLE_ULPS = 4.0
ROTATION_RTOL = 1.3e-6
# Per unit of position: 6 * 4 * 2^-24 = 1.43e-6, 2.1x the worst measured slope (3.6x at head_dim
# 64). A kernel with rope_base 10001 instead of 10000 turns by up to 4e-6 rad per position too far
# (max over x = 2i/head_dim of x * 10000^-x * ln(1.0001)), so with N(0,1) inputs it is off by 9 to
# 10 times this atol from 16 tokens on, at any offset (3 times at 4 tokens).
ROTATION_ATOL_PER_POSITION = _PAIR_BOUND * _ANGLE_ULPS * 2.0**-24
# Near position 0: hardware sin/cos approximations are good to about 2^-21 absolute (CUDA
# documents 2^-21.41 for __sinf on [-pi, pi]), times |pair| < 6, plus 2 ULP of the rotation's
# products and sum: 4e-6. Lavapipe is exact at position 0, 3.6e-7 off at positions < 2 and
# 1.6e-6 at positions < 8 (already the per-position slope).
ROTATION_ATOL_FLOOR = 5e-6


def rotation_tol(dims: Dims) -> Tol:
    """The tolerance of every RoPE output at `dims`: atol grows with the largest position."""
    positions = dims["seq"] + dims["pos_offset"]
    atol = ROTATION_ATOL_FLOOR + ROTATION_ATOL_PER_POSITION * positions
    return Tol(
        rtol=ROTATION_RTOL,
        atol=atol,
        why=f"f32 angle pos * theta_i, off by a few 2^-24 * pos: atol = 5e-6 + 1.43e-6 * (seq + "
        f"pos_offset) = {atol:.3g} (6 * 4 ULP of the angle per position for pairs < 6, measured "
        "at most 4.0e-7 per position on an H100 at pos_offset 3000 and 6.7e-7 on lavapipe up to "
        "position 2^20; 5e-6 covers sin/cos near 0)",
    )


# u32 indices cannot overflow: the tensor must fit one storage binding (at most 2**29 f32), which
# the host checks before allocating; positions stay below 2**24, exact in f32.
def _dims(heads: str, default_heads: int) -> tuple[Dim, ...]:
    return (
        Dim("seq", 512, lo=0, hi=1 << 20, doc="tokens in the sequence"),
        Dim(heads, default_heads, lo=1, hi=1024, doc="heads sharing the rotation"),
        Dim("head_dim", 64, lo=2, hi=1024, doc="width of one head; must be even"),
        Dim(
            "pos_offset",
            0,
            lo=0,
            hi=1 << 20,
            doc="position of the first token (KV cache); the f32 angle error grows with "
            "the position, see the tolerance",
        ),
    )


def _check_even(dims: Dims) -> None:
    if dims["head_dim"] % 2:
        raise UserError(f"RoPE rotates pairs: head_dim must be even, got {dims['head_dim']}")


# 24 positions from 7 on, 16-wide heads: eight frequencies, angles from 0.005 to 30 rad.
SMALL_DIMS = {"seq": 24, "head_dim": 16, "pos_offset": 7}


def _gradient(primal: str, heads: str, small: Dims) -> GradLink:
    """rope_q_backward (primal Q) or rope_k_backward (K): L = <d<primal>, rope(<primal>)>, and
    the kernel turns the upstream gradient into dL/d<primal> in place."""

    def primals(dims: Dims, seed: int) -> dict[str, np.ndarray]:
        shape = (dims["seq"], dims[heads], dims["head_dim"])
        return {primal: primal_rng(seed).standard_normal(shape).astype(np.float32)}

    def forward(dims: Dims, arrays: Arrays) -> dict[str, np.ndarray]:
        return {primal: ref.rope_forward(arrays[primal], dims["pos_offset"], ROPE_BASE)}

    grad = f"d{primal}"
    return GradLink(
        forward_ref=forward,
        upstream={primal: grad},
        wrt={grad: primal},
        primals=primals,
        forward_kernel=f"rope_{primal.lower()}",
        grad_dims=small,
        doc=f"L = <{grad}, rope({primal})>: the kernel turns the upstream {grad} into "
        f"dL/{grad} in place",
    )


def _rope_spec(
    name: str, binding: str, heads: str, default_heads: int, small_heads: int, backward: bool
) -> KernelSpec:
    """The four kernels differ only in the binding's name, the head count and the direction."""
    apply = ref.rope_backward if backward else ref.rope_forward
    small = {**SMALL_DIMS, heads: small_heads}

    def buffers(dims: Dims) -> dict[str, Buffer]:
        _check_even(dims)
        axes = (("seq", dims["seq"]), (heads, dims[heads]), ("head_dim", dims["head_dim"]))
        return {binding: Buffer(axes, "float32")}

    def inputs(dims: Dims, seed: int) -> dict[str, np.ndarray]:
        rng = np.random.default_rng(seed)
        shape = (dims["seq"], dims[heads], dims["head_dim"])
        # Q/K projections and their gradients at the scale of activations.
        return {binding: rng.standard_normal(shape).astype(np.float32)}

    def reference(dims: Dims, arrays: Arrays) -> dict[str, np.ndarray]:
        return {binding: apply(arrays[binding], dims["pos_offset"], ROPE_BASE)}

    def grid(dims: Dims) -> tuple[int, int, int]:
        return (-(-dims["seq"] * dims[heads] * (dims["head_dim"] // 2) // WG), 1, 1)

    def cost(dims: Dims) -> Cost:
        n = dims["seq"] * dims[heads] * dims["head_dim"]
        # Read and write every element once. Per pair: 6 flops for the rotation, plus pow, cos
        # and sin counted as one flop each.
        return Cost(bytes=8 * n, flops=(n // 2) * 9)

    def uniforms(dims: Dims) -> dict[str, object]:
        return {
            "dims": [dims["seq"], dims[heads], dims["head_dim"], dims["pos_offset"]],
            "params": [ROPE_BASE, 0.0, 0.0, 0.0],
        }

    what = "dL/dx = R(angle)^T dL/dx'" if backward else "x' = R(angle) x"
    return KernelSpec(
        name=name,
        small_dims=small,
        gradient=_gradient(binding.removeprefix("d"), heads, small) if backward else None,
        file=FILE,
        dims=_dims(heads, default_heads),
        buffers=buffers,
        inputs=inputs,
        uniforms=uniforms,
        grid=grid,
        per_element_grid=True,
        outputs=(binding,),
        reference=reference,
        tolerances={},
        tolerances_for=lambda dims: {binding: rotation_tol(dims)},
        special={
            binding: "IEEE propagation within a pair, each output mixes both inputs: a NaN "
            "makes both elements NaN; an Inf makes both +-Inf, or NaN where it meets an exact "
            "zero (position 0 has sin = 0, so Inf * 0 poisons the partner) or two infinities "
            "cancel",
        },
        cost=cost,
        doc=f"RoPE on {binding} [seq, {heads}, head_dim] in place: {what} for each interleaved "
        f"pair (2i, 2i+1), angle = (s + pos_offset) * {ROPE_BASE:g}^(-2i/head_dim).",
    )


SPECS = [
    _rope_spec("rope_q", "Q", "n_heads", 12, 3, backward=False),
    _rope_spec("rope_k", "K", "n_kv_heads", 4, 2, backward=False),
    _rope_spec("rope_q_backward", "dQ", "n_heads", 12, 3, backward=True),
    _rope_spec("rope_k_backward", "dK", "n_kv_heads", 4, 2, backward=True),
]
