"""A `CheckReport` as text: the lines `workbench check` prints and the UI's check screen shows,
so the two cannot disagree. Failures come with their worst elements (the first rows of their
table); passing special-value scenarios are summed up in one line unless `verbose`.
"""

from __future__ import annotations

from collections import defaultdict

from workbench.checks.result import CHECK_KINDS, CheckReport, CheckResult
from workbench.units import fmt_count, fmt_int, fmt_seconds

ROWS_SHOWN = 5
# Failing special-value scenarios shown in full without -v.
SPECIAL_SHOWN = 3


def mark(r: CheckResult) -> str:
    """`✓`, `✗`, `–` (skipped) or `∅` (an empty output: nothing was compared, so no tick)."""
    if r.details.get("n_total") == 0:
        return "∅"
    return "–" if r.skipped else ("✓" if r.ok else "✗")


def report_lines(report: CheckReport, verbose: bool = False) -> list[str]:
    """The report as `workbench check KERNEL` prints it: a head line, a line per result (each
    failure followed by its worst rows), the notes, and the verdict."""
    dims = "  ".join(f"{k} {fmt_int(v)}" for k, v in report.dims.items())
    lines = [f"{report.kernel}  ({report.file})  on {report.adapter}   {dims}"]
    by_kind: dict[str, list[CheckResult]] = defaultdict(list)
    for r in report.results:
        by_kind[r.kind].append(r)
    for kind, results in by_kind.items():
        if kind == "special" and not verbose:
            lines += _special_lines(results)
            continue
        for r in results:
            lines.append(f"  {kind:<12} {mark(r)} {r.summary}")
            if not r.ok or (verbose and r.rows):
                lines += rows_lines(r)
    lines += [f"  note: {note}" for note in report.notes]
    lines.append(f"  verdict: {verdict_text(report)} ({fmt_seconds(report.elapsed_s)})")
    return lines


def verdict_text(report: CheckReport) -> str:
    """`PASS`, `FAIL`, … or `CANCELLED` for a report its checks did not finish."""
    return "CANCELLED" if report.cancelled else report.verdict.text


def compact_lines(report: CheckReport, verbose: bool = False) -> list[str]:
    """One line for the kernel (as `check --all` prints it); failures follow in full."""
    counts = []
    for kind in CHECK_KINDS:
        results = [r for r in report.results if r.kind == kind and not r.skipped]
        if results:
            good = sum(1 for r in results if r.ok)
            counts.append(f"{kind} {good}/{len(results)}")
    sign = report.verdict.mark
    if report.results and all(r.skipped for r in report.results):
        sign = "–"
        counts = [report.results[0].summary]
    dims = " ".join(f"{k}={v}" for k, v in report.dims.items())
    verdict = report.verdict.word
    # The file beside the name: in a corpus whose entry points are all `main`, it tells them apart.
    name = f"{report.kernel}  {report.file}"
    lines = [
        f"{sign} {name:<44} {verdict:<8} {'  '.join(counts):<60} "
        f"{fmt_seconds(report.elapsed_s):>8}  {dims}"
    ]
    for r in report.results:
        warned = r.kind == "evidence" and r.details.get("warning")
        if not r.ok or warned or (verbose and not r.skipped):
            lines.append(f"    {r.kind:<12} {mark(r)} {r.summary}")
            if not r.ok:
                lines += rows_lines(r)
    return lines


def _special_lines(results: list[CheckResult]) -> list[str]:
    """Passing scenarios in one line, failing ones in full."""
    lines = []
    good = [r for r in results if r.ok and not r.skipped]
    if good:
        bindings = sorted({r.details["binding"] for r in good})
        lines.append(
            f"  {'special':<12} ✓ {len(good)} scenarios match the reference's NaN/Inf behaviour "
            f"(values into {', '.join(bindings)})"
        )
    # Scenarios skipped for one reason (nothing compared, say) in one line.
    skipped_why: dict[str, int] = defaultdict(int)
    for r in results:
        if r.skipped:
            skipped_why[r.details.get("why", r.summary)] += 1
    for why, n in skipped_why.items():
        lines.append(f"  {'special':<12} – {fmt_count(n, 'scenario')} skipped: {why}")
    shown = 0
    for r in results:
        if not r.ok and shown < SPECIAL_SHOWN:
            lines.append(f"  {'special':<12} {mark(r)} {r.summary}")
            lines += rows_lines(r)
            shown += 1
    failed = sum(1 for r in results if not r.ok)
    if failed > shown:
        lines.append(
            f"  {'special':<12} ✗ … {failed - shown} more failing scenarios (-v or --json)"
        )
    return lines


def rows_lines(r: CheckResult) -> list[str]:
    """The first `ROWS_SHOWN` rows of a result's table, aligned under its header."""
    if not r.rows:
        return []
    table = [r.columns, *r.rows[:ROWS_SHOWN]]
    width = [max(len(str(row[i])) for row in table if i < len(row)) for i in range(len(r.columns))]
    lines = [
        "      " + "  ".join(str(c).ljust(width[i]) for i, c in enumerate(row)).rstrip()
        for row in table
    ]
    if len(r.rows) > ROWS_SHOWN:
        lines.append(f"      … {len(r.rows) - ROWS_SHOWN} more rows (--json has every figure)")
    return lines
