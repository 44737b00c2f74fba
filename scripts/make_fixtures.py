"""Regenerate the shipped fixtures in workbench/fixtures/ with `workbench record` calls.

Each fixture below is one `workbench record KERNEL --dim ... --input ... --out ... --force` run, so
the shipped ones are made exactly as a user makes theirs. Inputs that no recipe can express (NaN and
Inf injected at chosen places) are written to temporary .npy files and given as `npy:PATH`; record
stores those in the fixture's npz. Every other input stays a recipe, re-made and checked against
its recorded sha256 at replay. Shapes are realistic widths (GPT-2: d_model 768, d_ff 3072, 12 query
heads / 4 kv heads of 64) with short sequences, so that replaying all of them on lavapipe (2 CPU
cores) takes well under a minute and the files stay small.

Usage: .venv/bin/python scripts/make_fixtures.py [NAME ...]   (default: all; prints each result)
"""

from __future__ import annotations

import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from workbench.cli import main
from workbench.fixtures import SHIPPED_FIXTURES, find_fixtures

D_FF = 3072


@dataclass(frozen=True)
class Plan:
    name: str
    kernel: str
    dims: dict[str, int]
    note: str
    inputs: dict[str, str] = field(default_factory=dict)  # binding -> recipe
    arrays: str = ""  # a maker in SPECIAL_ARRAYS


def _nan_guard_inputs(names: tuple[str, ...], seed: int) -> dict[str, np.ndarray]:
    """N(0, 1) inputs of one d_ff row with chosen places holding what nan_guard must survive.

    Each input gets NaN and +-Inf at places of its own; the first input (the activation) also gets
    the saturation range (+-1e4, +-100), signed zeros and a denormal; at a few places the gradient
    and the second input are both 1e30, so the product overflows f32 in any order of evaluation
    and the guarded result must be 0. No finite value sits where the f32 order of multiplication
    decides between overflow and a finite result.
    """
    rng = np.random.default_rng(seed)
    arrays = {n: rng.standard_normal(D_FF).astype(np.float32) for n in names}
    places = iter(rng.permutation(D_FF))

    def put(name: str, values: list[float]) -> list[int]:
        where = [int(next(places)) for _ in values]
        arrays[name][where] = np.array(values, dtype=np.float32)
        return where

    for name in names:
        put(name, [np.nan, np.inf, -np.inf] * 4)
    put(names[0], [1e4, -1e4, 100.0, -100.0, 0.0, -0.0, 1e-40, -1e-40] * 2)
    if len(names) > 2:
        where = put("grad_hidden", [1e30] * 8)
        arrays[names[2]][where] = np.float32(1e30)
    return {n: a.reshape(1, D_FF) for n, a in arrays.items()}


# Makers of the inputs no recipe expresses: binding -> array, each written to a .npy for record.
SPECIAL_ARRAYS = {
    "gelu_nan_guard": lambda: _nan_guard_inputs(("pre_gelu", "grad_hidden"), 11),
    "swiglu_nan_guard": lambda: _nan_guard_inputs(("gate", "grad_hidden", "up"), 12),
}

