"""The adapter's own limits, measured: memory bandwidth and FMA throughput, once per adapter.

Bandwidth is the best of a few copy kernels (scalar, vec4, vec4 with four loads in flight per
thread), counting bytes read plus bytes written, over buffers larger than the last-level cache (the
flush size of `workbench.gpu.timing`), filled with incompressible data. The compute ceiling is a chain
of dependent FMAs on eight independent vec4 accumulators per thread, over enough threads that one
pass lasts at least a millisecond. Each figure comes with its kernel, sizes and timing method. The
result is cached per adapter for the life of the process, so every bench result can be placed
against it at no further cost.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, overload

import numpy as np

from workbench.gpu.device import BufferPlan, GpuContext
from workbench.gpu.timing import Budget, Timing, time_reps
from workbench.wgsl.reflect import Binding, reflect
from workbench.wgsl.sourcemap import SourceMap

_WG = 256
# Flat index over a grid folded into 2-D when it exceeds the per-dimension workgroup limit.
_FLAT = "let i = gid.x + gid.y * nwg.x * 256u;"
_ARGS = "@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>"

COPIES: dict[str, tuple[str, int, int]] = {
    # name: (WGSL, bytes per element, elements per thread)
    "copy_f32": (
        f"""@group(0) @binding(0) var<storage, read> src: array<f32>;
@group(0) @binding(1) var<storage, read_write> dst: array<f32>;
@compute @workgroup_size(256)
fn copy_f32({_ARGS}) {{
    {_FLAT}
    if (i < arrayLength(&dst)) {{ dst[i] = src[i]; }}
}}
""",
        4,
        1,
    ),
    "copy_vec4": (
        f"""@group(0) @binding(0) var<storage, read> src: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<f32>>;
@compute @workgroup_size(256)
fn copy_vec4({_ARGS}) {{
    {_FLAT}
    if (i < arrayLength(&dst)) {{ dst[i] = src[i]; }}
}}
""",
        16,
        1,
    ),
    "copy_vec4_x4": (
        f"""@group(0) @binding(0) var<storage, read> src: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<f32>>;
