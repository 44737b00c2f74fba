"""Token-embedding kernels (`01_embedding.wgsl`, seed 004) against float64 references.

Runs embed_lookup, embed_backward and embed_lookup_w16 through the `session` fixture (lavapipe in
CI) and compares with `workbench.specs.refs.embedding`, computed here from the uploaded inputs. The
references are first checked against plain loops over the definition, and the seed's checklist
(out-of-range ids, a token repeated 10 times, NaN/Inf gradients, w16 == f32 lookup) is tested
on the kernels directly.
"""

from __future__ import annotations

import numpy as np
import pytest

from workbench.specs.embedding import SPECS
from workbench.specs.refs import embedding as ref

from .conftest import assert_outputs_close

SPEC = {s.name: s for s in SPECS}
LOOKUP = "embed_lookup"
BACKWARD = "embed_backward"
W16 = "embed_lookup_w16"

# (seq, d_model, vocab): one element; seq * d_model = 703 and 1500, not multiples of 256; exactly
# one workgroup per row; a vocabulary smaller than the sequence so ids repeat; 3075 elements, three
# lookup blocks of 1024 (256 invocations x 4) and 3 more, one w16 block of 2048 (x 8) and 1027
# more, rows of odd width straddling them.
SMALL = [(1, 1, 1), (37, 19, 50), (3, 256, 7), (5, 300, 11), (64, 24, 3), (41, 75, 13)]
SMALL_IDS = [f"seq{s}-d{d}-vocab{v}" for s, d, v in SMALL]


def _dims(seq: int, d_model: int, vocab: int) -> dict[str, int]:
    return {"seq": seq, "d_model": d_model, "vocab": vocab}


def _backward(session, tokens: np.ndarray, grad_out: np.ndarray, vocab: int):
    """embed_backward on the given tokens and [seq, d_model] gradients."""
    seq, d_model = grad_out.shape
    return session.run(
        BACKWARD,
        dims=_dims(seq, d_model, vocab),
        inputs={"tokens": tokens, "grad_out": grad_out},
        seed=0,
    )


# ---- the references against the definition (no GPU) ------------------------------------------


def test_reference_lookup_is_row_gather_with_zero_rows() -> None:
    rng = np.random.default_rng(1)
    table = rng.standard_normal((6, 4))
    tokens = np.array([0, 5, 6, 2, 7, 5, 0xFFFFFFFF], dtype=np.uint32)
    got = ref.embed_lookup(tokens, table)
    for s, t in enumerate(tokens):
        want = table[t] if t < 6 else np.zeros(4)
        np.testing.assert_array_equal(got[s], want)


def test_reference_backward_is_a_scatter_add() -> None:
    rng = np.random.default_rng(2)
    tokens = np.array([1, 3, 1, 9, 1, 0], dtype=np.uint32)
    grad_out = rng.standard_normal((6, 3))
    grad_out[2, 1] = np.nan
    grad_out[4, 0] = -np.inf
    got = ref.embed_backward(tokens, grad_out, vocab_size=4)
    want = np.zeros((4, 3))
    for s, t in enumerate(tokens):
        for d in range(3):
            if t < 4 and np.isfinite(grad_out[s, d]):
                want[t, d] += grad_out[s, d]
    np.testing.assert_allclose(got, want, rtol=1e-15, atol=0)
    # Linear in grad_out: the backward of a gather is the adjoint of the lookup.
    table = rng.standard_normal((4, 3))
    g = rng.standard_normal((6, 3))
    lhs = np.sum(ref.embed_lookup(tokens, table) * g)
    rhs = np.sum(table * ref.embed_backward(tokens, g, vocab_size=4))
    assert lhs == pytest.approx(rhs, rel=1e-12)


# ---- the kernels ------------------------------------------------------------------------------


@pytest.mark.parametrize("kernel", [LOOKUP, W16])
@pytest.mark.parametrize(("seq", "d_model", "vocab"), SMALL, ids=SMALL_IDS)
def test_lookup_matches_reference(session, kernel: str, seq: int, d_model: int, vocab: int) -> None:
    run = session.run(kernel, dims=_dims(seq, d_model, vocab), seed=seq + d_model)
    suffix = "_w16" if kernel == W16 else ""
    tokens, table = run.inputs[f"tokens{suffix}"], run.inputs[f"table{suffix}"]
    assert table.dtype == (np.float16 if kernel == W16 else np.float32)
    expected = ref.embed_lookup(tokens, table)
    assert_outputs_close(run, SPEC[kernel], {f"out{suffix}": expected})
    # A copy, so exact: the f32 view of the table row itself.
    np.testing.assert_array_equal(run.outputs[f"out{suffix}"], table[tokens].astype(np.float32))


