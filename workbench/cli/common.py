"""Options several commands share (corpus, adapter, dims, inputs, uniforms) and their parsing.

Every command that loads kernels takes them the same way: `--corpus PATH`, default `$WORKBENCH_CORPUS`
when set, else the shipped kernels (`add_corpus`)."""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from typing import Any

from workbench.closeness import ATOL_CEILING, RTOL_CEILING, Override
from workbench.errors import UserError
from workbench.jsonable import jsonable
from workbench.recipes import DEFAULT_SEED, RECIPES
from workbench.session import DEFAULT_WARMUP_MS, DISPATCH_TIMEOUT_S, Case, Session
from workbench.units import parse_number, whole_number


def add_timeout(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--timeout",
        type=float,
        default=DISPATCH_TIMEOUT_S,
        metavar="S",
        help=f"give up on a dispatch after S seconds, exit 3 (default {DISPATCH_TIMEOUT_S:g})",
    )


# Where every command that loads kernels takes them from when --corpus is not given.
CORPUS_ENV = "WORKBENCH_CORPUS"
CORPUS_HELP = (
    f"folder of .wgsl kernels, or one .wgsl file (default: ${CORPUS_ENV} when set, else the "
    "shipped kernels)"
)


def add_corpus(p: argparse.ArgumentParser) -> None:
    """--corpus PATH: the same option, help and default for every command that loads kernels."""
    p.add_argument(
        "--corpus", metavar="PATH", default=os.environ.get(CORPUS_ENV) or None, help=CORPUS_HELP
    )


def add_adapter(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--adapter",
        metavar="SEL",
        help="adapter index, backend (vulkan, gl, metal, dx12), gpu/cpu, or a name substring",
    )


def add_corpus_adapter(p: argparse.ArgumentParser) -> None:
    add_corpus(p)
    add_adapter(p)


def corpus_alias(args: argparse.Namespace, path: str | None) -> None:
    """A corpus given as a positional PATH (`workbench list PATH`, `workbench PATH`) is --corpus;
    both given and different is refused."""
    if path is None:
        return
    if args.corpus not in (None, path, os.environ.get(CORPUS_ENV) or None):
        raise UserError(f"the corpus is given twice ({path} and --corpus {args.corpus}); give one")
    args.corpus = path


