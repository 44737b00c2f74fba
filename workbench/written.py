"""Whether a kernel wrote its outputs: the sentinel, and how an unwritten element is told apart.

An output that was never written keeps what was uploaded. Zeros cannot tell "never written" from
"wrote zeros", so the evidence is a second dispatch with every output pre-filled with a sentinel
(a NaN whose payload no arithmetic produces; a fixed bit pattern for integers): an element that
holds the sentinel there and zero in the zero-filled run was never written. An in-out buffer
cannot be pre-filled (it is an input), so there "unwritten" means "unchanged".

The engine (`Session.run`) and the evidence check (`workbench.checks.evidence`) both read written-
ness from here, so `run`, `check`, `replay` and the pytest plugin agree on it.
"""

from __future__ import annotations

import numpy as np

# Quiet NaNs with a payload (f32 0x7FDADBAD, f16 0x7E5B) and a pattern for 32-bit integers.
SENTINEL_BITS = {
    "float32": 0x7FDADBAD,
    "float16": 0x7E5B,
    "uint32": 0xDADBADDA,
    "int32": 0xDADBADDA,
}
_UINT = {2: np.uint16, 4: np.uint32}


def watchable(dtype: str | np.dtype, shape: tuple[int, ...]) -> bool:
    """Whether a sentinel can watch an output of this dtype and shape (not an empty one)."""
    return np.dtype(dtype).name in SENTINEL_BITS and int(np.prod(shape, dtype=np.int64)) > 0


def sentinel_fill(shape: tuple[int, ...], dtype: str | np.dtype) -> np.ndarray:
    """An array of `shape` whose every element holds the sentinel of `dtype`."""
    dt = np.dtype(dtype)
    filled: np.ndarray = np.full(shape, SENTINEL_BITS[dt.name], dtype=_UINT[dt.itemsize])
    return filled.view(dt)


def bits(a: np.ndarray) -> np.ndarray:
    """The elements' bit patterns (a NaN compares equal to the same NaN)."""
    pattern: np.ndarray = np.ascontiguousarray(a).view(_UINT[a.dtype.itemsize])
    return pattern


def unchanged(got: np.ndarray, before: np.ndarray | None) -> np.ndarray:
    """Where `got` still holds what was uploaded: `before`, or zeros when nothing was."""
    same: np.ndarray = (
        bits(got) == 0
        if before is None
        else bits(got) == bits(np.asarray(before)).reshape(got.shape)
    )
    return same


def unwritten(plain: np.ndarray, marked: np.ndarray) -> np.ndarray:
    """Where an output was never written: zero in the zero-filled run (`plain`) and still the
    sentinel in the sentinel-filled one (`marked`)."""
    never: np.ndarray = (bits(marked) == SENTINEL_BITS[plain.dtype.name]) & (bits(plain) == 0)
    return never
