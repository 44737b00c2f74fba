"""RoPE kernels (`11_rope.wgsl`, seed 003) against float64 references.

Runs rope_q, rope_k (forward, in place) and rope_q_backward, rope_k_backward through the `session`
fixture (lavapipe in CI) and compares with `workbench.specs.refs.rope`, computed here from the
uploaded inputs. The reference is first checked against the complex-number formulation of Meta's
LLaMA (x_i * e^(i * pos * theta_i) on interleaved pairs), and the backward kernels are checked
to undo the forward ones. The tolerance grows with the largest position (the f32 angle's error
does): the kernels pass it from position 0 to the dims' limit, and altered kernels (theta from
rope_base 10001, a flipped sine) fail it at small positions.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from workbench.errors import UserError
from workbench.session import Session
from workbench.specs.refs import rope as ref
from workbench.specs.rope import ROPE_BASE, SPECS
from workbench.wgsl.corpus import SHIPPED, load_corpus

from .conftest import assert_outputs_close

SPEC = {s.name: s for s in SPECS}
# kernel -> (its binding, the dim that counts its heads)
KERNELS = {
    "rope_q": ("Q", "n_heads"),
    "rope_k": ("K", "n_kv_heads"),
    "rope_q_backward": ("dQ", "n_heads"),
    "rope_k_backward": ("dK", "n_kv_heads"),
}
BACKWARD_OF = {"rope_q": "rope_q_backward", "rope_k": "rope_k_backward"}

# (seq, heads, head_dim, pos_offset): a single pair; 63 pairs; 1,920 pairs (not a multiple of 256)
# with and without an offset; a KV-cache decode step far into the sequence; 2,091 pairs, two blocks
# of 1024 (256 invocations x 4 pairs) and 43 more, in heads of odd pair count.
SMALL = [
    (1, 1, 2, 0),
    (7, 3, 6, 0),
    (5, 12, 64, 0),
    (5, 12, 64, 37),
    (3, 4, 128, 1000),
    (17, 3, 82, 5),
]
SMALL_IDS = [f"seq{s}-h{h}-hd{d}-off{o}" for s, h, d, o in SMALL]


def _dims(kernel: str, seq: int, heads: int, head_dim: int, pos_offset: int) -> dict[str, int]:
    heads_dim = KERNELS[kernel][1]
    return {"seq": seq, heads_dim: heads, "head_dim": head_dim, "pos_offset": pos_offset}


def _expected(kernel: str, x: np.ndarray, pos_offset: int) -> np.ndarray:
    apply = ref.rope_backward if kernel.endswith("_backward") else ref.rope_forward
    return apply(x, pos_offset, ROPE_BASE)


def _check(run, kernel: str, pos_offset: int) -> None:
    """The kernel's output against the reference applied to the uploaded input."""
    binding = KERNELS[kernel][0]
    expected = {binding: _expected(kernel, run.inputs[binding], pos_offset)}
    assert_outputs_close(run, SPEC[kernel], expected)


# ---- the reference against independent formulations (no GPU) ----------------------------------


@pytest.mark.parametrize("pos_offset", [0, 13])
def test_reference_is_llama_complex_rotation(pos_offset: int) -> None:
    rng = np.random.default_rng(1)
    seq, heads, head_dim = 9, 3, 8
    x = rng.standard_normal((seq, heads, head_dim))
    # Meta LLaMA: view (x[2i], x[2i+1]) as x[2i] + j x[2i+1], multiply by e^(j pos theta_i).
    theta = 1.0 / ROPE_BASE ** (np.arange(0, head_dim, 2) / head_dim)
    pos = np.arange(pos_offset, pos_offset + seq)
    z = (x[..., 0::2] + 1j * x[..., 1::2]) * np.exp(1j * np.outer(pos, theta))[:, None, :]
    want = np.empty_like(x)
    want[..., 0::2], want[..., 1::2] = z.real, z.imag
    np.testing.assert_allclose(ref.rope_forward(x, pos_offset, ROPE_BASE), want, atol=1e-13)
    # The transpose turns the other way: multiply by e^(-j pos theta_i).
    z = (x[..., 0::2] + 1j * x[..., 1::2]) * np.exp(-1j * np.outer(pos, theta))[:, None, :]
    want[..., 0::2], want[..., 1::2] = z.real, z.imag
    np.testing.assert_allclose(ref.rope_backward(x, pos_offset, ROPE_BASE), want, atol=1e-13)


