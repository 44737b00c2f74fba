"""Reductions and scans over the last axis: sum, mean, argmax (the first maximum), cumsum."""

from __future__ import annotations

import numpy as np

from workbench.specs.std.common import as_f64


def sum_rows(x: np.ndarray) -> dict[str, np.ndarray]:
    """y = sum over the last axis."""
    return {"y": np.sum(as_f64(x), axis=-1)}


def sum_all(x: np.ndarray) -> dict[str, np.ndarray]:
    """y = the sum of every element, as an array of one."""
    return {"y": np.array([np.sum(as_f64(x))])}


def mean(x: np.ndarray) -> dict[str, np.ndarray]:
    """y = mean over the last axis."""
    return {"y": np.mean(as_f64(x), axis=-1)}


def argmax(x: np.ndarray) -> dict[str, np.ndarray]:
    """y = the index of the first maximum of each row."""
    return {"y": np.argmax(as_f64(x), axis=-1).astype(np.float64)}


def cumsum(x: np.ndarray) -> dict[str, np.ndarray]:
    """y = the inclusive prefix sum of each row."""
    return {"y": np.cumsum(as_f64(x), axis=-1)}
