"""Row normalisations over the last axis, forward and backward: softmax (with ggml's scale, mask
and ALiBi slope), RMSNorm and LayerNorm (each with optional weight and bias).

The backward forms are the closed-form derivatives: for y = x / rms(x), rms = sqrt(mean(x^2) + eps),
dx = (dy - y * mean(dy * y)) / rms; for LayerNorm with xhat = (x - mean) / sigma,
dx = (g - mean(g) - xhat * mean(g * xhat)) / sigma with g = dy * weight.
"""

from __future__ import annotations

import numpy as np

from workbench.specs.std.common import StdError, as_f64, tile_to


def alibi_slopes(n_head: int, max_bias: float) -> np.ndarray:
    """ALiBi's per-head slopes as ggml computes them (1 for every head when max_bias is 0)."""
    if max_bias <= 0:
        return np.ones(n_head)
    n_log2 = 1 << int(np.floor(np.log2(n_head)))
    m0 = 2.0 ** (-max_bias / n_log2)
    m1 = 2.0 ** (-max_bias / 2.0 / n_log2)
    h = np.arange(n_head)
    return np.asarray(np.where(h < n_log2, m0 ** (h + 1), m1 ** (2 * (h - n_log2) + 1)))


def softmax(
    x: np.ndarray,
    mask: np.ndarray | None = None,
    scale: float = 1.0,
    max_bias: float = 0.0,
) -> dict[str, np.ndarray]:
    """y = softmax(scale * x + slope * mask) over the last axis. `mask` is tiled over x's rows
    (ggml's broadcast); with max_bias > 0 the slope is ALiBi's for the head, the third axis from
    the end of x (1 otherwise)."""
    x = as_f64(x) * float(scale)
    if mask is not None:
        m = tile_to(as_f64(mask), x.shape, "mask")
        if max_bias > 0:
            if x.ndim < 3:
                raise StdError(
                    "softmax: ALiBi (max_bias > 0) needs a head axis: x[..., head, row, col]"
                )
            slope = alibi_slopes(x.shape[-3], float(max_bias)).reshape(-1, 1, 1)
            m = m * slope
        x = x + m
    with np.errstate(invalid="ignore", over="ignore"):
        e = np.exp(x - np.max(x, axis=-1, keepdims=True))
        return {"y": e / np.sum(e, axis=-1, keepdims=True)}


def softmax_back(y: np.ndarray, dy: np.ndarray, scale: float = 1.0) -> dict[str, np.ndarray]:
    """dx for y = softmax(scale * x): scale * y * (dy - sum(dy * y))."""
    y, dy = as_f64(y), as_f64(dy)
    return {"dx": float(scale) * y * (dy - np.sum(dy * y, axis=-1, keepdims=True))}


def _affine(y: np.ndarray, weight: np.ndarray | None, bias: np.ndarray | None) -> np.ndarray:
    if weight is not None:
        y = y * tile_to(as_f64(weight), y.shape, "weight")
    if bias is not None:
        y = y + tile_to(as_f64(bias), y.shape, "bias")
    return y


def rms_norm(
    x: np.ndarray,
    eps: float = 1e-6,
    weight: np.ndarray | None = None,
    bias: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """y = x / sqrt(mean(x^2) + eps) over the last axis, times weight, plus bias (when given)."""
    x = as_f64(x)
    rms = np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + float(eps))
    return {"y": _affine(x / rms, weight, bias)}


def rms_norm_back(
    x: np.ndarray, dy: np.ndarray, eps: float = 1e-6, weight: np.ndarray | None = None
) -> dict[str, np.ndarray]:
    """dx of rms_norm (weight applied to dy first when given)."""
    x, dy = as_f64(x), as_f64(dy)
    if weight is not None:
        dy = dy * tile_to(as_f64(weight), dy.shape, "weight")
    rms = np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + float(eps))
    y = x / rms
    return {"dx": (dy - y * np.mean(dy * y, axis=-1, keepdims=True)) / rms}


def layer_norm(
    x: np.ndarray,
    eps: float = 1e-5,
    weight: np.ndarray | None = None,
    bias: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """y = (x - mean) / sqrt(var + eps) over the last axis (ggml's norm), times weight, plus bias."""
    x = as_f64(x)
    mu = np.mean(x, axis=-1, keepdims=True)
    var = np.mean((x - mu) ** 2, axis=-1, keepdims=True)
    return {"y": _affine((x - mu) / np.sqrt(var + float(eps)), weight, bias)}


def layer_norm_back(
    x: np.ndarray, dy: np.ndarray, eps: float = 1e-5, weight: np.ndarray | None = None
) -> dict[str, np.ndarray]:
    """dx of layer_norm, and dweight, dbias summed over every row."""
    x, dy = as_f64(x), as_f64(dy)
    mu = np.mean(x, axis=-1, keepdims=True)
    sigma = np.sqrt(np.mean((x - mu) ** 2, axis=-1, keepdims=True) + float(eps))
    xhat = (x - mu) / sigma
    g = dy if weight is None else dy * tile_to(as_f64(weight), dy.shape, "weight")
    dx = g - np.mean(g, axis=-1, keepdims=True) - xhat * np.mean(g * xhat, axis=-1, keepdims=True)
    rows = tuple(range(x.ndim - 1))
    return {
        "dx": dx / sigma,
        "dweight": np.sum(dy * xhat, axis=rows),
        "dbias": np.sum(dy, axis=rows),
    }
