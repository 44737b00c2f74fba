"""What running a corpus's refs.py in its worker process costs, against calling the same function here.

One reference, `y = 2 x` in float64, is called through the corpus's warm worker
(workbench.specs.refworker: arrays sent as raw bytes over a pipe, the result checked and sent back)
and directly in this process, for a few sizes; medians are printed in µs with the ratio, and the
worker's start (a new process importing NumPy and refs.py) once.

    python benchmarks/bench_reference_worker.py [--n 16,65536,4194304] [--calls 50]

No GPU is used.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from workbench.specs.refworker import worker_for

REFS = "def scale(x, *, N):\n    return {'y': 2.0 * x}\n"


def _median_us(fn, calls: int) -> float:
    times = []
    for _ in range(calls):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", default="16,65536,4194304", help="element counts, comma-separated")
    ap.add_argument("--calls", type=int, default=50, help="calls per size (default 50)")
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench-refworker-"))
    (root / "refs.py").write_text(REFS, encoding="utf-8")
    namespace: dict = {}
    exec(REFS, namespace)
    direct = namespace["scale"]
    worker = worker_for(root)
    t = time.perf_counter()
    assert worker.resolve("refs.py", root / "refs.py", "scale") == ""
    print(f"worker start (process, NumPy, refs.py): {(time.perf_counter() - t) * 1e3:.0f} ms")
    print(f"{'n':>10} {'worker µs':>12} {'in-process µs':>14} {'ratio':>7} {'extra µs':>9}")
    for n in (int(v) for v in args.n.split(",")):
        x = np.random.default_rng(0).standard_normal(n).astype(np.float32)

        def through_worker(x: np.ndarray = x, n: int = n) -> None:
            worker.call("refs.py", "scale", {"x": x}, {"N": n}, {"y": (n,)})

        def here(x: np.ndarray = x, n: int = n) -> None:
            direct(x=x.astype(np.float64), N=n)

        through_worker()
        w, d = _median_us(through_worker, args.calls), _median_us(here, args.calls)
        print(f"{n:>10,} {w:>12,.0f} {d:>14,.0f} {w / d:>7.1f} {w - d:>9,.0f}")
    worker.stop()


if __name__ == "__main__":
    main()
