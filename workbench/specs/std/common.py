"""What the reference library's modules share: its error, float64 conversion, ggml tiling."""

from __future__ import annotations

import numpy as np

from workbench.errors import UserError


class StdError(UserError):
    """A reference of the library called with arguments it cannot use; the message says which."""


def as_f64(x: object) -> np.ndarray:
    return np.asarray(x, dtype=np.float64)


def tile_to(b: np.ndarray, shape: tuple[int, ...], what: str) -> np.ndarray:
    """`b` repeated whole along each axis until it has `shape` (ggml's broadcast of a source
    over a bigger one: index i reads i mod size). Missing leading axes count as size 1."""
    if b.ndim > len(shape):
        raise StdError(f"{what} has {b.ndim} axes, more than the {len(shape)} it is tiled over")
    b = b.reshape((1,) * (len(shape) - b.ndim) + b.shape)
    reps = []
    for have, want in zip(b.shape, shape, strict=True):
        if have == 0 or want % have:
            raise StdError(
                f"{what} of shape {b.shape} does not tile {shape}: each size must divide"
            )
        reps.append(want // have)
    return np.tile(b, reps)


def repeat_to(b: np.ndarray, n: int, axis: int, what: str) -> np.ndarray:
    """`b` with each slice along `axis` repeated until there are `n` (grouped broadcasting, as
    ggml's matmul and attention share one K/V head between several query heads)."""
    have = b.shape[axis]
    if have == 0 or n % have:
        raise StdError(f"{what} has {have} along axis {axis}, which does not divide {n}")
    return np.repeat(b, n // have, axis=axis)
