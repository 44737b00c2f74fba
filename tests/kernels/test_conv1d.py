"""Causal conv1d kernels (`12_causal_conv1d.wgsl`, seed 002) against float64 references.

Runs the real kernels through the `session` fixture (lavapipe in CI) and compares with
`workbench.specs.refs.conv1d`, computed here from the uploaded inputs. The references themselves are
first checked against independent formulations (np.convolve, finite differences) so that a shared
convention bug cannot pass unnoticed. NaN/Inf weights are followed through the zero padding, which
kernels and reference multiply as causal-conv1d's CUDA forward does.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from workbench.specs.conv1d import SPECS
from workbench.specs.refs import conv1d as ref

from .conftest import assert_outputs_close

SPEC = {s.name: s for s in SPECS}
FWD = "causal_conv1d_fwd"
BWD = "causal_conv1d_bwd"

# Every width and flag at the two seqlens that cross chunk and workgroup edges unevenly (151 < one
# workgroup's 256 steps; 1134 spans two 1024-step backward chunks), a few at the degenerate and
# just-past-a-workgroup-half lengths, and where a backward chunk's look-ahead halo straddles the
# row end (1025, 1027: one or three steps past a chunk), a third chunk starts (2049) or a second
# workgroup of 4 chunks takes the last 4 steps (4100). Batch 2, dim 64 throughout.
FULL = [
    (seqlen, width, bias, silu)
    for seqlen, width, bias, silu in itertools.product((151, 1134), (2, 3, 4), (0, 1), (0, 1))
]
EDGE = [
    (1, 4, 1, 1),
    (1, 2, 0, 0),
    (2, 4, 0, 1),
    (2, 3, 1, 0),
    (129, 4, 1, 1),
    (129, 2, 0, 1),
    (129, 3, 1, 0),
    (1025, 4, 1, 1),
    (1027, 2, 1, 1),
    (2049, 3, 0, 1),
    (4100, 4, 1, 1),
]
CASES = FULL + EDGE
IDS = [f"L{s}-W{w}-bias{b}-silu{a}" for s, w, b, a in CASES]


def _dims(seqlen: int, width: int, bias: int, silu: int, **extra: int) -> dict[str, int]:
    return {
        "batch": 2,
        "dim": 64,
        "seqlen": seqlen,
        "width": width,
        "bias": bias,
        "silu": silu,
        **extra,
    }


def _bias(run, dims: dict[str, int]) -> np.ndarray | None:
    return run.inputs["bias"] if dims["bias"] else None


# ---- the references against independent formulations (no GPU) --------------------------------


def test_reference_forward_is_the_causal_conv1d_convention() -> None:
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3, 17))
    weight = rng.standard_normal((3, 4))
    bias = rng.standard_normal(3)
    got = ref.causal_conv1d_fwd(x, weight, bias, silu=False)
    # F.conv1d(x, w, padding=W-1, groups=dim)[..., :L] is a cross-correlation, so in
    # convolution terms the filter is reversed: weight[:, W-1] meets the current step.
    for b, c in itertools.product(range(2), range(3)):
        want = np.convolve(x[b, c], weight[c, ::-1])[:17] + bias[c]
        np.testing.assert_allclose(got[b, c], want, rtol=1e-12, atol=1e-12)
    # Only the last tap sees step 0.
    np.testing.assert_allclose(got[:, :, 0], x[:, :, 0] * weight[None, :, 3] + bias, rtol=1e-12)


@pytest.mark.parametrize("silu", [False, True])
@pytest.mark.parametrize("with_bias", [False, True])
def test_reference_backward_matches_finite_differences(silu: bool, with_bias: bool) -> None:
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 2, 6))
    weight = rng.standard_normal((2, 3))
    bias = rng.standard_normal(2) if with_bias else None
    dout = rng.standard_normal((2, 2, 6))
    grads = ref.causal_conv1d_bwd(x, weight, bias, dout, silu)

    def loss(xv: np.ndarray, wv: np.ndarray, bv: np.ndarray | None) -> float:
        return float(np.sum(dout * ref.causal_conv1d_fwd(xv, wv, bv, silu)))

    def numeric(arr: np.ndarray, f) -> np.ndarray:
        out = np.zeros_like(arr)
        h = 1e-6
        for idx in np.ndindex(arr.shape):
            plus, minus = arr.copy(), arr.copy()
            plus[idx] += h
            minus[idx] -= h
            out[idx] = (f(plus) - f(minus)) / (2 * h)
        return out

    np.testing.assert_allclose(grads["dx"], numeric(x, lambda v: loss(v, weight, bias)), atol=1e-7)
    np.testing.assert_allclose(
        grads["dweight"], numeric(weight, lambda v: loss(x, v, bias)), atol=1e-7
    )
    if bias is not None:
        np.testing.assert_allclose(
            grads["dbias"], numeric(bias, lambda v: loss(x, weight, v)), atol=1e-7
        )
    else:
        assert not grads["dbias"].any()


def test_reference_multiplies_the_padding() -> None:
    """Tap k meets the zero padding at steps t < W - 1 - k, and 0 x NaN / 0 x Inf is NaN there,
    as in causal-conv1d's CUDA forward; np.convolve, which skips those terms, stays finite."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, 2, 9))
    weight = rng.standard_normal((2, 4))
    weight[0, 0] = np.nan
    weight[1, 1] = np.inf
    with np.errstate(invalid="ignore"):
        out = ref.causal_conv1d_fwd(x, weight, None, silu=False)
        grads = ref.causal_conv1d_bwd(x, weight, None, np.ones_like(x), silu=False)
    assert np.isnan(out[0, 0]).all()
    assert np.isnan(out[0, 1, :2]).all() and np.isinf(out[0, 1, 2:]).all()
    assert np.isfinite(np.convolve(x[0, 0], weight[0, ::-1])[:1]).all()
    # dx looks W - 1 steps ahead, past seqlen into zeros: every step meets the bad tap.
    assert np.isnan(grads["dx"][0, 0]).all() and np.isfinite(grads["dweight"]).all()


