"""Specs of the token-embedding kernels in 01_embedding.wgsl: embed_lookup, embed_backward and
embed_lookup_w16 (f16 table, f32 output).

Layouts are row-major: tokens [seq], table [vocab, d_model], out / grad_out [seq, d_model]; the
`dims` uniform is vec4<u32>(seq, d_model, vocab, 0). The grid is the seed's, ceil(seq * d_model /
256) workgroups, one output element per invocation; the shipped lookups declare
ELEMENTS_PER_INVOCATION (4, and 8 for the f16 table), which divides it (`KernelSpec.launch_grid`).
The host folds grids past 65,535 into 2-D.
"""

from __future__ import annotations

import math

import numpy as np

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
from workbench.specs.refs import embedding as ref

FILE = "01_embedding.wgsl"
WG = 256

# Defaults from the seed (seq 512, d_model 768, vocab 16384). The kernels index in u32; that cannot
# overflow because every buffer must fit one storage binding (at most 2 GiB, 2**29 elements; 128
# MiB on lavapipe), which the host checks before allocating.
DIMS = (
    Dim("seq", 512, lo=0, hi=1 << 20, doc="tokens in the sequence"),
    Dim("d_model", 768, lo=1, hi=1 << 16, doc="embedding width"),
    Dim("vocab", 16384, lo=1, hi=1 << 22, doc="rows of the table"),
)

# Token embeddings are initialised around N(0, 0.02) (GPT-2, llm.c); gradients arriving from the
# first norm layer are taken as N(0, 1), the scale of activations.
TABLE_STD = 0.02

EXACT = Tol(
    rtol=0.0,
    atol=0.0,
    why="a copy: every output is one table element (widened exactly from f16 for the w16 "
    "table) or 0, so it must be bitwise equal",
)

SCATTER = Tol(
    rtol=1e-5,
    atol=1e-4,
    why="atomic adds land in any order: a slot that receives k contributions g_j is an f32 sum "
    "in an arbitrary order, off by at most (k-1) * 2^-24 * sum|g_j| from the exact sum; for N(0,1) "
    "gradients that is below 1e-4 up to about 40 repeats of one token (random sequences of "
    "default length repeat a token a handful of times)",
)


# 48 tokens over a vocabulary of 64: tokens repeat, so rows of the table gradient are hit zero,
# one or more times.
SMALL_DIMS = {"seq": 48, "d_model": 40, "vocab": 64}
# The gradient check differentiates the table numerically: a narrower one keeps it quick.
GRAD_DIMS = {**SMALL_DIMS, "d_model": 16}


def _grid(dims: Dims) -> tuple[int, int, int]:
    return (math.ceil(dims["seq"] * dims["d_model"] / WG), 1, 1)


def _dims_uniform(dims: Dims) -> list[int]:
    return [dims["seq"], dims["d_model"], dims["vocab"], 0]


def _tokens(rng: np.random.Generator, dims: Dims) -> np.ndarray:
    return rng.integers(0, dims["vocab"], size=dims["seq"], dtype=np.uint32)


def _table(rng: np.random.Generator, dims: Dims, dtype: str) -> np.ndarray:
    return rng.normal(0.0, TABLE_STD, size=(dims["vocab"], dims["d_model"])).astype(dtype)


def _lookup_spec(name: str, suffix: str, table_dtype: str, doc: str) -> KernelSpec:
    """embed_lookup and embed_lookup_w16 differ only in binding names and the table's dtype."""
    tok, tab, out, uni = (f"{b}{suffix}" for b in ("tokens", "table", "out", "dims"))
    table_bytes = np.dtype(table_dtype).itemsize

    def buffers(dims: Dims) -> dict[str, Buffer]:
        seq, d_model, vocab = (
            ("seq", dims["seq"]),
            ("d_model", dims["d_model"]),
            ("vocab", dims["vocab"]),
        )
        return {
            tok: Buffer((seq,), "uint32"),
            tab: Buffer((vocab, d_model), table_dtype),
            out: Buffer((seq, d_model), "float32"),
        }

    def inputs(dims: Dims, seed: int) -> dict[str, np.ndarray]:
        rng = np.random.default_rng(seed)
        return {tok: _tokens(rng, dims), tab: _table(rng, dims, table_dtype)}

    def reference(dims: Dims, arrays: Arrays) -> dict[str, np.ndarray]:
        return {out: ref.embed_lookup(arrays[tok], arrays[tab])}

    def cost(dims: Dims) -> Cost:
        n = dims["seq"] * dims["d_model"]
        return Cost(bytes=4 * dims["seq"] + table_bytes * n + 4 * n, flops=0)

    return KernelSpec(
        name=name,
        small_dims=SMALL_DIMS,
        file=FILE,
        dims=DIMS,
        buffers=buffers,
        inputs=inputs,
        uniforms=lambda dims: {uni: _dims_uniform(dims)},
        grid=_grid,
        per_element_grid=True,
        outputs=(out,),
        reference=reference,
        tolerances={out: EXACT},
        cost=cost,
        special={
            out: "a copy: NaN and +-Inf table values come through unchanged (f16 ones "
            "widen to the same f32 value); ids >= vocab give 0 whatever the table holds"
        },
        doc=doc,
    )


