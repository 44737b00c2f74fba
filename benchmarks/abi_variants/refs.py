"""Float64 references of the changed-ABI variants: the shipped kernels' references
(workbench/specs/refs), applied to the vec4-laned buffers viewed as the seed's flat tensors."""

from __future__ import annotations

import numpy as np

from workbench.specs.refs import activation, attention, rope

ROPE_BASE = 10000.0


def swiglu_combine(gate: np.ndarray, up: np.ndarray, **_: int) -> dict[str, np.ndarray]:
    return {"hidden": activation.swiglu_combine_ref(gate, up)}


def ffn_gelu_backward(
    grad_hidden: np.ndarray, pre_gelu: np.ndarray, **_: int
) -> dict[str, np.ndarray]:
    return {"grad_pre": activation.ffn_gelu_backward_ref(grad_hidden, pre_gelu)}


def ffn_swiglu_backward(
    grad_hidden: np.ndarray, gate: np.ndarray, up: np.ndarray, **_: int
) -> dict[str, np.ndarray]:
    grad_gate, grad_up = activation.ffn_swiglu_backward_ref(grad_hidden, gate, up)
    return {"grad_gate": grad_gate, "grad_up": grad_up}


def _pairs(x: np.ndarray) -> np.ndarray:
    """[seq, heads, head_dim / 4, 4] as the seed's [seq, heads, head_dim]."""
    seq, heads, quads, _ = x.shape
    return x.reshape(seq, heads, quads * 4)


def rope_k(K: np.ndarray, *, pos_offset: int, **_: int) -> dict[str, np.ndarray]:
    return {"K": rope.rope_forward(_pairs(K), pos_offset, ROPE_BASE).reshape(K.shape)}


def rope_k_backward(dK: np.ndarray, *, pos_offset: int, **_: int) -> dict[str, np.ndarray]:
    return {"dK": rope.rope_backward(_pairs(dK), pos_offset, ROPE_BASE).reshape(dK.shape)}


def attention_backward(
    Q: np.ndarray,
    K: np.ndarray,
    V: np.ndarray,
    dO: np.ndarray,
    LSE: np.ndarray,
    seg: np.ndarray,
    O: np.ndarray | None = None,  # noqa: E741 (the binding's name: references take inputs by name)
    *,
    head_dim: int,
    **_: int,
) -> dict[str, np.ndarray]:
    """The seed's backward: D = rowsum(P * dP), or with O bound (attention_backward_o)
    rowsum(dO * O) from that O (any O: the kernel takes it as given, as the reference does)."""
    d_rows = None
    if O is not None:
        d_rows = np.einsum("shd,shd->sh", np.asarray(dO, np.float64), np.asarray(O, np.float64))
    g = attention.attention_backward(Q, K, V, dO, LSE, seg, 1.0 / np.sqrt(head_dim), d_rows=d_rows)
    return {"dQ": g["dQ"], "dK": g["dK"], "dV": g["dV"]}
