"""Matrix products: C = op(A) @ op(B) (+ beta * C), batched over leading axes.

Batch axes broadcast the grouped way ggml's mul_mat does: where B has more batches than A along an
axis, each of A's matrices serves a run of consecutive B batches (query heads sharing a K/V head).
ggml's `mul_mat(src0, src1)` computes src1 @ src0^T: `matmul(a=src1, b=src0, transpose_b=True)`.
"""

from __future__ import annotations

import numpy as np

from workbench.specs.std.common import StdError, as_f64, repeat_to


def matmul(
    a: np.ndarray,
    b: np.ndarray,
    c: np.ndarray | None = None,
    transpose_a: bool = False,
    transpose_b: bool = False,
    alpha: float = 1.0,
    beta: float = 1.0,
) -> dict[str, np.ndarray]:
    """y = alpha * op(a) @ op(b), plus beta * c when c (the accumulator's old value) is given."""
    a, b = as_f64(a), as_f64(b)
    if a.ndim < 2 or b.ndim < 2:
        raise StdError("matmul: a and b need at least 2 axes (rows, columns)")
    if transpose_a:
        a = np.swapaxes(a, -1, -2)
    if transpose_b:
        b = np.swapaxes(b, -1, -2)
    if a.shape[-1] != b.shape[-2]:
        raise StdError(f"matmul: inner sizes differ: a is {a.shape}, b is {b.shape}")
    nd = max(a.ndim, b.ndim)
    a = a.reshape((1,) * (nd - a.ndim) + a.shape)
    b = b.reshape((1,) * (nd - b.ndim) + b.shape)
    for axis in range(nd - 2):
        n = max(a.shape[axis], b.shape[axis])
        a = repeat_to(a, n, axis, "a")
        b = repeat_to(b, n, axis, "b")
    y = float(alpha) * (a @ b)
    if c is not None:
        y = y + float(beta) * as_f64(c).reshape(y.shape)
    return {"y": y}
