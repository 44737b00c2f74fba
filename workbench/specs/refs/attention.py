"""Float64 references for causal softmax attention with GQA and a per-query document mask.

Written from the mathematics (softmax attention; the FlashAttention / llm.c backward with the
saved logsumexp, D = rowsum(dO * O), dS = P * (dP - D)), not from the WGSL. Layouts follow the
kernels: Q, dO, O [seq, n_heads, head_dim]; K, V [seq, n_kv_heads, head_dim]; LSE [seq, n_heads];
P, dS [seq, n_heads, seq] indexed [s, h, j]. Key j is visible to query s iff seg[s] <= j <= s,
where seg[s] > s counts as seg[s] = s (a query always sees itself).

The forward pieces (`scores`, `attention_forward`) take plain arrays so gradient checks can
differentiate them; `attention_backward` takes the saved LSE, as the kernels do.
"""

from __future__ import annotations

import numpy as np


def doc_starts(seq: int, docs: int) -> np.ndarray:
    """seg for `docs` near-equal documents: seg[s] is the first index of the document holding s."""
    bounds = (np.arange(docs + 1, dtype=np.int64) * seq) // docs
    seg = np.empty(seq, dtype=np.int64)
    for k in range(docs):
        seg[bounds[k] : bounds[k + 1]] = bounds[k]
    return seg


def visible(seg: np.ndarray) -> np.ndarray:
    """mask[s, j]: key j is visible to query s (causal, inside the document of s)."""
    seq = seg.shape[0]
    s = np.arange(seq)[:, None]
    j = np.arange(seq)[None, :]
    lo = np.minimum(np.asarray(seg, dtype=np.int64), np.arange(seq))[:, None]
    return (j >= lo) & (j <= s)


def expand_kv(x: np.ndarray, n_heads: int) -> np.ndarray:
    """[seq, n_kv, d] -> [seq, n_heads, d]: query head h uses kv head h // (n_heads // n_kv)."""
    group = n_heads // x.shape[1]
    return np.repeat(np.asarray(x, dtype=np.float64), group, axis=1)


def reduce_kv(x: np.ndarray, n_kv: int) -> np.ndarray:
    """[seq, n_heads, d] -> [seq, n_kv, d]: sum of each kv head's group of query heads."""
    seq, n_heads, d = x.shape
    return x.reshape(seq, n_kv, n_heads // n_kv, d).sum(axis=2)


def scores(q: np.ndarray, k: np.ndarray, scale: float) -> np.ndarray:
    """S[s, h, j] = scale * Q[s, h] . K[j, kv(h)], unmasked."""
    q = np.asarray(q, dtype=np.float64)
    kk = expand_kv(k, q.shape[1])
    return scale * np.einsum("shd,jhd->shj", q, kk)


def attention_forward(
    q: np.ndarray, k: np.ndarray, v: np.ndarray, seg: np.ndarray, scale: float
) -> dict[str, np.ndarray]:
    """O = softmax(S + mask) V per (s, h); LSE = log sum_j exp(S) over visible keys; and P."""
    s_ = scores(q, k, scale)
    mask = visible(seg)[:, None, :]
    masked = np.where(mask, s_, -np.inf)
    m = masked.max(axis=2)
    e = np.where(mask, np.exp(masked - m[:, :, None]), 0.0)
    total = e.sum(axis=2)
    p = e / total[:, :, None]
    o = np.einsum("shj,jhd->shd", p, expand_kv(v, q.shape[1]))
    return {"O": o, "LSE": m + np.log(total), "P": p}


def attention_backward(
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    do: np.ndarray,
    lse: np.ndarray,
    seg: np.ndarray,
    scale: float,
) -> dict[str, np.ndarray]:
    """Gradients of L = <dO, O> w.r.t. Q, K, V, given the saved LSE; also P and dS.

    P = exp(S - LSE) on visible keys (the softmax when LSE is the forward's), O = P V,
    D = rowsum(dO * O), dP = dO V^T, dS = scale * P * (dP - D) (scale folded into dS as the seed
    does), dQ = dS K, dK = dS^T Q and dV = P^T dO summed over each kv head's query heads.
    """
    n_heads = q.shape[1]
    n_kv = k.shape[1]
    q = np.asarray(q, dtype=np.float64)
    do = np.asarray(do, dtype=np.float64)
    kk = expand_kv(k, n_heads)
    vv = expand_kv(v, n_heads)
    mask = visible(seg)[:, None, :]
    s_ = scores(q, k, scale)
    lse = np.asarray(lse, dtype=np.float64)[:, :, None]
    p = np.where(mask, np.exp(np.where(mask, s_ - lse, 0.0)), 0.0)
    o = np.einsum("shj,jhd->shd", p, vv)
    big_d = (do * o).sum(axis=2)
    dp = np.einsum("shd,jhd->shj", do, vv)
    ds = scale * p * (dp - big_d[:, :, None])
    dq = np.einsum("shj,jhd->shd", ds, kk)
    dk = reduce_kv(np.einsum("shj,shd->jhd", ds, q), n_kv)
    dv = reduce_kv(np.einsum("shj,shd->jhd", p, do), n_kv)
    return {"dQ": dq, "dK": dk, "dV": dv, "P": p, "dS": ds}


def attention_dkdv_from_scratch(
    q: np.ndarray, do: np.ndarray, p: np.ndarray, ds: np.ndarray, n_kv: int
) -> dict[str, np.ndarray]:
    """dK[j] = sum_{s >= j, h in group} dS[s,h,j] Q[s,h]; dV likewise with P and dO.

    Only the causal triangle s >= j of the scratch counts: queries before j never see key j.
    """
    seq = p.shape[0]
    causal = (np.arange(seq)[:, None] >= np.arange(seq)[None, :])[:, None, :]
    p = np.where(causal, np.asarray(p, dtype=np.float64), 0.0)
    ds = np.where(causal, np.asarray(ds, dtype=np.float64), 0.0)
    q = np.asarray(q, dtype=np.float64)
    do = np.asarray(do, dtype=np.float64)
    dk = reduce_kv(np.einsum("shj,shd->jhd", ds, q), n_kv)
    dv = reduce_kv(np.einsum("shj,shd->jhd", p, do), n_kv)
    return {"dK": dk, "dV": dv}
