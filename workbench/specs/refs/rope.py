"""Float64 references for rotary position embedding (11_rope.wgsl), written from the definition.

RoPE (Su et al., RoFormer; Meta LLaMA) with interleaved pairs: for a vector x of head_dim elements
at position p, pair i = (x[2i], x[2i+1]) is multiplied by the 2-D rotation R(p * theta_i) with
theta_i = base^(-2i / head_dim), i in [0, head_dim / 2):

    R(a) = [[cos a, -sin a],
            [sin a,  cos a]]

The backward maps dL/dx' to dL/dx = R(a)^T dL/dx', since x' = R(a) x is linear in x. Arrays are
laid out [seq, heads, head_dim]; the token at sequence index s sits at position s + pos_offset.
"""

from __future__ import annotations

import numpy as np


def rope_rotations(seq: int, head_dim: int, pos_offset: int, base: float) -> np.ndarray:
    """The rotation matrices R(p * theta_i), shaped [seq, head_dim // 2, 2, 2], in float64."""
    if head_dim % 2:
        raise ValueError(f"RoPE needs an even head_dim, got {head_dim}")
    pos = np.arange(seq, dtype=np.float64) + float(pos_offset)
    theta = float(base) ** (-np.arange(0, head_dim, 2, dtype=np.float64) / head_dim)
    angle = pos[:, None] * theta[None, :]
    c, s = np.cos(angle), np.sin(angle)
    return np.stack([np.stack([c, -s], axis=-1), np.stack([s, c], axis=-1)], axis=-2)


def _apply(x: np.ndarray, rot: np.ndarray) -> np.ndarray:
    """Applies rot [seq, half, 2, 2] to each pair of x [seq, heads, head_dim]."""
    x = np.asarray(x, dtype=np.float64)
    seq, heads, head_dim = x.shape
    pairs = x.reshape(seq, heads, head_dim // 2, 2)
    out: np.ndarray = np.einsum("sipq,shiq->ship", rot, pairs)
    return out.reshape(seq, heads, head_dim)


def rope_forward(x: np.ndarray, pos_offset: int, base: float) -> np.ndarray:
    """x' = R x for x [seq, heads, head_dim] (Q with n_heads, K with n_kv_heads)."""
    seq, _, head_dim = np.shape(x)
    return _apply(x, rope_rotations(seq, head_dim, pos_offset, base))


def rope_backward(grad: np.ndarray, pos_offset: int, base: float) -> np.ndarray:
    """dL/dx = R^T dL/dx' for the gradient of the rotated tensor, shaped [seq, heads, head_dim]."""
    seq, _, head_dim = np.shape(grad)
    rot = rope_rotations(seq, head_dim, pos_offset, base)
    return _apply(grad, np.swapaxes(rot, -1, -2))