@compute @workgroup_size(256)
fn copy_vec4_x4({_ARGS}) {{
    {_FLAT}
    let stride = nwg.x * nwg.y * 256u;
    let n = arrayLength(&dst);
    let a = src[min(i, n - 1u)];
    let b = src[min(i + stride, n - 1u)];
    let c = src[min(i + 2u * stride, n - 1u)];
    let d = src[min(i + 3u * stride, n - 1u)];
    if (i < n) {{ dst[i] = a; }}
    if (i + stride < n) {{ dst[i + stride] = b; }}
    if (i + 2u * stride < n) {{ dst[i + 2u * stride] = c; }}
    if (i + 3u * stride < n) {{ dst[i + 3u * stride] = d; }}
}}
""",
        16,
        4,
    ),
}

FMA_ACCUMULATORS = 8  # independent vec4 chains per thread, so the FMA units never wait on one
FMA_STEPS = 256  # dependent FMAs per chain
_FMA = f"""struct Params {{ a: f32, b: f32, steps: u32, pad: u32 }}
@group(0) @binding(0) var<storage, read_write> out: array<f32>;
@group(0) @binding(1) var<uniform> p: Params;
@compute @workgroup_size(256)
fn fma_chain({_ARGS}) {{
    {_FLAT}
    let s = f32(i & 1023u) * 1e-3;
    let a = vec4<f32>(p.a);
    let b = vec4<f32>(p.b);
    var x0 = vec4<f32>(s, s + 0.1, s + 0.2, s + 0.3);
    var x1 = x0 + 1.0;
    var x2 = x0 + 2.0;
    var x3 = x0 + 3.0;
    var x4 = x0 + 4.0;
    var x5 = x0 + 5.0;
    var x6 = x0 + 6.0;
    var x7 = x0 + 7.0;
    for (var k = 0u; k < p.steps; k++) {{
        x0 = fma(x0, a, b);
        x1 = fma(x1, a, b);
        x2 = fma(x2, a, b);
        x3 = fma(x3, a, b);
        x4 = fma(x4, a, b);
        x5 = fma(x5, a, b);
        x6 = fma(x6, a, b);
        x7 = fma(x7, a, b);
    }}
    if (i < arrayLength(&out)) {{
        out[i] = dot(x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7, vec4<f32>(1.0));
    }}
}}
"""
_NEXT_PROBE_WARMUP_MS = 25.0
_FMA_MIN_PASS_MS = 1.0  # grow the FMA grid until one pass lasts this long
# The trial passes that size the FMA grid need only the compile behind them: a token warm-up is
# at least one round (the first dispatch compiles); the probe itself warms up by its budget.
_FMA_TRIAL_WARMUP_MS = 1.0
_FMA_MIN_WORKGROUPS = 64
_FMA_MAX_WORKGROUPS = 1 << 16


@dataclass(frozen=True)
class Probe:
    """One measured kernel: what one pass does (bytes moved or FLOPs) and how long it took."""

    kernel: str
    size: str  # the sizes in words
    work: float  # bytes (copies) or FLOPs (FMA) per pass
    timing: Timing

    @property
    def rate(self) -> float:
        """GB/s or GFLOP/s from the median pass."""
        ms = self.timing.median_ms
        return self.work / (ms / 1e3) / 1e9 if ms > 0 else math.nan

    def to_json(self) -> dict[str, Any]:
        return {
            "kernel": self.kernel,
            "size": self.size,
            "work_per_pass": self.work,
            "rate": self.rate,
            "timing": self.timing.to_json(),
        }


@dataclass(frozen=True)
class Roofline:
    """The two ceilings of one adapter, with the probes they came from."""

    adapter: str
    copies: tuple[Probe, ...]
    fma: Probe
    seconds: float  # how long measuring took

    @property
    def bandwidth_probe(self) -> Probe:
        return max(self.copies, key=lambda p: p.rate)

    @property
    def bandwidth_gb_s(self) -> float:
        return self.bandwidth_probe.rate

    @property
    def peak_gflop_s(self) -> float:
        return self.fma.rate

    @property
    def ridge(self) -> float:
        """Arithmetic intensity (FLOP/byte) where the two ceilings meet."""
        return self.peak_gflop_s / self.bandwidth_gb_s

    @property
    def method(self) -> str:
        return self.fma.timing.detail

    def to_json(self) -> dict[str, Any]:
        return {
            "adapter": self.adapter,
            "bandwidth_gb_s": self.bandwidth_gb_s,
            "bandwidth_kernel": self.bandwidth_probe.kernel,
            "peak_gflop_s": self.peak_gflop_s,
            "ridge_flop_per_byte": self.ridge,
            "method": self.method,
            "copies": [p.to_json() for p in self.copies],
            "fma": self.fma.to_json(),
            "seconds": self.seconds,
        }


# Measured rooflines by adapter index: one measurement per adapter per process (public: a test
# replaces it to start as a fresh process would).
MEASURED: dict[int, Roofline] = {}


@overload
def roofline(
    ctx: GpuContext, budget: Budget | None = None, copy_bytes: int | None = None
) -> Roofline: ...


@overload
def roofline(
    ctx: GpuContext,
    budget: Budget | None = None,
    copy_bytes: int | None = None,
    *,
    cancelled: Callable[[], bool],
) -> Roofline | None: ...


def roofline(
    ctx: GpuContext,
    budget: Budget | None = None,
    copy_bytes: int | None = None,
    *,
    cancelled: Callable[[], bool] | None = None,
) -> Roofline | None:
    """The adapter's roofline, measured on first use and then cached.

    `budget` is per probe; `copy_bytes` (each of source and destination) defaults to the flush
    size, which is larger than the last-level cache. Cancelled while measuring (its probes stop at
    their next submission), it is None and nothing is cached.
    """
    if ctx.adapter.index not in MEASURED:
        roof = measure(ctx, budget or Budget(ms=100.0), copy_bytes, cancelled)
        if cancelled is not None and cancelled():
            return None
        MEASURED[ctx.adapter.index] = roof
    return MEASURED[ctx.adapter.index]


def cached(ctx: GpuContext) -> Roofline | None:
    """The roofline already measured for this adapter in this process, if any."""
    return MEASURED.get(ctx.adapter.index)


def measure(
    ctx: GpuContext,
    budget: Budget,
    copy_bytes: int | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> Roofline:
    t0 = time.perf_counter()
    lim = ctx.adapter.limits
    cap = min(
        lim.get("max-storage-buffer-binding-size", 1 << 27), lim.get("max-buffer-size", 1 << 28)
    )
    nbytes = min(copy_bytes or ctx.flush_bytes[0], cap) // 64 * 64
    words = np.arange(nbytes // 4, dtype=np.uint32) * np.uint32(2654435761)
    # Floats in [1, 2) with scrambled mantissas: no compression can shrink them.
    data = memoryview(((words >> np.uint32(9)) | np.uint32(0x3F800000)).view(np.uint8).data)
    # Only the first probe needs the whole warm-up: the probes run back to back, so the adapter's
    # clocks, once raised, stay up for the others.
    rest = replace(budget, warmup_ms=min(budget.warmup_ms, _NEXT_PROBE_WARMUP_MS))
    copies = tuple(
        _copy_probe(ctx, name, nbytes, data, budget if i == 0 else rest, cancelled)
        for i, name in enumerate(COPIES)
    )
    fma = _fma_probe(ctx, rest, cancelled)
    return Roofline(ctx.adapter.label, copies, fma, time.perf_counter() - t0)


def _compile(ctx: GpuContext, text: str, entry: str) -> tuple[Any, tuple[Binding, ...]]:
    bindings = reflect(text, f"roofline:{entry}").entry_points[entry].bindings
    return ctx.compile(text, SourceMap(), entry, bindings, f"roofline:{entry}"), bindings


def _copy_probe(
    ctx: GpuContext,
    name: str,
    nbytes: int,
    data: memoryview,
    budget: Budget,
    cancelled: Callable[[], bool] | None,
) -> Probe:
    text, elem, per_thread = COPIES[name]
    program, (src, dst) = _compile(ctx, text, name)
    plans = [BufferPlan(src, nbytes, data), BufferPlan(dst, nbytes)]
    threads = math.ceil(nbytes // elem / per_thread)
    grid = ctx.check_limits(plans, (_WG, 1, 1), (math.ceil(threads / _WG), 1, 1), name)
    bound = ctx.bind(program, plans, grid)
    try:
        timing = ctx.time([bound], budget, cancelled=cancelled)[0]
    finally:
        bound.release()
    mib = nbytes / (1 << 20)
    size = f"{mib:,.0f} MiB read + {mib:,.0f} MiB written, {per_thread}×{elem} B per thread"
    return Probe(name, size, 2.0 * nbytes, timing)


def _fma_probe(ctx: GpuContext, budget: Budget, cancelled: Callable[[], bool] | None) -> Probe:
    program, (out, params) = _compile(ctx, _FMA, "fma_chain")
    uniform = np.array([0.999, 0.001], np.float32).tobytes()
    uniform += np.array([FMA_STEPS, 0], np.uint32).tobytes()
    workgroups = _FMA_MIN_WORKGROUPS
    while True:
        threads = workgroups * _WG
        plans = [BufferPlan(out, threads * 4), BufferPlan(params, len(uniform), uniform)]
        grid = ctx.check_limits(plans, (_WG, 1, 1), (workgroups, 1, 1), "fma_chain")
        bound = ctx.bind(program, plans, grid)
        try:
            trial = time_reps(ctx, [bound.encode], 3, _FMA_TRIAL_WARMUP_MS)[0].median_ms
            if trial >= _FMA_MIN_PASS_MS or workgroups >= _FMA_MAX_WORKGROUPS:
                timing = ctx.time([bound], budget, cancelled=cancelled)[0]
                break
        finally:
            bound.release()
        workgroups *= 2
    flops = 2.0 * 4 * FMA_ACCUMULATORS * FMA_STEPS * threads
    size = (
        f"{threads:,} threads × {FMA_ACCUMULATORS} vec4 chains × {FMA_STEPS} dependent FMAs "
        f"({flops / 1e9:,.2f} GFLOP per pass)"
    )
    return Probe("fma_chain", size, flops, timing)