@pytest.mark.parametrize(("seq", "d_model", "vocab"), SMALL, ids=SMALL_IDS)
def test_backward_matches_reference(session, seq: int, d_model: int, vocab: int) -> None:
    run = session.run(BACKWARD, dims=_dims(seq, d_model, vocab), seed=seq + vocab)
    expected = ref.embed_backward(run.inputs["tokens"], run.inputs["grad_out"], vocab)
    assert_outputs_close(run, SPEC[BACKWARD], {"grad_table": expected})


@pytest.mark.parametrize("kernel", [LOOKUP, W16, BACKWARD])
def test_empty_sequence(session, kernel: str) -> None:
    run = session.run(kernel, dims=_dims(0, 8, 5), seed=0)
    (out,) = SPEC[kernel].outputs
    want = (5, 8) if kernel == BACKWARD else (0, 8)
    assert run.outputs[out].shape == want
    assert not run.outputs[out].any()


def test_realistic_shape(session) -> None:
    """The seed defaults: seq 512, d_model 768, vocab 16384 (a 48 MiB f32 table)."""
    fwd = session.run(LOOKUP, seed=11)
    assert_outputs_close(
        fwd, SPEC[LOOKUP], {"out": ref.embed_lookup(fwd.inputs["tokens"], fwd.inputs["table"])}
    )
    w16 = session.run(W16, seed=11)
    expected = ref.embed_lookup(w16.inputs["tokens_w16"], w16.inputs["table_w16"])
    assert_outputs_close(w16, SPEC[W16], {"out_w16": expected})
    bwd = session.run(BACKWARD, seed=11)
    expected = ref.embed_backward(bwd.inputs["tokens"], bwd.inputs["grad_out"], 16384)
    assert_outputs_close(bwd, SPEC[BACKWARD], {"grad_table": expected})


def test_out_of_range_tokens_give_zero_rows_and_are_skipped(session) -> None:
    # With d_model = 256, id 2**24 times d_model wraps to 0 in u32: a kernel that forgot the
    # range check would read (or add into) row 0 instead of reading past the table, which the
    # adapter's robust access could silently turn into zeros. Row 0 is named by no valid id.
    vocab, d_model = 10, 256
    tokens = np.array([3, vocab, 1 << 24, vocab + 1, 9, 0xFFFFFFFF, 3, 5], dtype=np.uint32)
    dims = _dims(len(tokens), d_model, vocab)
    bad = tokens >= vocab

    fwd = session.run(LOOKUP, dims=dims, inputs={"tokens": tokens}, seed=5)
    out = fwd.outputs["out"]
    assert not out[bad].any()
    np.testing.assert_array_equal(out[~bad], fwd.inputs["table"][tokens[~bad]])
    assert_outputs_close(fwd, SPEC[LOOKUP], {"out": ref.embed_lookup(tokens, fwd.inputs["table"])})

    w16 = session.run(W16, dims=dims, inputs={"tokens_w16": tokens}, seed=5)
    assert not w16.outputs["out_w16"][bad].any()
    np.testing.assert_array_equal(
        w16.outputs["out_w16"][~bad], w16.inputs["table_w16"][tokens[~bad]].astype(np.float32)
    )

    bwd = session.run(BACKWARD, dims=dims, inputs={"tokens": tokens}, seed=5)
    grad = bwd.outputs["grad_table"]
    expected = ref.embed_backward(tokens, bwd.inputs["grad_out"], vocab)
    assert_outputs_close(bwd, SPEC[BACKWARD], {"grad_table": expected})
    # Rows no valid position names stay exactly zero: nothing was written out of place.
    untouched = np.setdiff1d(np.arange(vocab), tokens[~bad])
    assert 0 in untouched
    assert not grad[untouched].any()


