"""Specs of the FFN activation backward kernels in 09_backward_ffn.wgsl: ffn_gelu_backward
(grad_pre = grad_hidden * gelu'(pre_gelu)) and ffn_swiglu_backward (grad_gate = grad_hidden *
up * silu'(gate), grad_up = grad_hidden * silu(gate)).

Same layout, dims, uniform and grid as the forward activations (`activation`): flat [seq, d_ff]
runs of n = seq * d_ff elements, `n: u32`, ceil(n / 256) workgroups.

Every output goes through nan_guard. The intended rule, which the references implement
(`refs.activation.guarded`): an output element is 0 where an input it depends on is not finite
or its value is not finite in f32; elsewhere it is the float64 mathematics.
"""

from __future__ import annotations

import numpy as np

from workbench.specs.activation import (
    DIMS,
    SMALL_DIMS,
    flat,
    grid,
    n_uniform,
    per_element_cost,
    randn,
)
from workbench.specs.base import Arrays, Dims, GradLink, KernelSpec, Tol
from workbench.specs.refs import activation as ref

FILE = "09_backward_ffn.wgsl"

# Arithmetic per element, tanh/exp and a divide counted as one flop each. gelu': the square and
# cube, the polynomial, tanh, 1 - t^2, u', the two halves and their sum, times grad (~18).
# SwiGLU backward: one sigmoid (exp, add, divide), silu, silu' (1 - s, x(1 - s), 1 + ., s .),
# and the three products with grad and up (~12).
GELU_BWD_FLOPS = 18
SWIGLU_BWD_FLOPS = 12

# Measured with seeds 0-4 at 512 x 3072 and grad = 1 over an x grid on [-12, 12]: grad_pre at
# most 3.7e-6 absolute on lavapipe (9e-7 on an H100 through Vulkan, seeds 0-2); beyond rtol
# 1.3e-6, grad_gate needs at most 1.9e-7 absolute and grad_up none (7e-7 relative at most).
GELU_BWD_TOL = Tol(
    rtol=1.3e-6,
    atol=1e-5,
    why="gelu' has two cancellations, 1 + tanh(u) and sech^2 = 1 - tanh^2(u), so tanh's absolute "
    "error (WGSL: inherited from exp, several ULP) reaches the result scaled by about "
    "|x| u'(x) |grad|: lavapipe is at most 3.7e-6 off for N(0,1) inputs (H100: 9e-7), and the "
    "error grows with the largest |grad|, i.e. with n; 1e-5 is PyTorch's f32 atol. Clamping x "
    "to +-100 changes nothing: tanh is exactly +-1 there, so gelu' is exactly 1 above and 0 "
    "below in f32 and in float64",
)
SILU_BWD_TOL = Tol(
    rtol=1.3e-6,
    atol=1e-6,
    why="one exp (WGSL bound (3 + 2|x|) ULP) in the sigmoid; silu' = s (1 + x (1 - s)) cancels "
    "near its root x = -1.278, where the error is absolute: lavapipe and an H100 need at most "
    "2e-7 beyond rtol 1.3e-6 for N(0,1) inputs; the atol also covers a conforming GPU's "
    "coarser exp for negative gate",
)

GUARD = "nan_guard: 0 where the result is NaN, +-Inf or beyond f32"


def _gelu_reference(dims: Dims, arrays: Arrays) -> dict[str, np.ndarray]:
    return {"grad_pre": ref.ffn_gelu_backward_ref(arrays["grad_hidden"], arrays["pre_gelu"])}


def _swiglu_reference(dims: Dims, arrays: Arrays) -> dict[str, np.ndarray]:
    grad_gate, grad_up = ref.ffn_swiglu_backward_ref(
        arrays["grad_hidden"], arrays["gate"], arrays["up"]
    )
    return {"grad_gate": grad_gate, "grad_up": grad_up}


def _gelu_forward(dims: Dims, arrays: Arrays) -> dict[str, np.ndarray]:
    return {"x": ref.gelu(arrays["pre_gelu"])}


def _swiglu_forward(dims: Dims, arrays: Arrays) -> dict[str, np.ndarray]:
    return {"hidden": ref.swiglu(arrays["gate"], arrays["up"])}


SPECS = [
    KernelSpec(
        name="ffn_gelu_backward",
        small_dims=SMALL_DIMS,
        gradient=GradLink(
            forward_ref=_gelu_forward,
            upstream={"x": "grad_hidden"},
            wrt={"grad_pre": "pre_gelu"},
            forward_kernel="gelu_inplace",
            forward_inputs={"x": "pre_gelu"},
            grad_dims=SMALL_DIMS,
            doc="L = <grad_hidden, gelu(pre_gelu)>",
        ),
        file=FILE,
        dims=DIMS,
        buffers=lambda dims: flat(dims, "grad_hidden", "pre_gelu", "grad_pre"),
        inputs=lambda dims, seed: randn(dims, seed, "grad_hidden", "pre_gelu"),
        uniforms=n_uniform,
        grid=grid,
        per_element_grid=True,
        outputs=("grad_pre",),
        reference=_gelu_reference,
        tolerances={"grad_pre": GELU_BWD_TOL},
        cost=per_element_cost(12, GELU_BWD_FLOPS),
        zeroed=("grad_pre",),
        special={
            "grad_pre": f"{GUARD}; also 0 where pre_gelu is NaN or +-Inf (explicitly: WGSL "
            "leaves clamp(NaN) open) or grad_hidden is not finite",
        },
        doc="grad_pre[i] = grad_hidden[i] * gelu'(pre_gelu[i]) for the tanh form of GeLU; "
        "gelu'(0) = 0.5, gelu' > 0 above its root x = -0.7525 and < 0 below.",
    ),
    KernelSpec(
        name="ffn_swiglu_backward",
        small_dims=SMALL_DIMS,
        gradient=GradLink(
            forward_ref=_swiglu_forward,
            upstream={"hidden": "grad_hidden"},
            wrt={"grad_gate": "gate", "grad_up": "up"},
            forward_kernel="swiglu_combine",
            grad_dims=SMALL_DIMS,
            doc="L = <grad_hidden, silu(gate) * up>",
        ),
        file=FILE,
        dims=DIMS,
        buffers=lambda dims: flat(dims, "grad_hidden", "gate", "up", "grad_gate", "grad_up"),
        inputs=lambda dims, seed: randn(dims, seed, "grad_hidden", "gate", "up"),
        uniforms=n_uniform,
        grid=grid,
        per_element_grid=True,
        outputs=("grad_gate", "grad_up"),
        reference=_swiglu_reference,
        tolerances={"grad_gate": SILU_BWD_TOL, "grad_up": SILU_BWD_TOL},
        cost=per_element_cost(20, SWIGLU_BWD_FLOPS),
        zeroed=("grad_gate", "grad_up"),
        special={
            "grad_gate": f"{GUARD}; also 0 where gate is NaN or +-Inf (the kernel does not take "
            "the limit silu'(+Inf) = 1) or grad_hidden or up is not finite",
            "grad_up": f"{GUARD}; also 0 where gate or grad_hidden is not finite (up is not "
            "read: a NaN in up leaves grad_up alone)",
        },
        doc="grad_gate[i] = grad_hidden[i] * up[i] * silu'(gate[i]), grad_up[i] = "
        "grad_hidden[i] * silu(gate[i]), one sign-branched sigmoid per element; silu'(0) = 0.5, "
        "silu' > 0 above its root x = -1.2785 and < 0 below.",
    ),
]
