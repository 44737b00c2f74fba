"""The changed-ABI variants that benchmarks/bench_kernels.py times beside the seed kernels
(benchmarks/abi_variants/, a described corpus): each passes `check` against the shipped float64
references at sizes that leave a partial workgroup, a planted bug fails, and a size the vec4 ABI
cannot hold is refused with the reason."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest

from benchmarks.bench_kernels import ROWS, Row, measure, missing_features
from workbench.gpu.adapters import list_adapters
from workbench.session import Session
from workbench.wgsl.corpus import load_corpus

VARIANTS = Path(__file__).resolve().parents[2] / "benchmarks" / "abi_variants"
SMALL = {
    "swiglu_combine": {"seq": 3, "d_ff": 20},
    "rope_k": {"seq": 5},
    "attention_backward": {"seq": 77, "n_heads": 6, "n_kv_heads": 2, "head_dim": 64},
}

# Odd sizes: 7 x 12 floats are 21 vec4s (one partial workgroup); RoPE at 7 tokens of 3 heads of
# 8 and a position offset, so angles are not all zero.
ODD = {
    "swiglu_combine_vec4": ("seq=7", "d_ff=12"),
    "ffn_gelu_backward_vec4": ("seq=7", "d_ff=12"),
    "ffn_swiglu_backward_vec4": ("seq=7", "d_ff=12"),
    "rope_k_vec4": ("seq=7", "n_kv_heads=3", "head_dim=8", "pos_offset=5"),
    "rope_k_backward_vec4": ("seq=7", "n_kv_heads=3", "head_dim=8", "pos_offset=5"),
    # 77 queries: a second, partial tile of 64, the last key tile partial too, and a GQA group
    # of three query heads per kv head.
    "attention_backward_o": ("seq=77", "n_heads=6", "n_kv_heads=2"),
    "attention_backward_of32": ("seq=77", "n_heads=6", "n_kv_heads=2"),
    "attention_backward_f32": ("seq=77", "n_heads=6", "n_kv_heads=2"),
}


@pytest.mark.parametrize("kernel", sorted(ODD))
def test_variant_passes_check_at_odd_sizes(kernel: str, cli) -> None:
    dims = [arg for d in ODD[kernel] for arg in ("--dim", d)]
    res = cli("check", kernel, "--corpus", str(VARIANTS), *dims, "--json")
    assert res.rc == 0, res.out + res.err
    report = res.json()
    assert report["verdict"] == "pass"
    compares = [r for r in report["results"] if r["kind"] == "compare"]
    assert compares and all(r["ok"] and not r["skipped"] for r in compares)


@pytest.mark.parametrize(
    ("file", "kernel", "old", "new"),
    [
        (
            "rope_vec4.wgsl",
            "rope_k_vec4",
            "let ra = a * t.c - b * sn;",
            "let ra = a * t.c + b * sn;",
        ),
        (
            "attention_o.wgsl",
            "attention_backward_o",
            "big_d = big_d + dO[o_base + d] * O[o_base + d];",
            "big_d = big_d + dO[o_base + d] * O[o_base + (d + 1u) % hd];",
        ),
        (
            "attention_f32.wgsl",
            "attention_backward_of32",
            "atomicAdd(&dV[i1.z], v1.z);",
            "atomicAdd(&dV[i1.z], v1.y);",
        ),
        (
            "attention_backward_body.wgsl",
            "attention_backward_f32",
            "select(vec4<f32>(0.0), sh_p[i8] * sh_ds[i8], va)",
            "select(vec4<f32>(0.0), sh_p[i8] * sh_ds[i8 + 1u], va)",
        ),
        (
            "ffn_vec4.wgsl",
            "swiglu_combine_vec4",
            "s == vec4<f32>(0.0)) * up[i];",
            "s == vec4<f32>(0.0)) * up[i ^ 1u];",
        ),
    ],
)
def test_planted_bug_fails(tmp_path: Path, cli, file: str, kernel: str, old: str, new: str) -> None:
    root = tmp_path / "variants"
    shutil.copytree(VARIANTS, root)
    text = (root / file).read_text()
    assert old in text
    (root / file).write_text(text.replace(old, new))
    res = cli("check", kernel, "--corpus", str(root), "--what", "compare", "--dim", "seq=7")
    assert res.rc == 1 and "verdict: FAIL" in res.out


def test_a_size_the_vec4_abi_cannot_hold_is_refused(cli) -> None:
    res = cli("run", "swiglu_combine_vec4", "--corpus", str(VARIANTS), "--dim", "d_ff=10")
    assert res.rc == 2 and "d_ff" in res.err and "Traceback" not in res.err


def test_rope_positions_past_the_atol_bound_are_refused(cli) -> None:
    # The one TOML atol holds up to seq + pos_offset = 24,576; beyond it a check would fail a
    # right kernel, so the dims stop there.
    res = cli("run", "rope_k_vec4", "--corpus", str(VARIANTS), "--dim", "seq=16385")
    assert res.rc == 2 and "seq=16385 is outside [1, 16384]" in res.err


def test_the_benchmark_times_each_variant_over_its_seed_kernels_bytes() -> None:
    session = Session.open()
    variants = Session(load_corpus(VARIANTS), session.gpu)
    rows = [r for r in ROWS if r.seed]
    described = {k.name for k in variants.corpus.kernels}
    assert {r.seed for r in rows} >= {"swiglu_combine", "rope_k"}
    assert all(set(r.kernels) <= described for r in rows)
    # One row per variant kernel (the attention variants have a row per sequence length).
    for row in {r.kernels: r for r in rows if r.seed in SMALL}.values():
        assert row.seed is not None
        small = dataclasses.replace(row, dims=SMALL[row.seed])
        res = measure(session, small, None, {}, reps=2, check=True, variants=variants)
        assert res.checked == f"{row.kernels[0]}: ok"
        seed_cost = session.case(row.seed, dims=SMALL[row.seed]).cost
        assert seed_cost is not None and res.nbytes == seed_cost.bytes > 0


def test_the_f32_atomic_variant_rows_sit_beside_the_o_bound_ones() -> None:
    def rows_of(kernel: str) -> list[Row]:
        return [r for r in ROWS if r.kernels == (kernel,)]

    o, f32 = rows_of("attention_backward_o"), rows_of("attention_backward_of32")
    assert [r.dims["seq"] for r in f32] == [r.dims["seq"] for r in o] == [2048, 8192, 16384]
    assert [r.label for r in f32] == [
        f"attention backward, streaming, seq {r.dims['seq']}, O-bound f32-atomic ABI variant"
        for r in o
    ]
    assert all(
        (a.peer, a.seed, a.dims) == (b.peer, b.seed, b.dims) for a, b in zip(o, f32, strict=True)
    )


def test_the_f32_atomic_variant_is_skipped_where_the_adapter_lacks_the_feature() -> None:
    if not any(a.backend == "OpenGL" for a in list_adapters()):
        pytest.skip("no OpenGL adapter on this machine")
    gl = Session.open(adapter="gl")
    assert "shader-float32-atomic" not in gl.adapter.features
    variants = Session(load_corpus(VARIANTS), gl.gpu)
    f32_row = next(r for r in ROWS if r.kernels == ("attention_backward_of32",))
    o_row = next(r for r in ROWS if r.kernels == ("attention_backward_o",))
    assert missing_features(f32_row, gl, variants) == ["shader-float32-atomic"]
    assert missing_features(o_row, gl, variants) == []


def test_only_the_f32_atomic_variants_need_float_atomics() -> None:
    corpus = load_corpus(VARIANTS)
    assert corpus.find("attention_backward_of32").features == ("shader-float32-atomic",)
    assert corpus.find("attention_backward_f32").features == ("shader-float32-atomic",)
    assert corpus.find("attention_backward_o").features == ()
