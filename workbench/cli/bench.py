"""`workbench bench KERNEL …`: budgeted timing on the adapter's measured roofline, sweeps, A/B.

Every kernel is checked against its reference before it is timed. Repetitions follow a time budget
(`--ms`, `--warmup-ms`), the method is always printed, and the first kernel's timestamps are
cross-checked against the host clock. `--sweep NAME=V1,V2` times each value of an override constant;
`--vs shipped|PATH` times the kernel against another implementation, interleaved.
"""

from __future__ import annotations

import argparse
import copy
from collections.abc import Mapping
from typing import Any

from workbench.bench.ab import ab
from workbench.bench.measure import BenchResult, bench_case
from workbench.bench.report import ab_lines, clock_line, header_lines, result_lines, sweep_lines
from workbench.bench.sweep import check_override, parse_sweep, sweep
from workbench.cli.common import (
    add_case_options,
    add_warmup_ms,
    build_case,
    milliseconds,
    open_session,
    print_json,
)
from workbench.errors import UserError
from workbench.session import Budget, Case, ClockCheck, Session
from workbench.wgsl.corpus import SHIPPED, load_corpus


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "bench",
        help="time kernels within a budget, on the adapter's measured roofline",
        description="Check each kernel against its reference, then time it within a budget "
        "(GPU timestamps per pass where the adapter has them), and place it on the adapter's "
        "measured roofline.",
    )
    add_case_options(p, many=True)
    p.add_argument(
        "--ms", type=float, default=100.0, help="measurement time per kernel (default 100)"
    )
    add_warmup_ms(p, "per kernel")
    p.add_argument(
        "--flush",
        action=argparse.BooleanOptionalAction,
        default=False,
        help="write a buffer larger than the last-level cache before each timed pass",
    )
    p.add_argument(
        "--sweep",
        metavar="NAME=V1,V2,…",
        help="time each value of an override constant (checked first; best marked)",
    )
    p.add_argument(
        "--vs",
        metavar="shipped|PATH",
        help="A/B against the same kernel of the shipped corpus or of another corpus folder",
    )
    p.set_defaults(handler=cmd_bench)


def cmd_bench(args: argparse.Namespace) -> int:
    budget = _budget(args)
    if (args.sweep or args.vs) and len(args.kernel) > 1:
        raise UserError("--sweep and --vs take one kernel; bench the others separately")
    if args.sweep and args.vs:
        raise UserError("--sweep and --vs cannot be combined; run them one after the other")
    sweep_spec = parse_sweep(args.sweep) if args.sweep else None
    session = open_session(args)
    cases = [_case(session, args, k) for k in args.kernel]
    if sweep_spec:
        check_override(cases[0], sweep_spec[0])
    other = _other_session(session, args.vs) if args.vs else None
    other_case = _case(other, args, args.kernel[0]) if other else None
    roof = session.roofline()
    out: dict[str, Any] = {
        "adapter": session.adapter.to_json(),
        "budget": budget.to_json(),
        "flush_bytes": session.flush_size[0],
        "flush_size_why": session.flush_size[1],
        "roofline": roof.to_json(),
    }
    if not args.json:
        print(
            "\n".join(
                header_lines(
                    session.adapter.label, budget, roof, session.flush_size, session.adapter.is_cpu
                )
            )
        )
    failed = False
    if sweep_spec:
        base = cases[0]
        result = sweep(session, _variant_maker(session, args), *sweep_spec, budget, roof)
        out["sweep"] = result.to_json()
        failed = any(r.verdict not in ("pass", "ran") for r in result.results)
        best = result.best
        clock = _clock(session, best) if best else None
        if not args.json:
            print("\n".join(sweep_lines(base.name, base.kernel.file, result)))
    elif other_case is not None:
        a_label = f"A {args.corpus or 'shipped'}"
        b_label = f"B {args.vs}"
        res = ab(session, (a_label, cases[0]), (b_label, other_case), budget, roof)
        out["ab"] = res.to_json()
        failed = res.stats is None
        clock = _clock(session, res.a) if res.stats else None
        if not args.json:
            print("\n".join(ab_lines(res)))
    else:
        results = [bench_case(session, c, budget, roof) for c in cases]
        out["results"] = [r.to_json() for r in results]
        failed = any(r.verdict not in ("pass", "ran") for r in results)
        clock = _clock(session, results[0])
        if not args.json:
            for r in results:
                print("\n".join(result_lines(r)))
    out["clock_check"] = clock.to_json() if clock else None
    if args.json:
        print_json(out)
    else:
        print(clock_line(clock, session.has_timestamps))
    return 1 if failed else 0


def _budget(args: argparse.Namespace) -> Budget:
    milliseconds("--ms", args.ms)
    milliseconds("--warmup-ms", args.warmup_ms)
    if args.ms <= 0:
        raise UserError("--ms must be > 0: it is the time spent measuring each kernel")
    return Budget(args.ms, args.warmup_ms, args.flush)


def _case(session: Session, args: argparse.Namespace, kernel: str) -> Case:
    one = copy.copy(args)
    one.kernel = kernel
    return build_case(session, one)


def _other_session(session: Session, vs: str) -> Session:
    """The corpus `--vs` names, on the same device (so both are timed in the same submissions)."""
    return session.with_corpus(load_corpus(SHIPPED if vs == "shipped" else vs))


def _variant_maker(session: Session, args: argparse.Namespace) -> Any:
    """Each variant planned like the base case, its override added to --override: a grid that
    follows a workgroup size the override sets is planned again."""

    def make(overrides: Mapping[str, float]) -> Case:
        one = copy.copy(args)
        one.kernel = args.kernel[0]
        one.override = [*args.override, *(f"{k}={v}" for k, v in overrides.items())]
        return build_case(session, one)

    return make


def _clock(session: Session, result: BenchResult) -> ClockCheck | None:
    """The clock cross-check on one benched case (once per command)."""
    if result.timing is None or not result.timing.reps:
        return None
    return session.clock_check(result.case, result.timing.median_ms)
