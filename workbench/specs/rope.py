"""Specs of the rotary position embedding kernels in 11_rope.wgsl: rope_q, rope_k (forward, in
place) and rope_q_backward, rope_k_backward (the transpose rotation, in place on the gradient).

Convention: interleaved pairs (2i, 2i+1) of each head vector, theta_i = rope_base^(-2i/head_dim),
as in RoFormer and Meta's LLaMA; the token at sequence index s sits at position s + pos_offset.
Layout [seq, heads, head_dim] row-major, heads = n_heads for Q and n_kv_heads for K. Uniforms:
dims = vec4<u32>(seq, heads, head_dim, pos_offset), params = vec4<f32>(rope_base, 0, 0, 0) with
rope_base fixed at 10000 (the seeds' value; it is a model constant, not a size). One thread per
pair: grid ceil(seq * heads * head_dim / 2 / 256).
"""

from __future__ import annotations

import math

import numpy as np

from workbench.errors import UserError
from workbench.specs.base import Arrays, Buffer, Cost, Dim, Dims, KernelSpec, Tol
from workbench.specs.refs import rope as ref

FILE = "11_rope.wgsl"
WG = 256
ROPE_BASE = 10000.0

# The error is in the angle, not in the rotation: pos * theta_i is formed in f32 from
# theta_i = pow(base, -2i/head_dim), whose WGSL error bound is several ULP, so the angle is off by
# a few 2^-24 * pos * theta_i and outputs move by |pair| times that (|pair| < 5 for N(0,1)
# inputs). Measured max |got - ref| at the default shape, positions 0..511: 1.2e-4 on lavapipe,
# 1.9e-4 on an H100; positions up to 2011: 6.8e-4 (H100); up to 3511: 1.4e-3 (H100). The backward
# turns by the same angles, so it shares the bound.
ROTATION_TOL = Tol(
    rtol=1e-5,
    atol=1e-3,
    why="f32 angle pos * theta_i: theta_i = pow(base, -2i/head_dim) is a few ULP off, so the angle "
    "error grows linearly with the position and moves outputs by |pair| times it (measured "
    "1.9e-4 at positions < 512 and 6.8e-4 at < 2012 on an H100, less on lavapipe); 1e-3 covers "
    "positions (seq + pos_offset) below about 2500, farther ones need a looser atol",
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


def _rope_spec(
    name: str, binding: str, heads: str, default_heads: int, backward: bool
) -> KernelSpec:
    """The four kernels differ only in the binding's name, the head count and the direction."""
    apply = ref.rope_backward if backward else ref.rope_forward

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
        pairs = dims["seq"] * dims[heads] * (dims["head_dim"] // 2)
        return (math.ceil(pairs / WG), 1, 1)

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
        file=FILE,
        dims=_dims(heads, default_heads),
        buffers=buffers,
        inputs=inputs,
        uniforms=uniforms,
        grid=grid,
        outputs=(binding,),
        reference=reference,
        tolerances={binding: ROTATION_TOL},
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
    _rope_spec("rope_q", "Q", "n_heads", 12, backward=False),
    _rope_spec("rope_k", "K", "n_kv_heads", 4, backward=False),
    _rope_spec("rope_q_backward", "dQ", "n_heads", 12, backward=True),
    _rope_spec("rope_k_backward", "dK", "n_kv_heads", 4, backward=True),
]
