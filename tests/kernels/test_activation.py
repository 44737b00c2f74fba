"""FFN activation kernels (`06_activation.wgsl`, seed 001) against float64 references.

Runs gelu_inplace and swiglu_combine through the `session` fixture (lavapipe in CI) and compares
with `workbench.specs.refs.activation`, computed here from the uploaded inputs. The references are
first pinned to PyTorch's own values (float64, recorded below) and to the exact GeLU; then the
seed's checklist is tested on the kernels: gelu(0) = 0, silu(0) = 0, no overflow or NaN for huge
inputs, n = 0, n not a multiple of 256.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from workbench.errors import UserError
from workbench.specs.activation import SPECS
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
GELU = "gelu_inplace"
SWIGLU = "swiglu_combine"

# PyTorch 2.11 in float64: F.gelu(x, approximate="tanh"), F.silu(x) and their autograd
# derivatives (recorded once on the GPU machine, where torch is installed).
TORCH_X = [-6.0, -3.0, -1.5, -1.2784645, -0.7524614, -0.5, 0.0, 0.25, 1.0, 2.0, 3.5, 8.0]
TORCH_GELU = [
    -8.43964897967453e-11, -0.0036373920817729943, -0.10042842301976707, -0.12876831957488175,
    -0.1700407505712539, -0.15428599017485606, 0.0, 0.149675350701685, 0.8411919906082768,
    1.954597694087775, 3.499383802344626, 8.0,
]  # fmt: skip
TORCH_GELU_GRAD = [
    -7.709976012836329e-10, -0.011584166630969648, -0.12771079315143308, -0.12458269757598525,
    9.499367598087005e-09, 0.13263009646535764, 0.5, 0.6953540951510604, 1.0829640838457826,
    1.0860992566236183, 1.0024226437601167, 1.0,
]  # fmt: skip
TORCH_SILU = [
    -0.014835738939808647, -0.14227761953270035, -0.2736382857095345, -0.27846454276107363,
    -0.24100225811007447, -0.1887703343990727, 0.0, 0.14054412522144952, 0.7310585786300049,
    1.7615941559557646, 3.3974071923702525, 7.997317198956269,
]  # fmt: skip
TORCH_SILU_GRAD = [
    -0.012326432591525513, -0.08810410601516962, -0.041294154299142946, 9.313862710573407e-09,
    0.15647241171914128, 0.2600388126973482, 0.5, 0.6237100215701977, 0.9276705118714869,
    1.0907842487848955, 1.0702733528277182, 1.0023465512355845,
]  # fmt: skip


def _assert_close_values(got: np.ndarray, want: np.ndarray, kernel: str, out: str) -> None:
    """Like `assert_outputs_close`, for a slice of an output (runs whose `n` was overridden)."""
    tol = SPEC[kernel].tolerances[out]
    np.testing.assert_allclose(got, want, rtol=tol.rtol, atol=tol.atol, err_msg=kernel)


# ---- the references against PyTorch and the definitions (no GPU) ------------------------------


def test_reference_matches_pytorch() -> None:
    x = np.array(TORCH_X)
    for got, want in [
        (ref.gelu(x), TORCH_GELU),
        (ref.gelu_grad(x), TORCH_GELU_GRAD),
        (ref.silu(x), TORCH_SILU),
        (ref.silu_grad(x), TORCH_SILU_GRAD),
    ]:
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)


def test_reference_gelu_is_close_to_exact_gelu() -> None:
    """The tanh form approximates x * Phi(x) to within about 5e-4 (Hendrycks & Gimpel)."""
    x = np.linspace(-8, 8, 2001)
    exact = np.array([0.5 * v * (1.0 + math.erf(v / math.sqrt(2.0))) for v in x])
    assert np.max(np.abs(ref.gelu(x) - exact)) < 5e-4


def test_reference_silu_is_x_sigmoid_and_stable() -> None:
    x = np.linspace(-30, 30, 601)
    np.testing.assert_allclose(ref.silu(x), x / (1.0 + np.exp(-x)), rtol=1e-14, atol=1e-300)
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        big = np.array([-1e4, -1e3, 1e3, 1e4, 3e38, -3e38])
        s = ref.sigmoid(big)
    np.testing.assert_array_equal(s, [0.0, 0.0, 1.0, 1.0, 1.0, 0.0])


def test_reference_limits_and_nan() -> None:
    special = np.array([np.nan, np.inf, -np.inf, 1e4, -1e4, 100.0, -100.0])
    np.testing.assert_array_equal(ref.gelu(special), [np.nan, np.inf, 0.0, 1e4, 0.0, 100.0, 0.0])
    np.testing.assert_array_equal(
        ref.silu(special), [np.nan, np.inf, 0.0, 1e4, 0.0, 100.0, -100.0 * np.exp(-100.0)]
    )
    # A product past the f32 range is what an f32 result would be: Inf.
    got = ref.swiglu_combine_ref(np.array([1e20, 1e20]), np.array([1e20, -1e20]))
    np.testing.assert_array_equal(got, [np.inf, -np.inf])


def test_spec_shapes_grid_and_cost() -> None:
    for spec in SPECS:
        dims = spec.resolve_dims({"seq": 4, "d_ff": 300})
        assert spec.uniforms(dims) == {"n": 1200}
        assert spec.grid(dims) == (5, 1, 1)  # ceil(1200 / 256)
        assert all(b.shape == (4, 300) for b in spec.buffers(dims).values())
        assert spec.grid(spec.resolve_dims({})) == (6144, 1, 1)  # the seed's 512 x 3072
        assert spec.grid(spec.resolve_dims({"seq": 0})) == (0, 1, 1)
        assert set(spec.inputs(dims, 0)) | set(spec.zeroed) == set(spec.buffers(dims))
    assert SPEC[GELU].cost({"seq": 2, "d_ff": 8}).bytes == 2 * 16 * 4  # x read and written
    # A kernel declaring ELEMENTS_PER_INVOCATION divides the one-element-per-invocation grid.
    dims = SPEC[GELU].resolve_dims({"seq": 4, "d_ff": 300})
    assert SPEC[GELU].launch_grid(dims, {}) == (5, 1, 1)
    assert SPEC[GELU].launch_grid(dims, {"ELEMENTS_PER_INVOCATION": 4}) == (2, 1, 1)
    for bad in (0, 2.5):
        with pytest.raises(UserError, match="ELEMENTS_PER_INVOCATION"):
            SPEC[GELU].launch_grid(dims, {"ELEMENTS_PER_INVOCATION": bad})
    assert SPEC[SWIGLU].cost({"seq": 2, "d_ff": 8}).bytes == 3 * 16 * 4  # gate, up, hidden


# ---- the kernels ------------------------------------------------------------------------------


@pytest.mark.parametrize(("seq", "d_ff"), FFN_SHAPES, ids=FFN_SHAPE_IDS)
def test_gelu_matches_reference(session, seq: int, d_ff: int) -> None:
    run = session.run(GELU, dims=ffn_dims(seq, d_ff), seed=seq * d_ff)
    x = run.inputs["x"]
    assert x.shape == (seq, d_ff)
    assert_outputs_close(run, SPEC[GELU], {"x": ref.gelu_inplace_ref(x)})


@pytest.mark.parametrize(("seq", "d_ff"), FFN_SHAPES, ids=FFN_SHAPE_IDS)
def test_swiglu_matches_reference(session, seq: int, d_ff: int) -> None:
    run = session.run(SWIGLU, dims=ffn_dims(seq, d_ff), seed=seq * d_ff)
    expected = ref.swiglu_combine_ref(run.inputs["gate"], run.inputs["up"])
    assert_outputs_close(run, SPEC[SWIGLU], {"hidden": expected})


def test_realistic_shape(session) -> None:
    """The seed defaults: seq 512, d_ff 3072 (1.57M elements, 6144 workgroups)."""
    run = session.run(GELU, seed=3)
    assert run.outputs["x"].shape == (512, 3072)
    assert_outputs_close(run, SPEC[GELU], {"x": ref.gelu_inplace_ref(run.inputs["x"])})
    run = session.run(SWIGLU, seed=3)
    expected = ref.swiglu_combine_ref(run.inputs["gate"], run.inputs["up"])
    assert_outputs_close(run, SPEC[SWIGLU], {"hidden": expected})


def test_every_element_below_n_is_written(session) -> None:
    """n = 257: the second workgroup has one live thread. The output starts as a sentinel (and
    x in place is chosen so that gelu(x) != x), so a skipped element would show."""
    x = f32_row(np.linspace(0.5, 3.0, 257))
    got = session.run(GELU, dims=ffn_dims(1, 257), inputs={"x": x}, seed=0).outputs["x"]
    assert np.all(got < x)  # gelu(x) < x for x > 0
    _assert_close_values(got, ref.gelu_inplace_ref(x), GELU, "x")

    gate, up = x, f32_row(np.linspace(-2.0, -1.0, 257))
    inputs = {"gate": gate, "up": up, "hidden": np.full_like(x, SENTINEL)}
    hidden = session.run(SWIGLU, dims=ffn_dims(1, 257), inputs=inputs, seed=0).outputs["hidden"]
    assert not np.any(hidden == SENTINEL)
    _assert_close_values(hidden, ref.swiglu_combine_ref(gate, up), SWIGLU, "hidden")


def test_elements_past_n_are_untouched(session) -> None:
    """The uniform n set to 300 over 512-element buffers (one workgroup of 1024 elements, 724 of
    them past n): elements below n are the kernel's, the others keep what was uploaded."""
    assert session.case(GELU, dims=ffn_dims(1, 512)).grid == (1, 1, 1)  # 4 per invocation
    n = 300
    x = f32_row(np.linspace(-3.0, 3.0, 512))
    run = session.run(GELU, dims=ffn_dims(1, 512), inputs={"x": x}, sets={"n": n}, seed=0)
    got = run.outputs["x"]
    _assert_close_values(got[:, :n], ref.gelu_inplace_ref(x[:, :n]), GELU, "x")
    np.testing.assert_array_equal(got[:, n:], x[:, n:])

    gate, up = x, f32_row(np.linspace(1.0, 2.0, 512))
    inputs = {"gate": gate, "up": up, "hidden": np.full_like(x, SENTINEL)}
    run = session.run(SWIGLU, dims=ffn_dims(1, 512), inputs=inputs, sets={"n": n}, seed=0)
    hidden = run.outputs["hidden"]
    want = ref.swiglu_combine_ref(gate[:, :n], up[:, :n])
    _assert_close_values(hidden[:, :n], want, SWIGLU, "hidden")
    np.testing.assert_array_equal(hidden[:, n:], SENTINEL)


