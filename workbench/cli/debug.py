"""`workbench debug KERNEL`: one invocation's execution, step by step, with the GPU's values.

The invocation is named by its global id (`--invocation X,Y,Z`), by workgroup and local id, by
the element it wrote last (`--element`), or found: the first to make a NaN or infinity from
finite operands (`--first-nonfinite`). `--compare` traces a second invocation and names the first
step where the two part; `--break` ends the trace at the first step where a condition holds.
Exit 1 when the instrumented run's outputs differ from the plain run's.
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from workbench.cli.common import add_case_options, build_case, open_session, print_json
from workbench.errors import UserError
from workbench.units import fmt_count
from workbench.wgsl.trace import DEFAULT_CAPACITY
from workbench.workgroups.breaks import break_at
from workbench.workgroups.debug import (
    MAX_CAPACITY,
    Difference,
    MemoryView,
    NonFinite,
    Step,
    Trace,
    Value,
    first_difference,
    first_nonfinite,
    invocation_of,
    parse_element,
    trace,
    writers,
)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "debug", help="step one invocation line by line with the values the GPU computed"
    )
    add_case_options(p)
    p.add_argument("--invocation", metavar="X,Y,Z", help="the global invocation id to trace")
    p.add_argument("--workgroup", metavar="X,Y,Z", help="with --local: the invocation's workgroup")
    p.add_argument("--local", metavar="X,Y,Z", help="with --workgroup: its local invocation id")
    p.add_argument(
        "--capacity",
        type=int,
        default=DEFAULT_CAPACITY,
        metavar="N",
        help=f"records kept; the trace says where it stopped (default {DEFAULT_CAPACITY:,})",
    )
    p.add_argument(
        "--compare",
        metavar="X,Y,Z",
        help="trace a second invocation and name the first step where the two differ",
    )
    p.add_argument(
        "--element",
        metavar="'BINDING[axis=i ...]'",
        help="trace the invocation that last wrote this element (or BINDING[flat index])",
    )
    p.add_argument(
        "--first-nonfinite",
        action="store_true",
        help="find the first invocation to make a NaN or infinity from finite operands; trace it",
    )
    p.add_argument(
        "--break",
        dest="break_expr",
        metavar="EXPR",
        help="end the trace at the first step where EXPR holds (acc > 1e6, isnan(x), i == 17u)",
    )
    p.add_argument(
        "--workgroup-memory",
        action="store_true",
        help="show every var<workgroup> array as the invocation sees it after each barrier",
    )
    p.set_defaults(handler=cmd_debug)


def _xyz(flag: str, text: str) -> tuple[int, int, int]:
    parts = text.replace(":", ",").split(",")
    try:
        v = [int(p) for p in parts]
    except ValueError:
        v = []
    if len(v) not in (1, 3) or any(x < 0 for x in v):
        raise UserError(f"{flag} {text!r}: expected X,Y,Z (or X), whole numbers >= 0")
    v += [0] * (3 - len(v))
    return v[0], v[1], v[2]


def cmd_debug(args: argparse.Namespace) -> int:
    if not 1 <= args.capacity <= MAX_CAPACITY:
        raise UserError(f"--capacity must be between 1 and {MAX_CAPACITY:,}, got {args.capacity}")
    chosen = [args.invocation, args.workgroup or args.local, args.element, args.first_nonfinite]
    if sum(bool(c) for c in chosen) != 1:
        raise UserError(
            "name one invocation: --invocation X,Y,Z, --workgroup X,Y,Z with --local X,Y,Z, "
            "--element 'BINDING[i]' or --first-nonfinite"
        )
    given = {
        flag: _xyz(f"--{flag}", text)
        for flag, text in (
            ("invocation", args.invocation),
            ("workgroup", args.workgroup),
            ("local", args.local),
            ("compare", args.compare),
        )
        if text
    }
    if bool(args.workgroup) != bool(args.local):
        raise UserError("--workgroup and --local go together: give both")
    session = open_session(args)
    case = build_case(session, args)
    extra: dict[str, Any] = {}
    nonfinite: NonFinite | None = None
    lines: list[str] = []
    if args.first_nonfinite:
        found = first_nonfinite(session, case, args.capacity)
        if found is None:
            extra["first_nonfinite"] = None
            if args.json:
                print_json({"kernel": case.name, **extra})
            else:
                print(f"{case.name}: no invocation made a NaN or infinity from finite operands")
            return 0
        nonfinite, t = found
        extra["first_nonfinite"] = nonfinite.to_json()
        lines.append(_nonfinite_line(nonfinite))
    else:
        if args.element:
            binding, flat = parse_element(args.element, case)
            found_writers = writers(session, case, binding, flat)
            if not found_writers:
                raise UserError(
                    f"--element {args.element}: no invocation wrote it in this dispatch"
                )
            gid = found_writers[-1].invocation
            extra["element"] = {
                "binding": binding,
                "index": flat,
                "writers": [list(w.invocation) for w in found_writers],
            }
            others = len(found_writers) - 1
            lines.append(
                f"{binding}[{flat}] was last written by invocation {_ids(gid)} at "
                f"{found_writers[-1].file}:{found_writers[-1].line}"
                + (f" ({fmt_count(others, 'earlier store')} by others)" if others else "")
            )
        elif args.invocation:
            gid = invocation_of(case, given["invocation"])
        else:
            gid = invocation_of(case, None, given["workgroup"], given["local"])
        t = trace(session, case, gid, args.capacity, memory=args.workgroup_memory)
    if args.break_expr:
        hit = break_at(t, args.break_expr)
        extra["break"] = None if hit is None else hit
        if hit is not None:
            t.steps = t.steps[: hit + 1]
            lines.append(f"break: {args.break_expr} holds after step {hit}")
        else:
            lines.append(f"break: {args.break_expr} never holds")
    if args.compare:
        other = trace(session, case, given["compare"], args.capacity)
        d = first_difference(t, other)
        extra["first_difference"] = d.to_json() if d else None
        lines.append(_difference_line(t, other, d))
    if args.workgroup_memory:
        extra["workgroup_memory"] = [v.to_json() for v in t.memory]
    if args.json:
        print_json({**t.to_json(), **extra})
    else:
        print_trace(t, lines, nonfinite.step.step if nonfinite else None)
    return 1 if t.instrumentation_changed else 0


def _ids(v: tuple[int, int, int]) -> str:
    return ",".join(map(str, v))


def _nonfinite_line(nf: NonFinite) -> str:
    ops = ", ".join(f"{k} = {show(v, '')}" for k, v in nf.operands.items())
    return (
        f"first non-finite: {nf.step.name} = {show(nf.step.value, nf.step.type)} at "
        f"{nf.step.file}:{nf.step.line}:{nf.step.col} in invocation {_ids(nf.invocation)}"
        f" (step {nf.step.step}) from {ops or 'no recorded operands'}; "
        f"{fmt_count(nf.invocations, 'invocation')} made one"
    )


def _difference_line(a: Trace, b: Trace, d: Difference | None) -> str:
    who = f"{_ids(a.invocation)} and {_ids(b.invocation)}"
    if d is None:
        return f"compare: {who} ran the same steps with the same values"
    return (
        f"compare: {who} first differ in {d.why} at step {d.step}, {d.file}:{d.line} "
        f"{d.name}: {show(d.a, '')} vs {show(d.b, '')}"
    )


def show(v: Value | None, type_text: str) -> str:
    """A value as the shortest text that reads back as the same f32/f16 value."""
    if v is None:
        return "-"
    if isinstance(v, list):
        return "(" + ", ".join(show(x, type_text) for x in v) + ")"
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, float):
        return str(np.float16(v) if "f16" in type_text else np.float32(v))
    return str(v)


AROUND = 12  # steps shown before and after the step a search found


def print_trace(t: Trace, lines: list[str], focus: int | None = None) -> None:
    """The trace as a table; with `focus`, only the steps around that one."""
    if t.outputs_identical:
        same = "outputs identical with and without instrumentation"
    elif t.instrumentation_changed:
        same = f"OUTPUTS DIFFER with instrumentation: {', '.join(t.instrumentation_changed)}"
    else:
        same = (
            f"outputs {', '.join(t.unsteady)} differ with instrumentation as two plain runs do "
            "(the kernel is not deterministic on this adapter)"
        )
    print(
        f"{t.kernel}: invocation {_ids(t.invocation)} (workgroup {_ids(t.workgroup)}, local "
        f"{_ids(t.local)}), {fmt_count(len(t.steps), 'step')}; {same}"
    )
    for line in lines:
        print(f"  {line}")
    print(f"  {'step':>6}  {'where':<24} {'kind':<8} {'name':<28} value")
    views: dict[int, list[MemoryView]] = {}
    for v in t.memory:
        views.setdefault(v.step, []).append(v)
    first, last = 0, len(t.steps)
    if focus is not None:
        first, last = max(0, focus - AROUND), min(len(t.steps), focus + AROUND + 1)
    if first:
        print(f"  {'':>6}  ... {fmt_count(first, 'earlier step')} (--json has them all)")
    for st in t.steps[first:last]:
        print(_step_line(st))
        for v in views.get(st.step, []):
            shown = ", ".join(show(x, v.type) for x in v.values[:16])
            more = f", ... ({len(v.values):,} elements)" if len(v.values) > 16 else ""
            print(f"  {'':>6}  {'':<24} {'memory':<8} {v.name:<28} [{shown}{more}]")
    if last < len(t.steps):
        print(f"  {'':>6}  ... {fmt_count(len(t.steps) - last, 'later step')}")
    if t.truncated:
        print(f"  {t.end}")


def _step_line(st: Step) -> str:
    where = f"{st.file}:{st.line}:{st.col}"
    name = "  " * st.depth + st.name
    at = f" [{st.index}]" if st.index is not None and st.kind != "loop" else ""
    it = f" (iteration {st.index})" if st.kind == "loop" and st.name != "end" else ""
    value = show(st.value, st.type)
    return f"  {st.step:>6}  {where:<24} {st.kind:<8} {name:<28} {value}{at}{it}"