def test_repeated_token_sums_all_positions(session) -> None:
    """The same id at 10 positions: 10 threads race on each slot of one row."""
    vocab, d_model, seq = 16, 300, 24
    # Id 7 at 10 scattered positions, id 2 at the other 14.
    tokens = np.full(seq, 2, dtype=np.uint32)
    tokens[[0, 2, 5, 6, 9, 13, 14, 17, 20, 23]] = 7
    grad_out = np.random.default_rng(3).standard_normal((seq, d_model)).astype(np.float32)
    run = _backward(session, tokens, grad_out, vocab)
    grad = run.outputs["grad_table"]
    exact = grad_out.astype(np.float64)
    np.testing.assert_allclose(grad[7], exact[tokens == 7].sum(axis=0), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(grad[2], exact[tokens == 2].sum(axis=0), rtol=1e-5, atol=1e-5)
    assert not np.delete(grad, [2, 7], axis=0).any()
    assert_outputs_close(
        run, SPEC[BACKWARD], {"grad_table": ref.embed_backward(tokens, grad_out, vocab)}
    )


def test_one_slot_under_full_contention(session) -> None:
    """All 512 positions hold one id and d_model is 1: every thread of two workgroups adds into
    the same slot, so a lost update (a plain read-add-write) shows as a wrong sum."""
    seq = 512
    tokens = np.full(seq, 3, dtype=np.uint32)
    grad_out = np.random.default_rng(6).standard_normal((seq, 1)).astype(np.float32)
    run = _backward(session, tokens, grad_out, 4)
    grad = run.outputs["grad_table"][:, 0]
    exact = grad_out.astype(np.float64)
    # Any order of seq f32 adds is within (seq - 1) * 2^-24 * sum|g| of the exact sum.
    bound = (seq - 1) * 2.0**-24 * np.abs(exact).sum()
    assert abs(grad[3] - exact.sum()) <= bound
    assert not grad[[0, 1, 2]].any()


def test_non_finite_gradients_are_skipped(session) -> None:
    vocab, d_model, seq = 5, 40, 12
    rng = np.random.default_rng(4)
    tokens = rng.integers(0, vocab, seq, dtype=np.uint32)
    grad_out = rng.standard_normal((seq, d_model)).astype(np.float32)
    grad_out[0, :] = np.nan
    grad_out[3, 5] = np.inf
    grad_out[7, 39] = -np.inf
    grad_out[11, ::2] = np.nan
    run = _backward(session, tokens, grad_out, vocab)
    grad = run.outputs["grad_table"]
    assert np.isfinite(grad).all()
    assert_outputs_close(
        run, SPEC[BACKWARD], {"grad_table": ref.embed_backward(tokens, grad_out, vocab)}
    )


def test_w16_equals_f32_lookup_bitwise(session) -> None:
    """On a table every f16 value can hold, the f16 and f32 lookups agree bit for bit."""
    dims = _dims(70, 129, 40)
    fwd16 = session.run(W16, dims=dims, seed=9)
    table16 = fwd16.inputs["table_w16"]
    tokens = fwd16.inputs["tokens_w16"]
    fwd32 = session.run(
        LOOKUP, dims=dims, inputs={"tokens": tokens, "table": table16.astype(np.float32)}, seed=9
    )
    np.testing.assert_array_equal(
        fwd16.outputs["out_w16"].view(np.uint32), fwd32.outputs["out"].view(np.uint32)
    )


def test_grid_folded_past_65535_workgroups(session) -> None:
    """65,600 * 256 elements need 65,600 workgroups of one element per invocation: the host folds
    the backward's grid into 2-D and flat_id must still give every element exactly one thread.
    The lookup takes 4 elements per invocation (16,400 workgroups, unfolded; folding it would need
    more than lavapipe's 128 MiB per binding)."""
    dims = _dims(65600, 256, 4096)
    fwd = session.run(LOOKUP, dims=dims, seed=12)
    assert fwd.case.grid == (16400, 1, 1)
    assert session.case(W16, dims=dims).grid == (8200, 1, 1)
    np.testing.assert_array_equal(fwd.outputs["out"], fwd.inputs["table"][fwd.inputs["tokens"]])
    bwd = session.run(BACKWARD, dims=dims, seed=12)
    expected = ref.embed_backward(bwd.inputs["tokens"], bwd.inputs["grad_out"], 4096)
    assert_outputs_close(bwd, SPEC[BACKWARD], {"grad_table": expected})
