"""Engine overhead: what `Session.run` costs per dispatch beyond the wgpu calls it makes, and how long
`workbench list` takes to start.

Three ways to do the same dispatch of one small kernel (y = 2x over n floats) on the same device:

- session:  `session.run(case, reps=0, reference=False)`, the path the CLI and the UI take
            (limit checks, uniform packing, buffers, bind groups, dispatch, read-back, output arrays);
- raw:      the same wgpu work written by hand: new buffers and a bind group per call, upload,
            dispatch, copy into a reused MAP_READ buffer, map and read;
- dispatch: the floor, buffers and bind group made once; per call only encode, submit and wait.

Each is timed call by call after a warm-up; medians are printed in µs with the adapter named, with
session/raw and session/dispatch ratios. Then `workbench list` runs as a subprocess a few times
(the median wall time), beside a bare wgpu import and adapter enumeration for scale.

    python benchmarks/bench_engine.py [--adapter SEL] [--n 256,1048576] [--seconds 2] [--json]

It needs no GPU (the CPU adapter works) and runs unchanged on a GPU machine.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("XDG_RUNTIME_DIR", f"/tmp/workbench-xdg-{os.getuid()}")
os.makedirs(os.environ["XDG_RUNTIME_DIR"], mode=0o700, exist_ok=True)

from workbench.gpu.adapters import choose_adapter  # noqa: E402
from workbench.gpu.device import GpuContext  # noqa: E402
from workbench.session import Case, Session  # noqa: E402
from workbench.wgsl.corpus import load_corpus  # noqa: E402

KERNEL = """
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> n: u32;
@compute @workgroup_size(256)
fn double(@builtin(global_invocation_id) gid: vec3<u32>,
          @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.y * nwg.x * 256u + gid.x;
    if (i < n) { y[i] = 2.0 * x[i]; }
}
"""


def time_calls(fn: Callable[[], Any], seconds: float, min_calls: int = 20) -> list[float]:
    """Per-call wall times in µs, after a warm-up, for about `seconds` (at least `min_calls`)."""
    for _ in range(5):
        fn()
    samples: list[float] = []
    end = time.perf_counter() + seconds
    while len(samples) < min_calls or time.perf_counter() < end:
        t0 = time.perf_counter_ns()
        fn()
        samples.append((time.perf_counter_ns() - t0) / 1e3)
    return samples


class RawDouble:
    """The same dispatch as the session's, written directly against wgpu on the same device."""

    def __init__(self, ctx: GpuContext, x: np.ndarray) -> None:
        import wgpu

        self.wgpu = wgpu
        self.dev = ctx.device
        self.x = x
        self.n = x.size
        module = self.dev.create_shader_module(code=KERNEL)
        storage = wgpu.BufferBindingType.storage
        kinds = (wgpu.BufferBindingType.read_only_storage, storage, wgpu.BufferBindingType.uniform)
        self.layout = self.dev.create_bind_group_layout(
            entries=[
                {"binding": i, "visibility": wgpu.ShaderStage.COMPUTE, "buffer": {"type": k}}
                for i, k in enumerate(kinds)
            ]
        )
        self.pipeline = self.dev.create_compute_pipeline(
            layout=self.dev.create_pipeline_layout(bind_group_layouts=[self.layout]),
            compute={"module": module, "entry_point": "double"},
        )
        wg = -(-self.n // 256)
        per_dim = ctx.adapter.limits.get("max-compute-workgroups-per-dimension", 65535)
        self.grid = (wg, 1, 1) if wg <= per_dim else (per_dim, -(-wg // per_dim), 1)
        self.nbytes = 4 * self.n
        self.staging = self.dev.create_buffer(
            size=max(self.nbytes, 16),
            usage=wgpu.BufferUsage.MAP_READ | wgpu.BufferUsage.COPY_DST,
        )
        self.fixed = self._buffers()
        self.fixed_group = self._group(self.fixed)
        self.sync_buf = self.dev.create_buffer(
            size=4, usage=wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST
        )

    def _buffers(self) -> list[Any]:
        bu = self.wgpu.BufferUsage
        size = max(16, self.nbytes)
        xb = self.dev.create_buffer(size=size, usage=bu.STORAGE | bu.COPY_DST | bu.COPY_SRC)
        yb = self.dev.create_buffer(size=size, usage=bu.STORAGE | bu.COPY_DST | bu.COPY_SRC)
        nb = self.dev.create_buffer(size=16, usage=bu.UNIFORM | bu.COPY_DST)
        self.dev.queue.write_buffer(xb, 0, self.x)  # straight from the array, no host copy
        self.dev.queue.write_buffer(nb, 0, np.array([self.n, 0, 0, 0], np.uint32).tobytes())
        return [xb, yb, nb]

    def _group(self, bufs: list[Any]) -> Any:
        return self.dev.create_bind_group(
            layout=self.layout,
            entries=[{"binding": i, "resource": {"buffer": b}} for i, b in enumerate(bufs)],
        )

    def _dispatch(self, group: Any) -> Any:
        enc = self.dev.create_command_encoder()
        cp = enc.begin_compute_pass()
        cp.set_pipeline(self.pipeline)
        cp.set_bind_group(0, group)
        cp.dispatch_workgroups(*self.grid)
        cp.end()
        return enc

    def run(self) -> np.ndarray:
        """New buffers, upload, dispatch, read back, free: what one session run does on wgpu."""
        bufs = self._buffers()
        self.dev.queue.submit([self._dispatch(self._group(bufs)).finish()])
        enc = self.dev.create_command_encoder()
        enc.copy_buffer_to_buffer(bufs[1], 0, self.staging, 0, self.nbytes)
        self.dev.queue.submit([enc.finish()])
        self.staging.map_sync(self.wgpu.MapMode.READ, 0, self.nbytes)
        try:
            out = np.frombuffer(self.staging.read_mapped(0, self.nbytes, copy=True), np.float32)
        finally:
            self.staging.unmap()
        for b in bufs:
            b.destroy()
        return out

    def dispatch_only(self) -> None:
        """Encode, submit and wait for one dispatch over buffers made once."""
        self.dev.queue.submit([self._dispatch(self.fixed_group).finish()])
        self.dev.queue.read_buffer(self.sync_buf)


def bench_dispatch(session: Session, n: int, seconds: float) -> dict[str, Any]:
    case: Case = session.case("double", dims={"n": n}, seed=0)
    raw = RawDouble(session.gpu, case.inputs["x"])
    ran = session.run(case, reps=0, reference=False).outputs["y"]
    want = 2 * case.inputs["x"]
    # Both paths must compute the same thing, or the comparison means nothing.
    assert np.array_equal(ran, want) and np.array_equal(raw.run(), want)
    t_session = time_calls(lambda: session.run(case, reps=0, reference=False), seconds)
    t_raw = time_calls(raw.run, seconds)
    t_dispatch = time_calls(raw.dispatch_only, seconds)
    med = {
        k: statistics.median(v)
        for k, v in (("session", t_session), ("raw", t_raw), ("dispatch", t_dispatch))
    }
    return {
        "n": n,
        "calls": {"session": len(t_session), "raw": len(t_raw), "dispatch": len(t_dispatch)},
        "median_us": med,
        "p90_us": {
            k: float(np.percentile(v, 90))
            for k, v in (("session", t_session), ("raw", t_raw), ("dispatch", t_dispatch))
        },
        "session_over_raw": med["session"] / med["raw"],
        "session_over_dispatch": med["session"] / med["dispatch"],
        "session_minus_raw_us": med["session"] - med["raw"],
    }


def wall_times(argv: list[str], reps: int) -> list[float]:
    """Wall times in seconds of `reps` runs of a subprocess, failing loudly on error."""
    times = []
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    for _ in range(reps):
        t0 = time.perf_counter()
        proc = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=REPO)
        times.append(time.perf_counter() - t0)
        if proc.returncode != 0:
            raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode}):\n{proc.stderr}")
    return times


