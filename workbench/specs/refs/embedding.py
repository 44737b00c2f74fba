"""Float64 references for token embeddings (01_embedding.wgsl), written from the definitions.

Forward: out[s, d] = table[tokens[s], d] when tokens[s] < vocab_size, else 0 (a corrupt id gives a
zero row). Backward: grad_table[t, d] = sum over s with tokens[s] == t of grad_out[s, d], where
out-of-range ids and non-finite gradients contribute nothing.
"""

from __future__ import annotations

import numpy as np


def embed_lookup(tokens: np.ndarray, table: np.ndarray) -> np.ndarray:
    """Rows of `table` [vocab, d_model] picked by `tokens` [seq]; out-of-range ids give zeros."""
    table = np.asarray(table, dtype=np.float64)
    tokens = np.asarray(tokens).astype(np.int64)
    vocab_size, d_model = table.shape
    valid = (tokens >= 0) & (tokens < vocab_size)
    out = np.zeros((tokens.shape[0], d_model), dtype=np.float64)
    out[valid] = table[tokens[valid]]
    return out


def embed_backward(tokens: np.ndarray, grad_out: np.ndarray, vocab_size: int) -> np.ndarray:
    """Scatter-add of `grad_out` [seq, d_model] into a [vocab_size, d_model] table gradient.

    Each (s, d) contribution goes to row tokens[s]; contributions from out-of-range ids and
    NaN/Inf gradients are dropped, elementwise.
    """
    grad_out = np.asarray(grad_out, dtype=np.float64)
    tokens = np.asarray(tokens).astype(np.int64)
    d_model = grad_out.shape[1]
    grad_table = np.zeros((vocab_size, d_model), dtype=np.float64)
    valid = (tokens >= 0) & (tokens < vocab_size)
    contrib = np.where(np.isfinite(grad_out), grad_out, 0.0)[valid]
    # np.add.at accumulates repeated indices (a fancy-index += would keep only the last one).
    np.add.at(grad_table, tokens[valid], contrib)
    return grad_table
