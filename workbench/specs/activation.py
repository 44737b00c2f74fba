"""Specs of the FFN activation kernels in 06_activation.wgsl: gelu_inplace (tanh-form GeLU,
overwriting its input) and swiglu_combine (hidden = silu(gate) * up).

Both see an FFN intermediate [seq, d_ff] row-major as one flat run of n = seq * d_ff elements;
the uniform `n: u32` is that count and the grid is ceil(n / 256) workgroups, one element per
invocation (the seed's); the shipped kernels declare ELEMENTS_PER_INVOCATION = 4, so they run
ceil(n / 1024) workgroups (`KernelSpec.launch_grid`). The host folds grids past 65,535 into
2-D. The dims and the grid are shared with the backward kernels in `ffn_backward`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from workbench.specs.base import Buffer, Cost, Dim, Dims, KernelSpec, Tol
from workbench.specs.refs import activation as ref

FILE = "06_activation.wgsl"
WG = 256

# Defaults from the seeds (seq 512, d_ff 3072: 1.57M elements, 6144 workgroups). Either may be 0
# (an empty dispatch). 65,535 each keeps n and every flat index below 2**32; the adapter's
# storage-binding limit (128 MiB = 33.5M f32 on lavapipe) bites first and is checked by the host.
DIMS = (
    Dim("seq", 512, lo=0, hi=65535, doc="tokens; n = seq * d_ff elements"),
    Dim("d_ff", 3072, lo=0, hi=65535, doc="FFN intermediate width (4 x d_model in GPT-2)"),
)

# What each element costs in arithmetic, tanh/exp and a divide counted as one flop each (they are
# one special-function instruction or a short sequence on GPUs): GeLU is the cube, the
# polynomial, tanh and the outer product (~10); SiLU-times-up is exp, add, divide, two
# multiplies (~6). Both are memory-bound by far: about one flop per byte moved, where GPUs do
# tens of flops in the time one byte arrives.
GELU_FLOPS = 10
SWIGLU_FLOPS = 6

# Measured with seeds 0-4 at 512 x 3072 and an x grid over [-12, 12], beyond rtol 1.3e-6:
# gelu_inplace needs at most 3e-7 absolute on lavapipe (8e-8 on an H100 through Vulkan, seeds
# 0-2); swiglu_combine is within 7e-7 relative on both, needing no absolute slack.
GELU_TOL = Tol(
    rtol=1.3e-6,
    atol=1e-6,
    why="tanh's WGSL error bound is inherited from exp (several ULP): near tanh = -1 the factor "
    "(1 + tanh u) cancels, so the error is absolute, about 0.5 |x| times tanh's absolute error "
    "(lavapipe: at most 3e-7 beyond rtol 1.3e-6 for N(0,1) and |x| <= 12; H100: 8e-8). The "
    "kernel clamps the polynomial's x to +-100 while the reference does not: there tanh is "
    "exactly +-1 in f32 and in float64, so both give x above 100 and 0 below -100, bit for bit",
)
SWIGLU_TOL = Tol(
    rtol=1.3e-6,
    atol=1e-6,
    why="lavapipe and an H100 stay within 7e-7 relative (about 6 ULP) for N(0,1) and gate in "
    "[-12, 12]; exp's WGSL bound is (3 + 2|x|) ULP, so for negative gate a conforming GPU may "
    "exceed rtol by a few ULP on values below about 0.4 |up|: the atol covers that",
)


def n_elements(dims: Dims) -> int:
    """n = seq * d_ff, the length of the flat run."""
    return dims["seq"] * dims["d_ff"]


def grid(dims: Dims) -> tuple[int, int, int]:
    """ceil(n / 256) workgroups of 256 threads, one element per thread (divided by a kernel's
    ELEMENTS_PER_INVOCATION)."""
    return (-(-n_elements(dims) // WG), 1, 1)


def n_uniform(dims: Dims) -> dict[str, object]:
    """The `n: u32` uniform: the element count."""
    return {"n": n_elements(dims)}


def per_element_cost(nbytes: int, flops: int) -> Callable[[Dims], Cost]:
    """The cost of a kernel that moves `nbytes` and does `flops` for each of the n elements."""
    return lambda dims: Cost(bytes=nbytes * n_elements(dims), flops=flops * n_elements(dims))


def flat(dims: Dims, *names: str) -> dict[str, Buffer]:
    """Each named binding is an f32 [seq, d_ff] array."""
    axes = (("seq", dims["seq"]), ("d_ff", dims["d_ff"]))
    return {name: Buffer(axes, "float32") for name in names}


def randn(dims: Dims, seed: int, *names: str) -> dict[str, np.ndarray]:
    """N(0, 1) f32 arrays, drawn in the given order from one seeded generator: the scale of the
    matmul outputs and gradients these kernels see in training."""
    rng = np.random.default_rng(seed)
    shape = (dims["seq"], dims["d_ff"])
    return {name: rng.standard_normal(shape, dtype=np.float32) for name in names}


# 1,200 elements: four full workgroups of 256 and a partial one.
SMALL_DIMS = {"seq": 4, "d_ff": 300}

SPECS = [
    KernelSpec(
        name="gelu_inplace",
        small_dims=SMALL_DIMS,
        file=FILE,
        dims=DIMS,
        buffers=lambda dims: flat(dims, "x"),
        inputs=lambda dims, seed: randn(dims, seed, "x"),
        uniforms=n_uniform,
        grid=grid,
        per_element_grid=True,
        outputs=("x",),
        reference=lambda dims, arrays: {"x": ref.gelu_inplace_ref(arrays["x"])},
        tolerances={"x": GELU_TOL},
        cost=per_element_cost(8, GELU_FLOPS),
        special={
            "x": "NaN stays NaN; +Inf stays +Inf; x <= -100 and -Inf give 0 (the limit); "
            "x >= 100 gives x (tanh saturated; the kernel's clamp of the polynomial to +-100 "
            "changes nothing there)",
        },
        doc="x[i] = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) in place, the tanh "
        "approximation of GeLU (PyTorch's approximate='tanh'); the input is lost, so a "
        "backward needs a saved copy (pre_gelu).",
    ),
    KernelSpec(
        name="swiglu_combine",
        small_dims=SMALL_DIMS,
        file=FILE,
        dims=DIMS,
        buffers=lambda dims: flat(dims, "gate", "up", "hidden"),
        inputs=lambda dims, seed: randn(dims, seed, "gate", "up"),
        uniforms=n_uniform,
        grid=grid,
        per_element_grid=True,
        outputs=("hidden",),
        reference=lambda dims, arrays: {
            "hidden": ref.swiglu_combine_ref(arrays["gate"], arrays["up"])
        },
        tolerances={"hidden": SWIGLU_TOL},
        cost=per_element_cost(12, SWIGLU_FLOPS),
        zeroed=("hidden",),
        special={
            "hidden": "IEEE propagation of silu(gate) * up: NaN in either gives NaN; silu(+Inf) "
            "= +Inf and silu(-Inf) = 0 (the limits), so Inf * 0 gives NaN; silu(x) tends to x "
            "for large x (silu(100) = 100) and to 0 for very negative x, never NaN from a "
            "finite gate",
        },
        doc="hidden[i] = silu(gate[i]) * up[i], silu(x) = x sigmoid(x) with a sign-branched "
        "sigmoid (exp never sees a positive argument): the LLaMA-style FFN gate, fused.",
    ),
]
