"""What a debug trace costs against the plain run of the same case (issue 28's speed figures).

    python benchmarks/bench_debug.py [--adapter SEL] [--n 1048576] [--iterations 256] [--reps 30]

A kernel over N floats whose every invocation runs a loop of ITERATIONS steps is timed by GPU
timestamps (median of REPS dispatches after the warm-up): plain, instrumented to trace one
invocation, and instrumented to scan every invocation for its first non-finite value. The whole
`trace()` call (both dispatches, read-back and decoding) and a plain `session.run` are timed by the
host clock. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np

from workbench.session import Session
from workbench.wgsl.corpus import load_corpus
from workbench.wgsl.trace import instrument_trace
from workbench.workgroups.debug import MODE_SCAN, MODE_TRACE, trace, traced_case

KERNEL = """
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;

@compute @workgroup_size(256)
fn looped(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i >= arrayLength(&x)) { return; }
    var acc = x[i];
    for (var k = 0u; k < ITERATIONSu; k++) {
        acc = acc * 0.999 + 0.001 * f32(k);
    }
    y[i] = acc;
}
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--adapter", default=None)
    ap.add_argument("--n", type=int, default=1 << 20)
    ap.add_argument("--iterations", type=int, default=256)
    ap.add_argument("--reps", type=int, default=30)
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp())
    (root / "looped.wgsl").write_text(KERNEL.replace("ITERATIONS", str(args.iterations)))
    base = Session.open(adapter=args.adapter)
    session = Session(load_corpus(root), base.gpu)
    x = np.random.default_rng(0).standard_normal(args.n).astype(np.float32)
    grid = ((args.n + 255) // 256, 1, 1)
    sizes = {"x": args.n, "y": args.n}
    case = session.case("looped", inputs={"x": x}, sizes=sizes, grid=grid)
    plan = instrument_trace(case.kernel)
    chosen = (args.n // 2, 0, 0)
    capacity = 100_000

    def gpu_ms(c) -> float:  # type: ignore[no-untyped-def]
        run = session.run(c, reps=args.reps, reference=False)
        assert run.timing is not None
        return run.timing.median_ms

    plain_ms = gpu_ms(case)
    trace_ms = gpu_ms(traced_case(case, plan, capacity, MODE_TRACE, chosen))
    scan_ms = gpu_ms(traced_case(case, plan, 1, MODE_SCAN))
    walls = []
    for _ in range(3):
        t0 = time.perf_counter()
        session.run(case, reference=False)
        walls.append(time.perf_counter() - t0)
    traces = []
    for _ in range(3):
        t0 = time.perf_counter()
        t = trace(session, case, chosen, capacity, plan)
        traces.append(time.perf_counter() - t0)
    print(
        json.dumps(
            {
                "adapter": session.adapter.name,
                "n": args.n,
                "iterations": args.iterations,
                "plain_gpu_ms": plain_ms,
                "trace_gpu_ms": trace_ms,
                "scan_gpu_ms": scan_ms,
                "trace_over_plain": trace_ms / plain_ms,
                "scan_over_plain": scan_ms / plain_ms,
                "plain_run_wall_s": min(walls),
                "trace_call_wall_s": min(traces),
                "steps": len(t.steps),
                "truncated": t.truncated,
                "outputs_identical": t.outputs_identical,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
