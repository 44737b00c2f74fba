"""`workbench [PATH]`: the terminal UI on a corpus (the shipped kernels by default).

The corpus is taken as by every command (`--corpus PATH`, `$WORKBENCH_CORPUS`), or as a bare PATH.
A corpus path that does not exist is refused here with one line and exit code 2, before the
terminal is taken over. With neither, the corpus and kernel of the last session are reopened (when
that corpus still exists), else the shipped kernels, and the UI remembers them again as you go
(`workbench config` shows where). The header says which corpus it is and why (`corpus_why`); the
palette's Open corpus opens another. An adapter selector is checked when the adapter is opened (in the UI, so the first paint
does not wait for adapter enumeration); a bad one is explained in the view. `--fixtures DIR` is
where fixtures saved with `f` go (`workbench.viewmodel.fixture_places`); a DIR inside the
installed package is refused."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from workbench.cli.common import add_corpus_adapter, corpus_alias
from workbench.errors import UserError


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("ui", help="open the terminal UI (the default command)")
    p.add_argument("path", nargs="?", metavar="PATH", help="the same as --corpus PATH")
    add_corpus_adapter(p)
    p.add_argument(
        "--fixtures",
        metavar="DIR",
        help="folder for the fixtures saved from the UI (default: the corpus's fixtures folder, "
        "or ~/.local/share/workbench/fixtures for the shipped kernels)",
    )
    p.add_argument(
        "--snapshot",
        action="store_true",
        help="fixed adapter name, masked timings (as WORKBENCH_SNAPSHOT=1): for screenshots",
    )
    p.set_defaults(handler=cmd_ui)


def cmd_ui(args: argparse.Namespace) -> int:
    from workbench.config import load_config
    from workbench.safewrite import clean_up_on_signals

    # The UI writes from worker threads, where no signal handler can be installed.
    clean_up_on_signals()
    from workbench.cli.common import CORPUS_ENV

    given = args.corpus
    corpus_alias(args, args.path)
    config = load_config()
    kernel = None
    why = corpus_why(args.path or given, os.environ.get(CORPUS_ENV) or None)
    if args.corpus is None and not args.snapshot:
        last = config.remembered.get("corpus")
        if last is None:  # the shipped kernels (remember_kernel): this install's
            kernel = config.remembered.get("kernel")
        elif Path(last).is_dir():
            args.corpus, kernel = last, config.remembered.get("kernel")
            why = LAST_SESSION
    if args.corpus is not None:
        path = Path(args.corpus)
        if not path.exists():
            raise UserError(f"corpus {path} does not exist")
        if path.is_file() and path.suffix != ".wgsl":
            raise UserError(f"{path} is not a .wgsl file or a folder of them")
    if args.fixtures is not None:
        _check_fixtures_folder(Path(args.fixtures))
    from workbench.app import WorkbenchApp

    WorkbenchApp(
        corpus=args.corpus,
        adapter=args.adapter,
        snapshot=True if args.snapshot else None,
        config=config,
        kernel=kernel,
        remember=not args.snapshot,
        fixtures=args.fixtures,
        corpus_why=why,
    ).run()
    return 0


LAST_SESSION = "the last session's: `workbench PATH` or ctrl+p Open corpus for another"


def corpus_why(given: str | None, env: str | None) -> str:
    """Why the UI opens the corpus it opens, for its header: given (nothing to say), from
    $WORKBENCH_CORPUS, or the shipped kernels by default (`LAST_SESSION`: reopened)."""
    from workbench.cli.common import CORPUS_ENV

    if given is not None and given != env:
        return ""
    if env is not None:
        return f"from ${CORPUS_ENV}"
    return "the default"


def _check_fixtures_folder(folder: Path) -> None:
    """Refuse a `--fixtures DIR` that cannot hold the user's fixtures, before the UI starts."""
    from workbench.viewmodel.fixture_places import inside_package

    if folder.exists() and not folder.is_dir():
        raise UserError(f"--fixtures {folder} is not a folder; give a folder (created if missing)")
    if inside_package(folder):
        raise UserError(
            f"--fixtures {folder} is inside the installed workbench package; "
            "give a folder of your own"
        )