def add_case_options(
    p: argparse.ArgumentParser, kernel_optional: bool = False, many: bool = False
) -> None:
    """The options that describe a case: the same for run, check, record and bench.

    `kernel_optional` makes KERNEL optional, for a command that may name none (check --all);
    `many` takes one or more kernels (bench).
    """
    p.add_argument(
        "kernel",
        nargs="?" if kernel_optional else ("+" if many else None),
        metavar="KERNEL",
        help="kernel name (FILE:NAME when ambiguous)",
    )
    add_corpus_adapter(p)
    p.add_argument("--dim", action="append", default=[], metavar="NAME=V", help="set a dimension")
    p.add_argument(
        "--size",
        action="append",
        default=[],
        metavar="BINDING=N",
        help="elements of a binding (ad hoc)",
    )
    p.add_argument(
        "--set", action="append", default=[], metavar="UNIFORM.FIELD=V", help="set a uniform value"
    )
    p.add_argument(
        "--input",
        action="append",
        default=[],
        metavar="BINDING=RECIPE",
        help="fill a binding: " + ", ".join(RECIPES),
    )
    p.add_argument(
        "--grid",
        metavar="X[,Y[,Z]]",
        help="workgroup counts to dispatch, 1 to 3 (missing ones are 1; hex 0x.. too)",
    )
    p.add_argument(
        "--override",
        action="append",
        default=[],
        metavar="NAME=V",
        help="value of an `override` constant (pipeline constant)",
    )
    p.add_argument(
        "--seed",
        type=int,
        default=DEFAULT_SEED,
        help="seed for generated inputs; a random recipe without a seed of its own uses SEED + "
        f"its binding's index (default {DEFAULT_SEED})",
    )
    p.add_argument("--adhoc", action="store_true", help="ignore the spec and run the kernel ad hoc")
    add_timeout(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")


def add_warmup_ms(p: argparse.ArgumentParser, what: str) -> None:
    """--warmup-ms: how long to keep the adapter busy before timing `what`, by the host clock."""
    p.add_argument(
        "--warmup-ms",
        type=float,
        default=DEFAULT_WARMUP_MS,
        metavar="MS",
        help=f"warm-up time {what} (default {DEFAULT_WARMUP_MS:g}: an idle GPU needs 0.2-0.8 s "
        "of work to raise its clocks)",
    )


# The longest time option accepted: about 2.8 hours, far past any useful warm-up or measurement.
MAX_MS = 1e7


def milliseconds(flag: str, value: float) -> float:
    """A time option's value, refused unless it is a number of milliseconds from 0 to 1e7."""
    if not (value >= 0 and value < MAX_MS):
        raise UserError(
            f"{flag} must be a number of milliseconds from 0 to below {MAX_MS:g}, got {value:g}"
        )
    return value


def add_tolerance_options(p: argparse.ArgumentParser, verb: str, forcible: bool = True) -> None:
    """--rtol and --atol (`verb`: what is done with them), and --force-tolerance if `forcible`."""
    p.add_argument("--rtol", type=float, help=f"{verb} this rtol for every output")
    p.add_argument("--atol", type=float, help=f"{verb} this atol for every output")
    if forcible:
        p.add_argument(
            "--force-tolerance",
            action="store_true",
            help=f"accept an rtol over {RTOL_CEILING:g} (a result off by more than its size "
            f"passes) or an atol over {ATOL_CEILING:g}",
        )


def tolerance_override(args: argparse.Namespace) -> Override:
    """--rtol/--atol, validated (finite, >= 0, within the ceilings unless forced)."""
    return Override.checked(
        args.rtol,
        args.atol,
        forced=getattr(args, "force_tolerance", False),
        labels=("--rtol", "--atol"),
    )


def tolerance_note(override: Override) -> None:
    """Say on stderr which tolerance applies beside a value given alone."""
    note = override.note()
    if note:
        print(f"workbench: note: {note}", file=sys.stderr)


def parse_pairs(items: list[str], what: str, number: type = int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key or not value.strip():
            raise UserError(f"{what} expects NAME=VALUE, got {item!r}")
        if number is str:
            out[key] = value.strip()
            continue
        try:
            v = parse_number(value)
            if number is int:
                if not math.isfinite(v) or v != int(v):
                    raise ValueError
                v = int(v)
        except ValueError:
            kind = "an integer" if number is int else "a number"
            raise UserError(f"{what} {key}: {value!r} is not {kind} (hex: 0x...)") from None
        out[key] = v
    return out


def open_session(args: argparse.Namespace) -> Session:
    timeout = getattr(args, "timeout", DISPATCH_TIMEOUT_S)
    if not (math.isfinite(timeout) and timeout > 0):
        raise UserError(f"--timeout must be a number of seconds > 0, got {timeout}")
    session = Session.open(adapter=args.adapter, corpus=args.corpus)
    session.gpu.timeout_s = timeout
    announce_adapter(session, explicit=bool(args.adapter), quiet=getattr(args, "json", False))
    return session


def announce_adapter(session: Session, explicit: bool, quiet: bool) -> None:
    """The one line that says no GPU was found and the CPU adapter is in use."""
    if session.adapter.is_cpu and not explicit and not quiet:
        print(
            f"workbench: no GPU found; running on the CPU adapter {session.adapter.label}",
            file=sys.stderr,
        )


def build_case(session: Session, args: argparse.Namespace) -> Case:
    return session.case(
        args.kernel,
        dims=parse_pairs(args.dim, "--dim"),
        sizes=parse_pairs(args.size, "--size"),
        sets=parse_pairs(args.set, "--set", float),
        inputs=parse_pairs(args.input, "--input", str),
        seed=args.seed,
        adhoc=args.adhoc,
        **grid_and_overrides(args),
    )


def grid_and_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """`grid` and `overrides` for `Session.case` from --grid X,Y,Z and --override NAME=V."""
    out: dict[str, Any] = {"overrides": parse_pairs(args.override, "--override", float)}
    if args.grid is not None:
        out["grid"] = parse_grid(args.grid)
    return out


def parse_grid(text: str) -> tuple[int, int, int]:
    """`X[,Y[,Z]]` workgroup counts (missing ones are 1, as in workbench.toml), each a whole
    number >= 0: ASCII digits, or hex (0x...)."""
    parts = text.split(",")
    counts = [_hex_or_whole(p) for p in parts]
    known = [c for c in counts if c is not None]
    if not 1 <= len(counts) <= 3 or len(known) != len(counts):
        raise UserError(
            f"--grid expects 1 to 3 whole numbers X[,Y[,Z]] (workgroups per axis, digits 0-9 or "
            f"hex 0x..), got {text!r}"
        )
    x, y, z = (*known, 1, 1)[:3]
    return (x, y, z)


def _hex_or_whole(text: str) -> int | None:
    """A whole number >= 0 in digits or hex (0x...), `_` between digits allowed; else None."""
    t = text.strip()
    if t[:2].lower() != "0x":
        return whole_number(t)
    try:
        return int(t, 16) if t.isascii() else None  # int() takes other scripts' digits too
    except ValueError:
        return None


def print_json(obj: Any) -> None:
    """Strict JSON: NaN and infinities become the strings "nan", "inf", "-inf"."""
    print(json.dumps(jsonable(obj), indent=2, allow_nan=False))
