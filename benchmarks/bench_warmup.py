"""What the warm-up by time is for: one kernel timed after the GPU idled, with and without it.

Runs the calls the terminal UI's bench makes (`b`: a checked run, the roofline once, then
`Session.time_cases` with the UI's budget, 100 ms after DEFAULT_WARMUP_MS) and `Session.run(reps=…)`
(`workbench run --reps`), each after `--idle` seconds of idle GPU, with the default warm-up and
with the short one the UI used before (25 ms) or none; then prints one line per measurement. On a
GPU whose clocks drop when idle the short warm-ups read 2–3× slow (docs/benchmarks.md); on a CPU
adapter they agree.

    python benchmarks/bench_warmup.py [--adapter SEL] [--kernel rope_q] [--dim seq=16384] [--idle 3]
"""

from __future__ import annotations

import argparse
import time

from workbench.session import DEFAULT_WARMUP_MS, Budget, Session, Timing
from workbench.units import fmt_count, fmt_ms, fmt_ratio

UI_BENCH_MS = 100.0  # the UI's `bench_ms` default
OLD_UI_WARMUP_MS = 25.0  # the UI's warm-up before issue 12
RUN_REPS = 200


def line(label: str, t: Timing, warmup_ms: float) -> str:
    return (
        f"  {label:<34} median {fmt_ms(t.median_ms):>9}  p10 {fmt_ms(t.p10_ms):>9}  "
        f"p90 {fmt_ms(t.p90_ms):>9}  {fmt_count(t.reps, 'rep')} after {warmup_ms:g} ms "
        f"({fmt_count(t.warmup, 'warm-up round')}), drift {fmt_ratio(t.drift)}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--adapter")
    ap.add_argument("--kernel", default="rope_q")
    ap.add_argument("--dim", action="append", default=["seq=16384"], metavar="NAME=V")
    ap.add_argument("--idle", type=float, default=3.0, help="seconds idle before each timing")
    args = ap.parse_args()
    dims = {k: int(v) for k, v in (d.split("=", 1) for d in args.dim)}
    session = Session.open(args.adapter)
    case = session.case(args.kernel, dims=dims)
    run = session.run(case)  # as `b` does first: one dispatch, checked against the reference
    session.roofline()  # as the first `b` of a process does
    shown = "  ".join(f"{k} {v:,}" for k, v in case.dims.items())
    print(f"{case.name} ({shown}) on {session.adapter.label}: check {'PASS' if run.ok else 'FAIL'}")
    print(f"each timing after {args.idle:g} s idle:")
    for label, warm in (
        ("UI bench, default warm-up", DEFAULT_WARMUP_MS),
        ("UI bench, the old 25 ms warm-up", OLD_UI_WARMUP_MS),
    ):
        time.sleep(args.idle)
        t = session.time_cases([case], Budget(ms=UI_BENCH_MS, warmup_ms=warm))[0]
        print(line(label, t, warm))
    for label, warm in (
        ("run --reps, default warm-up", DEFAULT_WARMUP_MS),
        ("run --reps, none", 0.0),
    ):
        time.sleep(args.idle)
        t = session.run(case, reps=RUN_REPS, warmup_ms=warm, reference=False).timing
        print(line(label, t, warm))


if __name__ == "__main__":
    main()
