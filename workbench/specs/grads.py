"""Gradient links: how each shipped backward kernel relates to its forward, for gradient checks.

`GRAD_LINKS` maps a backward kernel's name to a `GradLink` (see `workbench.specs.base`): the float64
forward written from the mathematics (reusing the forward functions of `specs/refs`), which
backward input is the upstream gradient of which forward output, which gradient output
differentiates which array, the primals the backward does not bind, the saved forward results to
recompute, the GPU forward kernel, and small dims for the numeric differentiation.

The module has no `SPECS`, so the spec registry passes over it; `grad_link(name)` is the lookup.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from workbench.specs.base import Arrays, Dims, GradLink
from workbench.specs.embedding import TABLE_STD
from workbench.specs.refs import activation as act
from workbench.specs.refs import attention as attn
from workbench.specs.refs import conv1d, rope
from workbench.specs.refs import embedding as emb
from workbench.specs.rope import ROPE_BASE


def _primal_rng(seed: int) -> np.random.Generator:
    """A stream apart from the spec's own (seeded by `seed` alone), so a primal never repeats
    the backward's inputs, e.g. RoPE's Q would otherwise equal the upstream dQ."""
    return np.random.default_rng([seed, 7919])


# ---- FFN activations --------------------------------------------------------------------------


def _gelu_forward(dims: Dims, arrays: Arrays) -> dict[str, np.ndarray]:
    return {"x": act.gelu(arrays["pre_gelu"])}


def _swiglu_forward(dims: Dims, arrays: Arrays) -> dict[str, np.ndarray]:
    return {"hidden": act.swiglu(arrays["gate"], arrays["up"])}


# Small FFN dims: 1,200 elements, a partial last workgroup (1200 = 4 x 256 + 176).
FFN_GRAD_DIMS = {"seq": 4, "d_ff": 300}

# ---- embedding --------------------------------------------------------------------------------


def _embed_primals(dims: Dims, seed: int) -> dict[str, np.ndarray]:
    rng = _primal_rng(seed)
    shape = (dims["vocab"], dims["d_model"])
    return {"table": rng.normal(0.0, TABLE_STD, size=shape).astype(np.float32)}


def _embed_forward(dims: Dims, arrays: Arrays) -> dict[str, np.ndarray]:
    return {"out": emb.embed_lookup(arrays["tokens"], arrays["table"])}


# 48 tokens over a vocabulary of 64: most rows are hit once or twice, some not at all, so the
# check sees accumulated, single and zero rows of the table gradient.
EMBED_GRAD_DIMS = {"seq": 48, "d_model": 16, "vocab": 64}

# ---- RoPE -------------------------------------------------------------------------------------


# 24 positions from 7 on, 16-wide heads: eight frequencies, angles from 0.005 to 30 rad.
ROPE_GRAD_DIMS = {"seq": 24, "head_dim": 16, "pos_offset": 7}


def _rope_link(binding: str, heads: str, n_heads: int) -> GradLink:
    """rope_q_backward (binding Q) or rope_k_backward (K), whose heads the dim `heads` counts: L =
    <d<binding>, rope(<binding>)>, and the kernel turns the upstream gradient into dL/d<binding> in
    place."""

    def primals(dims: Dims, seed: int) -> dict[str, np.ndarray]:
        shape = (dims["seq"], dims[heads], dims["head_dim"])
        return {binding: _primal_rng(seed).standard_normal(shape).astype(np.float32)}

    def forward(dims: Dims, arrays: Arrays) -> dict[str, np.ndarray]:
        return {binding: rope.rope_forward(arrays[binding], dims["pos_offset"], ROPE_BASE)}

    grad = f"d{binding}"
    return GradLink(
        forward_ref=forward,
        upstream={binding: grad},
        wrt={grad: binding},
        primals=primals,
        forward_kernel=f"rope_{binding.lower()}",
        grad_dims={**ROPE_GRAD_DIMS, heads: n_heads},
        doc=f"L = <{grad}, rope({binding})>: the kernel turns the upstream {grad} into "
        f"dL/{grad} in place",
    )


# ---- attention --------------------------------------------------------------------------------


def _scale(dims: Dims) -> float:
    return 1.0 / math.sqrt(dims["head_dim"])


def _forward(dims: Dims, arrays: Arrays) -> dict[str, np.ndarray]:
    return attn.attention_forward(
        arrays["Q"], arrays["K"], arrays["V"], arrays["seg"], _scale(dims)
    )


def _attention_forward(dims: Dims, arrays: Arrays) -> dict[str, np.ndarray]:
    return {"O": _forward(dims, arrays)["O"]}


def _saved_lse(dims: Dims, arrays: Arrays) -> dict[str, np.ndarray]:
    """The LSE the forward would have saved for these Q, K, rounded to f32 as it is stored."""
    return {"LSE": _forward(dims, arrays)["LSE"].astype(np.float32)}


def _kv_primals(dims: Dims, seed: int) -> dict[str, np.ndarray]:
    """K, V ~ N(0, 1) and the document starts: the forward inputs the dK/dV kernel never binds."""
    rng = _primal_rng(seed)
    shape = (dims["seq"], dims["n_kv_heads"], dims["head_dim"])
    return {
        "K": rng.standard_normal(shape).astype(np.float32),
        "V": rng.standard_normal(shape).astype(np.float32),
        "seg": attn.doc_starts(dims["seq"], dims["docs"]).astype(np.uint32),
    }


def _saved_scratch(dims: Dims, arrays: Arrays) -> dict[str, np.ndarray]:
    """P and dS as attention_backward_short leaves them for these Q, K, V, dO (f32)."""
    lse = _saved_lse(dims, arrays)["LSE"]
    g = attn.attention_backward(
        arrays["Q"], arrays["K"], arrays["V"], arrays["dO"], lse, arrays["seg"], _scale(dims)
    )
    return {"P_scratch": g["P"].astype(np.float32), "dS_scratch": g["dS"].astype(np.float32)}


# Two documents of 20 tokens, GQA groups of two heads, 16-wide heads.
ATTENTION_GRAD_DIMS = {"seq": 40, "n_heads": 4, "n_kv_heads": 2, "head_dim": 16, "docs": 2}


def _attention_link(wrt: dict[str, str], doc: str, **kw: Any) -> GradLink:
    """A backward kernel of L = <dO, attention(Q, K, V)>; `kw` gives its primals and saved."""
    return GradLink(
        forward_ref=_attention_forward,
        upstream={"O": "dO"},
        wrt=wrt,
        forward_kernel="attention_forward",
        grad_dims=ATTENTION_GRAD_DIMS,
        doc=doc,
        **kw,
    )


# ---- causal conv1d ----------------------------------------------------------------------------


def _conv_forward(dims: Dims, arrays: Arrays) -> dict[str, np.ndarray]:
    bias = arrays["bias"] if dims["bias"] else None
    return {
        "out": conv1d.causal_conv1d_fwd(arrays["x"], arrays["weight"], bias, bool(dims["silu"]))
    }


# 1,030 steps: two chunks of the backward's reverse walk (1,024 steps each), the second partial.
CONV_GRAD_DIMS = {"batch": 2, "dim": 4, "seqlen": 1030}


GRAD_LINKS: dict[str, GradLink] = {
    "ffn_gelu_backward": GradLink(
        forward_ref=_gelu_forward,
        upstream={"x": "grad_hidden"},
        wrt={"grad_pre": "pre_gelu"},
        forward_kernel="gelu_inplace",
        forward_inputs={"x": "pre_gelu"},
        grad_dims=FFN_GRAD_DIMS,
        doc="L = <grad_hidden, gelu(pre_gelu)>",
    ),
    "ffn_swiglu_backward": GradLink(
        forward_ref=_swiglu_forward,
        upstream={"hidden": "grad_hidden"},
        wrt={"grad_gate": "gate", "grad_up": "up"},
        forward_kernel="swiglu_combine",
        grad_dims=FFN_GRAD_DIMS,
        doc="L = <grad_hidden, silu(gate) * up>",
    ),
    "embed_backward": GradLink(
        forward_ref=_embed_forward,
        upstream={"out": "grad_out"},
        wrt={"grad_table": "table"},
        primals=_embed_primals,
        forward_kernel="embed_lookup",
        grad_dims=EMBED_GRAD_DIMS,
        doc="L = <grad_out, table[tokens]>",
    ),
    "rope_q_backward": _rope_link("Q", "n_heads", 3),
    "rope_k_backward": _rope_link("K", "n_kv_heads", 2),
    "attention_backward": _attention_link(
        {"dQ": "Q", "dK": "K", "dV": "V"},
        "L = <dO, attention(Q, K, V)>, LSE saved from the same Q, K",
        saved=_saved_lse,
    ),
    "attention_backward_short": _attention_link(
        {"dQ": "Q"},
        "L = <dO, attention(Q, K, V)>; this kernel gives dQ (P and dS go to scratch)",
        saved=_saved_lse,
    ),
    "attention_backward_short_dKdV": _attention_link(
        {"dK": "K", "dV": "V"},
        "L = <dO, attention(Q, K, V)>; P and dS scratch recomputed from Q, K, V, dO",
        primals=_kv_primals,
        saved=_saved_scratch,
    ),
    "causal_conv1d_bwd": GradLink(
        forward_ref=_conv_forward,
        upstream={"out": "dout"},
        wrt={"dx": "x", "dweight": "weight", "dbias": "bias"},
        forward_kernel="causal_conv1d_fwd",
        grad_dims=CONV_GRAD_DIMS,
        doc="L = <dout, causal_conv1d(x, weight, bias)>, SiLU and bias per the dims",
    ),
}


def grad_link(name: str) -> GradLink | None:
    """The gradient link of the backward kernel `name`, None for kernels without one."""
    return GRAD_LINKS.get(name)
