"""FFN activation backward kernels (`09_backward_ffn.wgsl`, seed 000) against float64 references.

Runs ffn_gelu_backward and ffn_swiglu_backward through the `session` fixture (lavapipe in CI) and
compares with `workbench.specs.refs.activation`, computed here from the uploaded inputs. The
reference derivatives are first checked by central differences of the reference forwards; the
backward kernels are then checked against the forward kernels of `06_activation.wgsl` the same
way, and the seed's checklist is tested on the kernels: gelu'(0) = silu'(0) = 0.5, the sign of
the derivatives, nan_guard on NaN/Inf, huge inputs, n = 0, n not a multiple of 256.
"""

from __future__ import annotations

import numpy as np
import pytest

from workbench.specs.ffn_backward import SPECS
from workbench.specs.refs import activation as ref

from .conftest import (
    FFN_SHAPE_IDS,
    FFN_SHAPES,
    SENTINEL,
    assert_outputs_close,
    f32_row,
    ffn_dims,
    gelu_kernel,
    silu_kernel,
)

SPEC = {s.name: s for s in SPECS}
GELU_BWD = "ffn_gelu_backward"
SWIGLU_BWD = "ffn_swiglu_backward"

# Roots of the derivatives (float64 bisection of the references): gelu' < 0 below, > 0 above.
GELU_GRAD_ROOT = -0.7524614220710163
SILU_GRAD_ROOT = -1.278464542761074


def _expected(kernel: str, arrays) -> dict[str, np.ndarray]:
    if kernel == GELU_BWD:
        return {"grad_pre": ref.ffn_gelu_backward_ref(arrays["grad_hidden"], arrays["pre_gelu"])}
    grad_gate, grad_up = ref.ffn_swiglu_backward_ref(
        arrays["grad_hidden"], arrays["gate"], arrays["up"]
    )
    return {"grad_gate": grad_gate, "grad_up": grad_up}


def _gelu_grad(session, x, grad=None) -> np.ndarray:
    """grad_hidden * gelu'(x) from the kernel (grad_hidden = 1 unless given)."""
    x = f32_row(x)
    g = np.ones_like(x) if grad is None else f32_row(grad)
    run = session.run(
        GELU_BWD, dims=ffn_dims(1, x.size), inputs={"grad_hidden": g, "pre_gelu": x}, seed=0
    )
    return run.outputs["grad_pre"][0]


def _swiglu_grads(session, gate, up=None, grad=None) -> tuple[np.ndarray, np.ndarray]:
    """(grad_gate, grad_up) from the kernel; up and grad_hidden are 1 unless given."""
    gate = f32_row(gate)
    u = np.ones_like(gate) if up is None else f32_row(up)
    g = np.ones_like(gate) if grad is None else f32_row(grad)
    run = session.run(
        SWIGLU_BWD,
        dims=ffn_dims(1, gate.size),
        inputs={"grad_hidden": g, "gate": gate, "up": u},
        seed=0,
    )
    return run.outputs["grad_gate"][0], run.outputs["grad_up"][0]


# ---- the references against central differences (no GPU) -------------------------------------


@pytest.mark.parametrize(
    ("f", "df"), [(ref.gelu, ref.gelu_grad), (ref.silu, ref.silu_grad)], ids=["gelu", "silu"]
)
def test_reference_derivative_is_the_slope(f, df) -> None:
    x = np.linspace(-9, 9, 1801)
    h = 1e-5
    slope = (f(x + h) - f(x - h)) / (2 * h)
    np.testing.assert_allclose(df(x), slope, rtol=1e-8, atol=1e-9)


def test_reference_roots_and_values_at_zero() -> None:
    assert ref.gelu_grad(np.array(0.0)) == 0.5
    assert ref.silu_grad(np.array(0.0)) == 0.5
    for df, root in [(ref.gelu_grad, GELU_GRAD_ROOT), (ref.silu_grad, SILU_GRAD_ROOT)]:
        assert df(np.array(root - 1e-6)) < 0 < df(np.array(root + 1e-6))


