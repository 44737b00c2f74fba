"""Elementwise float64 references: unary activations, binary ops with ggml's broadcasting, casts.

ggml broadcasts the second operand of a binary op by *tiling*: along every axis the first
operand's size must be a multiple of the second's, and element i reads the second at i mod its
size (NumPy broadcasting is the special case of size 1). Arrays are outermost axis first.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from workbench.specs.std.common import StdError, as_f64, tile_to

Unary = Callable[..., np.ndarray]


def _gelu_tanh(x: np.ndarray) -> np.ndarray:
    c = math.sqrt(2.0 / math.pi)
    return 0.5 * x * (1.0 + np.tanh(c * (x + 0.044715 * x**3)))


def _gelu_erf(x: np.ndarray) -> np.ndarray:
    erf = np.vectorize(math.erf, otypes=[np.float64])
    return np.asarray(0.5 * x * (1.0 + erf(x / math.sqrt(2.0))), dtype=np.float64)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return np.asarray(1.0 / (1.0 + np.exp(-x)), dtype=np.float64)


UNARY: dict[str, Unary] = {
    "abs": np.abs,
    "neg": np.negative,
    "sgn": np.sign,
    "step": lambda x: (x > 0).astype(np.float64),
    "relu": lambda x: np.maximum(x, 0.0),
    "tanh": np.tanh,
    "sigmoid": _sigmoid,
    "silu": lambda x: x * _sigmoid(x),
    "gelu": _gelu_tanh,
    "gelu_erf": _gelu_erf,
    "gelu_quick": lambda x: x * _sigmoid(1.702 * x),
    "elu": lambda x: np.asarray(np.where(x > 0, x, np.expm1(x))),
    "hardsigmoid": lambda x: np.clip((x + 3.0) / 6.0, 0.0, 1.0),
    "hardswish": lambda x: x * np.clip((x + 3.0) / 6.0, 0.0, 1.0),
    "exp": np.exp,
    "log": np.log,
    "sqr": np.square,
    "sqrt": np.sqrt,
    "sin": np.sin,
    "cos": np.cos,
    "floor": np.floor,
    "ceil": np.ceil,
    "round": lambda x: np.where(x >= 0, np.floor(x + 0.5), np.ceil(x - 0.5)),
    "trunc": np.trunc,
}

BINARY: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "div": np.divide,
    "max": np.maximum,
    "min": np.minimum,
}


def unary(x: np.ndarray, op: str = "silu") -> dict[str, np.ndarray]:
    """y = op(x) for one of `UNARY`'s ops."""
    if op not in UNARY:
        raise StdError(f"unknown unary op {op!r}; the ops are {', '.join(UNARY)}")
    with np.errstate(all="ignore"):
        return {"y": UNARY[op](as_f64(x))}


def leaky_relu(x: np.ndarray, slope: float = 0.01) -> dict[str, np.ndarray]:
    """y = x for x > 0, slope * x otherwise."""
    x = as_f64(x)
    return {"y": np.where(x > 0, x, float(slope) * x)}


def clamp(x: np.ndarray, lo: float, hi: float) -> dict[str, np.ndarray]:
    """y = min(max(x, lo), hi)."""
    return {"y": np.minimum(np.maximum(as_f64(x), float(lo)), float(hi))}


def scale(x: np.ndarray, scale: float = 1.0, bias: float = 0.0) -> dict[str, np.ndarray]:
    """y = scale * x + bias."""
    return {"y": float(scale) * as_f64(x) + float(bias)}


def binary(a: np.ndarray, b: np.ndarray, op: str = "add") -> dict[str, np.ndarray]:
    """y = a OP b, b tiled over a as ggml broadcasts (each of a's sizes a multiple of b's)."""
    if op not in BINARY:
        raise StdError(f"unknown binary op {op!r}; the ops are {', '.join(BINARY)}")
    a = as_f64(a)
    with np.errstate(all="ignore"):
        return {"y": BINARY[op](a, tile_to(as_f64(b), a.shape, "b"))}


def cast(x: np.ndarray, dtype: str = "f16") -> dict[str, np.ndarray]:
    """y = x rounded to `dtype` (f16 or f32, round to nearest even) and read back as float64."""
    np_dtype = {"f16": np.float16, "f32": np.float32, "f64": np.float64}.get(dtype)
    if np_dtype is None:
        raise StdError(f"cast: dtype {dtype!r} is not one of f16, f32, f64")
    with np.errstate(over="ignore"):
        return {"y": as_f64(x).astype(np_dtype).astype(np.float64)}
