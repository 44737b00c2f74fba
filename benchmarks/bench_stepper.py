"""The stepper's cost: memory kept per step, and one step's time beside a plain `run` of the same
kernel at the same dims.

For every step of each pipeline (default dims unless --dim is given), on one device:

- kept:     bytes the step added to the copy-on-write history (the buffers it changed);
- step ms:  host wall time of `Stepper.next()` (dispatch on buffers already on the GPU, read back the
            read_write buffers, count changed elements, reference on the step's inputs, compare),
            median of --reps after a warm-up (stepping back between repetitions, not timed);
- run ms:   host wall time of `session.run(case)` for the same kernel and dims (new buffers, upload,
            dispatch, read back, reference, compare), median of --reps;
- step/run: the stepper's overhead as a ratio;
- GPU ms:   the step's own timestamp figure beside `run --reps` median for the same kernel.

    python benchmarks/bench_stepper.py [--adapter SEL] [--pipelines gelu,attention] [--reps 5]
                                       [--dim NAME=V ...] [--json]

It needs no GPU (the CPU adapter works) and runs unchanged on a GPU machine.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("XDG_RUNTIME_DIR", f"/tmp/workbench-xdg-{os.getuid()}")
os.makedirs(os.environ["XDG_RUNTIME_DIR"], mode=0o700, exist_ok=True)

from workbench.pipelines import load_pipeline, shipped_names  # noqa: E402
from workbench.pipelines.plan import plan  # noqa: E402
from workbench.pipelines.stepper import Stepper  # noqa: E402
from workbench.session import Session  # noqa: E402
from workbench.units import fmt_bytes  # noqa: E402


def measure(session: Session, name: str, dims: dict[str, int], reps: int) -> list[dict[str, Any]]:
    pipeline = load_pipeline(name)
    given = {k: v for k, v in dims.items() if k in pipeline.dims}
    stepper = Stepper(session, plan(pipeline, session, given))
    rows = []
    for step in stepper.steps:
        walls, gpu = [], []
        stepper.next()  # warm-up: the first dispatch compiles the pipeline
        stepper.back()
        for _ in range(reps):
            t0 = time.perf_counter()
            record = stepper.next()
            walls.append((time.perf_counter() - t0) * 1e3)
            gpu.append(record.ms)
            stepper.back()
        record = stepper.next()  # the step stays done: the next one starts from its outputs
        row = {
            "pipeline": name,
            "step": step.index,
            "kernel": step.name,
            "kept_bytes": record.kept_bytes,
            "step_ms": statistics.median(walls),
            "step_gpu_ms": statistics.median(gpu),
        }
        if step.spec is not None:
            case = session.case(step.kernel, dims=step.dims)
            runs = []
            session.run(case, reps=0)  # warm-up
            for _ in range(reps):
                t0 = time.perf_counter()
                session.run(case, reps=0)
                runs.append((time.perf_counter() - t0) * 1e3)
            timed = session.run(case, reps=max(reps, 5), reference=False).timing
            row |= {
                "run_ms": statistics.median(runs),
                "run_gpu_ms": timed.median_ms if timed else None,
                "step_over_run": statistics.median(walls) / statistics.median(runs),
            }
        rows.append(row)
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--adapter", help="adapter selector (default: the workbench default)")
    ap.add_argument("--pipelines", default=",".join(shipped_names()))
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--dim", action="append", default=[], metavar="NAME=V")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    dims = {k: int(v) for k, v in (d.split("=", 1) for d in args.dim)}
    session = Session.open(adapter=args.adapter)
    rows = []
    for name in args.pipelines.split(","):
        rows.extend(measure(session, name, dims, args.reps))
    if args.json:
        print(json.dumps({"adapter": session.adapter.label, "rows": rows}, indent=2))
        return 0
    print(
        f"adapter: {session.adapter.label}; medians of {args.reps} (host wall ms; GPU ms by timestamps)"
    )
    print(
        f"{'pipeline':<10} {'#':>2} {'kernel':<30} {'kept':>10} {'step ms':>9} {'run ms':>9} "
        f"{'step/run':>8} {'step GPU':>9} {'run GPU':>9}"
    )
    for r in rows:
        run = (
            f"{r['run_ms']:9.2f} {r['step_over_run']:7.2f}x"
            if "run_ms" in r
            else f"{'–':>9} {'–':>8}"
        )
        rgpu = f"{r['run_gpu_ms']:9.3f}" if r.get("run_gpu_ms") is not None else f"{'–':>9}"
        print(
            f"{r['pipeline']:<10} {r['step']:>2} {r['kernel']:<30} {fmt_bytes(r['kept_bytes']):>10} "
            f"{r['step_ms']:9.2f} {run} {r['step_gpu_ms']:9.3f} {rgpu}"
        )
    total = sum(r["kept_bytes"] for r in rows)
    print(f"memory kept by all steps of all pipelines: {fmt_bytes(total)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
