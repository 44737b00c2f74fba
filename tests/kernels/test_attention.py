"""Causal GQA attention kernels (`08_attention.wgsl`, `10_backward_attention.wgsl`, seed 003).

Runs attention_forward and the three backward kernels through the `session` fixture (lavapipe in
CI) and compares with `workbench.specs.refs.attention`. The references are first checked against
the definition (explicit per-row softmax loops; central finite differences of the forward for the
backward), then the kernels: small and realistic shapes, the split path (short + dKdV) against the
streaming path, the streaming path past 1024 tokens, GQA groups of 3 against MHA with repeated
K/V, the document mask, a NaN kept inside its document by every path, += accumulation, and
refusal of an impossible GQA grouping.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from workbench.checks.runner import check_case
from workbench.errors import UserError
from workbench.specs.attention import SPECS
from workbench.specs.refs import attention as ref

SPEC = {s.name: s for s in SPECS}
FWD = "attention_forward"
STREAM = "attention_backward"
SHORT = "attention_backward_short"
DKDV = "attention_backward_short_dKdV"
ALL = [FWD, STREAM, SHORT, DKDV]

SMALL_SEQS = [1, 7, 33]
SMALL = {"n_heads": 2, "n_kv_heads": 1, "head_dim": 8}
REALISTIC = {"seq": 256, "n_heads": 12, "n_kv_heads": 4, "head_dim": 64}


def _dims(**kw: int) -> dict[str, int]:
    return {**SMALL, **kw}


def _assert_ok(run, kernel: str) -> None:
    """Every output compared with the float64 reference and within the spec's tolerance."""
    assert set(run.compare) == set(SPEC[kernel].outputs), kernel
    for name, c in run.compare.items():
        assert run.outputs[name].shape == run.reference[name].shape, name
        assert np.isfinite(run.outputs[name]).all(), f"{kernel}: {name} has NaN/Inf"
        assert c.ok, f"{kernel}: {c.summary()}"


def _close(got: np.ndarray, want: np.ndarray, what: str) -> None:
    tol = SPEC[STREAM].tolerances["dQ"]
    np.testing.assert_allclose(got, want, rtol=tol.rtol, atol=tol.atol, err_msg=what)


# ---- the references against the definition (no GPU) ------------------------------------------


def test_doc_starts_cuts_equal_documents() -> None:
    np.testing.assert_array_equal(ref.doc_starts(7, 1), [0] * 7)
    np.testing.assert_array_equal(ref.doc_starts(7, 2), [0, 0, 0, 3, 3, 3, 3])
    np.testing.assert_array_equal(ref.doc_starts(4, 4), [0, 1, 2, 3])


def test_reference_forward_is_a_masked_softmax_per_row() -> None:
    rng = np.random.default_rng(1)
    seq, n_heads, n_kv, hd = 6, 4, 2, 3
    q = rng.standard_normal((seq, n_heads, hd))
    k = rng.standard_normal((seq, n_kv, hd))
    v = rng.standard_normal((seq, n_kv, hd))
    seg = np.array([0, 0, 0, 3, 3, 5])
    scale = 0.7
    got = ref.attention_forward(q, k, v, seg, scale, keep_p=True)
    for s in range(seq):
        for h in range(n_heads):
            kvh = h // (n_heads // n_kv)
            js = range(seg[s], s + 1)
            logits = np.array([scale * q[s, h] @ k[j, kvh] for j in js])
            w = np.exp(logits - logits.max())
            w /= w.sum()
            want = sum(wj * v[j, kvh] for wj, j in zip(w, js, strict=True))
            np.testing.assert_allclose(got["O"][s, h], want, rtol=1e-12, atol=1e-12)
            assert math.isclose(
                got["LSE"][s, h], math.log(np.exp(logits).sum()), rel_tol=1e-12, abs_tol=1e-12
            )
            hidden = [j for j in range(seq) if j not in js]
            assert (got["P"][s, h, hidden] == 0).all()


