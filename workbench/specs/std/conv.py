"""Convolutions (cross-correlation, as deep-learning frameworks define them), 1-D and 2-D, full
and depthwise, with stride, zero padding and dilation.

1-D: x [batch, channel, length], w [out, in, k] (depthwise: [channel, k]);
2-D: x [batch, channel, h, w], w [out, in, kh, kw] (depthwise: [channel, kh, kw]).
An x without the batch axis is taken as one batch and returned without it.
"""

from __future__ import annotations

import numpy as np

from workbench.specs.std.common import StdError, as_f64


def _out_size(n: int, k: int, stride: int, pad: int, dil: int) -> int:
    size = (n + 2 * pad - dil * (k - 1) - 1) // stride + 1
    if size < 1:
        raise StdError(f"conv: no output: length {n}, kernel {k}, pad {pad}, dilation {dil}")
    return size


def _conv(
    x: np.ndarray,
    w: np.ndarray,
    stride: tuple[int, ...],
    pad: tuple[int, ...],
    dil: tuple[int, ...],
    depthwise: bool,
    bias: np.ndarray | None,
) -> np.ndarray:
    nsp = len(stride)
    x = as_f64(x)
    squeeze = x.ndim == nsp + 1
    if squeeze:
        x = x[None]
    if x.ndim != nsp + 2:
        raise StdError(f"conv: x needs {nsp + 2} axes [batch, channel, ...], got {x.ndim}")
    w = as_f64(w)
    if depthwise:
        if w.ndim != nsp + 1 or w.shape[0] != x.shape[1]:
            raise StdError(f"conv: a depthwise w is [channel, k...] with {x.shape[1]} channels")
    elif w.ndim != nsp + 2 or w.shape[1] != x.shape[1]:
        raise StdError(f"conv: w must be [out, {x.shape[1]} (in), k...], got {w.shape}")
    ks = w.shape[-nsp:]
    outs = tuple(_out_size(x.shape[2 + i], ks[i], stride[i], pad[i], dil[i]) for i in range(nsp))
    xp = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in pad])
    y = np.zeros((x.shape[0], w.shape[0], *outs))
    for offs in np.ndindex(*ks):
        window = tuple(
            slice(offs[i] * dil[i], offs[i] * dil[i] + stride[i] * (outs[i] - 1) + 1, stride[i])
            for i in range(nsp)
        )
        patch = xp[(slice(None), slice(None), *window)]  # [b, c, out...]
        if depthwise:
            y += patch * w[(slice(None), *offs)].reshape((1, -1) + (1,) * nsp)
        else:
            y += np.einsum("bc...,oc->bo...", patch, w[(slice(None), slice(None), *offs)])
    if bias is not None:
        y += as_f64(bias).reshape((1, -1) + (1,) * nsp)
    return y[0] if squeeze else y


def conv1d(
    x: np.ndarray,
    w: np.ndarray,
    bias: np.ndarray | None = None,
    stride: int = 1,
    padding: int = 0,
    dilation: int = 1,
) -> dict[str, np.ndarray]:
    """y[b, o, t] = sum_{c, k} x[b, c, t*stride + k*dilation - padding] * w[o, c, k] (+ bias[o])."""
    return {"y": _conv(x, w, (int(stride),), (int(padding),), (int(dilation),), False, bias)}


def conv1d_dw(
    x: np.ndarray,
    w: np.ndarray,
    bias: np.ndarray | None = None,
    stride: int = 1,
    padding: int = 0,
    dilation: int = 1,
) -> dict[str, np.ndarray]:
    """Depthwise: y[b, c, t] = sum_k x[b, c, t*stride + k*dilation - padding] * w[c, k]."""
    return {"y": _conv(x, w, (int(stride),), (int(padding),), (int(dilation),), True, bias)}


def conv2d(
    x: np.ndarray,
    w: np.ndarray,
    bias: np.ndarray | None = None,
    stride: int = 1,
    padding: int = 0,
    dilation: int = 1,
) -> dict[str, np.ndarray]:
    """y[b, o, i, j] = sum_{c, p, q} x[b, c, i*s + p*d - pad, j*s + q*d - pad] * w[o, c, p, q]."""
    s, p, d = (int(stride),) * 2, (int(padding),) * 2, (int(dilation),) * 2
    return {"y": _conv(x, w, s, p, d, False, bias)}


def conv2d_dw(
    x: np.ndarray,
    w: np.ndarray,
    bias: np.ndarray | None = None,
    stride: int = 1,
    padding: int = 0,
    dilation: int = 1,
) -> dict[str, np.ndarray]:
    """Depthwise 2-D: each channel with its own [kh, kw] filter."""
    s, p, d = (int(stride),) * 2, (int(padding),) * 2, (int(dilation),) * 2
    return {"y": _conv(x, w, s, p, d, True, bias)}