def test_reference_swiglu_backward_is_the_gradient_of_the_forward() -> None:
    """L = sum(grad_hidden * silu(gate) * up); dL/dgate and dL/dup by central differences."""
    rng = np.random.default_rng(1)
    g, gate, up = rng.standard_normal((3, 50))
    grad_gate, grad_up = ref.ffn_swiglu_backward_ref(g, gate, up)
    h = 1e-6

    def loss(gt, u):
        return g * ref.swiglu(gt, u)  # per element: each output depends on its own inputs only

    np.testing.assert_allclose(
        grad_gate, (loss(gate + h, up) - loss(gate - h, up)) / (2 * h), rtol=1e-7, atol=1e-9
    )
    np.testing.assert_allclose(
        grad_up, (loss(gate, up + h) - loss(gate, up - h)) / (2 * h), rtol=1e-7, atol=1e-9
    )


def test_reference_guard_rule() -> None:
    nan, inf = np.nan, np.inf
    # The last one is finite but beyond f32: 3.3e38 * gelu'(1) = 3.6e38.
    g = np.array([1.0, nan, inf, 1.0, 1.0, 3.3e38])
    x = np.array([nan, 1.0, 1.0, inf, -inf, 1.0])
    np.testing.assert_array_equal(ref.ffn_gelu_backward_ref(g, x), [0, 0, 0, 0, 0, 0])
    gate = np.array([nan, inf, -inf, 1.0, 1.0, 0.0])
    up = np.array([1.0, 1.0, 1.0, nan, 2.0, inf])
    grad_gate, grad_up = ref.ffn_swiglu_backward_ref(np.ones(6), gate, up)
    np.testing.assert_array_equal(grad_gate, [0, 0, 0, 0, 2 * ref.silu_grad(1.0), 0])
    # grad_up does not read up: a NaN or Inf there leaves it alone.
    np.testing.assert_array_equal(grad_up, [0, 0, 0, ref.silu(1.0), ref.silu(1.0), 0])


def test_spec_shapes_grid_and_cost() -> None:
    for spec in SPECS:
        dims = spec.resolve_dims({"seq": 3, "d_ff": 257})
        assert spec.uniforms(dims) == {"n": 771}
        assert spec.grid(dims) == (4, 1, 1)  # ceil(771 / 256)
        assert all(b.shape == (3, 257) for b in spec.buffers(dims).values())
        assert set(spec.inputs(dims, 0)) | set(spec.zeroed) == set(spec.buffers(dims))
    assert SPEC[GELU_BWD].cost({"seq": 1, "d_ff": 10}).bytes == 3 * 10 * 4
    assert SPEC[SWIGLU_BWD].cost({"seq": 1, "d_ff": 10}).bytes == 5 * 10 * 4


# ---- the kernels ------------------------------------------------------------------------------


@pytest.mark.parametrize("kernel", [GELU_BWD, SWIGLU_BWD])
@pytest.mark.parametrize(("seq", "d_ff"), FFN_SHAPES, ids=FFN_SHAPE_IDS)
def test_matches_reference(session, kernel: str, seq: int, d_ff: int) -> None:
    run = session.run(kernel, dims=ffn_dims(seq, d_ff), seed=seq + d_ff)
    assert_outputs_close(run, SPEC[kernel], _expected(kernel, run.inputs))


@pytest.mark.parametrize("kernel", [GELU_BWD, SWIGLU_BWD])
def test_realistic_shape(session, kernel: str) -> None:
    """The seed defaults: seq 512, d_ff 3072 (1.57M elements, 6144 workgroups)."""
    run = session.run(kernel, seed=5)
    for out in SPEC[kernel].outputs:
        assert run.outputs[out].shape == (512, 3072)
    assert_outputs_close(run, SPEC[kernel], _expected(kernel, run.inputs))