def bench_startup(adapter: str | None, reps: int) -> dict[str, float]:
    listing = [sys.executable, "-m", "workbench", "list"]
    if adapter:
        listing += ["--adapter", adapter]
    # The floor any wgpu program pays: import, load the native library, enumerate adapters.
    floor = "import wgpu; wgpu.gpu.enumerate_adapters_sync()"
    listing_s = wall_times(listing, reps)
    floor_s = wall_times([sys.executable, "-c", floor], reps)
    return {
        "workbench_list_s": statistics.median(listing_s),
        "workbench_list_min_s": min(listing_s),
        "wgpu_enumerate_s": statistics.median(floor_s),
        "reps": reps,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--adapter", help="adapter selector, as for `workbench --adapter`")
    parser.add_argument("--n", default="256,1048576", help="element counts, comma-separated")
    parser.add_argument("--seconds", type=float, default=2.0, help="timing budget per measurement")
    parser.add_argument("--startup-reps", type=int, default=5, help="runs of `workbench list`")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()

    adapter = choose_adapter(args.adapter)
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "double.wgsl").write_text(KERNEL)
        session = Session(load_corpus(tmp), GpuContext(adapter))
        rows = [bench_dispatch(session, int(n), args.seconds) for n in args.n.split(",")]
    startup = bench_startup(args.adapter, args.startup_reps)
    result = {"adapter": adapter.label, "type": adapter.type, "dispatch": rows, "startup": startup}
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"adapter: {adapter.label} [{adapter.type}]")
    print("per-dispatch wall time, median µs (p90) of back-to-back calls:")
    print(
        f"{'n':>10} {'session':>16} {'raw wgpu':>16} {'dispatch only':>16} {'sess/raw':>9} {'sess/disp':>9}"
    )
    for r in rows:
        m, p = r["median_us"], r["p90_us"]
        cells = [f"{m[k]:8.1f} ({p[k]:5.0f})" for k in ("session", "raw", "dispatch")]
        print(
            f"{r['n']:>10} {cells[0]:>16} {cells[1]:>16} {cells[2]:>16} "
            f"{r['session_over_raw']:>8.2f}x {r['session_over_dispatch']:>8.2f}x"
        )
    print(
        f"startup: `workbench list` {startup['workbench_list_s'] * 1e3:.0f} ms median of "
        f"{startup['reps']}, min {startup['workbench_list_min_s'] * 1e3:.0f} ms (importing wgpu "
        f"and enumerating adapters alone: {startup['wgpu_enumerate_s'] * 1e3:.0f} ms)"
    )


if __name__ == "__main__":
    main()
