"""Float64 references for the causal depthwise conv1d (seed 002, causal-conv1d convention).

Convention, as in the public causal-conv1d project (Mamba): x is (batch, dim, seqlen), weight
(dim, width), bias (dim), and

    pre[b, c, t] = bias[c] + sum_{k=0}^{W-1} weight[c, k] * x[b, c, t - (W - 1) + k],  x[.., <0] = 0
    out[b, c, t] = silu(pre[b, c, t]) if SiLU is on, else pre[b, c, t]

so the weight's last tap multiplies the current step (seed 002 writes the same sum with the taps
reversed: w_seed[k] = weight[W - 1 - k]). The backward follows from the chain rule:

    g = dL/dpre = dout * silu'(pre),  silu'(z) = s(z) * (1 + z * (1 - s(z))),  s = sigmoid
    dx[b, c, s]    = sum_k weight[c, k] * g[b, c, s + (W - 1) - k]   (g past seqlen is 0)
    dweight[c, k]  = sum_{b, t} x[b, c, t - (W - 1) + k] * g[b, c, t]
    dbias[c]       = sum_{b, t} g[b, c, t]

Bias may be None (off): it is then 0 and its gradient is reported as zeros.

Special values: the zero padding (x before t = 0, g past seqlen) is multiplied like any input,
as causal-conv1d's CUDA forward does (its first chunk's history is zeros, run through every tap)
and F.conv1d(padding=W-1) does where it materialises the padding, so a NaN or Inf weight reaches
every step of its channel, the first W - 1 too (Inf x 0 = NaN), and a NaN or Inf in g reaches
dweight through the padded x.
"""

from __future__ import annotations

import numpy as np


def _sigmoid(z: np.ndarray) -> np.ndarray:
    # Split by sign so exp never overflows (float64 would still warn on exp(+800)).
    out = np.empty_like(z)
    pos = z >= 0
    out[pos] = 1.0 / (1.0 + np.exp(-z[pos]))
    e = np.exp(z[~pos])
    out[~pos] = e / (1.0 + e)
    return out


def _left_padded(x: np.ndarray, width: int) -> np.ndarray:
    """x with W - 1 zeros before t = 0: padded[..., j] = x[..., j - (W - 1)]."""
    pad = np.zeros((*x.shape[:-1], width - 1), dtype=np.float64)
    return np.concatenate([pad, x.astype(np.float64)], axis=-1)


def causal_conv1d_pre(x: np.ndarray, weight: np.ndarray, bias: np.ndarray | None) -> np.ndarray:
    """The pre-activation `pre` (batch, dim, seqlen) in float64."""
    seqlen = x.shape[-1]
    w = weight.astype(np.float64)
    width = w.shape[-1]
    xp = _left_padded(x, width)
    pre = np.zeros(x.shape, dtype=np.float64)
    for k in range(width):
        pre += w[None, :, k, None] * xp[..., k : k + seqlen]
    if bias is not None:
        pre += bias.astype(np.float64)[None, :, None]
    return pre


def causal_conv1d_fwd(
    x: np.ndarray, weight: np.ndarray, bias: np.ndarray | None, silu: bool
) -> np.ndarray:
    """`out` (batch, dim, seqlen) in float64."""
    pre = causal_conv1d_pre(x, weight, bias)
    return pre * _sigmoid(pre) if silu else pre


def causal_conv1d_bwd(
    x: np.ndarray,
    weight: np.ndarray,
    bias: np.ndarray | None,
    dout: np.ndarray,
    silu: bool,
) -> dict[str, np.ndarray]:
    """`dx` (batch, dim, seqlen), `dweight` (dim, width) and `dbias` (dim) in float64."""
    seqlen = x.shape[-1]
    w = weight.astype(np.float64)
    width = w.shape[-1]
    g = dout.astype(np.float64)
    if silu:
        pre = causal_conv1d_pre(x, weight, bias)
        s = _sigmoid(pre)
        g = g * s * (1.0 + pre * (1.0 - s))

    # dx[s] reads g up to W - 1 steps ahead; g past the end is zero.
    gp = np.concatenate([g, np.zeros((*g.shape[:-1], width - 1))], axis=-1)
    dx = np.zeros(x.shape, dtype=np.float64)
    for k in range(width):
        shift = width - 1 - k
        dx += w[None, :, k, None] * gp[..., shift : shift + seqlen]

    xp = _left_padded(x, width)
    dweight = np.stack(
        [np.einsum("bct,bct->c", xp[..., k : k + seqlen], g) for k in range(width)], axis=-1
    )
    dbias = g.sum(axis=(0, 2)) if bias is not None else np.zeros(w.shape[0])
    return {"dx": dx, "dweight": dweight, "dbias": dbias}
