"""`workbench footprint KERNEL` and `workbench probe KERNEL`: inside one dispatch.

`footprint` reports, per read_write binding, who wrote which elements: races (non-atomic elements
written by more than one workgroup) and holes (elements no workgroup wrote); exit 1 when a non-atomic
binding has either. `probe` runs a kernel's `wb_probe` calls and prints their records.
"""

from __future__ import annotations

import argparse

from workbench.cli.common import add_case_options, build_case, open_session, print_json
from workbench.errors import UserError
from workbench.units import fmt_count, fmt_grid, fmt_int, fmt_seconds
from workbench.workgroups.footprint import DEFAULT_MAX_WORKGROUPS, Footprint, footprint
from workbench.workgroups.probes import (
    DEFAULT_CAPACITY,
    MAX_CAPACITY,
    ProbeFilter,
    ProbeRun,
    parse_invocation,
    run_probes,
)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "footprint", help="which workgroup wrote which element: races and holes of one dispatch"
    )
    add_case_options(p)
    p.add_argument(
        "--max-workgroups",
        type=int,
        default=DEFAULT_MAX_WORKGROUPS,
        metavar="N",
        help=f"step every workgroup up to N (default {DEFAULT_MAX_WORKGROUPS:,}); above it, "
        "a seeded sample of N and one full dispatch for holes",
    )
    p.set_defaults(handler=cmd_footprint)
    p = sub.add_parser("probe", help="run a kernel's wb_probe calls and show their records")
    add_case_options(p)
    p.add_argument(
        "--invocation",
        metavar="WG[,LID]",
        help="keep one workgroup's records, or one invocation's (ids as N or x:y:z)",
    )
    p.add_argument(
        "--capacity",
        type=int,
        default=DEFAULT_CAPACITY,
        metavar="N",
        help=f"records kept; later ones are counted as dropped (default {DEFAULT_CAPACITY:,})",
    )
    p.set_defaults(handler=cmd_probe)


def cmd_footprint(args: argparse.Namespace) -> int:
    if args.max_workgroups < 1:
        raise UserError(f"--max-workgroups must be >= 1, got {args.max_workgroups}")
    session = open_session(args)
    case = build_case(session, args)
    fp = footprint(session, case, max_workgroups=args.max_workgroups, seed=args.seed)
    if args.json:
        print_json(fp.to_json())
    else:
        print_footprint(fp)
    return 0 if fp.ok else 1


def print_footprint(fp: Footprint) -> None:
    how = (
        f"sampled {fmt_int(fp.stepped)} of {fmt_int(fp.workgroups)}"
        if fp.sampled
        else "every workgroup"
    )
    print(
        f"{fp.kernel}: grid {fmt_grid(fp.grid)}, {how} stepped in "
        f"{fmt_count(fp.dispatches, 'dispatch')}, {fmt_seconds(fp.wall_s)}"
    )
    print(f"  sentinel fill: {fp.sentinel}")
    for name, o in fp.outputs.items():
        print(
            f"  {name}: {fmt_int(o.written)} of {fmt_count(o.elements, 'element')} written; {o.verdict()}"
        )
        for line in o.problem_lines():
            print(f"    {line}")
    for note in fp.notes:
        print(f"  note: {note}")


def cmd_probe(args: argparse.Namespace) -> int:
    if not 1 <= args.capacity <= MAX_CAPACITY:
        raise UserError(f"--capacity must be between 1 and {MAX_CAPACITY:,}, got {args.capacity}")
    session = open_session(args)
    case = build_case(session, args)
    where = parse_invocation(args.invocation, case) if args.invocation else ProbeFilter()
    result = run_probes(session, case, capacity=args.capacity, where=where)
    if args.json:
        print_json(result.to_json())
    else:
        print_probes(result)
    return 0


def print_probes(result: ProbeRun) -> None:
    print(
        f"{result.kernel}: {fmt_count(len(result.records), 'record')} ({result.filter.describe()}), "
        f"{fmt_int(result.dropped)} dropped past the capacity of {fmt_int(result.capacity)}"
    )
    print(f"  {'order':>7}  {'workgroup':<12} {'local':<12} {'tag':>5}  value")
    for r in result.records:
        value = ", ".join(f"{v:.9g}" for v in r.value) if isinstance(r.value, tuple) else r.value
        if isinstance(value, float):
            value = f"{value:.9g}"
        wg = ",".join(map(str, r.workgroup))
        local = ",".join(map(str, r.local))
        print(f"  {r.order:>7}  {wg:<12} {local:<12} {r.tag:>5}  {value} ({r.kind})")