@pytest.mark.parametrize(("seq", "d_ff"), [(0, 3072), (512, 0)], ids=["seq0", "d_ff0"])
@pytest.mark.parametrize("kernel", [GELU, SWIGLU])
def test_empty_dispatch(session, kernel: str, seq: int, d_ff: int) -> None:
    run = session.run(kernel, dims=ffn_dims(seq, d_ff), seed=0)
    (out,) = SPEC[kernel].outputs
    assert run.outputs[out].shape == (seq, d_ff)


def test_zero_maps_to_zero(session) -> None:
    """Seed checklist: gelu(0) = 0 and silu(0) = 0, exactly."""
    assert gelu_kernel(session, [0.0, -0.0]).tolist() == [0.0, 0.0]
    assert silu_kernel(session, [0.0, -0.0]).tolist() == [0.0, 0.0]


def test_huge_inputs_stay_finite(session) -> None:
    """Seed checklist: no overflow for very large inputs. GeLU and SiLU tend to x above and to 0
    below; the GeLU clamp at +-100 must not cap the output at 100."""
    x = [1e4, -1e4, 100.0, -100.0, 1e30, -1e30, 3e38, -3e38]
    want = [1e4, 0.0, 100.0, 0.0, 1e30, 0.0, 3e38, 0.0]
    g = gelu_kernel(session, x)
    s = silu_kernel(session, x)
    assert np.isfinite(g).all() and np.isfinite(s).all()
    np.testing.assert_array_equal(g, np.float32(want))
    np.testing.assert_array_equal(s, np.float32(want))
    # silu(100) = 100 / (1 + e^-100): 100 in f32.
    assert s[2] == pytest.approx(100.0, rel=1e-7)