@pytest.mark.parametrize(("size", "n"), [(257, 257), (512, 300)], ids=["n257", "n300-of-512"])
def test_writes_exactly_the_elements_below_n(session, size: int, n: int) -> None:
    """Outputs start as a sentinel. n = 257 (the second workgroup has one live thread): every
    element is written. n set to 300 over 512-element buffers: the 212 threads past n write
    nothing."""
    x = f32_row(np.linspace(-3.0, 3.0, size))
    g = f32_row(np.linspace(1.0, 2.0, size))
    up = f32_row(np.linspace(-2.0, -0.5, size))
    sentinel = np.full_like(x, SENTINEL)
    sets = {"n": n} if n != size else {}
    live = slice(0, n)

    inputs = {"grad_hidden": g, "pre_gelu": x, "grad_pre": sentinel}
    run = session.run(GELU_BWD, dims=ffn_dims(1, size), inputs=inputs, sets=sets, seed=0)
    got = run.outputs["grad_pre"][0]
    want = ref.ffn_gelu_backward_ref(g[0, live], x[0, live])
    tol = SPEC[GELU_BWD].tolerances["grad_pre"]
    np.testing.assert_allclose(got[live], want, rtol=tol.rtol, atol=tol.atol)
    np.testing.assert_array_equal(got[n:], SENTINEL)

    inputs = {"grad_hidden": g, "gate": x, "up": up, "grad_gate": sentinel, "grad_up": sentinel}
    run = session.run(SWIGLU_BWD, dims=ffn_dims(1, size), inputs=inputs, sets=sets, seed=0)
    want = ref.ffn_swiglu_backward_ref(g[0, live], x[0, live], up[0, live])
    for out, expected in zip(("grad_gate", "grad_up"), want, strict=True):
        got = run.outputs[out][0]
        tol = SPEC[SWIGLU_BWD].tolerances[out]
        np.testing.assert_allclose(got[live], expected, rtol=tol.rtol, atol=tol.atol, err_msg=out)
        np.testing.assert_array_equal(got[n:], SENTINEL)


@pytest.mark.parametrize(("seq", "d_ff"), [(0, 3072), (512, 0)], ids=["seq0", "d_ff0"])
@pytest.mark.parametrize("kernel", [GELU_BWD, SWIGLU_BWD])
def test_empty_dispatch(session, kernel: str, seq: int, d_ff: int) -> None:
    run = session.run(kernel, dims=ffn_dims(seq, d_ff), seed=0)
    for out in SPEC[kernel].outputs:
        assert run.outputs[out].shape == (seq, d_ff)


def test_derivatives_at_zero_are_one_half(session) -> None:
    """Seed checklist: gelu'(0) = 0.5 and silu'(0) = 0.5 (grad_hidden = 1, up = 1), exactly."""
    assert _gelu_grad(session, [0.0]).tolist() == [0.5]
    grad_gate, grad_up = _swiglu_grads(session, [0.0])
    assert grad_gate.tolist() == [0.5]
    assert grad_up.tolist() == [0.0]  # silu(0) = 0


@pytest.mark.parametrize(
    ("kernel", "root"), [(GELU_BWD, GELU_GRAD_ROOT), (SWIGLU_BWD, SILU_GRAD_ROOT)]
)
def test_derivative_sign_pattern(session, kernel: str, root: float) -> None:
    """Seed checklist: where is the derivative positive for negative input? Above the root
    (gelu': -0.7525, silu': -1.2785) and nowhere below it, over a grid of x, with the same sign
    as the float64 derivative wherever that is clear of f32 noise."""
    x = np.linspace(-8.0, 8.0, 3201).astype(np.float32)
    if kernel == GELU_BWD:
        got = _gelu_grad(session, x)
        want = ref.gelu_grad(x)
    else:
        got = _swiglu_grads(session, x)[0]
        want = ref.silu_grad(x)
    clear = np.abs(want) > 1e-5
    np.testing.assert_array_equal(np.sign(got[clear]), np.sign(want[clear]))
    assert np.all(got[x > root + 1e-3] > 0)
    assert not np.any(got[x < root - 1e-3] > 0)
    assert np.any(got[x < root - 1e-3] < 0)


