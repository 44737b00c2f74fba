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
from dataclasses import replace
from typing import Any

from workbench.bench.ab import ABResult, ab
from workbench.bench.measure import BenchResult, bench_case
from workbench.bench.sweep import SweepResult, check_override, parse_sweep, sweep
from workbench.cli.common import add_case_options, build_case, open_session, print_json
from workbench.errors import UserError
from workbench.session import Budget, Case, ClockCheck, Roofline, Session
from workbench.units import fmt_bytes, fmt_ms, fmt_rate
from workbench.wgsl.corpus import SHIPPED, load_corpus


def register(sub: argparse._SubParsersAction) -> None:
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
    p.add_argument(
        "--warmup-ms", type=float, default=25.0, help="warm-up time per kernel (default 25)"
    )
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
        "adapter": session.adapter.to_json() | {"limits": None},
        "budget": budget.to_json(),
        "flush_bytes": session.gpu.flush_bytes[0],
        "flush_size_why": session.gpu.flush_bytes[1],
        "roofline": roof.to_json(),
    }
    if not args.json:
        print_header(session, budget, roof)
    failed = False
    if sweep_spec:
        base = cases[0]
        result = sweep(session, _variant_maker(base), *sweep_spec, budget, roof)
        out["sweep"] = result.to_json()
        failed = any(r.verdict not in ("pass", "ran") for r in result.results)
        best = result.best
        clock = _clock(session, best) if best else None
        if not args.json:
            print_sweep(base, result)
    elif other_case is not None:
        a_label = f"A {args.corpus or 'shipped'}"
        b_label = f"B {args.vs}"
        res = ab(session, (a_label, cases[0]), (b_label, other_case), budget, roof)
        out["ab"] = res.to_json()
        failed = res.stats is None
        clock = _clock(session, res.a) if res.stats else None
        if not args.json:
            print_ab(res)
    else:
        results = [bench_case(session, c, budget, roof) for c in cases]
        out["results"] = [r.to_json() for r in results]
        failed = any(r.verdict not in ("pass", "ran") for r in results)
        clock = _clock(session, results[0])
        if not args.json:
            for r in results:
                print_result(r)
    out["clock_check"] = clock.to_json() if clock else None
    if args.json:
        print_json(out)
    elif clock is not None:
        print(f"clock check: {clock.summary()}")
    elif not session.gpu.has_timestamps:
        print("clock check: none (the adapter has no timestamps; times are wall clock)")
    return 1 if failed else 0


def _budget(args: argparse.Namespace) -> Budget:
    for flag, v in (("--ms", args.ms), ("--warmup-ms", args.warmup_ms)):
        if not (v >= 0 and v < 1e7):
            raise UserError(f"{flag} must be a number of milliseconds >= 0, got {v}")
    if args.ms <= 0:
        raise UserError("--ms must be > 0: it is the time spent measuring each kernel")
    return Budget(args.ms, args.warmup_ms, args.flush)


def _case(session: Session, args: argparse.Namespace, kernel: str) -> Case:
    one = copy.copy(args)
    one.kernel = kernel
    return build_case(session, one)


def _other_session(session: Session, vs: str) -> Session:
    """The corpus `--vs` names, on the same device (so both are timed in the same submissions)."""
    return Session(load_corpus(SHIPPED if vs == "shipped" else vs), session.gpu)


def _variant_maker(base: Case) -> Any:
    def make(overrides: Mapping[str, float]) -> Case:
        return replace(base, overrides={**base.overrides, **overrides}, notes=list(base.notes))

    return make


def _clock(session: Session, result: BenchResult) -> ClockCheck | None:
    """The clock cross-check on one benched case (once per command)."""
    if result.timing is None or not result.timing.reps:
        return None
    return session.clock_check(result.case, result.timing.median_ms)


# -- text output -------------------------------------------------------------------------------
def print_header(session: Session, budget: Budget, roof: Roofline) -> None:
    flush = session.gpu.flush_bytes
    print(f"bench on {session.adapter.label}")
    print(
        f"  budget {budget.ms:g} ms per kernel after {budget.warmup_ms:g} ms warm-up; "
        + (
            f"cache flushed before each pass ({fmt_bytes(flush[0])}: {flush[1]})"
            if budget.flush
            else "no cache flush"
        )
    )
    bw = roof.bandwidth_probe
    print(
        f"  roofline {fmt_rate(roof.bandwidth_gb_s, 'B')} ({bw.kernel}, {bw.size})  "
        f"{fmt_rate(roof.peak_gflop_s, 'FLOP')} ({roof.fma.kernel}, {roof.fma.size}); "
        f"ridge {roof.ridge:.3g} FLOP/B; {roof.method}"
    )


def _time_line(r: BenchResult) -> str:
    t = r.timing
    if t is None or not t.reps:
        return "not timed"
    return (
        f"median {fmt_ms(t.median_ms)}  p10 {fmt_ms(t.p10_ms)}  p90 {fmt_ms(t.p90_ms)}  "
        f"min {fmt_ms(t.min_ms)}  mean {fmt_ms(t.mean_ms)} ± {fmt_ms(t.std_ms)}  "
        f"({t.reps} reps; {t.detail})"
    )


def print_result(r: BenchResult) -> None:
    case = r.case
    dims = "  ".join(f"{n} {v:,}" for n, v in case.dims.items())
    print(f"{r.label}  ({case.kernel.file}; {dims})  {r.verdict.upper()}")
    if r.problem:
        print(f"  check  {r.problem}")
    print(f"  time   {_time_line(r)}")
    if r.figures:
        print(f"  rate   {r.figures.summary()}")
    for note in r.notes:
        print(f"  note   {note}")


def print_sweep(base: Case, res: SweepResult) -> None:
    print(f"sweep of override {res.name} over {base.name} ({base.kernel.file})")
    best = res.best
    width = max(len(r.label) for r in res.results)
    for r in res.results:
        mark = "★" if r is best else " "
        head = f"  {mark} {r.label:<{width}}  {r.verdict.upper():<5}"
        if not r.usable:
            print(f"{head}  not timed: {r.problem or 'cancelled'}")
            continue
        t = r.timing
        vs = f"{t.median_ms / best.timing.median_ms:.2f}× best" if best else ""
        rate = f"  {fmt_rate(r.figures.gb_per_s, 'B')}" if r.figures else ""
        print(
            f"{head}  {fmt_ms(t.median_ms):>10}  p10–p90 {fmt_ms(t.p10_ms)}–{fmt_ms(t.p90_ms)}"
            f"  {t.reps} reps{rate}  {vs}"
        )
    if best is not None:
        print(f"  best: {best.label} (★); method {best.timing.detail}")
        for note in best.notes:
            print(f"  note   {note}")
    else:
        print("  no value passed its check: nothing was timed")


def print_ab(res: ABResult) -> None:
    print(f"A/B of {res.a.case.name}, interleaved A B A B …")
    for r in (res.a, res.b):
        print_result(r)
    if res.stats is None:
        print("  not timed: both must pass their checks before they are compared")
    else:
        print(f"  {res.stats.summary()}")
