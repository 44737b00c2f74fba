"""`workbench adapters` and `workbench list`: what the machine has, what the corpus holds."""

from __future__ import annotations

import argparse

from workbench.cli.common import add_corpus_adapter, open_session, print_json
from workbench.gpu.adapters import choose_adapter, list_adapters
from workbench.gpu.device import GpuContext
from workbench.session import Session


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("adapters", help="list the GPU adapters wgpu can use")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(handler=cmd_adapters)
    p = sub.add_parser("list", help="list every kernel of a corpus with its status")
    p.add_argument(
        "path", nargs="?", metavar="PATH", help="corpus folder (default: shipped kernels)"
    )
    add_corpus_adapter(p)
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(handler=cmd_list)


def cmd_adapters(args: argparse.Namespace) -> int:
    default = choose_adapter()
    rows = []
    for a in list_adapters():
        ctx = GpuContext(a)
        try:
            subgroup = ctx.subgroup_size
        except Exception:  # a broken adapter still gets listed, without the measurement
            subgroup = None
        rows.append(a.to_json() | {"subgroup_size": subgroup, "default": a.index == default.index})
    if args.json:
        print_json(rows)
        return 0
    for r in rows:
        mark = "*" if r["default"] else " "
        lim = r["limits"]
        print(f"{mark} {r['index']}: {r['name']} ({r['backend']}, {r['type']})  {r['driver']}")
        print(
            f"     subgroup size {r['subgroup_size'] or '–'}   max storage binding "
            f"{lim.get('max-storage-buffer-binding-size', 0) / (1 << 20):,.0f} MiB   "
            f"workgroups/dim {lim.get('max-compute-workgroups-per-dimension', 0):,}   "
            f"invocations/wg {lim.get('max-compute-invocations-per-workgroup', 0)}"
        )
        useful = [
            f
            for f in ("shader-f16", "subgroup", "timestamp-query", "shader-float32-atomic")
            if f in r["features"]
        ]
        print(f"     features: {', '.join(useful) or 'none of f16/subgroup/timestamps'}")
    print("(* = default choice)")
    return 0


def kernel_rows(session: Session) -> list[dict]:
    from workbench.specs.registry import spec_for

    rows = []
    for k in session.corpus.kernels:
        ep = k.entry_point
        status = session.status(k)
        spec = spec_for(k.name)
        rows.append(
            {
                "name": k.name,
                "file": k.file,
                "line": k.line,
                "entry_point": ep.name if ep else None,
                "workgroup_size": list(ep.workgroup_size) if ep else None,
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
            }
        )
    return rows


def cmd_list(args: argparse.Namespace) -> int:
    if args.path and not args.corpus:
        args.corpus = args.path
    session = open_session(args)
    rows = kernel_rows(session)
    if args.json:
        print_json(
            {
                "corpus": str(session.corpus.root),
                "adapter": session.adapter.label,
                "kernels": rows,
                "skipped_files": session.corpus.problems,
            }
        )
        return 0
    print(f"corpus {session.corpus.root}  ·  adapter {session.adapter.label}")
    width = max((len(r["name"]) for r in rows), default=10)
    for r in rows:
        wg = "x".join(map(str, r["workgroup_size"])) if r["workgroup_size"] else "–"
        spec = "spec" if r["spec"] else "ad hoc"
        first, *rest = r["status"].splitlines() or [""]
        print(
            f"  {r['name']:<{width}}  {r['file']:<28} wg {wg:<9} {len(r['bindings'])} bindings  "
            f"{spec:<6}  {first}"
        )
        for line in rest:
            print(f"      {line}")
    for f, why in session.corpus.problems.items():
        print(f"  skipped {f}: {why}")
    return 0