def _backward_buffers(dims: Dims) -> dict[str, Buffer]:
    seq, d_model, vocab = (
        ("seq", dims["seq"]),
        ("d_model", dims["d_model"]),
        ("vocab", dims["vocab"]),
    )
    return {
        "tokens": Buffer((seq,), "uint32"),
        "grad_out": Buffer((seq, d_model), "float32"),
        # array<atomic<u32>> holding f32 bits.
        "grad_table": Buffer((vocab, d_model), "float32"),
    }


def _backward_inputs(dims: Dims, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    grad_out = rng.standard_normal((dims["seq"], dims["d_model"])).astype(np.float32)
    return {"tokens": _tokens(rng, dims), "grad_out": grad_out}


def _backward_reference(dims: Dims, arrays: Arrays) -> dict[str, np.ndarray]:
    return {"grad_table": ref.embed_backward(arrays["tokens"], arrays["grad_out"], dims["vocab"])}


def _backward_cost(dims: Dims) -> Cost:
    n = dims["seq"] * dims["d_model"]
    # Per element: read grad_out, then an atomic load and a compare-exchange on the slot (8 bytes
    # when uncontended); one f32 add.
    return Cost(bytes=4 * dims["seq"] + 4 * n + 8 * n, flops=n)


def _primals(dims: Dims, seed: int) -> dict[str, np.ndarray]:
    """The table the backward does not bind, for its gradient check."""
    rng = primal_rng(seed)
    shape = (dims["vocab"], dims["d_model"])
    return {"table": rng.normal(0.0, TABLE_STD, size=shape).astype(np.float32)}


def _forward(dims: Dims, arrays: Arrays) -> dict[str, np.ndarray]:
    return {"out": ref.embed_lookup(arrays["tokens"], arrays["table"])}


SPECS = [
    _lookup_spec(
        "embed_lookup",
        "",
        "float32",
        "out[s, d] = table[tokens[s], d]; an id >= vocab gives a zero row.",
    ),
    KernelSpec(
        name="embed_backward",
        small_dims=SMALL_DIMS,
        gradient=GradLink(
            forward_ref=_forward,
            upstream={"out": "grad_out"},
            wrt={"grad_table": "table"},
            primals=_primals,
            forward_kernel="embed_lookup",
            grad_dims=GRAD_DIMS,
            doc="L = <grad_out, table[tokens]>",
        ),
        file=FILE,
        dims=DIMS,
        buffers=_backward_buffers,
        inputs=_backward_inputs,
        uniforms=lambda dims: {"dims": _dims_uniform(dims)},
        grid=_grid,
        outputs=("grad_table",),
        reference=_backward_reference,
        tolerances={"grad_table": SCATTER},
        cost=_backward_cost,
        zeroed=("grad_table",),
        special={
            "grad_table": "NaN and +-Inf in grad_out are skipped (they add nothing), so the "
            "table gradient stays finite unless finite contributions overflow f32",
        },
        doc="grad_table[t, d] = sum_s [tokens[s] == t] grad_out[s, d], by a compare-exchange loop "
        "on the f32 bits (WGSL has no atomic<f32>). Ids >= vocab, zero and NaN/Inf gradients are "
        "skipped.",
    ),
    _lookup_spec(
        "embed_lookup_w16",
        "_w16",
        "float16",
        "embed_lookup reading an f16 table (half the bytes) into an f32 output; the widening is "
        "exact, so it equals embed_lookup on the same f16-representable table.",
    ),
]
