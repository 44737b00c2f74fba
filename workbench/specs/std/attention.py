"""Scaled dot-product attention (what flash-attention kernels compute, in one float64 pass).

q [batch, head, query, d], k [batch, kv_head, key, d], v [batch, kv_head, key, dv]; query heads
share K/V heads in consecutive groups (GQA/MQA). scores = scale * q k^T, optionally soft-capped
(softcap * tanh(scores / softcap)), plus slope * mask (mask tiled over [.., query, key]; the
slope ALiBi's for the head when max_bias > 0), or -inf above the diagonal when causal; y = softmax
(scores) v, laid out [batch, head, query, dv], or [batch, query, head, dv] when layout = "bshd"
(ggml's flash_attn_ext output).
"""

from __future__ import annotations

import math

import numpy as np

from workbench.specs.std.common import StdError, as_f64, repeat_to, tile_to
from workbench.specs.std.norms import alibi_slopes


def flash_attn(
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    mask: np.ndarray | None = None,
    scale: float | None = None,
    softcap: float = 0.0,
    max_bias: float = 0.0,
    causal: bool = False,
    layout: str = "bhsd",
) -> dict[str, np.ndarray]:
    """y = softmax(scale * q k^T (+ mask)) v per head; also lse, the rows' log-sum-exp."""
    q, k, v = as_f64(q), as_f64(k), as_f64(v)
    if q.ndim != 4 or k.ndim != 4 or v.ndim != 4:
        raise StdError("flash_attn: q, k, v need axes [batch, head, position, d]")
    if layout not in ("bhsd", "bshd"):
        raise StdError(f"flash_attn: layout {layout!r} is not bhsd or bshd")
    h = q.shape[1]
    k = repeat_to(k, h, 1, "k heads")
    v = repeat_to(v, h, 1, "v heads")
    sc = 1.0 / math.sqrt(q.shape[-1]) if scale is None else float(scale)
    s = sc * np.einsum("bhqd,bhkd->bhqk", q, k)
    if softcap:
        s = float(softcap) * np.tanh(s / float(softcap))
    if mask is not None:
        m = tile_to(as_f64(mask), s.shape, "mask")
        s = s + alibi_slopes(h, float(max_bias)).reshape(1, -1, 1, 1) * m
    if causal:
        nq, nk = s.shape[-2:]
        s = np.where(np.arange(nk)[None, :] > np.arange(nq)[:, None] + (nk - nq), -np.inf, s)
    top = np.max(s, axis=-1, keepdims=True)
    with np.errstate(invalid="ignore"):
        e = np.exp(s - top)
        total = np.sum(e, axis=-1, keepdims=True)
        y = np.einsum("bhqk,bhkd->bhqd", e / total, v)
    lse = (top + np.log(total))[..., 0]
    if layout == "bshd":
        y = np.swapaxes(y, 1, 2)
    return {"y": y, "lse": lse}