def test_reference_backward_is_the_adjoint_and_the_inverse() -> None:
    rng = np.random.default_rng(2)
    x = rng.standard_normal((6, 2, 10))
    g = rng.standard_normal((6, 2, 10))
    fwd = ref.rope_forward(x, 5, ROPE_BASE)
    # <R x, g> = <x, R^T g>: the backward is the gradient of the forward.
    assert np.sum(fwd * g) == pytest.approx(np.sum(x * ref.rope_backward(g, 5, ROPE_BASE)))
    np.testing.assert_allclose(ref.rope_backward(fwd, 5, ROPE_BASE), x, atol=1e-13)
    # Position 0 does not turn; pair 0 turns by exactly the position in radians.
    np.testing.assert_array_equal(ref.rope_forward(x, 0, ROPE_BASE)[0], x[0])
    c, s = np.cos(5 + 3), np.sin(5 + 3)
    np.testing.assert_allclose(fwd[3, :, 0], c * x[3, :, 0] - s * x[3, :, 1], atol=1e-14)


def test_reference_offset_is_a_shift_in_position() -> None:
    """A KV-cache step at offset k equals rows k.. of the whole sequence."""
    x = np.random.default_rng(3).standard_normal((10, 1, 4))
    whole = ref.rope_forward(x, 0, ROPE_BASE)
    np.testing.assert_allclose(ref.rope_forward(x[4:], 4, ROPE_BASE), whole[4:], atol=1e-14)


def test_tolerance_follows_the_largest_position() -> None:
    """atol = floor + slope * (seq + pos_offset): tight near position 0, loose far out."""
    spec = SPEC["rope_q"]

    def tol(**given: int):
        return spec.tolerance("Q", spec.resolve_dims(given))

    small, default, far = tol(seq=16), tol(), tol(seq=16, pos_offset=1 << 20)
    assert small.atol < 3e-5 < default.atol < 1e-3 < far.atol
    assert tol(seq=100, pos_offset=900).atol == tol(seq=1000).atol
    assert small.rtol == far.rtol == pytest.approx(1.3e-6)
    assert f"{small.atol:.3g}" in small.why
    # The static mapping is empty: every read must go through tolerance(name, dims).
    assert spec.tolerances == {}
    assert spec.tolerance("nonexistent", spec.resolve_dims()) is None


def test_odd_head_dim_is_refused() -> None:
    spec = SPEC["rope_q"]
    dims = spec.resolve_dims({"head_dim": 5})
    with pytest.raises(UserError, match="even"):
        spec.buffers(dims)


# ---- the kernels ------------------------------------------------------------------------------


@pytest.mark.parametrize("kernel", list(KERNELS))
@pytest.mark.parametrize(("seq", "heads", "head_dim", "pos_offset"), SMALL, ids=SMALL_IDS)
def test_kernel_matches_reference(
    session, kernel: str, seq: int, heads: int, head_dim: int, pos_offset: int
) -> None:
    run = session.run(kernel, dims=_dims(kernel, seq, heads, head_dim, pos_offset), seed=seq)
    _check(run, kernel, pos_offset)


@pytest.mark.parametrize("kernel", list(KERNELS))
def test_realistic_shape(session, kernel: str) -> None:
    """The seed defaults: seq 512, 12 query / 4 key-value heads, head_dim 64."""
    run = session.run(kernel, seed=21)
    _check(run, kernel, 0)


@pytest.mark.parametrize("kernel", ["rope_q", "rope_k"])
def test_far_positions(session, kernel: str) -> None:
    """A 64-token chunk at positions 1000..1063, all heads."""
    dims = {"seq": 64, "pos_offset": 1000}
    run = session.run(kernel, dims=dims, seed=22)
    _check(run, kernel, 1000)


# From the first position to the dims' limit: pos_offset may reach 2^20 (positions up to
# 2^20 + seq - 1). 32 tokens of all heads at each.
POSITIONS = [0, 1000, 8192, 65536, (1 << 20) - 32, 1 << 20]


