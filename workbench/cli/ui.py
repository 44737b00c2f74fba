"""`workbench [PATH]`: the terminal UI on a corpus (the shipped kernels by default)."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("ui", help="open the terminal UI (the default command)")
    p.add_argument(
        "path", nargs="?", metavar="PATH", help="corpus folder (default: shipped kernels)"
    )
    p.add_argument("--adapter", metavar="SEL", help="adapter index, backend or name substring")
    p.set_defaults(handler=cmd_ui)


def cmd_ui(args: argparse.Namespace) -> int:
    from workbench.app import WorkbenchApp

    WorkbenchApp(corpus=args.path, adapter=args.adapter).run()
    return 0
