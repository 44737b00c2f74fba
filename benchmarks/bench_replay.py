"""Replay of the shipped fixtures through the pytest plugin: one process versus pytest-xdist workers.

    python benchmarks/bench_replay.py [--workers 2] [--repeats 3] [--adapter SEL]

Each run is a fresh `python -m pytest --workbench-fixtures workbench/fixtures` in a subprocess (start-up,
collection, one device per process, every fixture replayed); the script prints the median wall time of
each mode, the ratio, and checks that both modes gave the same outcome per fixture.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def replay(extra: list[str], adapter: str | None) -> tuple[float, dict[str, str]]:
    """Seconds for one pytest run over the shipped fixtures, and each item's outcome."""
    with tempfile.TemporaryDirectory() as tmp:
        junit = Path(tmp) / "report.xml"
        args = [
            sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
            "--workbench-fixtures", str(REPO / "workbench" / "fixtures"),
            f"--junitxml={junit}", "-o", "testpaths=", *extra,
        ]  # fmt: skip
        if adapter:
            args += ["--workbench-adapter", adapter]
        t0 = time.perf_counter()
        subprocess.run(args, cwd=tmp, capture_output=True, check=False)
        wall = time.perf_counter() - t0
        outcomes = {
            c.get("name", ""): "failed" if c.find("failure") is not None else "passed"
            for c in ET.parse(junit).getroot().iter("testcase")
        }
    return wall, outcomes


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--adapter")
    args = ap.parse_args()
    serial, spread = [], []
    for _ in range(args.repeats):
        t, one = replay([], args.adapter)
        serial.append(t)
        t, many = replay(["-n", str(args.workers)], args.adapter)
        spread.append(t)
        if one != many:
            sys.exit(f"outcomes differ between serial and -n {args.workers}: {one} vs {many}")
    s, p = statistics.median(serial), statistics.median(spread)
    print(f"{len(one)} fixtures, {sum(v == 'passed' for v in one.values())} passed in both modes")
    print(f"serial      {s:7.1f} s  (median of {args.repeats})")
    print(f"-n {args.workers:<8} {p:7.1f} s  (median of {args.repeats})")
    print(f"speed-up    {s / p:7.2f}x")


if __name__ == "__main__":
    main()
