"""Float64 references for causal softmax attention with GQA and a per-query document mask.

Written from the mathematics (softmax attention; the seed's / llm.c's backward with the saved
logsumexp, D = sum_j P dP, dS = P * (dP - D)), not from the WGSL. Layouts follow the
kernels: Q, dO, O [seq, n_heads, head_dim]; K, V [seq, n_kv_heads, head_dim]; LSE [seq, n_heads];
P, dS [seq, n_heads, seq] indexed [s, h, j]. Key j is visible to query s iff seg[s] <= j <= s,
where seg[s] > s counts as seg[s] = s (a query always sees itself).

The forward pieces (`scores`, `attention_forward`) take plain arrays so gradient checks can
differentiate them; `attention_backward` takes the saved LSE, as the kernels do.

Special values: a hidden (masked) pair contributes nothing at all, not 0 x its value, so a NaN or
Inf in a hidden key's K/V, or in a query's dO or D, reaches only the outputs that attend to it
(`visible_einsum`); visible pairs follow IEEE arithmetic (NaN spreads, 0 x Inf is NaN). A row
whose visible scores are all -Inf has LSE = log(0) = -Inf and a 0/0 = NaN softmax.

Size: the forward and backward walk the queries in blocks (`query_blocks`) and give each block
only the keys it can see (from the block's first document start to its last query), so memory is
bounded by a block's scores (about 32 MiB of float64 per array), not seq^2, and the causal half
of the work is skipped; the contractions are batched matrix products (BLAS). seq 8192 with 12
heads takes seconds, not minutes. The P and dS scratch, whole [seq, n_heads, seq] arrays, are
kept only when asked for (`keep_p`: the split kernels' references, seq <= 1024).
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


def visible(seg: np.ndarray, rows: slice = slice(None), keys: slice = slice(None)) -> np.ndarray:
    """mask[s, j]: key j is visible to query s (causal, inside the document of s); `rows` and
    `keys` cut out a block of queries and keys (default: all)."""
    seq = seg.shape[0]
    s = np.arange(seq)[rows][:, None]
    j = np.arange(seq)[keys][None, :]
    lo = np.minimum(np.asarray(seg, dtype=np.int64)[rows], np.arange(seq)[rows])[:, None]
    return (j >= lo) & (j <= s)


# Float64 elements of one block's score array ([block rows, n_heads, keys]): 32 MiB.
BLOCK_ELEMENTS = 1 << 22


def query_blocks(seg: np.ndarray, n_heads: int) -> list[tuple[slice, slice]]:
    """(queries, keys) of each block: consecutive queries, few enough that a block's scores stay
    within BLOCK_ELEMENTS, and the keys any of them sees (first document start to last query)."""
    seq = seg.shape[0]
    rows = max(1, BLOCK_ELEMENTS // max(1, n_heads * seq))
    lo = np.minimum(np.asarray(seg, dtype=np.int64), np.arange(seq))
    out = []
    for s0 in range(0, seq, rows):
        s1 = min(seq, s0 + rows)
        out.append((slice(s0, s1), slice(int(lo[s0:s1].min()), s1)))
    return out


def _contract(subscripts: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """np.einsum(subscripts, a, b), with attention's three contractions as batched matrix
    products over the head axis (BLAS; np.einsum's own loops take minutes at seq 8192)."""
    product: np.ndarray
    if subscripts == "shd,jhd->shj":
        product = np.matmul(a.transpose(1, 0, 2), b.transpose(1, 2, 0)).transpose(1, 0, 2)
    elif subscripts == "shj,jhd->shd":
        product = np.matmul(a.transpose(1, 0, 2), b.transpose(1, 0, 2)).transpose(1, 0, 2)
    elif subscripts == "shj,shd->jhd":
        product = np.matmul(a.transpose(1, 2, 0), b.transpose(1, 0, 2)).transpose(1, 0, 2)
    else:
        product = np.einsum(subscripts, a, b)
    return product


def visible_einsum(subscripts: str, a: np.ndarray, b: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """np.einsum(subscripts, a, b) over the terms whose `mask` (broadcast to a) holds, only.

    Hidden terms are left out, not weighted by 0, so a NaN or Inf in `b` (or `a`) there changes
    nothing. Visible terms keep IEEE semantics: the finite part is one einsum with the
    non-finite entries zeroed, then counts of NaN, +Inf and -Inf products (0 x Inf is NaN) over
    the visible terms decide which results are NaN or +-Inf.
    """
    mask = np.broadcast_to(mask, np.shape(a))
    a = np.where(mask, np.asarray(a, dtype=np.float64), 0.0)
    b = np.asarray(b, dtype=np.float64)
    fa, fb = np.isfinite(a), np.isfinite(b)
    total = _contract(subscripts, np.where(fa, a, 0.0), np.where(fb, b, 0.0))
    if fa.all() and fb.all():
        return total

    def count(x: np.ndarray, y: np.ndarray) -> np.ndarray | float:
        # Most kinds of non-finite term are absent: skip their contraction.
        if not (x.any() and y.any()):
            return 0.0
        return _contract(subscripts, x.astype(np.float64), y.astype(np.float64))

    inf = np.inf
    nan = (
        count(np.isnan(a), np.ones_like(b))
        + count(mask, np.isnan(b))
        + count(np.isinf(a), b == 0)
        + count(mask & (a == 0), np.isinf(b))
    )
    pos = (
        count(a == inf, b > 0)
        + count(a == -inf, b < 0)
        + count(a > 0, b == inf)
        + count(a < 0, b == -inf)
    )
    neg = (
        count(a == inf, b < 0)
        + count(a == -inf, b > 0)
        + count(a > 0, b == -inf)
        + count(a < 0, b == inf)
    )
    # +Inf and -Inf among the terms add up to NaN, as they would in any order.
    with np.errstate(invalid="ignore"):
        total = total + np.where(pos > 0, inf, 0.0) + np.where(neg > 0, -inf, 0.0)
    return np.where(nan > 0, np.nan, total)


def expand_kv(x: np.ndarray, n_heads: int) -> np.ndarray:
    """[seq, n_kv, d] -> [seq, n_heads, d]: query head h uses kv head h // (n_heads // n_kv)."""
    group = n_heads // x.shape[1]
    return np.repeat(np.asarray(x, dtype=np.float64), group, axis=1)


def reduce_kv(x: np.ndarray, n_kv: int) -> np.ndarray:
    """[seq, n_heads, d] -> [seq, n_kv, d]: sum of each kv head's group of query heads."""
    seq, n_heads, d = x.shape
    summed: np.ndarray = x.reshape(seq, n_kv, n_heads // n_kv, d).sum(axis=2)
    return summed


def scores(q: np.ndarray, k: np.ndarray, scale: float) -> np.ndarray:
    """S[s, h, j] = scale * Q[s, h] . K[j, kv(h)], unmasked."""
    q = np.asarray(q, dtype=np.float64)
    kk = expand_kv(k, q.shape[1])
    return scale * _contract("shd,jhd->shj", q, kk)


def attention_forward(
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    seg: np.ndarray,
    scale: float,
    keep_p: bool = False,
) -> dict[str, np.ndarray]:
    """O = softmax(S + mask) V per (s, h); LSE = log sum_j exp(S) over visible keys; and, with
    `keep_p`, P [seq, n_heads, seq]. Block by block of queries (`query_blocks`)."""
    q = np.asarray(q, dtype=np.float64)
    seq, n_heads, _ = q.shape
    kk = expand_kv(k, n_heads)
    vv = expand_kv(v, n_heads)
    o = np.zeros((*q.shape[:2], vv.shape[2]))
    lse = np.zeros(q.shape[:2])
    p_all = np.zeros((seq, n_heads, seq)) if keep_p else None
    for rows, keys in query_blocks(seg, n_heads):
        mask = visible(seg, rows, keys)[:, None, :]
        s_ = scale * _contract("shd,jhd->shj", q[rows], kk[keys])
        masked = np.where(mask, s_, -np.inf)
        m = masked.max(axis=2)
        # A row of -Inf scores shifts by 0, not by -Inf (-Inf - -Inf would be NaN): its sum is 0.
        shift = np.where(m == -np.inf, 0.0, m)
        e = np.where(mask, np.exp(masked - shift[:, :, None]), 0.0)
        total = e.sum(axis=2)
        p = np.where(mask, e / total[:, :, None], 0.0)
        o[rows] = visible_einsum("shj,jhd->shd", p, vv[keys], mask)
        lse[rows] = shift + np.log(total)
        if p_all is not None:
            p_all[rows, :, keys] = p
    out = {"O": o, "LSE": lse}
    if p_all is not None:
        out["P"] = p_all
    return out


def attention_backward(
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    do: np.ndarray,
    lse: np.ndarray,
    seg: np.ndarray,
    scale: float,
    keep_p: bool = False,
    d_rows: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """Gradients of L = <dO, O> w.r.t. Q, K, V, given the saved LSE; with `keep_p` also P and dS.
    `d_rows` [seq, n_heads] gives D instead (FlashAttention's rowsum(dO * O), for a kernel that
    binds O).

    P = exp(S - LSE) on visible keys (the softmax when LSE is the forward's), dP = dO V^T,
    D = sum_j P dP (the seed's formula; FlashAttention's rowsum(dO * O) is the same number, but
    with an Inf in dO it sums one Inf where this sums an Inf per key, possibly of both signs: the
    seed's form decides NaN against Inf), dS = scale * P * (dP - D) (scale folded into dS as the
    seed does), dQ = dS K, dK = dS^T Q and dV = P^T dO summed over each kv head's query heads.
    Every sum runs over visible (s, j) pairs only; P and dS are exactly 0 on hidden pairs.
    Block by block of queries (`query_blocks`): dQ rows are a block's own, dK and dV add up the
    blocks' shares (a NaN or Inf share stays one in the sum, +Inf and -Inf make NaN, as any order
    of the terms would).
    """
    q = np.asarray(q, dtype=np.float64)
    do = np.asarray(do, dtype=np.float64)
    seq, n_heads, _ = q.shape
    n_kv = k.shape[1]
    kk = expand_kv(k, n_heads)
    vv = expand_kv(v, n_heads)
    lse = np.asarray(lse, dtype=np.float64)
    dq = np.zeros(q.shape)
    dk = np.zeros(kk.shape)
    dv = np.zeros(vv.shape)
    p_all = np.zeros((seq, n_heads, seq)) if keep_p else None
    ds_all = np.zeros((seq, n_heads, seq)) if keep_p else None
    for rows, keys in query_blocks(seg, n_heads):
        mask = visible(seg, rows, keys)[:, None, :]
        s_ = scale * _contract("shd,jhd->shj", q[rows], kk[keys])
        p = np.where(mask, np.exp(np.where(mask, s_ - lse[rows][:, :, None], 0.0)), 0.0)
        dp = _contract("shd,jhd->shj", do[rows], vv[keys])
        if d_rows is None:
            big_d = np.where(mask, p * dp, 0.0).sum(axis=2)
        else:
            big_d = np.asarray(d_rows, dtype=np.float64)[rows]
        ds = np.where(mask, scale * p * (dp - big_d[:, :, None]), 0.0)
        dq[rows] = visible_einsum("shj,jhd->shd", ds, kk[keys], mask)
        dk[keys] += visible_einsum("shj,shd->jhd", ds, q[rows], mask)
        dv[keys] += visible_einsum("shj,shd->jhd", p, do[rows], mask)
        if p_all is not None and ds_all is not None:
            p_all[rows, :, keys] = p
            ds_all[rows, :, keys] = ds
    out = {"dQ": dq, "dK": reduce_kv(dk, n_kv), "dV": reduce_kv(dv, n_kv)}
    if p_all is not None and ds_all is not None:
        out["P"] = p_all
        out["dS"] = ds_all
    return out


def attention_dkdv_from_scratch(
    q: np.ndarray, do: np.ndarray, p: np.ndarray, ds: np.ndarray, n_kv: int
) -> dict[str, np.ndarray]:
    """dK[j] = sum_{s >= j, h in group} dS[s,h,j] Q[s,h]; dV likewise with P and dO.

    Only the causal triangle s >= j of the scratch counts: queries before j never see key j.
    The document mask arrives as the scratch's zeros (its producer writes exact zeros for hidden
    pairs), so a zero entry is a hidden pair: it contributes nothing, even against a NaN or Inf
    in Q or dO. A visible P that underflowed to 0 is skipped alike, which changes a sum only
    when it meets a NaN or Inf.
    """
    seq = p.shape[0]
    causal = (np.arange(seq)[:, None] >= np.arange(seq)[None, :])[:, None, :]
    p = np.asarray(p, dtype=np.float64)
    ds = np.asarray(ds, dtype=np.float64)
    dk = reduce_kv(visible_einsum("shj,shd->jhd", ds, q, causal & (ds != 0)), n_kv)
    dv = reduce_kv(visible_einsum("shj,shd->jhd", p, do, causal & (p != 0)), n_kv)
    return {"dK": dk, "dV": dv}
