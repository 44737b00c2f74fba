"""`workbench describe KERNEL`: print a starting `workbench.toml` description from reflection."""

from __future__ import annotations

import argparse

from workbench.errors import UserError
from workbench.specs.starter import starter_description
from workbench.wgsl.corpus import load_corpus


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "describe",
        help="print a starting workbench.toml description of a kernel, from reflection",
    )
    p.add_argument("kernel", metavar="KERNEL", help="kernel name (FILE:NAME when ambiguous)")
    p.add_argument("--corpus", metavar="PATH", help="folder of WGSL (default: the shipped kernels)")
    p.set_defaults(handler=cmd_describe)


def cmd_describe(args: argparse.Namespace) -> int:
    kernel = load_corpus(args.corpus).find(args.kernel)
    if kernel.problem or kernel.entry_point is None:
        why = kernel.problem or "no @compute entry point could be reflected"
        raise UserError(f"{kernel.file}:{kernel.name}: {why}")
    print(starter_description(kernel), end="")
    return 0