def test_special_values_follow_the_spec(session) -> None:
    """NaN stays NaN; the limits at +-Inf; Inf * 0 in swiglu gives NaN, as IEEE says."""
    x = [np.nan, np.inf, -np.inf, 0.5]
    g = gelu_kernel(session, x)
    np.testing.assert_array_equal(g[:3], [np.nan, np.inf, 0.0])
    s = silu_kernel(session, x)
    np.testing.assert_array_equal(s[:3], [np.nan, np.inf, 0.0])

    gate = f32_row([np.inf, 2.0, 0.0, -np.inf, np.nan, 1.0])
    up = f32_row([0.0, np.inf, np.inf, 5.0, 1.0, np.nan])
    run = session.run(SWIGLU, dims=ffn_dims(1, 6), inputs={"gate": gate, "up": up}, seed=0)
    expected = ref.swiglu_combine_ref(gate, up)
    np.testing.assert_array_equal(np.isnan(run.outputs["hidden"]), np.isnan(expected))
    assert_outputs_close(run, SPEC[SWIGLU], {"hidden": expected})


def test_gelu_swiglu_agree_with_reference_over_a_wide_range(session) -> None:
    """|x| from 1e-6 to 300, both signs: the clamp, the saturation and the tiny values."""
    rng = np.random.default_rng(7)
    n = 4096
    x = (np.sign(rng.standard_normal(n)) * 10 ** rng.uniform(-6, 2.5, n)).astype(np.float32)
    x = x.reshape(4, 1024)
    run = session.run(GELU, dims=ffn_dims(4, 1024), inputs={"x": x}, seed=0)
    assert_outputs_close(run, SPEC[GELU], {"x": ref.gelu_inplace_ref(x)})
    run = session.run(SWIGLU, dims=ffn_dims(4, 1024), inputs={"gate": x}, seed=1)
    expected = ref.swiglu_combine_ref(x, run.inputs["up"])
    assert_outputs_close(run, SPEC[SWIGLU], {"hidden": expected})
