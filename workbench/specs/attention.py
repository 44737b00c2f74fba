"""Specs of causal softmax attention: `attention_forward` (08_attention.wgsl) and the three
backward kernels of 10_backward_attention.wgsl (`attention_backward`, the streaming path for any
seq; `attention_backward_short` + `attention_backward_short_dKdV`, the split path for seq <= 1024).

All four share the dims seq, n_heads, n_kv_heads (GQA: n_heads must be a multiple), head_dim
(<= 256) and docs (the sequence is cut into `docs` near-equal documents; seg[s] is the start of
the document holding s, and key j is visible to query s iff seg[s] <= j <= s). The scale is
1/sqrt(head_dim). Inputs share one seeded stream, drawn in the order Q, K, V, dO, so for one seed
the forward and every backward kernel see the same Q, K, V. Each backward kernel runs standalone:
its saved tensors (LSE, and the P / dS scratch for the dKdV kernel) come from the float64
reference, rounded to f32.

Special values (the `special` fields): a hidden (masked) pair contributes nothing, not 0 x its
value, so a NaN or Inf reaches exactly the outputs that attend to it and never crosses a
document; visible pairs follow IEEE arithmetic. The references implement the same rule.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from workbench.errors import UserError
from workbench.specs.base import (
    Arrays,
    Buffer,
    Cost,
    Dim,
    Dims,
    GradLink,
    KernelSpec,
    Tol,
    primal_rng,
)
from workbench.specs.refs import attention as ref

FORWARD_FILE = "08_attention.wgsl"
BACKWARD_FILE = "10_backward_attention.wgsl"

# One workgroup per query position on grid x: the adapter's 65,535 workgroups per dimension.
MAX_GRID = 65535
# attention_backward_short keeps a whole row of P and dP in two 1024-float workgroup arrays.
MAX_SHORT_SEQ = 1024
MAX_HEAD_DIM = 256
MAX_HEADS = 1024
# The seed grids give one workgroup per query (per key for dKdV) on x; a kernel declaring this
# constant takes that many queries (keys) per workgroup, and x is divided by it (launch_grid).
ROWS = "ROWS_PER_WORKGROUP"


def _dims(max_seq: int) -> tuple[Dim, ...]:
    seq_doc = (
        "one workgroup per query on grid x"
        if max_seq == MAX_GRID
        else "P and dP rows live in workgroup memory of 1024 floats; longer rows take "
        "attention_backward"
    )
    return (
        Dim("seq", 512, 1, max_seq, seq_doc),
        Dim("n_heads", 12, 1, MAX_HEADS, "query heads"),
        Dim("n_kv_heads", 4, 1, MAX_HEADS, "key/value heads; n_heads must be a multiple (GQA)"),
        Dim("head_dim", 64, 1, MAX_HEAD_DIM, "one workgroup of 256 holds a head row"),
        Dim("docs", 1, 1, MAX_GRID, "equal documents the sequence is cut into (seg mask)"),
    )


def _check(name: str, dims: Dims) -> None:
    """Refuse what the dims ranges cannot express: GQA grouping and more documents than tokens."""
    if dims["n_heads"] % dims["n_kv_heads"]:
        raise UserError(
            f"{name}: n_heads={dims['n_heads']} is not a multiple of "
            f"n_kv_heads={dims['n_kv_heads']}; each kv head must serve a whole group of query heads"
        )
    if dims["docs"] > dims["seq"]:
        raise UserError(f"{name}: docs={dims['docs']} is more than seq={dims['seq']} tokens")


def _scale(dims: Dims) -> float:
    return 1.0 / math.sqrt(dims["head_dim"])


def _buffers(name: str, dims: Dims, tensors: tuple[str, ...]) -> dict[str, Buffer]:
    """The bindings `tensors` of kernel `name`, in that order: each tensor has one shape whatever
    kernel binds it (Q-shaped: Q, O, dO, dQ; K-shaped: K, V, dK, dV; the scratches [s, head, j])."""
    _check(name, dims)
    seq, heads, head_dim = dims["seq"], dims["n_heads"], dims["head_dim"]
    q = Buffer((("seq", seq), ("head", heads), ("d", head_dim)))
    kv = Buffer((("seq", seq), ("kv_head", dims["n_kv_heads"]), ("d", head_dim)))
    scratch = Buffer((("s", seq), ("head", heads), ("j", seq)))
    shapes = {
        **dict.fromkeys(("Q", "O", "dO", "dQ"), q),
        **dict.fromkeys(("K", "V", "dK", "dV"), kv),
        **dict.fromkeys(("P_scratch", "dS_scratch"), scratch),
        "LSE": Buffer((("seq", seq), ("head", heads))),
        "seg": Buffer((("seq", seq),), "uint32"),
    }
    return {t: shapes[t] for t in tensors}


def _seg(dims: Dims) -> np.ndarray:
    return ref.doc_starts(dims["seq"], dims["docs"]).astype(np.uint32)


def _draw(dims: Dims, seed: int) -> dict[str, np.ndarray]:
    """Q, K, V, dO ~ N(0, 1) in one stream. With scale = 1/sqrt(head_dim) the scores have unit
    variance: the softmax is neither uniform nor one-hot."""
    rng = np.random.default_rng(seed)
    q_shape = (dims["seq"], dims["n_heads"], dims["head_dim"])
    kv_shape = (dims["seq"], dims["n_kv_heads"], dims["head_dim"])
    return {
        "Q": rng.standard_normal(q_shape).astype(np.float32),
        "K": rng.standard_normal(kv_shape).astype(np.float32),
        "V": rng.standard_normal(kv_shape).astype(np.float32),
        "dO": rng.standard_normal(q_shape).astype(np.float32),
    }


def _visible_pairs(dims: Dims) -> int:
    """Visible (s, j) pairs of the mask: the work of one head."""
    seg = ref.doc_starts(dims["seq"], dims["docs"])
    return int((np.arange(dims["seq"]) - seg + 1).sum())


def _sizes(dims: Dims) -> tuple[int, int, int, int]:
    """What the cost figures count: elements of a Q-shaped and of a K-shaped tensor, rows
    (seq x n_heads), and visible pairs over all heads."""
    q = dims["seq"] * dims["n_heads"] * dims["head_dim"]
    kv = dims["seq"] * dims["n_kv_heads"] * dims["head_dim"]
    rows = dims["seq"] * dims["n_heads"]
    return q, kv, rows, _visible_pairs(dims) * dims["n_heads"]


def _query_grid(dims: Dims) -> tuple[int, int, int]:
    """One workgroup per query position and query head."""
    return (dims["seq"], dims["n_heads"], 1)


def _uniforms(dims: Dims) -> dict[str, object]:
    return {
        "dims": [dims["seq"], dims["n_heads"], dims["n_kv_heads"], dims["head_dim"]],
        "params": [_scale(dims), 0.0, 0.0, 0.0],
    }


# --- attention_forward ---------------------------------------------------------------------


def _fwd_buffers(dims: Dims) -> dict[str, Buffer]:
    return _buffers("attention_forward", dims, ("Q", "K", "V", "O", "LSE", "seg"))


def _fwd_inputs(dims: Dims, seed: int) -> dict[str, np.ndarray]:
    _check("attention_forward", dims)
    drawn = _draw(dims, seed)
    return {"Q": drawn["Q"], "K": drawn["K"], "V": drawn["V"], "seg": _seg(dims)}


def _fwd_reference(dims: Dims, inputs: Arrays) -> dict[str, np.ndarray]:
    out = ref.attention_forward(inputs["Q"], inputs["K"], inputs["V"], inputs["seg"], _scale(dims))
    return {"O": out["O"], "LSE": out["LSE"]}


def _fwd_cost(dims: Dims) -> Cost:
    q, kv, rows, pairs = _sizes(dims)
    # Q.K and P.V dot products, plus scale, max, exp and sum per score.
    return Cost(
        bytes=4 * (2 * q + 2 * kv + rows + dims["seq"]),
        flops=pairs * (4 * dims["head_dim"] + 4),
    )


# --- attention_backward (streaming) --------------------------------------------------------


def _bwd_buffers(dims: Dims) -> dict[str, Buffer]:
    tensors = ("Q", "K", "V", "dO", "LSE", "dQ", "dK", "dV", "seg")
    return _buffers("attention_backward", dims, tensors)


def _saved_inputs(name: str, dims: Dims, seed: int) -> dict[str, np.ndarray]:
    """Q, K, V, dO drawn, seg, and the LSE the forward saves for them (rounded to f32)."""
    _check(name, dims)
    drawn = _draw(dims, seed)
    seg = _seg(dims)
    saved = ref.attention_forward(drawn["Q"], drawn["K"], drawn["V"], seg, _scale(dims))
    lse = saved["LSE"].astype(np.float32)
    return {**drawn, "LSE": lse, "seg": seg}


def _bwd_inputs(dims: Dims, seed: int) -> dict[str, np.ndarray]:
    return _saved_inputs("attention_backward", dims, seed)


def _bwd_grads(dims: Dims, inputs: Arrays, keep_p: bool = False) -> dict[str, np.ndarray]:
    """The float64 gradients; with `keep_p` also the P and dS scratch (seq <= 1024 only)."""
    return ref.attention_backward(
        inputs["Q"],
        inputs["K"],
        inputs["V"],
        inputs["dO"],
        inputs["LSE"],
        inputs["seg"],
        _scale(dims),
        keep_p=keep_p,
    )


def _bwd_reference(dims: Dims, inputs: Arrays) -> dict[str, np.ndarray]:
    g = _bwd_grads(dims, inputs)
    return {"dQ": g["dQ"], "dK": g["dK"], "dV": g["dV"]}


def _bwd_cost(dims: Dims) -> Cost:
    q, kv, rows, pairs = _sizes(dims)
    # Pass A: Q.K and dO.V; pass B: both again, then dS.K (dQ), dS.Q (dK) and P.dO (dV).
    return Cost(
        bytes=4 * (2 * q + 2 * kv + rows + dims["seq"] + 2 * q + 4 * kv),
        flops=pairs * (14 * dims["head_dim"] + 8),
    )


# --- attention_backward_short --------------------------------------------------------------


def _short_buffers(dims: Dims) -> dict[str, Buffer]:
    tensors = ("Q", "K", "V", "dO", "LSE", "dQ", "P_scratch", "dS_scratch", "seg")
    return _buffers("attention_backward_short", dims, tensors)


def _short_inputs(dims: Dims, seed: int) -> dict[str, np.ndarray]:
    return _saved_inputs("attention_backward_short", dims, seed)


def _short_reference(dims: Dims, inputs: Arrays) -> dict[str, np.ndarray]:
    g = _bwd_grads(dims, inputs, keep_p=True)
    return {"dQ": g["dQ"], "P_scratch": g["P"], "dS_scratch": g["dS"]}


def _short_cost(dims: Dims) -> Cost:
    q, kv, rows, pairs = _sizes(dims)
    scratch = rows * dims["seq"]
    # Q.K, dO.V and dS.K per visible pair; whole rows of P and dS are written.
    return Cost(
        bytes=4 * (2 * q + 2 * kv + rows + dims["seq"] + 2 * q + 2 * scratch),
        flops=pairs * (6 * dims["head_dim"] + 8),
    )


# --- attention_backward_short_dKdV ---------------------------------------------------------


def _dkdv_buffers(dims: Dims) -> dict[str, Buffer]:
    tensors = ("Q", "dO", "P_scratch", "dS_scratch", "dK", "dV")
    return _buffers("attention_backward_short_dKdV", dims, tensors)


def _dkdv_inputs(dims: Dims, seed: int) -> dict[str, np.ndarray]:
    saved = _saved_inputs("attention_backward_short_dKdV", dims, seed)
    g = _bwd_grads(dims, saved, keep_p=True)
    return {
        "Q": saved["Q"],
        "dO": saved["dO"],
        "P_scratch": g["P"].astype(np.float32),
        "dS_scratch": g["dS"].astype(np.float32),
    }


def _dkdv_reference(dims: Dims, inputs: Arrays) -> dict[str, np.ndarray]:
    return ref.attention_dkdv_from_scratch(
        inputs["Q"], inputs["dO"], inputs["P_scratch"], inputs["dS_scratch"], dims["n_kv_heads"]
    )


def _dkdv_cost(dims: Dims) -> Cost:
    q = dims["seq"] * dims["n_heads"] * dims["head_dim"]
    kv = dims["seq"] * dims["n_kv_heads"] * dims["head_dim"]
    causal = dims["seq"] * (dims["seq"] + 1) // 2 * dims["n_heads"]
    # The causal triangle of both scratches is read; dS.Q and P.dO per (s, h, j) and d.
    return Cost(bytes=4 * (2 * q + 2 * causal + 4 * kv), flops=causal * 4 * dims["head_dim"])


# --- special values ------------------------------------------------------------------------

_HIDDEN = (
    "hidden (masked) pairs are left out of every sum, not weighted by 0: a NaN/Inf in one "
    "document's Q, K, V or dO never reaches another document's gradients"
)
_GRAD_SPECIAL = (
    f"{_HIDDEN}; visible pairs follow IEEE arithmetic with D = sum_j P dP (the seed's form: an "
    "Inf in dO gives an Inf in dP for every key, of either sign, so D and the row's dS are "
    "usually NaN)"
)
_FWD_SPECIAL = {
    "O": "a NaN/Inf in a key's K or V reaches only the queries that see it (seg[s] <= j <= s); "
    "a NaN or +Inf visible score makes the row NaN (Inf - Inf in the softmax); a row whose "
    "visible scores are all -Inf is 0/0 = NaN",
    "LSE": "NaN when a visible score is NaN or +Inf; -Inf (log 0) when every visible score is "
    "-Inf; hidden keys never count",
}
_SHORT_SPECIAL = {
    "dQ": _GRAD_SPECIAL,
    "P_scratch": "exactly 0 on hidden pairs; exp(score - LSE) on visible ones",
    "dS_scratch": "exactly 0 on hidden pairs whatever D is (never scale * 0 * (dP - D), which "
    "is NaN when D is); scale * P * (dP - D) on visible ones",
}
_DKDV_SPECIAL = {
    name: "the scratch's zeros carry the mask, so a zero P/dS entry is skipped, not multiplied: "
    "a NaN/Inf in a query's Q or dO reaches only keys whose entry for it is non-zero (a visible "
    "P or dS that is exactly 0 is skipped alike); NaN/Inf entries spread by IEEE arithmetic"
    for name in ("dK", "dV")
}


# --- tolerances ----------------------------------------------------------------------------

_P_TOL = Tol(
    rtol=1e-4,
    atol=1e-6,
    why="P = exp(score - LSE): the f32 score over head_dim products carries a few e-7 of its "
    "magnitude and WGSL exp is good to ~3 ULP, so P is good to ~1e-5 relative; tiny P by atol",
)
_SUM_TOL = Tol(
    rtol=1e-4,
    atol=2e-5,
    why="sums over up to seq keys (and the GQA group) of terms built from P and the head_dim dot "
    "products, in f32 and in another order than the float64 reference; exp adds a few ULP",
)
_DS_TOL = Tol(
    rtol=1e-4,
    atol=1e-5,
    why="dS = scale * P * (dP - D): D is a cancelling f32 sum over the row; atol covers entries "
    "where dP is close to D",
)

# Two documents of 20 tokens, GQA groups of two heads, 16-wide heads.
SMALL_DIMS = {"seq": 40, "n_heads": 4, "n_kv_heads": 2, "head_dim": 16, "docs": 2}


def _special_rule(binding: str, value: float) -> str:
    """What the special-value check demands when `value` is put into `binding`.

    `match` for NaN/±Inf into any input: kernels and references leave hidden (masked) pairs out
    of every sum rather than weighting them by 0, so a NaN reaches exactly the outputs that attend
    to it, and the references form D = sum_j P dP as the kernels do. `contained` for finite values
    put into LSE: exp(score - LSE) overflows f32 once score - LSE passes 88.7 (LSE = -100 does)
    while float64 stays finite, so Inf - Inf gives NaN where the reference has Inf. `pattern` for
    |V| >= 100 in Q or K: the scores grow as |Q| |K|, their f32 rounding as much, and the softmax
    gradient multiplies that by K again (measured: dQ off by 28 for K = 1e4 where the reference
    is 1.3). Everything else `match`.
    """
    if not math.isfinite(value):
        return "match"
    if binding == "LSE":
        return "contained"
    if binding in ("Q", "K") and abs(value) >= 100:
        return "pattern"
    return "match"


def _forward_o(dims: Dims, arrays: Arrays) -> dict[str, np.ndarray]:
    out = ref.attention_forward(arrays["Q"], arrays["K"], arrays["V"], arrays["seg"], _scale(dims))
    return {"O": out["O"]}


def _saved_lse(dims: Dims, arrays: Arrays) -> dict[str, np.ndarray]:
    """The LSE the forward would have saved for these Q, K, rounded to f32 as it is stored."""
    out = ref.attention_forward(arrays["Q"], arrays["K"], arrays["V"], arrays["seg"], _scale(dims))
    return {"LSE": out["LSE"].astype(np.float32)}


def _kv_primals(dims: Dims, seed: int) -> dict[str, np.ndarray]:
    """K, V ~ N(0, 1) and the document starts: the forward inputs the dK/dV kernel never binds."""
    rng = primal_rng(seed)
    shape = (dims["seq"], dims["n_kv_heads"], dims["head_dim"])
    return {
        "K": rng.standard_normal(shape).astype(np.float32),
        "V": rng.standard_normal(shape).astype(np.float32),
        "seg": ref.doc_starts(dims["seq"], dims["docs"]).astype(np.uint32),
    }


def _saved_scratch(dims: Dims, arrays: Arrays) -> dict[str, np.ndarray]:
    """P and dS as attention_backward_short leaves them for these Q, K, V, dO (f32)."""
    lse = _saved_lse(dims, arrays)["LSE"]
    g = ref.attention_backward(
        arrays["Q"],
        arrays["K"],
        arrays["V"],
        arrays["dO"],
        lse,
        arrays["seg"],
        _scale(dims),
        keep_p=True,
    )
    return {"P_scratch": g["P"].astype(np.float32), "dS_scratch": g["dS"].astype(np.float32)}


def _gradient(wrt: dict[str, str], doc: str, **kw: Any) -> GradLink:
    """A backward kernel of L = <dO, attention(Q, K, V)>; `kw` gives its primals and saved."""
    return GradLink(
        forward_ref=_forward_o,
        upstream={"O": "dO"},
        wrt=wrt,
        forward_kernel="attention_forward",
        grad_dims=SMALL_DIMS,
        doc=doc,
        **kw,
    )


SPECS = [
    KernelSpec(
        name="attention_forward",
        small_dims=SMALL_DIMS,
        special_rule=_special_rule,
        file=FORWARD_FILE,
        dims=_dims(MAX_GRID),
        buffers=_fwd_buffers,
        inputs=_fwd_inputs,
        uniforms=_uniforms,
        grid=_query_grid,
        per_element_grid=True,
        grid_divisor=ROWS,
        outputs=("O", "LSE"),
        zeroed=("O", "LSE"),
        reference=_fwd_reference,
        tolerances={
            "O": _SUM_TOL,
            "LSE": Tol(
                rtol=1e-5,
                atol=1e-5,
                why="max + log(sum of exp) in f32 with an online rescale per tile of keys",
            ),
        },
        cost=_fwd_cost,
        special=_FWD_SPECIAL,
        doc="Causal GQA softmax attention with a document mask; streaming online softmax over "
        "tiles of 32 keys, one workgroup per tile of 64 queries of one head (the spec's grid, one "
        "workgroup per (s, h), divided by the kernel's ROWS_PER_WORKGROUP). Writes O and the "
        "natural-log LSE of the scaled, masked scores.",
    ),
    KernelSpec(
        name="attention_backward",
        small_dims=SMALL_DIMS,
        special_rule=_special_rule,
        saved=("LSE",),
        resaved=("LSE",),
        gradient=_gradient(
            {"dQ": "Q", "dK": "K", "dV": "V"},
            "L = <dO, attention(Q, K, V)>, LSE saved from the same Q, K",
            saved=_saved_lse,
        ),
        file=BACKWARD_FILE,
        dims=_dims(MAX_GRID),
        buffers=_bwd_buffers,
        inputs=_bwd_inputs,
        uniforms=_uniforms,
        grid=_query_grid,
        per_element_grid=True,
        grid_divisor=ROWS,
        outputs=("dQ", "dK", "dV"),
        zeroed=("dQ", "dK", "dV"),
        reference=_bwd_reference,
        tolerances={"dQ": _SUM_TOL, "dK": _SUM_TOL, "dV": _SUM_TOL},
        cost=_bwd_cost,
        special={name: _GRAD_SPECIAL for name in ("dQ", "dK", "dV")},
        doc="Streaming attention backward for any seq: one workgroup per tile of 64 queries of one "
        "head (the spec's grid, one per (s, h), divided by ROWS_PER_WORKGROUP), two passes over "
        "tiles of 32 keys (D, then dS), dQ owned, each key tile's dK/dV summed over the 64 "
        "queries in registers and added with one f32 CAS atomic per element (their order "
        "of adds varies from run to run). Gradients add to dQ/dK/dV, zeroed here.",
    ),
    KernelSpec(
        name="attention_backward_short",
        small_dims=SMALL_DIMS,
        special_rule=_special_rule,
        saved=("LSE",),
        resaved=("LSE",),
        gradient=_gradient(
            {"dQ": "Q"},
            "L = <dO, attention(Q, K, V)>; this kernel gives dQ (P and dS go to scratch)",
            saved=_saved_lse,
        ),
        file=BACKWARD_FILE,
        dims=_dims(MAX_SHORT_SEQ),
        buffers=_short_buffers,
        inputs=_short_inputs,
        uniforms=_uniforms,
        grid=_query_grid,
        per_element_grid=True,
        grid_divisor=ROWS,
        outputs=("dQ", "P_scratch", "dS_scratch"),
        zeroed=("dQ", "P_scratch", "dS_scratch"),
        reference=_short_reference,
        tolerances={"dQ": _SUM_TOL, "P_scratch": _P_TOL, "dS_scratch": _DS_TOL},
        cost=_short_cost,
        special=_SHORT_SPECIAL,
        doc="Split attention backward, phase 0-4, seq <= 1024: adds dQ[s,h] and writes whole "
        "rows P_scratch[s,h,:] and dS_scratch[s,h,:] (scale folded into dS), zero where the "
        "causal/document mask hides key j; one workgroup per tile of 16 queries of one head (the "
        "spec's grid, one per (s, h), divided by ROWS_PER_WORKGROUP).",
    ),
    KernelSpec(
        name="attention_backward_short_dKdV",
        small_dims=SMALL_DIMS,
        special_rule=_special_rule,
        # The scratch would need K and V to recompute, which this kernel does not bind.
        saved=("P_scratch", "dS_scratch"),
        gradient=_gradient(
            {"dK": "K", "dV": "V"},
            "L = <dO, attention(Q, K, V)>; P and dS scratch recomputed from Q, K, V, dO",
            primals=_kv_primals,
            saved=_saved_scratch,
        ),
        file=BACKWARD_FILE,
        dims=_dims(MAX_SHORT_SEQ),
        buffers=_dkdv_buffers,
        inputs=_dkdv_inputs,
        uniforms=lambda d: {"dims": _uniforms(d)["dims"]},
        grid=lambda d: (d["seq"], d["n_kv_heads"], 1),
        per_element_grid=True,
        grid_divisor=ROWS,
        outputs=("dK", "dV"),
        zeroed=("dK", "dV"),
        reference=_dkdv_reference,
        tolerances={"dK": _SUM_TOL, "dV": _SUM_TOL},
        cost=_dkdv_cost,
        special=_DKDV_SPECIAL,
        doc="Split attention backward, phase 5, seq <= 1024: sums the scratch column j over "
        "queries s >= j and the kv head's query heads into dK[j], dV[j]; owned writes, no "
        "atomics. The document mask arrives through the zeros of the scratch. One workgroup per "
        "2 keys of one kv head (the spec's grid, one per (j, kv_h), divided by "
        "ROWS_PER_WORKGROUP).",
    ),
]