# Dims and recipes several plans share: GPT-2 widths, one or four rows of d_ff activations.
EMBED_GPT2 = {"seq": 32, "d_model": 768, "vocab": 1024}
FFN_ROW = {"seq": 1, "d_ff": D_FF}
FFN_ROWS = {"seq": 4, "d_ff": D_FF}
GPT2_ATT = {"n_heads": 12, "n_kv_heads": 4, "head_dim": 64}
# Token ids 900..1099 against vocab 1024: about half are out of range.
OUT_OF_RANGE = "randint:900:1100"
# Activations in [-150, 150]: tanh/sigmoid saturation and the kernels' clamps at +-100.
SATURATING = "uniform:-150:150"
PLANS: list[Plan] = [
    # --- 01_embedding ---------------------------------------------------------------------------
    Plan(
        "embed_lookup_gpt2",
        "embed_lookup",
        EMBED_GPT2,
        "GPT-2 width: rows of a N(0, 0.02) table, bitwise copies",
    ),
    Plan(
        "embed_lookup_out_of_range",
        "embed_lookup",
        EMBED_GPT2,
        "token ids 900..1099 against vocab 1024: about half are out of range and must give 0 rows",
        inputs={"tokens": OUT_OF_RANGE},
    ),
    Plan(
        "embed_lookup_w16_gpt2",
        "embed_lookup_w16",
        EMBED_GPT2,
        "f16 table widened to f32 exactly",
    ),
    Plan(
        "embed_lookup_w16_out_of_range",
        "embed_lookup_w16",
        EMBED_GPT2,
        "f16 table, out-of-range ids give 0 rows",
        inputs={"tokens_w16": OUT_OF_RANGE},
    ),
    Plan(
        "embed_backward_gpt2",
        "embed_backward",
        EMBED_GPT2,
        "scatter-add of N(0,1) gradients into the table gradient",
    ),
    Plan(
        "embed_backward_repeated_tokens",
        "embed_backward",
        {"seq": 64, "d_model": 768, "vocab": 1024},
        "only 4 distinct ids over 64 tokens: ~16 atomic adds race into each row",
        inputs={"tokens": "randint:0:4"},
    ),
    Plan(
        "embed_backward_out_of_range",
        "embed_backward",
        EMBED_GPT2,
        "out-of-range ids add nothing (and must not write past the table)",
        inputs={"tokens": OUT_OF_RANGE},
    ),
    # --- 06_activation --------------------------------------------------------------------------
    Plan(
        "gelu_inplace_gpt2",
        "gelu_inplace",
        FFN_ROWS,
        "tanh GeLU in place over N(0,1)",
    ),
    Plan(
        "gelu_inplace_large_inputs",
        "gelu_inplace",
        FFN_ROW,
        "inputs in [-150, 150]: tanh saturation and the kernel's clamp at +-100",
        inputs={"x": SATURATING},
    ),
    Plan(
        "swiglu_combine_gpt2",
        "swiglu_combine",
        FFN_ROWS,
        "silu(gate) * up over N(0,1)",
    ),
    Plan(
        "swiglu_combine_large_gate",
        "swiglu_combine",
        FFN_ROW,
        "gate in [-150, 150]: sigmoid saturation (exp overflow for very negative gates)",
        inputs={"gate": SATURATING},
    ),
    # --- 09_backward_ffn ------------------------------------------------------------------------
    Plan(
        "ffn_gelu_backward_gpt2",
        "ffn_gelu_backward",
        FFN_ROWS,
        "GeLU backward over N(0,1)",
    ),
    Plan(
        "ffn_gelu_backward_nan_guard",
        "ffn_gelu_backward",
        FFN_ROW,
        "NaN and +-Inf in pre_gelu and grad_hidden, saturating, zero and denormal pre_gelu: "
        "nan_guard writes 0 wherever the result is not a finite f32",
        arrays="gelu_nan_guard",
    ),
    Plan(
        "ffn_gelu_backward_large_inputs",
        "ffn_gelu_backward",
        FFN_ROW,
        "pre_gelu in [-150, 150]: gelu' saturates to exactly 0 and 1",
        inputs={"pre_gelu": SATURATING},
    ),
    Plan(
        "ffn_swiglu_backward_gpt2",
        "ffn_swiglu_backward",
        FFN_ROWS,
        "SwiGLU backward over N(0,1)",
    ),
    Plan(
        "ffn_swiglu_backward_nan_guard",
        "ffn_swiglu_backward",
        FFN_ROW,
        "NaN and +-Inf in gate, up and grad_hidden, saturating, zero and denormal gates, and "
        "grad_hidden * up overflowing f32: each guarded to 0",
        arrays="swiglu_nan_guard",
    ),
    Plan(
        "ffn_swiglu_backward_large_gate",
        "ffn_swiglu_backward",
        FFN_ROW,
        "gate in [-150, 150]: silu' saturates",
        inputs={"gate": SATURATING},
    ),
    # --- 11_rope --------------------------------------------------------------------------------
    Plan(
        "rope_q_gpt2",
        "rope_q",
        {"seq": 16, "n_heads": 12, "head_dim": 64},
        "rotary embedding of 12 query heads of 64",
    ),
    Plan(
        "rope_q_long_positions",
        "rope_q",
        {"seq": 4, "n_heads": 12, "head_dim": 64, "pos_offset": 2044},
        "positions 2044..2047: large angles, where the f32 angle and sin/cos range reduction "
        "lose digits (lavapipe is 2.6e-4 off here, against an atol of 2.9e-3 that grows with the position)",
    ),
    Plan(
        "rope_k_gqa",
        "rope_k",
        {"seq": 16, "n_kv_heads": 4, "head_dim": 64},
        "rotary embedding of 4 kv heads (GQA)",
    ),
    Plan(
        "rope_q_backward_gpt2",
        "rope_q_backward",
        {"seq": 16, "n_heads": 12, "head_dim": 64},
        "inverse rotation of the query gradient",
    ),
    Plan(
        "rope_k_backward_gqa",
        "rope_k_backward",
        {"seq": 16, "n_kv_heads": 4, "head_dim": 64},
        "inverse rotation of the key gradient, 4 kv heads",
    ),
    # --- 08_attention / 10_backward_attention ---------------------------------------------------
    Plan(
        "attention_forward_gqa",
        "attention_forward",
        {"seq": 128, **GPT2_ATT},
        "GQA 12 query heads over 4 kv heads of 64, causal",
    ),
    Plan(
        "attention_forward_mqa_docs",
        "attention_forward",
        {"seq": 96, "n_heads": 4, "n_kv_heads": 1, "head_dim": 64, "docs": 3},
        "one kv head for 4 query heads (MQA), sequence cut into 3 documents",
    ),
    Plan(
        "attention_forward_long",
        "attention_forward",
        {"seq": 1040, "n_heads": 2, "n_kv_heads": 1, "head_dim": 16},
        "seq 1040 > 1024: five key blocks of 256 through the online softmax",
    ),
    Plan(
        "attention_backward_gqa",
        "attention_backward",
        {"seq": 128, **GPT2_ATT},
        "streaming backward, GQA: dK/dV gathered from 3 query heads with f32 atomics",
    ),
    Plan(
        "attention_backward_long",
        "attention_backward",
        {"seq": 1040, "n_heads": 2, "n_kv_heads": 1, "head_dim": 16},
        "seq 1040 > 1024, past what the split path supports: only the streaming path runs it",
    ),
    Plan(
        "attention_backward_short_gqa",
        "attention_backward_short",
        {"seq": 64, **GPT2_ATT},
        "split backward phase 0-4: dQ and whole rows of P and dS",
    ),
    Plan(
        "attention_backward_short_dKdV_gqa",
        "attention_backward_short_dKdV",
        {"seq": 128, **GPT2_ATT},
        "split backward phase 5: dK/dV from the P and dS scratch, GQA sums without atomics",
    ),
]