def test_reference_backward_is_the_gradient_of_the_forward() -> None:
    """dQ, dK, dV of L = <dO, O> by central differences; LSE comes from the forward."""
    rng = np.random.default_rng(2)
    seq, n_heads, n_kv, hd = 5, 4, 2, 3
    x = {
        "Q": rng.standard_normal((seq, n_heads, hd)),
        "K": rng.standard_normal((seq, n_kv, hd)),
        "V": rng.standard_normal((seq, n_kv, hd)),
    }
    do = rng.standard_normal((seq, n_heads, hd))
    seg = ref.doc_starts(seq, 2)
    scale = 1 / math.sqrt(hd)

    def loss(a: dict[str, np.ndarray]) -> float:
        return float((do * ref.attention_forward(a["Q"], a["K"], a["V"], seg, scale)["O"]).sum())

    lse = ref.attention_forward(x["Q"], x["K"], x["V"], seg, scale)["LSE"]
    got = ref.attention_backward(x["Q"], x["K"], x["V"], do, lse, seg, scale)
    eps = 1e-6
    for name in ("Q", "K", "V"):
        numeric = np.zeros_like(x[name])
        for idx in np.ndindex(x[name].shape):
            plus = {**x, name: x[name].copy()}
            minus = {**x, name: x[name].copy()}
            plus[name][idx] += eps
            minus[name][idx] -= eps
            numeric[idx] = (loss(plus) - loss(minus)) / (2 * eps)
        np.testing.assert_allclose(got["d" + name], numeric, rtol=1e-6, atol=1e-8, err_msg=name)


