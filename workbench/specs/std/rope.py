"""Rotary position embedding as ggml defines it: the normal (adjacent pairs) and neox (halves)
modes, a rotated prefix of `n_dims` lanes, frequency scaling, per-pair frequency factors, YaRN's
ramp between interpolated and extrapolated angles, and the backward (the inverse rotation).

x is laid out [..., token, head, lane] (ggml's ne = [lane, head, token, ...]); `pos` gives each
token's position. Pair i turns by theta_i = pos * base^(-2i / n_dims) / factor_i, scaled by
freq_scale (mixed back towards the unscaled angle by YaRN's ramp when ext_factor != 0); cos and sin
are multiplied by attn_factor (and by 1 + 0.1 ln(1/freq_scale) under YaRN).
"""

from __future__ import annotations

import math

import numpy as np

from workbench.specs.std.common import StdError, as_f64

MODES = ("normal", "neox")


def _angles(
    pos: np.ndarray,
    n_pairs: int,
    n_dims: int,
    freq_base: float,
    freq_scale: float,
    ext_factor: float,
    corr_dims: tuple[float, float],
    freq_factors: np.ndarray | None,
) -> tuple[np.ndarray, float]:
    i = np.arange(n_pairs, dtype=np.float64)
    extrap = pos[:, None] * float(freq_base) ** (-2.0 * i / n_dims)[None, :]
    if freq_factors is not None:
        extrap = extrap / as_f64(freq_factors).reshape(-1)[:n_pairs][None, :]
    theta = float(freq_scale) * extrap
    mscale = 1.0
    if ext_factor != 0.0:
        lo, hi = float(corr_dims[0]), float(corr_dims[1])
        ramp = 1.0 - np.clip((i - lo) / max(0.001, hi - lo), 0.0, 1.0)
        mix = ramp * float(ext_factor)
        theta = theta * (1.0 - mix) + extrap * mix
        mscale = 1.0 + 0.1 * math.log(1.0 / float(freq_scale))
    return theta, mscale


def rope(
    x: np.ndarray,
    pos: np.ndarray,
    n_dims: int | None = None,
    mode: str = "normal",
    freq_base: float = 10000.0,
    freq_scale: float = 1.0,
    ext_factor: float = 0.0,
    attn_factor: float = 1.0,
    corr_dims: tuple[float, float] = (0.0, 0.0),
    freq_factors: np.ndarray | None = None,
    backward: bool = False,
) -> dict[str, np.ndarray]:
    """y = x with its first n_dims lanes of each head rotated (the rest copied)."""
    x = as_f64(x)
    if mode not in MODES:
        raise StdError(f"rope: mode {mode!r} is not one of {', '.join(MODES)}")
    if x.ndim < 3:
        raise StdError("rope: x needs axes [..., token, head, lane]")
    d = x.shape[-1]
    n_dims = d if n_dims is None else int(n_dims)
    if n_dims % 2 or not 0 < n_dims <= d:
        raise StdError(f"rope: n_dims {n_dims} must be even and in 1..{d}")
    pos = as_f64(pos).reshape(-1)
    if pos.size != x.shape[-3]:
        raise StdError(f"rope: {pos.size} positions for {x.shape[-3]} tokens")
    half = n_dims // 2
    theta, mscale = _angles(
        pos, half, n_dims, freq_base, freq_scale, ext_factor, corr_dims, freq_factors
    )
    c = (np.cos(theta) * mscale * float(attn_factor))[:, None, :]  # [token, 1, pair]
    s = (np.sin(theta) * mscale * float(attn_factor))[:, None, :]
    if backward:
        s = -s
    y = x.copy()
    if mode == "normal":
        first, second = slice(0, n_dims, 2), slice(1, n_dims, 2)
    else:
        first, second = slice(0, half), slice(half, n_dims)
    x0, x1 = x[..., first], x[..., second]
    y[..., first] = x0 * c - x1 * s
    y[..., second] = x0 * s + x1 * c
    return {"y": y}
