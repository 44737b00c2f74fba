"""`workbench run KERNEL`: dispatch once, show outputs, the comparison with the reference, timings."""

from __future__ import annotations

import argparse
import functools
from pathlib import Path
from typing import Any

import numpy as np

from workbench.bench.report import CPU_TIMES
from workbench.cli.common import (
    add_case_options,
    add_tolerance_options,
    add_warmup_ms,
    build_case,
    milliseconds,
    open_session,
    print_json,
    tolerance_note,
    tolerance_override,
)
from workbench.errors import UserError
from workbench.safewrite import refuse_unwritable, write_file
from workbench.session import DEFAULT_WARMUP_MS, Run, Verdict, array_stats
from workbench.units import fmt_bytes, fmt_count, fmt_grid, fmt_int, fmt_ms, fmt_num, fmt_rate


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("run", help="run one kernel and compare it with its reference")
    add_case_options(p)
    p.add_argument("--reps", type=int, default=20, help="timed repetitions (default 20; 0: none)")
    add_warmup_ms(p, "before the timed repetitions")
    # The count of dispatches this used to be: refused with a pointer, not silently taken as
    # --warmup-ms (argparse would expand the prefix).
    p.add_argument("--warmup", help=argparse.SUPPRESS)
    add_tolerance_options(p, "use")
    p.add_argument("--save-outputs", metavar="DIR", help="write one .npy per output binding")
    p.add_argument(
        "--force", action="store_true", help="let --save-outputs replace existing .npy files"
    )
    p.set_defaults(handler=cmd_run)


def cmd_run(args: argparse.Namespace) -> int:
    if args.warmup is not None:
        raise UserError(
            "--warmup (a count of dispatches) is now --warmup-ms MS, a warm-up by time "
            f"(default {DEFAULT_WARMUP_MS:g} ms): an idle GPU's clocks rise only after 0.2-0.8 s of work"
        )
    if args.reps < 0:
        raise UserError("--reps must be >= 0")
    if args.save_outputs is not None and not args.save_outputs.strip():
        raise UserError("--save-outputs: give a folder for the .npy files")
    warmup_ms = milliseconds("--warmup-ms", args.warmup_ms)
    override = tolerance_override(args)
    session = open_session(args)
    case = build_case(session, args)
    run = session.run(case, reps=args.reps, warmup_ms=warmup_ms, tolerance=override)
    if not args.json:
        tolerance_note(override)
    if args.save_outputs:
        save_outputs(run, Path(args.save_outputs), args.force)
    if args.json:
        print_json(run.to_json(str(session.corpus.root)))
    else:
        print_run(run)
    return 1 if run.ok is False else 0


def save_outputs(run: Run, folder: Path, overwrite: bool) -> None:
    """One `NAME.npy` per output in `folder`, each written atomically; every file is checked
    before any is written, so a refusal leaves the folder as it was."""
    paths = {name: folder / f"{name}.npy" for name in run.outputs}
    try:
        for path in paths.values():
            refuse_unwritable(path, overwrite)
        for name, path in paths.items():
            arr = run.outputs[name]
            write_file(
                path, functools.partial(np.save, arr=arr, allow_pickle=False), overwrite=overwrite
            )
    except UserError as exc:
        raise UserError(f"--save-outputs: {exc}", advice=exc.advice) from None


def uniform_text(value: Any) -> str:
    """A uniform's value as typed on the command line: `1,024`, `(512, 12, 64, 0)`, `a=0 n=1,024`."""
    if isinstance(value, dict):
        return " ".join(f"{k}={uniform_text(v)}" for k, v in value.items())
    if isinstance(value, list | tuple | np.ndarray):
        return "(" + ", ".join(uniform_text(v) for v in value) + ")"
    if isinstance(value, float | np.floating) and not float(value).is_integer():
        return fmt_num(float(value))
    if isinstance(value, int | float | np.integer | np.floating):
        return fmt_int(int(value))
    return "?" if value is None else str(value)


def stats_line(name: str, arr: np.ndarray) -> str | None:
    """min/max/mean of the finite values, or what the output is when there are none."""
    s = array_stats(arr)
    if s["count"] == 0:
        return f"{name}: empty (0 elements)"
    if "min" not in s:
        return None
    if s["nan"] + s["inf"] < s["count"]:
        return (
            f"{name}: min {fmt_num(s['min'])}  max {fmt_num(s['max'])}  mean {fmt_num(s['mean'])}"
            f"  nan {s['nan']}  inf {s['inf']}"
        )
    f = arr.astype(np.float64, copy=False)
    kinds = {"NaN": int(np.isnan(f).sum()), "+inf": int((f == np.inf).sum())}
    kinds["-inf"] = int((f == -np.inf).sum())
    present = [(k, n) for k, n in kinds.items() if n]
    if len(present) == 1:
        return f"{name}: all {present[0][0]} ({fmt_count(int(s['count']), 'element')})"
    return f"{name}: no finite value ({', '.join(f'{fmt_int(n)} {k}' for k, n in present)})"


def print_run(run: Run) -> None:
    case = run.case
    k = case.kernel
    ep = k.entry_point
    kind = ("described" if case.spec.described else "spec") if case.spec else "ad hoc"
    print(f"{case.name}  ({k.file}, {kind})  on {run.adapter.label}")
    dims = "  ".join(f"{n} {v:,}" for n, v in case.dims.items())
    wg = "x".join(map(str, ep.workgroup_size)) if ep else "?"
    print(f"  {dims}   grid {fmt_grid(run.grid)}  wg {wg}")
    for p in case.bindings:
        if p.role == "uniform":
            # A uniform's values say more than its shape: `params  uniform  a=0 n=1,024`.
            values = uniform_text(case.uniforms.get(p.name))
            print(
                f"  [{p.binding.binding}] {p.name:<14} {p.role:<7} {values:<25} "
                f"{fmt_bytes(p.nbytes):>10}  {p.source}"
            )
            continue
        shape = "x".join(map(str, p.shape))
        print(
            f"  [{p.binding.binding}] {p.name:<14} {p.role:<7} {shape:<16} {p.dtype or '':<8} "
            f"{fmt_bytes(p.nbytes):>10}  {p.source}"
        )
    for name, arr in run.outputs.items():
        line = stats_line(name, arr)
        if line:
            print("  " + line)
    for c in run.compare.values():
        print("  " + c.summary())
        for m in c.worst[:5]:
            print(
                f"      {m.named}: got {fmt_num(m.got)}  ref {fmt_num(m.ref)}  |Δ| {fmt_num(m.abs_err)}"
            )
        if c.n_bad > len(c.worst[:5]):
            print(f"      … {fmt_int(c.n_bad - len(c.worst[:5]))} more")
    if run.timing and run.timing.reps:
        t = run.timing
        line = (
            f"  time {fmt_ms(t.median_ms)} median  (p10 {fmt_ms(t.p10_ms)}, p90 {fmt_ms(t.p90_ms)}, "
            f"{fmt_count(t.reps, 'rep')}, {t.method})"
        )
        tp = run.throughput()
        if tp:
            line += f"  {fmt_rate(tp['gb_per_s'], 'B')}  {fmt_rate(tp['gflop_per_s'], 'FLOP')}"
        print(line)
        if run.adapter.is_cpu:
            print(f"  {CPU_TIMES}")
    for note in case.notes:
        print(f"  note: {note}")
    line = run.unwritten_note
    if line:
        print(f"  {line}")
    if run.verdict is not Verdict.RAN:
        print("  verdict: " + run.verdict.text)
