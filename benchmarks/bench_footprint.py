"""How long an exact footprint takes: every shipped kernel at its default dims, on one adapter.

For each kernel the script times one plain dispatch (`session.run`, no reference, after a run that
compiles it) and then
`footprint(session, case)` with the default limit, and prints the workgroups stepped, the dispatches
made, the seconds taken, workgroups per second, and the footprint's cost in plain dispatches
(footprint seconds / one dispatch's seconds: about ⌈log2 N⌉ for bit slicing, twice that for an
in-place kernel). The verdict column is the footprint's own (no races, no holes) as a sanity check.

    python benchmarks/bench_footprint.py [--adapter SEL] [--kernels a,b] [--max-workgroups N] [--json]

It needs no GPU (the CPU adapter works) and runs unchanged on a GPU machine.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("XDG_RUNTIME_DIR", f"/tmp/workbench-xdg-{os.getuid()}")
os.makedirs(os.environ["XDG_RUNTIME_DIR"], mode=0o700, exist_ok=True)

from workbench.session import Session  # noqa: E402
from workbench.workgroups.footprint import DEFAULT_MAX_WORKGROUPS, footprint  # noqa: E402


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--adapter", help="adapter selector (default: the workbench's choice)")
    p.add_argument("--kernels", help="comma-separated kernel names (default: every spec'd one)")
    p.add_argument("--max-workgroups", type=int, default=DEFAULT_MAX_WORKGROUPS)
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    session = Session.open(adapter=args.adapter)
    names = (
        args.kernels.split(",")
        if args.kernels
        else [k.name for k in session.corpus.kernels if session.spec(k) is not None]
    )
    rows = []
    if not args.json:
        print(f"adapter: {session.adapter.label}; load average {os.getloadavg()[0]:.1f}")
        print(
            f"{'kernel':<32} {'workgroups':>10} {'stepped':>8} {'dispatches':>10} "
            f"{'one run':>9} {'footprint':>10} {'wg/s':>8} {'x run':>6}  verdict"
        )
    for name in names:
        case = session.case(name)
        session.run(case, reference=False)  # compiles: the timed run below does not
        t0 = time.perf_counter()
        session.run(case, reference=False)
        one = time.perf_counter() - t0
        fp = footprint(session, case, max_workgroups=args.max_workgroups)
        row = {
            "kernel": name,
            "workgroups": fp.workgroups,
            "stepped": fp.stepped,
            "sampled": fp.sampled,
            "dispatches": fp.dispatches,
            "one_run_s": one,
            "footprint_s": fp.wall_s,
            "workgroups_per_s": fp.stepped / fp.wall_s,
            "runs": fp.wall_s / one,
            "ok": fp.ok,
            "load": os.getloadavg()[0],
        }
        rows.append(row)
        if not args.json:
            print(
                f"{name:<32} {fp.workgroups:>10,} {fp.stepped:>8,} {fp.dispatches:>10} "
                f"{one:>8.2f}s {fp.wall_s:>9.1f}s {row['workgroups_per_s']:>8,.0f} "
                f"{row['runs']:>6.1f}  {'ok' if fp.ok else 'races/holes'}"
            )
    if args.json:
        print(json.dumps({"adapter": session.adapter.label, "kernels": rows}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
