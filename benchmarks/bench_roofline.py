"""The adapter's measured roofline, with shipped kernels placed on it: the figures of docs/benchmarks.md.

Measures the two ceilings (`workbench.gpu.roofline`: best of three copy kernels, an FMA chain), then
benches each kernel as `workbench bench` does (checked against its float64 reference first, a
second's warm-up, reps by time budget, GPU timestamps per pass, cache flushed before each pass
unless --no-flush) and prints a Markdown section: the ceilings with their kernels and sizes, a table
of the kernels (median time, GB/s and GFLOP/s by the spec's cost model, intensity, fraction of each
ceiling, which binds), and the roofline chart.

    python benchmarks/bench_roofline.py [--adapter SEL] [--ms 100] [--only NAME ...] [--seed-dims]
                                        [--no-flush] [--markdown OUT.md] [--json OUT.json]
    python benchmarks/bench_roofline.py --from-json OUT.json   # render a run made elsewhere

Kernels run at the sizes of bench_kernels.py (over the H100's L2 cache) unless --seed-dims gives the
seed defaults.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_kernels import ROWS

from workbench.bench.measure import bench_case
from workbench.bench.plot import Point, roofline_chart
from workbench.checks.result import jsonable
from workbench.session import DEFAULT_WARMUP_MS, Budget, Session
from workbench.units import fmt_ms

# Each kernel at the sizes of its first row in bench_kernels.py, so both scripts time the same work.
SIZES: dict[str, dict[str, int]] = {}
for _row in ROWS:
    for _kernel in _row.kernels:
        SIZES.setdefault(_kernel, _row.dims)

KERNELS = (
    "gelu_inplace",
    "swiglu_combine",
    "ffn_swiglu_backward",
    "rope_q",
    "embed_lookup",
    "causal_conv1d_bwd",
    "attention_forward",
    "attention_backward_short",
)


def markdown(fig: dict[str, Any]) -> str:
    """The section from the figures (as `--json` writes them), so a run elsewhere can be rendered here."""
    roof = fig["roofline"]
    ad = fig["adapter"]
    lines = [
        f"Adapter: {ad['name']} ({ad['backend']}), driver {ad['driver']}. Command: `{fig['command']}`.",
        "",
        "| ceiling | value | kernel | size | passes, median | method |",
        "|---|---:|---|---|---:|---|",
    ]
    for p in roof["copies"]:
        best = " (best)" if p["kernel"] == roof["bandwidth_kernel"] else ""
        lines.append(
            f"| memory{best} | {p['rate']:,.1f} GB/s | {p['kernel']} | {p['size']} | "
            f"{p['timing']['reps']}, {fmt_ms(p['timing']['median_ms'])} | {p['timing']['detail']} |"
        )
    f = roof["fma"]
    lines.append(
        f"| compute | {f['rate']:,.0f} GFLOP/s | {f['kernel']} | {f['size']} | "
        f"{f['timing']['reps']}, {fmt_ms(f['timing']['median_ms'])} | {f['timing']['detail']} |"
    )
    lines += [
        "",
        f"Ridge point: {roof['ridge_flop_per_byte']:.3g} FLOP/byte.",
        "",
        "| kernel | dims | check | median | GB/s | GFLOP/s | FLOP/B | % of memory | % of compute | binds |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    points, method = [], roof["method"]
    for r in fig["results"]:
        dims = " ".join(f"{k}={v}" for k, v in r["dims"].items())
        t, g = r["timing"], r["figures"]
        if g is None or t is None:
            lines.append(f"| {r['label']} | {dims} | {r['verdict']} | – | – | – | – | – | – | – |")
            continue
        method = t["detail"]
        lines.append(
            f"| {r['label']} | {dims} | {r['verdict']} | {fmt_ms(t['median_ms'])} | "
            f"{g['gb_per_s']:,.1f} | {g['gflop_per_s']:,.1f} | {g['intensity_flop_per_byte']:.3g} | "
            f"{g['frac_bandwidth']:.0%} | {g['frac_compute']:.1%} | {g['binds']} |"
        )
        points.append(
            Point(r["label"], g["intensity_flop_per_byte"], g["gflop_per_s"], g["gb_per_s"])
        )
    chart = roofline_chart(roof["bandwidth_gb_s"], roof["peak_gflop_s"], points, color=False)
    lines += [
        "",
        f"Kernel times: {method}, after {fig['budget']['warmup_ms']:g} ms of warm-up; each kernel "
        "checked against its float64 reference first.",
        "",
        "```",
        chart.rstrip(),
        "```",
    ]
    return "\n".join(lines) + "\n"


def measure(args: argparse.Namespace) -> dict[str, Any]:
    session = Session.open(adapter=args.adapter)
    roof = session.roofline(Budget(ms=100.0, warmup_ms=DEFAULT_WARMUP_MS))
    budget = Budget(ms=args.ms, warmup_ms=DEFAULT_WARMUP_MS, flush=not args.no_flush)
    results = []
    for name in args.only:
        case = session.case(name, dims={} if args.seed_dims else SIZES.get(name, {}))
        results.append(bench_case(session, case, budget, roof))
        print(f"{name}: {results[-1].verdict}", file=sys.stderr)
    return jsonable(
        {
            "command": "python benchmarks/bench_roofline.py " + " ".join(sys.argv[1:]),
            "adapter": session.adapter.to_json() | {"limits": None},
            "roofline": roof.to_json(),
            "budget": budget.to_json(),
            "results": [r.to_json() for r in results],
        }
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--adapter", help="adapter selector (default: the best one)")
    ap.add_argument("--ms", type=float, default=100.0, help="measurement time per kernel")
    ap.add_argument("--only", nargs="*", default=list(KERNELS), help="kernels to place")
    ap.add_argument("--seed-dims", action="store_true", help="seed default dims")
    ap.add_argument("--no-flush", action="store_true", help="do not flush the cache between passes")
    ap.add_argument("--markdown", metavar="OUT.md", help="also write the section here")
    ap.add_argument("--json", metavar="OUT.json", help="also write every figure as JSON")
    ap.add_argument("--from-json", metavar="IN.json", help="render figures an earlier --json wrote")
    args = ap.parse_args()
    if args.from_json:
        fig = json.loads(Path(args.from_json).read_text(encoding="utf-8"))
    else:
        fig = measure(args)
    if args.json:  # first: the figures are kept even if the chart cannot be drawn
        Path(args.json).write_text(json.dumps(fig, indent=2), encoding="utf-8")
    text = markdown(fig)
    print(text)
    if args.markdown:
        Path(args.markdown).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
