"""`workbench step PIPELINE|FILE`: step a pipeline (the corpus's or a shipped one, by name) headless
and print each step, the agree checks and the first divergence; `workbench list --pipelines` lists
the pipelines with their steps."""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Any

from workbench.cli.common import add_corpus_adapter, open_session, parse_pairs, print_json
from workbench.errors import UserError
from workbench.pipelines import corpus_pipelines, load_pipeline, shipped_names
from workbench.pipelines.plan import plan
from workbench.pipelines.report import PipelineReport, step_pipeline
from workbench.pipelines.snapshots import DEFAULT_CAP
from workbench.units import fmt_bytes, fmt_count, fmt_int, fmt_ms, fmt_num

_UNITS = {"": 1, "b": 1, "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30}


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("step", help="step a pipeline of kernels one dispatch at a time")
    p.add_argument(
        "pipeline",
        metavar="PIPELINE|FILE",
        help="a pipeline of the --corpus folder by name (workbench list --pipelines), a shipped "
        f"pipeline ({', '.join(shipped_names())}) or a pipeline .toml file",
    )
    add_corpus_adapter(p)
    p.add_argument("--dim", action="append", default=[], metavar="NAME=V", help="set a dim")
    p.add_argument("--to", type=int, metavar="K", help="stop after step K (default: the end)")
    p.add_argument("--branch", metavar="NAME", help="step an alternative branch instead")
    p.add_argument(
        "--divergence",
        action="store_true",
        help="also run the pipeline in float64 and name the first step that leaves it",
    )
    p.add_argument(
        "--cap",
        default=f"{DEFAULT_CAP >> 20}MiB",
        metavar="SIZE",
        help="memory kept for per-step snapshots, e.g. 64MiB (default %(default)s); the oldest "
        "go first",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(handler=cmd_step)


def parse_size(text: str) -> int:
    """`64MiB`, `512KiB`, `1GiB` or a number of bytes."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmg]i?b|b)?\s*", text, re.IGNORECASE)
    if not m:
        raise UserError(f"--cap {text!r}: give a size such as 64MiB, 512KiB or 1GiB")
    unit = (m.group(2) or "").lower().replace("ib", "").replace("b", "")
    scale = _UNITS[f"{unit}ib" if unit else ""]
    return int(float(m.group(1)) * scale)


def cmd_step(args: argparse.Namespace) -> int:
    pipeline = load_pipeline(args.pipeline, Path(args.corpus) if args.corpus else None)
    cap = parse_size(args.cap)
    session = open_session(args)
    planned = plan(pipeline, session, parse_pairs(args.dim, "--dim"), args.branch)
    if args.to is not None and not 0 <= args.to <= len(planned.steps):
        raise UserError(f"--to {args.to}: {planned.name} has steps 1 to {len(planned.steps)}")
    report = step_pipeline(session, planned, args.to, args.divergence, cap)
    if args.json:
        print_json(report.to_json(session.adapter.label))
    else:
        print_report(report, session.adapter.label)
    return 0 if report.ok else 1


def print_report(report: PipelineReport, adapter: str) -> None:
    s, planned = report.stepper, report.plan
    branch = f" (branch {planned.branch})" if planned.branch else ""
    print(f"{planned.name}{branch}  ({planned.pipeline.file})  on {adapter}")
    print("  " + "  ".join(f"{k} {fmt_int(v)}" for k, v in planned.dims.items()))
    width = max(len(st.name) for st in planned.steps)
    for r in s.records:
        written = ", ".join(f"{b} {fmt_int(n)}" for b, n in r.written.items()) or "nothing"
        worst = max(r.compare.values(), key=lambda c: c.max_abs, default=None)
        detail = f"max|Δ| {fmt_num(worst.max_abs)}" if worst else "no reference"
        print(
            f"  {r.index:>3}  {r.kernel:<{width}}  {fmt_ms(r.ms):>10}  "
            f"{r.verdict.upper():<4}  {detail:<16}  written (changed elements): {written}"
        )
        for c in r.compare.values():
            if not c.ok:
                print("       " + c.summary())
                for m in c.worst[:3]:
                    print(f"         {m.named}: got {fmt_num(m.got)}  ref {fmt_num(m.ref)}")
    for st in planned.steps[s.position :]:
        print(f"  {st.index:>3}  {st.name:<{width}}  not run (--to {s.position})")
    for a in report.agree:
        print(f"  agree {a.agree.index}: " + a.comparison.summary())
    if report.agree_skipped:
        print(f"  agree checks skipped: {report.agree_skipped}")
    if s.divergence_checked:
        div = s.first_divergence
        print(
            "  "
            + (
                div.summary()
                if div
                else "first divergence: none (every step stays within "
                "tolerance of the float64 chain)"
            )
        )
    h = s.history
    evicted = f"; the cap evicted {h.describe_evicted()}" if h.evicted else ""
    print(
        f"  memory: {fmt_bytes(h.kept_bytes)} kept for {fmt_count(s.position, 'step')} (cap "
        f"{fmt_bytes(h.cap_bytes)}){evicted}"
    )
    print("  verdict: " + ("PASS" if report.ok else "FAIL"))


def list_pipelines(as_json: bool, corpus: Path | None = None) -> int:
    """The corpus's pipeline files (one that cannot be read is listed with why), then the
    shipped pipelines."""
    rows: list[dict[str, Any]] = []
    mine = [str(p) for p in corpus_pipelines(corpus)] if corpus is not None else []
    for target in [*mine, *shipped_names()]:
        try:
            p = load_pipeline(target)
        except UserError as exc:
            rows.append({"name": Path(target).stem, "file": target, "error": str(exc)})
            continue
        rows.append(
            {
                "name": p.name,
                "file": p.file,
                "doc": p.doc,
                "dims": {k: d.default for k, d in p.dims.items()},
                "steps": [s.kernel for s in p.steps],
                "branches": {
                    b.name: {"replaces": list(b.replaces), "steps": [s.kernel for s in b.steps]}
                    for b in p.branches.values()
                },
            }
        )
    if as_json:
        print_json({"pipelines": rows})
        return 0
    for r in rows:
        if "error" in r:
            print(f"{r['name']}: cannot be read: {r['error']}")
            continue
        where = f"  ({r['file']})" if r["file"] in mine else ""
        print(f"{r['name']}: {r['doc']}{where}")
        print("    " + " → ".join(r["steps"]))
        for b, info in r["branches"].items():
            print(
                f"    branch {b}: {' → '.join(info['steps'])} instead of {', '.join(info['replaces'])}"
            )
    return 0
