"""`workbench check KERNEL` and `workbench check --all`: correctness checks from the command line.

Runs `workbench.checks.check_case` (compare, gradients, special values, determinism, and across
adapters with --against-adapter) and prints each verdict; failures come with their worst elements.
Exit 0 when everything passes, 1 when a check fails, 2 for user errors. Progress goes to stderr
(a live line on a terminal, a line every few seconds otherwise), never into --json output.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from workbench.checks import CHECK_KINDS, DEFAULT_WHAT, CheckReport, check_case
from workbench.checks.determinism import DEFAULT_REPEATS
from workbench.checks.report import compact_lines, report_lines
from workbench.checks.result import Say
from workbench.checks.runner import parse_what
from workbench.checks.sizing import small_dims
from workbench.checks.special import Injection, parse_injection
from workbench.cli.advice import cli_message
from workbench.cli.common import (
    add_case_options,
    add_tolerance_options,
    grid_and_overrides,
    open_session,
    parse_pairs,
    print_json,
    tolerance_override,
)
from workbench.errors import MissingFeatureError, UserError, WorkbenchError
from workbench.session import Case, Session
from workbench.units import fmt_count, fmt_seconds
from workbench.verdicts import Verdict, worst

# Seconds between progress lines when stderr is not a terminal.
PROGRESS_EVERY_S = 5.0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "check",
        help="check kernels: compare, gradients, special values, determinism, across adapters",
    )
    p.add_argument("--all", action="store_true", help="check every kernel of the corpus")
    p.add_argument("--quick", action="store_true", help="small dims for every kernel (CI-sized)")
    add_case_options(p, kernel_optional=True)
    p.add_argument(
        "--what",
        default=",".join(DEFAULT_WHAT),
        metavar="LIST",
        help=f"checks to run, comma-separated from {', '.join(CHECK_KINDS)} "
        f"(default {','.join(DEFAULT_WHAT)})",
    )
    p.add_argument(
        "--against-adapter",
        metavar="SEL",
        help="also run the case on this adapter and compare the two (adds the adapters check)",
    )
    add_tolerance_options(p, "use")
    p.add_argument(
        "--repeats",
        type=int,
        default=DEFAULT_REPEATS,
        help=f"runs for the determinism check (default {DEFAULT_REPEATS})",
    )
    p.add_argument(
        "--inject",
        action="append",
        default=[],
        metavar="BINDING=VALUE[@WHERE]",
        help="special-value scenario instead of the defaults: VALUE nan, +inf, -inf, +0, -0, "
        "+denormal, -denormal, +100, -100, +1e4, -1e4 or a number; WHERE all, a fraction "
        "(0.05 or 5%%) or flat indices (3,17)",
    )
    p.add_argument(
        "--full",
        action="store_true",
        help="run every check at the case's size (otherwise repeated checks of big cases use "
        "small dims)",
    )
    p.add_argument(
        "-v", "--verbose", action="store_true", help="list every result, not only failures"
    )
    p.set_defaults(handler=cmd_check)


class Progress:
    """Progress on stderr: one rewritten line on a terminal, a line every few seconds otherwise."""

    def __init__(self) -> None:
        self.tty = sys.stderr.isatty()
        # The first line comes after a few seconds, not at once: a user error found while the
        # case is set up is then the only line, not preceded by "0% ... running".
        self.last = time.monotonic()
        self.shown = False

    def __call__(self, msg: str, frac: float) -> None:
        now = time.monotonic()
        if self.tty:
            sys.stderr.write(f"\r\033[K{100 * frac:3.0f}% {msg}")
            sys.stderr.flush()
            self.shown = True
        elif now - self.last >= PROGRESS_EVERY_S:
            print(f"workbench: {100 * frac:.0f}% {msg}", file=sys.stderr)
            self.last = now

    def clear(self) -> None:
        if self.tty and self.shown:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()
            self.shown = False


def cmd_check(args: argparse.Namespace) -> int:
    what = parse_what(args.what)
    if args.repeats < 2:
        raise UserError(f"--repeats must be at least 2, got {args.repeats}")
    inject = [_injection(t) for t in args.inject]
    override = tolerance_override(args)
    if args.all == bool(args.kernel):
        raise UserError("name one KERNEL to check, or give --all (not both)")
    given = (args.dim, args.size, args.set, args.input, args.inject, args.grid, args.override)
    if args.all and any(given):
        raise UserError(
            "--all checks every kernel at its own dims: --dim, --size, --set, --input, --inject, "
            "--grid and --override need one KERNEL"
        )
    session = open_session(args)
    progress = Progress()
    options = {
        "what": what,
        "against": args.against_adapter,
        "tolerance": override,
        "repeats": args.repeats,
        "full": args.full,
        "progress": progress,
    }
    if args.all:
        return _check_all(session, args, options, progress)
    case = _build_case(session, args)
    try:
        report = check_case(session, case, inject=inject or None, **options)
    finally:
        progress.clear()
    if args.json:
        print_json(report.to_json() | {"corpus": str(session.corpus.root)})
    else:
        print_report(report, args.verbose)
    return report.verdict.exit_code


def _injection(text: str) -> Injection:
    """One --inject value; its error names the option."""
    try:
        return parse_injection(text)
    except UserError as exc:
        raise UserError(f"--inject: {exc}") from None


def _build_case(session: Session, args: argparse.Namespace) -> Case:
    """The case the options describe; with --quick, the kernel's small dims under the user's."""
    dims = parse_pairs(args.dim, "--dim")
    kw = {
        "sizes": parse_pairs(args.size, "--size"),
        "sets": parse_pairs(args.set, "--set", float),
        "inputs": parse_pairs(args.input, "--input", str),
        "seed": args.seed,
        "adhoc": args.adhoc,
        **grid_and_overrides(args),
    }
    if args.quick:
        small = small_dims(session.case(args.kernel, **kw))
        if small is not None:
            dims = {**small, **dims}
    return session.case(args.kernel, dims=dims, **kw)


def per_kernel(say: Say, i: int, n: int) -> Say:
    """Progress of kernel `i` (from 0) of `n` as progress of them all: `[3/17] msg` at the
    fraction of the whole, so the percentage and the count agree (never `40% [17/17]`)."""

    def said(msg: str, frac: float) -> None:
        say(f"[{i + 1}/{n}] {msg}", (i + min(max(frac, 0.0), 1.0)) / max(n, 1))

    return said


def _check_all(
    session: Session, args: argparse.Namespace, options: dict[str, Any], progress: Progress
) -> int:
    t0 = time.perf_counter()
    kernels = session.corpus.kernels
    reports: list[CheckReport] = []
    errors: list[dict[str, str]] = []
    for i, kernel in enumerate(kernels):
        options["progress"] = per_kernel(progress, i, len(kernels))
        try:
            case = session.case(kernel, seed=args.seed, adhoc=args.adhoc)
            if args.quick:
                dims = small_dims(case)
                if dims is not None:
                    case = session.case(kernel, dims=dims, seed=args.seed, adhoc=args.adhoc)
            report = check_case(session, case, **options)
        except MissingFeatureError as exc:
            errors.append({"kernel": kernel.name, "file": kernel.file, "skipped": cli_message(exc)})
            continue
        except WorkbenchError as exc:
            errors.append({"kernel": kernel.name, "file": kernel.file, "error": cli_message(exc)})
            continue
        finally:
            progress.clear()
        reports.append(report)
        if not args.json:
            print_compact(report, args.verbose)
    # Files that could not be read are errors of the collection too, listed with the kernels.
    errors += [
        {"kernel": "-", "file": f, "error": why} for f, why in session.corpus.problems.items()
    ]
    failed_errors = [e for e in errors if "error" in e]
    for e in errors:
        e["verdict"] = "error" if "error" in e else "skipped"
    ok = all(r.verdict.exit_code == 0 for r in reports) and not failed_errors
    counts = verdict_counts(reports, len(failed_errors))
    elapsed = time.perf_counter() - t0
    if args.json:
        print_json(
            {
                "corpus": str(session.corpus.root),
                "adapter": session.adapter.label,
                "quick": args.quick,
                "what": list(options["what"]),
                "ok": ok,
                "verdicts": counts,
                "elapsed_s": elapsed,
                "kernels": [r.to_json() for r in reports],
                "errors": errors,
            }
        )
        return 0 if ok else 1
    for e in errors:
        mark = "–" if "skipped" in e else "✗"
        print(f"{mark} {e['kernel']}  ({e['file']})  {e.get('skipped') or e.get('error')}")
    n_fail = sum(1 for r in reports if r.verdict is Verdict.FAIL) + len(failed_errors)
    if n_fail:
        verdict = f"FAIL ({n_fail} of {len(kernels)} kernels)"
    elif ok:
        verdict = "PASS"
    else:
        # Not a pass: the most serious thing that was not verified, and how much was.
        verdict = (
            f"{worst(r.verdict for r in reports).word} ({counts['pass']} of "
            f"{fmt_count(len(kernels), 'kernel')} passed a comparison with a reference)"
        )
    quick = ", quick" if args.quick else ""
    print(
        f"verdict: {verdict}  {fmt_count(len(kernels), 'kernel')} on {session.adapter.label}{quick} "
        f"in {fmt_seconds(elapsed)}"
    )
    print(summary_line(counts))
    return 0 if ok else 1


def verdict_counts(reports: list[CheckReport], errors: int) -> dict[str, int]:
    """How many kernels got each verdict; kernels that could not be checked count as errors."""
    counts = dict.fromkeys(map(str, Verdict), 0)
    for r in reports:
        counts[str(r.verdict)] += 1
    counts["error"] += errors
    return counts


def summary_line(counts: dict[str, int]) -> str:
    """`12 pass · 28 ran (no reference: describe them in workbench.toml) · 2 no_work · 0 fail`,
    then any other verdict that occurred (`1 empty`, `1 nothing_compared`, `1 error`)."""
    parts = [
        f"{counts['pass']} pass",
        f"{counts['ran']} ran (no reference: describe them in workbench.toml)",
        f"{counts['no_work']} no_work",
        f"{counts['fail']} fail",
    ]
    shown = {"pass", "ran", "no_work", "fail"}
    parts += [f"{n} {v}" for v, n in counts.items() if n and v not in shown]
    return " · ".join(parts)


def print_report(report: CheckReport, verbose: bool) -> None:
    print("\n".join(report_lines(report, verbose)))


def print_compact(report: CheckReport, verbose: bool) -> None:
    """One line per kernel for --all; failures follow in full."""
    print("\n".join(compact_lines(report, verbose)))
