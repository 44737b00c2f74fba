"""`workbench record KERNEL ... --out DIR/NAME` and `workbench replay [PATH ...]`.

record runs the case once and saves it as a fixture (atomic, never overwriting without --force).
replay runs every fixture found (default: the shipped ones) and prints a table as each finishes;
exit 0 when all pass, 1 when some failed, 2 when a fixture could not be used (3: the GPU failed).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from workbench.cli.common import (
    add_case_options,
    add_corpus_adapter,
    add_timeout,
    add_tolerance_options,
    build_case,
    open_session,
    print_json,
    tolerance_override,
)
from workbench.errors import UserError
from workbench.fixtures import (
    SHIPPED_FIXTURES,
    ReplayResult,
    find_fixtures,
    fixture_out,
    fixture_paths,
    overall_exit_code,
    record_fixture,
    replay_paths,
)
from workbench.fixtures.report import junit_xml, result_lines, results_json, summary_line
from workbench.safewrite import refuse_unwritable, write_text
from workbench.units import fmt_bytes, fmt_count


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("record", help="run a case and save it as a fixture (NAME.toml + NAME.npz)")
    add_case_options(p)
    p.add_argument("--out", required=True, metavar="DIR/NAME", help="where to write the fixture")
    p.add_argument("--note", default="", metavar="TEXT", help="why this case is worth guarding")
    p.add_argument(
        "--checks",
        default="compare",
        metavar="LIST",
        help="checks replay runs, comma-separated: compare, grad, special, determinism "
        "(default: compare)",
    )
    add_tolerance_options(p, "record", forcible=False)
    p.add_argument("--force", action="store_true", help="overwrite an existing fixture")
    p.set_defaults(handler=cmd_record)

    p = sub.add_parser("replay", help="replay fixtures and report pass/fail")
    p.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="fixture manifests or folders of them (default: the shipped fixtures)",
    )
    add_corpus_adapter(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--junit", metavar="FILE", help="also write JUnit XML to FILE")
    p.add_argument("--force", action="store_true", help="overwrite an existing --junit FILE")
    add_timeout(p)
    p.set_defaults(handler=cmd_replay)


def cmd_record(args: argparse.Namespace) -> int:
    checks = [c.strip() for c in args.checks.split(",") if c.strip()]
    override = tolerance_override(args)
    if not args.out.strip():
        raise UserError("--out: give a fixture name (DIR/NAME) or a folder (DIR/)")
    session = open_session(args)
    case = build_case(session, args)
    out = fixture_out(args.out, case)
    for p in fixture_paths(out):
        refuse_unwritable(p, args.force)
    run = session.run(case, reps=0, tolerance=override)
    warnings = [n for n in case.notes if n.startswith("warning: ")]
    path = record_fixture(run, out, note=args.note, checks=checks, force=args.force)
    if args.json:
        print_json(
            {
                "manifest": str(path),
                "arrays": str(path.with_suffix(".npz")),
                "kernel": case.name,
                "dims": case.dims,
                "ok_now": run.ok,
                "compare": {k: c.to_json() for k, c in run.compare.items()},
                "warnings": [n.removeprefix("warning: ") for n in warnings],
            }
        )
        return 0
    size = path.stat().st_size + path.with_suffix(".npz").stat().st_size
    print(f"recorded {path} (+ .npz, {fmt_bytes(size)} in all)")
    print(f"  {case.name}  " + "  ".join(f"{k}={v}" for k, v in case.dims.items()))
    for c in run.compare.values():
        print("  " + c.summary())
    for note in warnings:
        print(f"  {note} (kept in the fixture)")
    if run.ok is False:
        print(
            "  warning: the kernel does not match its reference now; this fixture fails until "
            "it does",
            file=sys.stderr,
        )
    elif run.ok is None:
        print("  no spec: the expected outputs are the kernel's own (a regression guard)")
    return 0


def cmd_replay(args: argparse.Namespace) -> int:
    paths = [Path(p) for p in args.paths] or [SHIPPED_FIXTURES]
    if args.junit is not None:
        if not args.junit.strip():
            raise UserError("--junit: give a file name")
        refuse_unwritable(Path(args.junit), args.force)
    manifests = find_fixtures(paths)
    if not manifests:
        raise UserError(f"no fixtures (*.toml) under {', '.join(map(str, paths))}")
    session = open_session(args)
    quiet = args.json

    def show(result: ReplayResult) -> None:
        if not quiet:
            print("\n".join(result_lines(result)), flush=True)

    if not quiet:
        print(
            f"replaying {fmt_count(len(manifests), 'fixture')} on {session.adapter.label}",
            flush=True,
        )
    results = replay_paths(session, manifests, on_result=show)
    if args.junit:
        try:
            write_text(args.junit, junit_xml(results), overwrite=args.force)
        except UserError as exc:
            raise UserError(f"--junit: {exc}", advice=exc.advice) from None
    if quiet:
        print_json(results_json(results, session.adapter.label))
    else:
        print(summary_line(results))
    return overall_exit_code(results)
