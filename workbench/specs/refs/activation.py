"""Float64 references for the FFN activations and their derivatives.

Written from the public definitions, not from the WGSL:

- GeLU, tanh form (PyTorch's `gelu(approximate="tanh")`, GPT-2, llm.c):
  `gelu(x) = 0.5 x (1 + tanh(u))`, `u = sqrt(2/pi) (x + 0.044715 x^3)`.
  Derivative by the product and chain rules:
  `gelu'(x) = 0.5 (1 + tanh(u)) + 0.5 x sech^2(u) sqrt(2/pi) (1 + 3 * 0.044715 x^2)`.
- SiLU (Swish-1, PyTorch's `silu`): `silu(x) = x sigmoid(x)`, `silu'(x) = s (1 + x (1 - s))`.
- SwiGLU combine: `hidden = silu(gate) * up`; its gradients are
  `d gate = d hidden * up * silu'(gate)` and `d up = d hidden * silu(gate)`.

The elementwise functions (`sigmoid`, `silu`, `silu_grad`, `gelu`, `gelu_grad`, `swiglu`) are
plain NumPy and return the mathematical value, with the limits at +-Inf (0 or 1, or +-Inf for
the identity-like tails) and NaN for NaN; they are reusable as forward functions for gradient
checks. The `*_ref` functions add what the kernels promise on top of the mathematics: forward
results beyond the f32 range become +-Inf (what an f32 result is), and backward results pass
through `guarded`, the reference twin of the kernels' nan_guard.
"""

from __future__ import annotations

import numpy as np

SQRT_2_OVER_PI = float(np.sqrt(2.0 / np.pi))
GELU_COEFF = 0.044715
F32_MAX = float(np.finfo(np.float32).max)


def _f64(x: np.ndarray) -> np.ndarray:
    return np.asarray(x, dtype=np.float64)


def sigmoid(x: np.ndarray) -> np.ndarray:
    """1 / (1 + exp(-x)) without overflow: exp only sees -|x|."""
    x = _f64(x)
    e = np.exp(-np.abs(x))
    s: np.ndarray = np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))
    return s


def _sigmoid_neg(x: np.ndarray) -> np.ndarray:
    """1 - sigmoid(x) = sigmoid(-x), without the cancellation of 1 - s for large x."""
    x = _f64(x)
    e = np.exp(-np.abs(x))
    s: np.ndarray = np.where(x >= 0, e / (1.0 + e), 1.0 / (1.0 + e))
    return s


def silu(x: np.ndarray) -> np.ndarray:
    """x sigmoid(x); silu(-Inf) = 0 (the limit), silu(+Inf) = +Inf."""
    x = _f64(x)
    with np.errstate(invalid="ignore"):
        y = x * sigmoid(x)
    return np.where(x == -np.inf, 0.0, y)


def silu_grad(x: np.ndarray) -> np.ndarray:
    """d silu / dx = s (1 + x (1 - s)); the limits are 1 at +Inf and 0 at -Inf."""
    x = _f64(x)
    with np.errstate(invalid="ignore"):
        d = sigmoid(x) * (1.0 + x * _sigmoid_neg(x))
    return np.where(np.isinf(x), np.where(x > 0, 1.0, 0.0), d)


def _gelu_inner(x: np.ndarray) -> np.ndarray:
    # f32 inputs cube to at most ~4e115, far inside float64's range.
    return SQRT_2_OVER_PI * (x + GELU_COEFF * x**3)


def gelu(x: np.ndarray) -> np.ndarray:
    """Tanh-form GeLU; gelu(-Inf) = 0 (the limit), gelu(+Inf) = +Inf."""
    x = _f64(x)
    with np.errstate(invalid="ignore"):
        y = 0.5 * x * (1.0 + np.tanh(_gelu_inner(x)))
    return np.where(x == -np.inf, 0.0, y)


def gelu_grad(x: np.ndarray) -> np.ndarray:
    """d gelu / dx for the tanh form; the limits are 1 at +Inf and 0 at -Inf."""
    x = _f64(x)
    with np.errstate(invalid="ignore"):
        t = np.tanh(_gelu_inner(x))
        sech2 = (1.0 - t) * (1.0 + t)
        d_inner = SQRT_2_OVER_PI * (1.0 + 3.0 * GELU_COEFF * x * x)
        d = 0.5 * (1.0 + t) + 0.5 * x * sech2 * d_inner
    return np.where(np.isinf(x), np.where(x > 0, 1.0, 0.0), d)


def swiglu(gate: np.ndarray, up: np.ndarray) -> np.ndarray:
    """silu(gate) * up."""
    with np.errstate(invalid="ignore", over="ignore"):
        out: np.ndarray = silu(gate) * _f64(up)
    return out


def as_f32_range(y: np.ndarray) -> np.ndarray:
    """Values past the largest f32 become +-Inf, as an f32 result would; NaN stays NaN."""
    with np.errstate(invalid="ignore"):
        return np.where(np.abs(y) > F32_MAX, np.copysign(np.inf, y), y)


def guarded(value: np.ndarray, *depends_on: np.ndarray) -> np.ndarray:
    """The backward kernels' rule: 0 wherever an input the value depends on is not finite, or the
    value itself is not finite in f32 (NaN, +-Inf, or beyond the f32 range); else the value."""
    ok = np.ones(np.shape(value), dtype=bool)
    for arr in depends_on:
        ok &= np.isfinite(arr)
    with np.errstate(invalid="ignore"):
        ok &= np.abs(value) <= F32_MAX
    return np.where(ok, value, 0.0)


def gelu_inplace_ref(x: np.ndarray) -> np.ndarray:
    """Forward GeLU as the kernel promises it: the mathematics, in the f32 range."""
    return as_f32_range(gelu(x))


def swiglu_combine_ref(gate: np.ndarray, up: np.ndarray) -> np.ndarray:
    """Forward SwiGLU combine as the kernel promises it: the mathematics, in the f32 range."""
    return as_f32_range(swiglu(gate, up))


def ffn_gelu_backward_ref(grad_hidden: np.ndarray, pre_gelu: np.ndarray) -> np.ndarray:
    """grad_pre = grad_hidden * gelu'(pre_gelu), guarded."""
    g = _f64(grad_hidden)
    with np.errstate(invalid="ignore", over="ignore"):
        value = g * gelu_grad(pre_gelu)
    return guarded(value, grad_hidden, pre_gelu)


def ffn_swiglu_backward_ref(
    grad_hidden: np.ndarray, gate: np.ndarray, up: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(grad_gate, grad_up) = (g * up * silu'(gate), g * silu(gate)), each guarded."""
    g = _f64(grad_hidden)
    with np.errstate(invalid="ignore", over="ignore"):
        grad_gate = g * _f64(up) * silu_grad(gate)
        grad_up = g * silu(gate)
    return guarded(grad_gate, grad_hidden, gate, up), guarded(grad_up, grad_hidden, gate)
