"""Helpers the kernel tests share: a run's outputs against float64 references within the spec's
tolerances; for the activation forward and backward tests, the shapes, layout and sentinel of
[seq, d_ff] activations and the forward kernels on one row."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from workbench.session import Run, Session
from workbench.specs.base import KernelSpec


def assert_outputs_close(run: Run, spec: KernelSpec, expected: Mapping[str, np.ndarray]) -> None:
    """Every output of `spec` has the expected shape and is within the spec's tolerance (at the
    run's dims) of `expected`, and the run's own comparison with the spec's reference passed too."""
    kernel = spec.name
    for out in spec.outputs:
        tol = spec.tolerance(out, run.case.dims)
        got = run.outputs[out]
        assert got.shape == expected[out].shape, out
        np.testing.assert_allclose(
            got, expected[out], rtol=tol.rtol, atol=tol.atol, err_msg=f"{kernel}: {out}"
        )
        assert run.compare[out].ok, f"{kernel}: {out} max_abs {run.compare[out].max_abs}"


# ---- the activations' [seq, d_ff] layout (forward and backward kernels alike) -----------------

# (seq, d_ff): n = 1, 255, 257 (one past a workgroup's first element each), 1000, 1025 (one past a
# block of 1024 = 256 invocations x 4 elements), 3069 (three blocks, the last one short and not a
# multiple of 4 or 256); none but the first fill their last block, so the bounds checks matter.
FFN_SHAPES = [(1, 1), (1, 255), (1, 257), (4, 250), (1, 1025), (3, 1023)]
FFN_SHAPE_IDS = [f"n{s * d}" for s, d in FFN_SHAPES]
# Uploaded into outputs to show which elements a kernel wrote.
SENTINEL = 12345.0


def ffn_dims(seq: int, d_ff: int) -> dict[str, int]:
    return {"seq": seq, "d_ff": d_ff}


def f32_row(values) -> np.ndarray:
    """A [1, len] f32 array: one row of the activations' [seq, d_ff] layout."""
    return np.asarray(values, dtype=np.float32).reshape(1, -1)


def gelu_kernel(session: Session, x) -> np.ndarray:
    """gelu_inplace on one row of `x`."""
    x = f32_row(x)
    run = session.run("gelu_inplace", dims=ffn_dims(1, x.size), inputs={"x": x}, seed=0)
    return run.outputs["x"][0]


def silu_kernel(session: Session, gate) -> np.ndarray:
    """silu(gate): swiglu_combine on one row of `gate` with up = 1."""
    gate = f32_row(gate)
    run = session.run(
        "swiglu_combine",
        dims=ffn_dims(1, gate.size),
        inputs={"gate": gate, "up": np.ones_like(gate)},
        seed=0,
    )
    return run.outputs["hidden"][0]