def _same_specials(got: np.ndarray, want: np.ndarray, what: str) -> None:
    for test in (np.isnan, np.isposinf, np.isneginf):
        np.testing.assert_array_equal(test(got), test(want), err_msg=f"{what}: {test.__name__}")


@pytest.mark.parametrize("silu", [0, 1])
def test_nonfinite_weight_matches_reference(session, silu: int) -> None:
    """NaN and +-Inf weights through forward and backward: NaN/Inf exactly where the reference
    has them, the padded first W - 1 steps included; every other channel untouched."""
    dims = _dims(37, 4, 1, silu)
    weight = SPEC[FWD].inputs(SPEC[FWD].resolve_dims(dims), 5)["weight"].copy()
    weight[1, 0] = np.nan
    weight[2, 0] = np.inf
    weight[3, 2] = -np.inf
    fwd = session.run(FWD, dims=dims, seed=5, inputs={"weight": weight}, reference=False)
    bwd = session.run(
        BWD, dims={**dims, "deterministic": 0}, seed=5, inputs={"weight": weight}, reference=False
    )
    x, bias, dout = bwd.inputs["x"], bwd.inputs["bias"], bwd.inputs["dout"]
    with np.errstate(all="ignore"):
        want = {"out": ref.causal_conv1d_fwd(x, weight, bias, bool(silu))}
        want.update(ref.causal_conv1d_bwd(x, weight, bias, dout, bool(silu)))
    assert np.isnan(want["out"][:, 1:3, :3]).all(), "the padded steps meet the bad tap"
    for run, names in ((fwd, ("out",)), (bwd, ("dx", "dweight", "dbias"))):
        for name in names:
            _same_specials(run.outputs[name], want[name], name)
            good = np.isfinite(want[name])
            assert good.any()
            tol = SPEC[BWD if name != "out" else FWD].tolerances[name]
            np.testing.assert_allclose(
                run.outputs[name][good], want[name][good], rtol=tol.rtol, atol=tol.atol
            )
    assert (
        np.isfinite(fwd.outputs["out"][:, 4:]).all() and np.isfinite(bwd.outputs["dx"][:, 4:]).all()
    )