def test_reference_dkdv_from_scratch_equals_the_full_backward() -> None:
    rng = np.random.default_rng(3)
    seq, n_heads, n_kv, hd = 6, 6, 2, 4
    q, do = rng.standard_normal((2, seq, n_heads, hd))
    k, v = rng.standard_normal((2, seq, n_kv, hd))
    seg = ref.doc_starts(seq, 3)
    lse = ref.attention_forward(q, k, v, seg, 0.5)["LSE"]
    full = ref.attention_backward(q, k, v, do, lse, seg, 0.5, keep_p=True)
    split = ref.attention_dkdv_from_scratch(q, do, full["P"], full["dS"], n_kv)
    np.testing.assert_allclose(split["dK"], full["dK"], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(split["dV"], full["dV"], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("block_rows", [1, 7])
def test_reference_in_query_blocks_equals_one_block(monkeypatch, block_rows: int) -> None:
    """Blocks of 1 and 7 queries (keys from each block's first document start) against one block
    of every query, with a NaN in one document and an Inf in another: the same numbers, and the
    same NaN/Inf places."""
    rng = np.random.default_rng(6)
    seq, n_heads, n_kv, hd = 50, 4, 2, 8
    q, do = rng.standard_normal((2, seq, n_heads, hd))
    k, v = rng.standard_normal((2, seq, n_kv, hd))
    v[3, 1, 2] = np.nan
    do[40, 0, 1] = np.inf
    seg = ref.doc_starts(seq, 3)
    scale = 0.4

    def both() -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
        with np.errstate(invalid="ignore"):
            fwd = ref.attention_forward(q, k, v, seg, scale, keep_p=True)
            bwd = ref.attention_backward(q, k, v, do, fwd["LSE"], seg, scale, keep_p=True)
        return fwd, bwd

    whole = both()
    monkeypatch.setattr(ref, "BLOCK_ELEMENTS", block_rows * n_heads * seq)
    assert len(ref.query_blocks(seg, n_heads)) == -(-seq // block_rows)
    blocked = both()
    for one, other in zip(whole, blocked, strict=True):
        assert set(one) == set(other)
        for name in one:
            np.testing.assert_allclose(other[name], one[name], rtol=1e-12, atol=1e-12, err_msg=name)
    dk = whole[1]["dK"]
    assert (
        np.isnan(dk[:16]).any() and np.isfinite(dk[16:33]).all() and not np.isfinite(dk[33:]).all()
    )


def test_visible_einsum_leaves_hidden_terms_out() -> None:
    """Against a term-by-term sum: hidden terms skipped, visible ones in IEEE arithmetic."""
    rng = np.random.default_rng(4)
    a = rng.standard_normal((5, 2, 6))
    b = rng.standard_normal((6, 2, 3))
    for arr, k in ((a, 9), (b, 7)):
        flat = arr.reshape(-1)
        flat[rng.choice(flat.size, k, replace=False)] = rng.choice(
            [np.nan, np.inf, -np.inf, 0.0], k
        )
    mask = rng.random((5, 1, 6)) < 0.6
    got = ref.visible_einsum("shj,jhd->shd", a, b, mask)
    want = np.zeros((5, 2, 3))
    with np.errstate(invalid="ignore"):
        for s, h, d in np.ndindex(want.shape):
            want[s, h, d] = sum(a[s, h, j] * b[j, h, d] for j in range(6) if mask[s, 0, j])
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.isposinf(got), np.isposinf(want))
    np.testing.assert_array_equal(np.isneginf(got), np.isneginf(want))
    fin = np.isfinite(want)
    assert fin.any() and not fin.all()
    np.testing.assert_allclose(got[fin], want[fin], rtol=1e-12, atol=1e-12)


def test_reference_keeps_hidden_nan_out() -> None:
    """A NaN in a key hidden from a query changes nothing for it; an all -Inf row has LSE -Inf."""
    rng = np.random.default_rng(5)
    q, do = rng.standard_normal((2, 6, 2, 3))
    k, v = rng.standard_normal((2, 6, 1, 3))
    seg = ref.doc_starts(6, 2)
    clean = ref.attention_forward(q, k, v, seg, 0.5)
    v[1, 0, 2] = np.nan  # key 1: document 1 (queries 1, 2) only
    fwd = ref.attention_forward(q, k, v, seg, 0.5)
    assert np.isnan(fwd["O"][1:3, :, 2]).all()
    np.testing.assert_array_equal(fwd["O"][3:], clean["O"][3:])
    bwd = ref.attention_backward(q, k, v, do, fwd["LSE"], seg, 0.5)
    for name in ("dQ", "dK", "dV"):
        assert np.isfinite(bwd[name][3:]).all(), name
    assert np.isnan(bwd["dQ"][1:3]).all() and np.isfinite(bwd["dQ"][0]).all()

    k[3] = -np.inf  # query 3 sees only key 3; q . k = -Inf where q > 0
    q[3] = np.abs(q[3])
    with np.errstate(all="ignore"):  # the other rows of document 2 meet -Inf too
        fwd = ref.attention_forward(q, k, v, seg, 0.5)
    assert (fwd["LSE"][3] == -np.inf).all() and np.isnan(fwd["O"][3]).all()


# ---- every kernel against its reference ------------------------------------------------------


def test_seed_grids_and_the_rows_per_workgroup_divisor() -> None:
    """The specs keep the seed's grids (one workgroup per query, or per key for dKdV); a kernel
    declaring ROWS_PER_WORKGROUP gets x divided by it, rounding up, and one without it (a user's
    seed-ABI kernel) the seed grid."""
    dims = SPEC[FWD].resolve_dims({"seq": 45, "n_heads": 4, "n_kv_heads": 2})
    cases = ((FWD, (45, 4, 1)), (STREAM, (45, 4, 1)), (SHORT, (45, 4, 1)), (DKDV, (45, 2, 1)))
    for kernel, seed in cases:
        spec = SPEC[kernel]
        assert spec.launch_grid(dims, {}) == seed
        assert spec.launch_grid(dims, {"ROWS_PER_WORKGROUP": 16}) == (3, *seed[1:])
        assert spec.launch_grid(dims, {"ELEMENTS_PER_INVOCATION": 4}) == seed
        with pytest.raises(UserError, match="ROWS_PER_WORKGROUP"):
            spec.launch_grid(dims, {"ROWS_PER_WORKGROUP": 0})


@pytest.mark.parametrize("seq", SMALL_SEQS)
@pytest.mark.parametrize("kernel", ALL)
def test_small_shapes(session, kernel: str, seq: int) -> None:
    run = session.run(kernel, dims=_dims(seq=seq), seed=seq)
    _assert_ok(run, kernel)


@pytest.mark.parametrize("kernel", ALL)
def test_realistic_shape(session, kernel: str) -> None:
    run = session.run(kernel, dims=REALISTIC, seed=11)
    _assert_ok(run, kernel)


@pytest.mark.parametrize("kernel", ALL)
def test_odd_head_dim_and_documents(session, kernel: str) -> None:
    """head_dim 48 leaves 16 of 256 lanes idle in the dQ/dK/dV groups; 3 documents of 33-34."""
    dims = {"seq": 100, "n_heads": 6, "n_kv_heads": 2, "head_dim": 48, "docs": 3}
    _assert_ok(session.run(kernel, dims=dims, seed=12), kernel)


@pytest.mark.parametrize("kernel", ALL)
def test_head_dim_and_seq_off_the_score_tiling(session, kernel: str) -> None:
    """head_dim 37: a chunk of 64 dims ends mid-vec4 (lanes 16 dims apart); seq 45 ends mid-tile
    (64 queries and 32 keys per tile of the forward and streaming kernels, 16 and 32 of the split
    short kernel, 2 keys per dKdV workgroup) with the second document's keys starting mid-tile too
    (2 documents)."""
    dims = {"seq": 45, "n_heads": 4, "n_kv_heads": 2, "head_dim": 37, "docs": 2}
    _assert_ok(session.run(kernel, dims=dims, seed=14), kernel)


@pytest.mark.parametrize("head_dim", [100, 256])
@pytest.mark.parametrize("kernel", ALL)
def test_head_dim_over_one_chunk(session, kernel: str, head_dim: int) -> None:
    """The split and forward kernels hold 64 dims of a row in workgroup memory at a time: 100
    takes a full and a partial chunk, 256 (the largest) four, each with its own pass over the
    output dims; seq 37 and 3 documents keep the tiles partial."""
    dims = {"seq": 37, "n_heads": 4, "n_kv_heads": 2, "head_dim": head_dim, "docs": 3}
    _assert_ok(session.run(kernel, dims=dims, seed=16), kernel)


@pytest.mark.parametrize("kernel", [FWD, STREAM])
def test_streaming_past_1024(session, kernel: str) -> None:
    """Five key blocks of 256 for the last queries: the online softmax and pass A/B loops."""
    run = session.run(kernel, dims=_dims(seq=1100), seed=13)
    _assert_ok(run, kernel)


def test_streaming_unmasked_tiles_beside_document_cuts(session) -> None:
    """The streaming kernel skips the mask on key tiles every query of its 64-query tile sees
    (the second document's tile at 256 against its keys 200..231) and masks the rest: the tile
    at 192 straddles the cut at 200, and the last tile (384..399) is partial."""
    dims = {"seq": 400, "n_heads": 4, "n_kv_heads": 2, "head_dim": 40, "docs": 2}
    _assert_ok(session.run(STREAM, dims=dims, seed=17), STREAM)


@pytest.mark.parametrize("kernel", ALL)
def test_every_check_passes_at_odd_sizes(session, kernel: str) -> None:
    """`workbench check`'s default checks (compare, evidence, grad, special values, determinism)
    at a seq that is a multiple of no tile (64 and 32 of the streaming and forward kernels, 16 and
    32 of the short kernel, 2 of dKdV), two documents, a GQA group of two, head_dim 20 (a partial
    vec4 chunk)."""
    dims = {"seq": 45, "n_heads": 4, "n_kv_heads": 2, "head_dim": 20, "docs": 2}
    report = check_case(session, session.case(kernel, dims=dims))
    failed = [f"{r.kind} {r.name}: {r.summary}" for r in report.failed]
    assert report.ok, failed
    assert {r.kind for r in report.results} >= {"compare", "special", "determinism"}


def test_short_kernels_refuse_long_sequences(session) -> None:
    for kernel in (SHORT, DKDV):
        with pytest.raises(UserError, match="seq=1100"):
            session.run(kernel, dims=_dims(seq=1100))


# ---- the two backward paths and the forward together -----------------------------------------


def test_split_path_equals_streaming_path(session) -> None:
    """forward -> (short -> dKdV) and forward -> streaming, on the forward's own LSE."""
    dims = {"seq": 200, "n_heads": 6, "n_kv_heads": 2, "head_dim": 32, "docs": 2}
    fwd = session.run(FWD, dims=dims, seed=5)
    _assert_ok(fwd, FWD)
    lse = fwd.outputs["LSE"]
    stream = session.run(STREAM, dims=dims, seed=5, inputs={"LSE": lse})
    short = session.run(SHORT, dims=dims, seed=5, inputs={"LSE": lse})
    scratch = {"P_scratch": short.outputs["P_scratch"], "dS_scratch": short.outputs["dS_scratch"]}
    dkdv = session.run(DKDV, dims=dims, seed=5, inputs=scratch)
    for run, kernel in ((stream, STREAM), (short, SHORT), (dkdv, DKDV)):
        _assert_ok(run, kernel)
    # Same Q, K, V, dO for one seed in every spec.
    np.testing.assert_array_equal(dkdv.inputs["Q"], stream.inputs["Q"])
    np.testing.assert_array_equal(fwd.inputs["K"], stream.inputs["K"])
    _close(short.outputs["dQ"], stream.outputs["dQ"], "dQ")
    _close(dkdv.outputs["dK"], stream.outputs["dK"], "dK")
    _close(dkdv.outputs["dV"], stream.outputs["dV"], "dV")
    # And both are the true gradient of <dO, O> (LSE of the float64 forward).
    x = stream.inputs
    seg = x["seg"]
    scale = 1 / math.sqrt(dims["head_dim"])
    true_lse = ref.attention_forward(x["Q"], x["K"], x["V"], seg, scale)["LSE"]
    want = ref.attention_backward(x["Q"], x["K"], x["V"], x["dO"], true_lse, seg, scale)
    for name, got in (("dQ", short.outputs["dQ"]), ("dK", dkdv.outputs["dK"])):
        _close(got, want[name], f"split {name} vs float64 gradient")
    _close(dkdv.outputs["dV"], want["dV"], "split dV vs float64 gradient")


def test_gqa_group_of_three_equals_mha_with_repeated_kv(session) -> None:
    gqa = {"seq": 40, "n_heads": 6, "n_kv_heads": 2, "head_dim": 16}
    mha = {**gqa, "n_kv_heads": 6}
    base = session.run(STREAM, dims=gqa, seed=7)
    _assert_ok(base, STREAM)
    x = base.inputs
    rep = {name: np.repeat(x[name], 3, axis=1) for name in ("K", "V")}
    fwd_gqa = session.run(FWD, dims=gqa, seed=7)
    fwd_mha = session.run(FWD, dims=mha, seed=7, inputs={"Q": x["Q"], **rep})
    _assert_ok(fwd_gqa, FWD)
    _assert_ok(fwd_mha, FWD)
    for name in ("O", "LSE"):
        np.testing.assert_array_equal(fwd_gqa.outputs[name], fwd_mha.outputs[name], err_msg=name)

    inputs = {"Q": x["Q"], "dO": x["dO"], "LSE": x["LSE"], **rep}
    for kernel in (STREAM, SHORT):
        run = session.run(kernel, dims=mha, seed=7, inputs=inputs)
        _assert_ok(run, kernel)
        _close(run.outputs["dQ"], base.outputs["dQ"], f"{kernel} dQ")
    run = session.run(STREAM, dims=mha, seed=7, inputs=inputs)
    for name in ("dK", "dV"):
        grouped = run.outputs[name].reshape(40, 2, 3, 16).sum(axis=2)
        _close(base.outputs[name], grouped, f"{name}: GQA vs summed MHA heads")

    short = session.run(SHORT, dims=gqa, seed=7)
    scratch = {"P_scratch": short.outputs["P_scratch"], "dS_scratch": short.outputs["dS_scratch"]}
    dkdv = session.run(DKDV, dims=gqa, seed=7, inputs=scratch)
    _assert_ok(dkdv, DKDV)
    _close(dkdv.outputs["dK"], base.outputs["dK"], "dKdV dK vs streaming")


# ---- the document mask ------------------------------------------------------------------------


def _docs_case() -> tuple[dict[str, int], int]:
    return _dims(seq=64, docs=2, head_dim=16), 32


def test_seg_mask_forward(session) -> None:
    dims, cut = _docs_case()
    base = session.run(FWD, dims=dims, seed=8)
    _assert_ok(base, FWD)
    assert (base.inputs["seg"][cut:] == cut).all() and (base.inputs["seg"][:cut] == 0).all()
    rng = np.random.default_rng(80)
    changed = {name: base.inputs[name].copy() for name in ("K", "V")}
    for arr in changed.values():
        arr[:cut] = rng.standard_normal(arr[:cut].shape)
    run = session.run(FWD, dims=dims, seed=8, inputs=changed)
    _assert_ok(run, FWD)
    for name in ("O", "LSE"):
        np.testing.assert_array_equal(run.outputs[name][cut:], base.outputs[name][cut:], name)
        assert not np.array_equal(run.outputs[name][:cut], base.outputs[name][:cut]), name


def test_seg_mask_backward_split_path(session) -> None:
    dims, cut = _docs_case()
    base = session.run(SHORT, dims=dims, seed=9)
    _assert_ok(base, SHORT)
    p = base.outputs["P_scratch"]
    mask = ref.visible(base.inputs["seg"])[:, None, :]
    assert (p[~np.broadcast_to(mask, p.shape)] == 0).all(), "P above the causal/document mask"
    assert (base.outputs["dS_scratch"][~np.broadcast_to(mask, p.shape)] == 0).all()
    assert (p[cut:, :, :cut] == 0).all()

    rng = np.random.default_rng(90)
    x = base.inputs
    changed = {name: x[name].copy() for name in ("K", "V")}
    for arr in changed.values():
        arr[:cut] = rng.standard_normal(arr[:cut].shape)
    # The saved LSE of document 1 changes with its K; document 2's stays.
    scale = 1 / math.sqrt(dims["head_dim"])
    lse = ref.attention_forward(x["Q"], changed["K"], changed["V"], x["seg"], scale)["LSE"]
    lse = lse.astype(np.float32)
    np.testing.assert_array_equal(lse[cut:], x["LSE"][cut:])
    run = session.run(SHORT, dims=dims, seed=9, inputs={**changed, "LSE": lse})
    _assert_ok(run, SHORT)
    np.testing.assert_array_equal(run.outputs["dQ"][cut:], base.outputs["dQ"][cut:])
    assert not np.array_equal(run.outputs["dQ"][:cut], base.outputs["dQ"][:cut])

    def dkdv(short_run, do: np.ndarray | None = None):
        inputs = {n: short_run.outputs[n] for n in ("P_scratch", "dS_scratch")}
        if do is not None:
            inputs["dO"] = do
        out = session.run(DKDV, dims=dims, seed=9, inputs=inputs)
        _assert_ok(out, DKDV)
        return out

    kv_base, kv_run = dkdv(base), dkdv(run)
    for name in ("dK", "dV"):
        np.testing.assert_array_equal(kv_run.outputs[name][cut:], kv_base.outputs[name][cut:])

    # dO of document 2 queries reaches no key of document 1.
    do = x["dO"].copy()
    do[cut:] = rng.standard_normal(do[cut:].shape)
    short_do = session.run(SHORT, dims=dims, seed=9, inputs={"dO": do})
    kv_do = dkdv(short_do, do)
    for name in ("dK", "dV"):
        np.testing.assert_array_equal(kv_do.outputs[name][:cut], kv_base.outputs[name][:cut])
        assert not np.array_equal(kv_do.outputs[name][cut:], kv_base.outputs[name][cut:])


def test_seg_mask_backward_streaming(session) -> None:
    dims, cut = _docs_case()
    base = session.run(STREAM, dims=dims, seed=10)
    _assert_ok(base, STREAM)
    rng = np.random.default_rng(100)
    do = base.inputs["dO"].copy()
    do[cut:] = rng.standard_normal(do[cut:].shape)
    run = session.run(STREAM, dims=dims, seed=10, inputs={"dO": do})
    _assert_ok(run, STREAM)
    # dQ is owned (deterministic); dK/dV sums are atomic, so their order of adds may differ.
    np.testing.assert_array_equal(run.outputs["dQ"][:cut], base.outputs["dQ"][:cut])
    for name in ("dK", "dV"):
        np.testing.assert_allclose(
            run.outputs[name][:cut], base.outputs[name][:cut], rtol=1e-5, atol=1e-6
        )


# ---- buffers as the seed uses them ------------------------------------------------------------


def test_gradients_add_to_what_the_buffers_hold(session) -> None:
    """The seed's += semantics: dQ, dK, dV accumulate over micro-steps."""
    dims = _dims(seq=20, n_heads=4, n_kv_heads=2)
    rng = np.random.default_rng(14)
    start = {
        "dQ": rng.standard_normal((20, 4, 8)).astype(np.float32),
        "dK": rng.standard_normal((20, 2, 8)).astype(np.float32),
        "dV": rng.standard_normal((20, 2, 8)).astype(np.float32),
    }
    stream = session.run(STREAM, dims=dims, seed=14, inputs=start)
    short = session.run(SHORT, dims=dims, seed=14, inputs={"dQ": start["dQ"]})
    scratch = {n: short.outputs[n] for n in ("P_scratch", "dS_scratch")}
    dkdv = session.run(
        DKDV, dims=dims, seed=14, inputs={**scratch, "dK": start["dK"], "dV": start["dV"]}
    )
    for run in (stream, short, dkdv):
        for name, c in run.compare.items():
            if name in start:
                _close(run.outputs[name] - start[name], run.reference[name], name)
            else:
                assert c.ok, c.summary()


def test_short_writes_every_scratch_element(session) -> None:
    """Whole rows are flushed, hidden keys as 0: stale scratch from another step cannot leak."""
    dims = _dims(seq=45, docs=2)
    shape = (45, 2, 45)
    stale = np.full(shape, np.nan, dtype=np.float32)
    run = session.run(SHORT, dims=dims, seed=15, inputs={"P_scratch": stale, "dS_scratch": stale})
    _assert_ok(run, SHORT)


@pytest.mark.parametrize(
    ("name", "at"), [("dO", (15, 1, 3)), ("V", (5, 0, 2))], ids=["dO-doc2", "V-doc1"]
)
def test_nan_stays_inside_its_document(session, name: str, at: tuple[int, int, int]) -> None:
    """One NaN in one document: the split path (short + dKdV), the streaming path and the
    forward put NaN exactly where the float64 reference does, and never in the other document.
    A NaN in dO makes D NaN, so the split path once wrote 0 * NaN into the hidden scratch
    entries and the dKdV kernel multiplied them (and P's zeros) into earlier documents' keys."""
    dims = {"seq": 24, "n_heads": 2, "n_kv_heads": 1, "head_dim": 8, "docs": 2}
    cut = 12
    spec = SPEC[STREAM]
    x = spec.inputs(spec.resolve_dims(dims), 16)
    x[name] = x[name].copy()
    x[name][at] = np.nan
    scale = 1 / math.sqrt(dims["head_dim"])
    want = ref.attention_backward(
        x["Q"], x["K"], x["V"], x["dO"], x["LSE"], x["seg"], scale, keep_p=True
    )
    other = slice(None, cut) if at[0] >= cut else slice(cut, None)
    for out in ("dQ", "dK", "dV", "dS"):
        assert not np.isnan(want[out][other]).any(), f"reference {out} crosses the documents"
    assert np.isnan(want["dQ"]).any() and np.isnan(want["dK"]).any()

    stream = session.run(STREAM, dims=dims, seed=16, inputs={name: x[name]}, reference=False)
    short = session.run(SHORT, dims=dims, seed=16, inputs={name: x[name]}, reference=False)
    scratch = {n: short.outputs[n] for n in ("P_scratch", "dS_scratch")}
    dkdv = session.run(DKDV, dims=dims, seed=16, inputs={"dO": x["dO"], **scratch}, reference=False)
    hidden = ~np.broadcast_to(ref.visible(x["seg"])[:, None, :], scratch["P_scratch"].shape)
    for n, arr in scratch.items():
        assert (arr[hidden] == 0).all(), f"{n}: hidden entries must be exact zeros"
    checks = [(stream.outputs[o], want[o], f"streaming {o}") for o in ("dQ", "dK", "dV")]
    checks += [
        (short.outputs["dQ"], want["dQ"], "split dQ"),
        (scratch["P_scratch"], want["P"], "P_scratch"),
        (scratch["dS_scratch"], want["dS"], "dS_scratch"),
        (dkdv.outputs["dK"], want["dK"], "split dK"),
        (dkdv.outputs["dV"], want["dV"], "split dV"),
    ]
    if name == "V":
        fwd = session.run(FWD, dims=dims, seed=16, inputs={"V": x["V"]}, reference=False)
        o = ref.attention_forward(x["Q"], x["K"], x["V"], x["seg"], scale)["O"]
        assert np.isnan(o).any() and not np.isnan(o[other]).any()
        checks.append((fwd.outputs["O"], o, "forward O"))
        assert np.isfinite(fwd.outputs["LSE"]).all()
    for got, exp, what in checks:
        np.testing.assert_array_equal(np.isnan(got), np.isnan(exp), err_msg=f"{what}: NaN places")
        fin = ~np.isnan(exp)
        assert np.isfinite(got[fin]).all(), what
        _close(got[fin], exp[fin], what)


# ---- refusals ---------------------------------------------------------------------------------


@pytest.mark.parametrize("kernel", ALL)
def test_heads_not_a_multiple_of_kv_heads_is_refused(session, kernel: str) -> None:
    dims = {"seq": 8, "n_heads": 5, "n_kv_heads": 2, "head_dim": 8}
    with pytest.raises(UserError, match="not a multiple of n_kv_heads=2"):
        session.run(kernel, dims=dims)
    spec = SPEC[kernel]
    with pytest.raises(UserError, match="multiple"):
        spec.buffers(spec.resolve_dims(dims))
    with pytest.raises(UserError, match="multiple"):
        spec.inputs(spec.resolve_dims(dims), 0)


def test_more_documents_than_tokens_is_refused(session) -> None:
    with pytest.raises(UserError, match="docs=9"):
        session.run(FWD, dims=_dims(seq=8, docs=9))