# --- 12_causal_conv1d: every width with and without SiLU, small; one realistic shape each ---------
for _w in (2, 3, 4):
    for _s in (0, 1):
        for _kernel, _dim in (("causal_conv1d_fwd", 64), ("causal_conv1d_bwd", 32)):
            PLANS.append(
                Plan(
                    f"{_kernel}_w{_w}_silu{_s}",
                    _kernel,
                    {"batch": 1, "dim": _dim, "seqlen": 128, "width": _w, "silu": _s},
                    f"width {_w}, {'with' if _s else 'without'} SiLU",
                )
            )
PLANS += [
    Plan(
        "causal_conv1d_fwd_realistic",
        "causal_conv1d_fwd",
        {"batch": 2, "dim": 128, "seqlen": 256, "width": 4, "silu": 1},
        "Mamba-style: width 4, SiLU, bias",
    ),
    Plan(
        "causal_conv1d_fwd_no_bias",
        "causal_conv1d_fwd",
        {"batch": 1, "dim": 64, "seqlen": 128, "width": 4, "bias": 0, "silu": 1},
        "bias = 0: the bound bias buffer must be ignored",
    ),
    Plan(
        "causal_conv1d_bwd_realistic",
        "causal_conv1d_bwd",
        {"batch": 2, "dim": 128, "seqlen": 256, "width": 4, "silu": 1},
        "Mamba-style backward: dx, dweight and dbias",
    ),
    Plan(
        "causal_conv1d_bwd_deterministic",
        "causal_conv1d_bwd",
        {"batch": 2, "dim": 32, "seqlen": 128, "width": 4, "silu": 1, "deterministic": 1},
        "the deterministic reduction of dweight/dbias",
    ),
]

# Checks replay runs besides the comparison (workbench.checks): gradients by finite differences,
# special values injected, repeated runs. Small kernels and the ones whose risk they address.
CHECKS = {
    "gelu_inplace_gpt2": "compare,special",
    "ffn_gelu_backward_gpt2": "compare,grad,special",
    "ffn_swiglu_backward_gpt2": "compare,grad,special",
    "rope_q_backward_gpt2": "compare,grad,special",
    "rope_k_backward_gqa": "compare,grad",
    "embed_backward_repeated_tokens": "compare,determinism",
    "causal_conv1d_bwd_w4_silu1": "compare,grad",
    "causal_conv1d_bwd_deterministic": "compare,determinism",
    "attention_backward_short_dKdV_gqa": "compare,grad",
}


def record(plan: Plan, tmp: Path) -> int:
    argv = ["record", plan.kernel, "--out", str(SHIPPED_FIXTURES / plan.name), "--force"]
    argv += ["--note", plan.note, "--checks", CHECKS.get(plan.name, "compare")]
    for k, v in plan.dims.items():
        argv += ["--dim", f"{k}={v}"]
    for k, recipe in plan.inputs.items():
        argv += ["--input", f"{k}={recipe}"]
    for k, arr in (SPECIAL_ARRAYS[plan.arrays]() if plan.arrays else {}).items():
        path = tmp / f"{plan.name}.{k}.npy"
        np.save(path, arr, allow_pickle=False)
        argv += ["--input", f"{k}=npy:{path}"]
    return main(argv)


def run(names: list[str]) -> int:
    unknown = sorted((set(names) | set(CHECKS)) - {p.name for p in PLANS})
    if unknown:
        print(f"make_fixtures: no plan named {', '.join(unknown)}", file=sys.stderr)
        return 2
    worst = 0
    with tempfile.TemporaryDirectory() as tmp:
        for plan in PLANS:
            if names and plan.name not in names:
                continue
            worst = max(worst, record(plan, Path(tmp)))
    planned = {p.name for p in PLANS}
    for extra in find_fixtures([SHIPPED_FIXTURES]):
        if extra.stem not in planned:
            print(f"make_fixtures: {extra.name} is not made by this script (kept)")
    total = sum(p.stat().st_size for p in SHIPPED_FIXTURES.glob("*.np[z]"))
    total += sum(p.stat().st_size for p in SHIPPED_FIXTURES.glob("*.toml"))
    print(f"make_fixtures: {len(find_fixtures([SHIPPED_FIXTURES]))} fixtures, {total / 1e6:.2f} MB")
    return worst


if __name__ == "__main__":
    sys.exit(run(sys.argv[1:]))