@pytest.mark.parametrize("kernel", list(KERNELS))
@pytest.mark.parametrize("pos_offset", POSITIONS)
def test_every_allowed_position(session, kernel: str, pos_offset: int) -> None:
    """The tolerance holds at every position with a 2x margin on lavapipe (measured 0.1 to 0.2
    of atol). The error really grows: from 65536 on it is over 10 times the tolerance at
    position 0, so no fixed atol could be tight near 0 and hold far out."""
    dims = {"seq": 32, "pos_offset": pos_offset}
    run = session.run(kernel, dims=dims, seed=23)
    _check(run, kernel, pos_offset)
    (out,) = SPEC[kernel].outputs
    err = run.compare[out].max_abs
    assert err < SPEC[kernel].tolerance(out, run.case.dims).atol / 2
    if pos_offset >= 65536:
        near_zero = SPEC[kernel].tolerance(out, run.case.dims | {"pos_offset": 0})
        assert err > 10 * near_zero.atol


@pytest.mark.parametrize("forward", ["rope_q", "rope_k"])
@pytest.mark.parametrize(("seq", "heads", "pos_offset"), [(5, 3, 0), (130, 4, 77), (512, 12, 0)])
def test_backward_undoes_forward(
    session, forward: str, seq: int, heads: int, pos_offset: int
) -> None:
    """The rotations are orthonormal: backward(forward(x)) = x up to f32 rounding.

    Both kernels compute the same angle, so its error cancels and the bound is a few ULP of |x|
    (|x| < 5) plus cos^2 + sin^2 - 1, far tighter than the tolerance against the float64
    reference: measured 7e-7 on lavapipe and 1.9e-6 on an H100.
    """
    backward = BACKWARD_OF[forward]
    binding, grad_binding = KERNELS[forward][0], KERNELS[backward][0]
    dims = _dims(forward, seq, heads, 64, pos_offset)
    fwd = session.run(forward, dims=dims, seed=seq)
    bwd = session.run(backward, dims=dims, inputs={grad_binding: fwd.outputs[binding]}, seed=0)
    x = fwd.inputs[binding]
    np.testing.assert_allclose(bwd.outputs[grad_binding], x, rtol=0, atol=5e-6)
    assert not np.array_equal(fwd.outputs[binding][1:], x[1:]), "the forward must turn"


@pytest.mark.parametrize("kernel", list(KERNELS))
def test_empty_sequence(session, kernel: str) -> None:
    run = session.run(kernel, dims={"seq": 0}, seed=0)
    (out,) = SPEC[kernel].outputs
    assert run.outputs[out].shape == (0, SPEC[kernel].resolve_dims()[KERNELS[kernel][1]], 64)


# ---- altered kernels fail ----------------------------------------------------------------------

# Each alteration applies to the shared helper (every kernel) or to both forward kernels.
ALTERED = {
    # theta_i from rope_base 10001: off by at most 4e-6 rad per position.
    "base_10001": ("pow(vec4<f32>(rope_base), ", "pow(vec4<f32>(rope_base + 1.0), "),
    # The rotation turns the wrong way in the forward kernels.
    "flipped_sine": ("x.a * c - x.b * sn", "x.a * c + x.b * sn"),
}


def _altered_session(tmp_path: Path, session: Session, old: str, new: str) -> Session:
    """The shipped corpus with 11_rope.wgsl edited, on the `session` fixture's device."""
    for name in ("wgslconfig.toml", "00_shared.wgsl"):
        shutil.copy(SHIPPED / name, tmp_path / name)
    source = (SHIPPED / "11_rope.wgsl").read_text()
    assert old in source, f"{old!r} is not in the shipped source"
    (tmp_path / "11_rope.wgsl").write_text(source.replace(old, new))
    return Session(load_corpus(tmp_path), session.gpu)


@pytest.mark.parametrize("kernel", ["rope_q", "rope_k"])
@pytest.mark.parametrize("change", list(ALTERED))
@pytest.mark.parametrize(("seq", "pos_offset"), [(4, 0), (16, 0), (16, 8192)])
def test_altered_kernel_fails(
    session, tmp_path: Path, kernel: str, change: str, seq: int, pos_offset: int
) -> None:
    """The shipped kernel passes these dims and the altered one fails them, from 4 tokens on:
    the tolerance near position 0 is tight enough to catch a theta that is 1e-4 off."""
    dims = {"seq": seq, "pos_offset": pos_offset}
    (out,) = SPEC[kernel].outputs
    assert session.run(kernel, dims=dims, seed=24).compare[out].ok
    wrong = _altered_session(tmp_path, session, *ALTERED[change]).run(kernel, dims=dims, seed=24)
    cmp = wrong.compare[out]
    assert not cmp.ok, f"{change}: max_abs {cmp.max_abs:.3g} within atol {cmp.atol:.3g}"
