"""The `workbench` command line. Each subcommand lives in its own module with a `register` function;
`main` builds the parser, runs the command and turns every `WorkbenchError` into one clear line on
stderr and its exit code (0 ok, 1 a check failed, 2 user error, 3 GPU/adapter failure; 141 when the
reader of stdout stopped reading, as for a program ended by SIGPIPE). With `--json`,
the error is also one JSON object on stdout, `{"error": ..., "exit": N}`, so a script reading stdout
always gets an object."""

from __future__ import annotations

import argparse
import codecs
import gc
import importlib
import json
import os
import sys

from workbench import __version__, interrupts
from workbench.cli import examples
from workbench.cli.advice import cli_message
from workbench.errors import WorkbenchError
from workbench.units import shown

# Subcommand modules, in the order `workbench --help` lists them, and the commands each registers.
# A command line naming a command imports that module alone, so `workbench list` does not pay for
# importing what `run`, `check` or `step` need (tests/engine/test_cli_help.py checks the names).
COMMANDS: dict[str, tuple[str, ...]] = {
    "workbench.cli.ui": ("ui",),
    "workbench.cli.info": ("adapters", "list"),
    "workbench.cli.run": ("run",),
    "workbench.cli.step": ("step",),
    "workbench.cli.check": ("check",),
    "workbench.cli.describe": ("describe",),
    "workbench.cli.bench": ("bench",),
    "workbench.cli.fixtures": ("record", "replay"),
    "workbench.cli.inside": ("footprint", "probe"),
    "workbench.cli.debug": ("debug",),
    "workbench.cli.config": ("config",),
}
COMMAND_NAMES = frozenset(name for names in COMMANDS.values() for name in names)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command; with `command`, of that command's module only."""
    parser = argparse.ArgumentParser(
        prog="workbench",
        description="Run, check, time and replay WGSL compute kernels on a real GPU. Every command "
        "that loads kernels takes them from --corpus PATH ($WORKBENCH_CORPUS when set, else the "
        "shipped kernels); with --json it prints one JSON object (docs/json.md). Exit codes: 0 "
        "ok, 1 a check failed, 2 user error, 3 GPU or adapter failure.",
    )
    parser.add_argument("--version", action="version", version=f"workbench {__version__}")
    parser.set_defaults(handler=None)
    sub = parser.add_subparsers(title="commands", metavar="COMMAND")
    for module, names in COMMANDS.items():
        if command is None or command in names:
            importlib.import_module(module).register(sub)
    examples.attach(parser, subcommands(parser))
    return parser


# What the tool prints beyond ASCII, for terminals and pipes that cannot show it.
_ASCII = {"·": "-", "–": "-", "—": "-", "…": "...", "Δ": "d", "×": "x", "≤": "<=", "≥": ">="}
_ASCII |= {"✓": "ok", "✗": "x", "○": "o", "⚠": "!", "±": "+-", "µ": "u", "→": "->", "▸": ">"}


def _ascii_fallback(exc: UnicodeError) -> tuple[str, int]:
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    text = exc.object[exc.start : exc.end]
    return "".join(_ASCII.get(ch, "?") for ch in text), exc.end


codecs.register_error("workbench-ascii", _ascii_fallback)


def _degrade_output() -> None:
    """Output degrades to ASCII (PYTHONIOENCODING=ascii, a C locale) instead of crashing."""
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="workbench-ascii")


# The exit code of a command whose reader closed stdout early (`| head`), as the shell reports a
# program ended by SIGPIPE.
BROKEN_PIPE = 141


def main(argv: list[str] | None = None) -> int:
    try:
        code = _main(argv)
        sys.stdout.flush()
    except BrokenPipeError:
        # What is left to print goes nowhere, so neither this nor the flush at exit raises again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = BROKEN_PIPE
    from workbench.session import gpu_waits_abandoned

    if gpu_waits_abandoned():
        # A wait inside wgpu was given up (Ctrl-C, the watchdog): finalizing wgpu objects could
        # block on it, so end now; every file this command writes is complete or was removed.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return code


def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """Each command's name and parser, in the order `workbench --help` lists them."""
    # argparse keeps its subcommands in the one subparsers action it made (no public accessor).
    found = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(found[0].choices) if found else {}


def routed(argv: list[str]) -> list[str]:
    """`workbench`, `workbench PATH` and `workbench --adapter SEL [PATH]` open the terminal UI;
    only the top-level help flags stay with the top-level parser."""
    if not argv or (argv[0] not in COMMAND_NAMES and argv[0] not in ("-h", "--help", "--version")):
        return ["ui", *argv]
    return argv


def _main(argv: list[str] | None) -> int:
    whole_process = argv is None  # the process's own command line, not a call from a test
    argv = sys.argv[1:] if argv is None else argv
    _degrade_output()
    argv = routed(argv)
    # Only the named command's module is imported (all of them for the top-level help).
    parser = build_parser(argv[0] if argv[0] in COMMAND_NAMES else None)
    if whole_process:
        # What importing the command left (modules, classes, functions) lives as long as the
        # process: the collector need not walk it again (a listing otherwise spends about 50 ms
        # in full collections). Not for a call in a longer-lived process, whose garbage
        # would then never be collected.
        gc.freeze()
        interrupts.install()
    args = parser.parse_args(argv)
    if args.handler is None:
        parser.print_help()
        return 2
    try:
        return int(args.handler(args) or 0)
    except WorkbenchError as exc:
        # A file name in the message may hold control characters: they are shown, not obeyed
        # (a compile error's own lines, the source line and its caret, stay lines).
        message = "\n".join(shown(line) for line in cli_message(exc).split("\n"))
        print(f"workbench: {message}", file=sys.stderr)
        if getattr(args, "json", False):
            print(json.dumps({"error": cli_message(exc), "exit": exc.exit_code}))
        return exc.exit_code
    except KeyboardInterrupt:
        print("workbench: interrupted", file=sys.stderr)
        return 130