def test_backward_is_the_slope_of_the_forward_kernels(session) -> None:
    """Seed checklist: forward + backward consistent. Central differences of the GPU forwards
    (gelu_inplace, swiglu_combine with up = 1) against the GPU backwards, h = 1e-2: the
    truncation error h^2 f'''/6 and the f32 rounding of the difference stay below 2e-4."""
    x = np.linspace(-5.0, 5.0, 1001)
    h = 1e-2
    for fwd, forward, grad in [
        ("gelu_inplace", gelu_kernel, _gelu_grad(session, x)),
        ("swiglu_combine", silu_kernel, _swiglu_grads(session, x)[0]),
    ]:
        xp, xm = np.float32(x + h), np.float32(x - h)
        step = xp.astype(np.float64) - xm
        slope = (forward(session, xp).astype(np.float64) - forward(session, xm)) / step
        np.testing.assert_allclose(grad, slope, rtol=0, atol=2e-4, err_msg=fwd)


def test_grad_up_equals_the_forward_silu(session) -> None:
    """grad_up = grad_hidden * silu(gate): with grad_hidden = 1 it is swiglu_combine(gate, 1)."""
    gate = f32_row(np.linspace(-20.0, 20.0, 999))
    _, grad_up = _swiglu_grads(session, gate)
    np.testing.assert_allclose(grad_up, silu_kernel(session, gate), rtol=2e-7, atol=1e-30)


def test_nan_guard_zeroes_non_finite(session) -> None:
    """Seed checklist: NaN injected into pre_gelu / gate gives 0, and so does any other
    non-finite input the output depends on (spec `special`)."""
    nan, inf = np.nan, np.inf
    x = [nan, inf, -inf, 1.0, 1.0, 1.0, 0.5]
    g = [1.0, 1.0, 1.0, nan, inf, -inf, 2.0]
    got = _gelu_grad(session, x, g)
    assert np.isfinite(got).all()
    np.testing.assert_array_equal(got[:6], 0.0)
    assert got[6] == pytest.approx(2.0 * ref.gelu_grad(0.5), rel=1e-6)

    gate = [nan, inf, -inf, 1.0, 1.0, 1.0, 1.0, 0.0]
    up = [1.0, 1.0, 1.0, nan, inf, 1.0, 1.0, 1.0]
    g = [1.0, 1.0, 1.0, 1.0, 1.0, nan, inf, inf]
    grad_gate, grad_up = _swiglu_grads(session, gate, up, g)
    assert np.isfinite(grad_gate).all() and np.isfinite(grad_up).all()
    np.testing.assert_array_equal(grad_gate, 0.0)
    s1 = ref.silu(1.0)
    np.testing.assert_allclose(grad_up, [0, 0, 0, s1, s1, 0, 0, 0], rtol=1e-6, atol=0)

    run = session.run(
        GELU_BWD,
        dims=ffn_dims(1, 7),
        inputs={"grad_hidden": f32_row(g[:7]), "pre_gelu": f32_row(x)},
        seed=0,
    )
    assert_outputs_close(run, SPEC[GELU_BWD], _expected(GELU_BWD, run.inputs))


def test_huge_inputs(session) -> None:
    """gelu' and silu' are exactly 1 far above 0 and 0 far below; no NaN from exp or x^3."""
    x = [1e4, -1e4, 100.0, -100.0, 3e38, -3e38]
    np.testing.assert_array_equal(_gelu_grad(session, x), np.float32([1, 0, 1, 0, 1, 0]))
    grad_gate, grad_up = _swiglu_grads(session, x)
    np.testing.assert_allclose(grad_gate, [1, 0, 1, 0, 1, 0], rtol=1e-7, atol=1e-30)
    np.testing.assert_allclose(grad_up, np.float32([1e4, 0, 100, 0, 3e38, 0]), atol=1e-30)


def test_swiglu_backward_grad_gate_does_not_overflow_when_the_result_is_finite(session):
    # grad * up alone is past the f32 range; grad * up * silu'(gate) is not.
    dims = {"seq": 1, "d_ff": 4}
    gate = np.array([[0.0, 1.0, -1.0, 2.0]], np.float32)
    up = np.full((1, 4), -3e38, np.float32)
    grad = np.full((1, 4), 1.83, np.float32)
    run = session.run(
        "ffn_swiglu_backward", dims=dims, inputs={"gate": gate, "up": up, "grad_hidden": grad}
    )
    got = run.outputs["grad_gate"]
    assert np.isfinite(got).all()
    np.testing.assert_allclose(got, run.reference["grad_gate"], rtol=1e-5)