# ---- the kernels ------------------------------------------------------------------------------


@pytest.mark.parametrize(("seqlen", "width", "bias", "silu"), CASES, ids=IDS)
def test_forward_matches_reference(session, seqlen: int, width: int, bias: int, silu: int) -> None:
    dims = _dims(seqlen, width, bias, silu)
    run = session.run(FWD, dims=dims, seed=seqlen + width)
    expected = {
        "out": ref.causal_conv1d_fwd(
            run.inputs["x"], run.inputs["weight"], _bias(run, dims), bool(silu)
        )
    }
    assert_outputs_close(run, SPEC[FWD], expected)


@pytest.mark.parametrize(("seqlen", "width", "bias", "silu"), CASES, ids=IDS)
def test_backward_matches_reference(session, seqlen: int, width: int, bias: int, silu: int) -> None:
    dims = _dims(seqlen, width, bias, silu, deterministic=0)
    run = session.run(BWD, dims=dims, seed=seqlen + width)
    expected = ref.causal_conv1d_bwd(
        run.inputs["x"], run.inputs["weight"], _bias(run, dims), run.inputs["dout"], bool(silu)
    )
    assert_outputs_close(run, SPEC[BWD], expected)
    if not bias:
        # The bias buffer holds random values that must be ignored, and dbias must stay zero.
        assert not run.outputs["dbias"].any()


def test_realistic_shape(session) -> None:
    """The spec defaults (batch 2, dim 256, seqlen 2048, width 4, bias and SiLU on)."""
    fwd = session.run(FWD, seed=7)
    expected = {
        "out": ref.causal_conv1d_fwd(
            fwd.inputs["x"], fwd.inputs["weight"], fwd.inputs["bias"], silu=True
        )
    }
    assert_outputs_close(fwd, SPEC[FWD], expected)
    bwd = session.run(BWD, seed=7)
    np.testing.assert_array_equal(bwd.inputs["x"], fwd.inputs["x"])
    expected = ref.causal_conv1d_bwd(
        bwd.inputs["x"], bwd.inputs["weight"], bwd.inputs["bias"], bwd.inputs["dout"], silu=True
    )
    assert_outputs_close(bwd, SPEC[BWD], expected)


def test_deterministic_mode_is_bitwise_reproducible(session) -> None:
    # Batch 4 so the atomic mode really adds four partials per channel in a racing order.
    dims = {"batch": 4, "dim": 64, "seqlen": 1134, "width": 4, "bias": 1, "silu": 1}
    runs = [session.run(BWD, dims={**dims, "deterministic": 1}, seed=3) for _ in range(3)]
    for out in SPEC[BWD].outputs:
        first = runs[0].outputs[out].view(np.uint32)
        for other in runs[1:]:
            np.testing.assert_array_equal(other.outputs[out].view(np.uint32), first, err_msg=out)

    expected = ref.causal_conv1d_bwd(
        runs[0].inputs["x"],
        runs[0].inputs["weight"],
        runs[0].inputs["bias"],
        runs[0].inputs["dout"],
        silu=True,
    )
    assert_outputs_close(runs[0], SPEC[BWD], expected)

    atomic = session.run(BWD, dims={**dims, "deterministic": 0}, seed=3)
    for out in SPEC[BWD].outputs:
        tol = SPEC[BWD].tolerances[out]
        np.testing.assert_allclose(
            atomic.outputs[out], runs[0].outputs[out], rtol=tol.rtol, atol=tol.atol, err_msg=out
        )
    # dx does not depend on the reduction order at all.
    np.testing.assert_array_equal(atomic.outputs["dx"], runs[0].outputs["dx"])
