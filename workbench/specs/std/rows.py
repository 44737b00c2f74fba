"""Row gathers and scatters: get_rows (an embedding lookup) and set_rows.

ggml's get_rows: for a table [..., row, col] and indices [..., i], y[..., i, :] = table[..., idx, :],
where the indices' leading axes pick the table's (which must have the same sizes, or 1).
set_rows writes src's rows into a copy of dst at the rows the indices name.
"""

from __future__ import annotations

import numpy as np

from workbench.specs.std.common import StdError, as_f64


def _index(idx: np.ndarray, n: int, what: str) -> np.ndarray:
    i = np.asarray(idx)
    if i.dtype.kind == "f" and (not np.all(np.isfinite(i)) or np.any(i != np.floor(i))):
        raise StdError(f"{what}: the indices must be whole numbers")
    i = i.astype(np.int64)
    bad = (i < 0) | (i >= n)
    if np.any(bad):
        raise StdError(f"{what}: index {int(i[bad].flat[0])} is outside 0..{n - 1}")
    return i


def get_rows(table: np.ndarray, idx: np.ndarray) -> dict[str, np.ndarray]:
    """y[..., r, :] = table[..., idx[..., r], :]."""
    table = as_f64(table)
    if table.ndim < 2:
        raise StdError("get_rows: the table needs axes [..., row, col]")
    i = _index(idx, table.shape[-2], "get_rows")
    if table.ndim == 2:
        return {"y": table[i]}
    batch = np.broadcast_shapes(table.shape[:-2], i.shape[:-1])
    t = np.broadcast_to(table, batch + table.shape[-2:])
    ii = np.broadcast_to(i, batch + i.shape[-1:])
    return {"y": np.take_along_axis(t, ii[..., None], axis=-2)}


def set_rows(dst: np.ndarray, src: np.ndarray, idx: np.ndarray) -> dict[str, np.ndarray]:
    """y = dst with y[idx[r], :] = src[r, :] (a later row wins where indices repeat)."""
    y = as_f64(dst).copy()
    src = as_f64(src).reshape(-1, y.shape[-1])
    i = _index(idx, y.shape[-2], "set_rows").reshape(-1)
    if i.size != src.shape[0]:
        raise StdError(f"set_rows: {i.size} indices for {src.shape[0]} rows")
    flat = y.reshape(-1, y.shape[-2], y.shape[-1])
    if flat.shape[0] != 1:
        raise StdError("set_rows: dst must be one matrix [row, col]")
    flat[0, i] = src
    return {"y": y}
