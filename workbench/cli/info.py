"""`workbench adapters` and `workbench list`: what the machine has, what the corpus holds.

`adapters` probes each adapter once (a device and a trivial compute pipeline), so one that lists but
cannot run compute shaders is marked, and the default it shows is chosen knowing that. With
`--roofline` it also measures each adapter's memory bandwidth and FMA rate (`workbench.gpu.roofline`).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from workbench.cli.common import add_corpus_adapter, corpus_alias, open_session, print_json
from workbench.gpu.canaries import CHAIN_BRANCHES, LOOP_ITERATIONS
from workbench.session import Session
from workbench.units import fmt_bytes, fmt_int, fmt_ms, fmt_rate
from workbench.wgsl.corpus import Kernel


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("adapters", help="list the GPU adapters wgpu can use")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument(
        "--roofline",
        action="store_true",
        help="measure each adapter's memory bandwidth and FMA rate (a few seconds each)",
    )
    p.set_defaults(handler=cmd_adapters)
    p = sub.add_parser("list", help="list every kernel of a corpus with its status")
    p.add_argument("path", nargs="?", metavar="PATH", help="the same as --corpus PATH")
    add_corpus_adapter(p)
    p.add_argument("--pipelines", action="store_true", help="list the pipelines and their steps")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(handler=cmd_list)


def cmd_adapters(args: argparse.Namespace) -> int:
    rows = []
    for a in Session.adapters():
        bare = Session.bare(a)
        problem, subgroup = bare.probe()
        row = a.to_json() | {
            "subgroup_size": subgroup,
            "compute": problem is None,
            "problem": problem,
        }
        # Measured once per adapter and driver, then read from the cache.
        found = bare.canaries() if problem is None else None
        row["canaries"] = found.to_json() if found is not None else None
        row["result_limits"] = found.lines() if found is not None else None
        if args.roofline:
            row["roofline"] = bare.roofline().to_json() if problem is None else None
        rows.append(row)
    # Chosen after the probes, so an adapter that cannot run compute shaders is not the default.
    default = Session.choose_adapter()
    for r in rows:
        r["default"] = r["index"] == default.index
    if args.json:
        print_json({"adapters": rows, "default": default.index})
        return 0
    for r in rows:
        mark = "*" if r["default"] else " "
        lim = r["limits"]
        print(f"{mark} {r['index']}: {r['name']} ({r['backend']}, {r['type']})  {r['driver']}")
        if r["problem"]:
            print(f"     ! cannot run compute shaders: {r['problem']}")
        print(
            f"     subgroup size {r['subgroup_size'] or '–'}   max storage binding "
            f"{fmt_bytes(lim.get('max-storage-buffer-binding-size', 0))}   "
            f"workgroups/dim {fmt_int(lim.get('max-compute-workgroups-per-dimension', 0))}   "
            f"invocations/wg {lim.get('max-compute-invocations-per-workgroup', 0)}   "
            f"workgroup memory {fmt_bytes(lim.get('max-compute-workgroup-storage-size', 0))}"
        )
        print(f"     features: {r['features_line']}")
        if r["canaries"] and r["canaries"]["problem"]:
            print(f"     ! could not run the canaries: {r['canaries']['problem']}")
        elif r["result_limits"]:
            for line in r["result_limits"]:
                print(f"     ! changes results: {line}")
        elif r["result_limits"] is not None:
            print(
                f"     changes no result the canaries test (a loop of {fmt_int(LOOP_ITERATIONS)} "
                f"iterations, an if with {CHAIN_BRANCHES - 1} else-if branches)"
            )
        if r.get("roofline"):
            print_roofline(r["roofline"])
    print("(* = default choice)")
    return 0


def print_roofline(roof: dict[str, Any]) -> None:
    """The measured ceilings with the kernels, sizes and method they came from."""
    print(
        f"     roofline: {fmt_rate(roof['bandwidth_gb_s'], 'B')} memory "
        f"(best of {', '.join(c['kernel'] for c in roof['copies'])}: {roof['bandwidth_kernel']}), "
        f"{fmt_rate(roof['peak_gflop_s'], 'FLOP')} FMA; ridge {roof['ridge_flop_per_byte']:.3g} "
        f"FLOP/B; {roof['method']}"
    )
    for c in roof["copies"]:
        print(
            f"       {c['kernel']:<13} {fmt_rate(c['rate'], 'B'):>11}  "
            f"median {fmt_ms(c['timing']['median_ms'])} of {c['timing']['reps']}  {c['size']}"
        )
    f = roof["fma"]
    print(
        f"       {f['kernel']:<13} {fmt_rate(f['rate'], 'FLOP'):>11}  "
        f"median {fmt_ms(f['timing']['median_ms'])} of {f['timing']['reps']}  {f['size']}"
    )


# Deferred notes printed per kernel by `list` (all of them are in --json).
DEFERRED_SHOWN = 3


def kernel_rows(session: Session) -> list[dict[str, Any]]:
    from workbench.specs.described import described_for
    from workbench.specs.registry import spec_for

    rows = []
    kernels = session.corpus.kernels
    for k, found in zip(kernels, session.statuses(kernels), strict=True):
        ep = k.entry_point
        status = found.text
        spec = described_for(session.described, k) or spec_for(k.name)
        rows.append(
            {
                "name": k.name,
                "file": k.file,
                "line": k.line,
                "entry_point": ep.name if ep else None,
                "workgroup_size": list(ep.workgroup_size) if ep else None,
                "workgroup_bytes": ep.workgroup_bytes if ep else None,
                "workgroup_vars": [
                    {"name": v.name, "type": v.type.text, "bytes": v.size, "at": _at(k, v.line)}
                    for v in (ep.workgroup_vars if ep else ())
                ],
                "bindings": [
                    {
                        "group": b.group,
                        "binding": b.binding,
                        "name": b.name,
                        "space": b.space,
                        "access": b.access,
                        "type": b.type.text,
                        "runtime_sized": b.runtime_sized,
                    }
                    for b in (ep.bindings if ep else ())
                ],
                "features": list(k.features),
                "spec": spec is not None,
                "status": status,
                "warnings": session.warnings(k) if status == "ok" else [],
                # What the front end left to the compiler: the kernel still compiles and runs.
                "deferred": list(k.deferred),
            }
        )
    return rows


def cmd_list(args: argparse.Namespace) -> int:
    corpus_alias(args, args.path)
    if args.pipelines:
        # Imported here: a listing of kernels does not pay for importing the pipelines.
        from workbench.cli.step import list_pipelines

        return list_pipelines(args.json, Path(args.corpus) if args.corpus else None)
    session = open_session(args)
    rows = kernel_rows(session)
    # Say once if the adapter cannot run compute. After the statuses: a kernel that compiled
    # (or was remembered compiling on this adapter) already answers it without a probe.
    problem = session.probe_compute()
    if args.json:
        print_json(
            {
                "corpus": str(session.corpus.root),
                "adapter": session.adapter.label,
                "adapter_problem": problem,
                "kernels": rows,
                "skipped_files": session.corpus.problems,
            }
        )
        return 0
    print(f"corpus {session.corpus.root}  ·  adapter {session.adapter.label}")
    if problem:
        print(f"  ! {session.adapter.label} cannot run compute shaders: {problem}")
    width = max((len(r["name"]) for r in rows), default=10)
    for r in rows:
        wg = "x".join(map(str, r["workgroup_size"])) if r["workgroup_size"] else "–"
        shared = fmt_bytes(r["workgroup_bytes"]) if r["workgroup_bytes"] else "–"
        spec = "spec" if r["spec"] else "ad hoc"
        first, *rest = r["status"].splitlines() or [""]
        print(
            f"  {r['name']:<{width}}  {r['file']:<28} wg {wg:<9} shared {shared:>8}  "
            f"{len(r['bindings'])} bindings  {spec:<6}  {first}"
        )
        for line in rest:
            print(f"      {line}")
        for warning in r["warnings"]:
            print(f"      warning: {warning}")
        deferred = r["deferred"]
        for note in deferred[:DEFERRED_SHOWN]:
            print(f"      not worked out here, left to the compiler: {note}")
        if len(deferred) > DEFERRED_SHOWN:
            print(f"      (and {len(deferred) - DEFERRED_SHOWN} more left to the compiler: --json)")
    for f, why in session.corpus.problems.items():
        print(f"  skipped {f}: {why}")
    if not rows and not session.corpus.problems:
        print(f"  no kernels: no .wgsl file under {session.corpus.root}")
    return 0


def _at(kernel: Kernel, line: int) -> str:
    file, line = kernel.locate(line)
    return f"{file}:{line}"
