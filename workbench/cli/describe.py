"""`workbench describe KERNEL`: print a starting `workbench.toml` description from reflection."""

from __future__ import annotations

import argparse
import tomllib

from workbench.cli.common import add_corpus, print_json
from workbench.errors import UserError
from workbench.specs.starter import starter_description
from workbench.wgsl.corpus import load_corpus


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "describe",
        help="print a starting workbench.toml description of a kernel, from reflection",
    )
    p.add_argument("kernel", metavar="KERNEL", help="kernel name (FILE:NAME when ambiguous)")
    add_corpus(p)
    p.add_argument(
        "--json",
        action="store_true",
        help="print one JSON object: the TOML text and the table it describes",
    )
    p.set_defaults(handler=cmd_describe)


def cmd_describe(args: argparse.Namespace) -> int:
    corpus = load_corpus(args.corpus)
    kernel = corpus.find(args.kernel)
    if kernel.problem or kernel.entry_point is None:
        why = kernel.problem or "no @compute entry point could be reflected"
        raise UserError(f"{kernel.file}:{kernel.name}: {why}")
    label = corpus.label(kernel)
    text = starter_description(kernel, label)
    if args.json:
        print_json(
            {
                "kernel": kernel.name,
                "file": kernel.file,
                "corpus": str(corpus.root),
                "toml": text,
                "description": tomllib.loads(text)["kernels"][label],
            }
        )
    else:
        print(text, end="")
    return 0
