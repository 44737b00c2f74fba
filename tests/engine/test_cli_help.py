"""Every `--help` page (the top level and each command) ends with two or three examples, and they work
as typed: each page's command lines run in order in an empty folder, and each must exit 0 (a
`--json` one printing one JSON object). A plain `workbench ARGS` line runs through the command's
`main` in the test's process (the same code path, without a new interpreter per line); a line that
needs the shell (a pipe, a redirect, an environment prefix) runs through bash with `workbench` this
checkout's command, as do the two tests at the end. Three take tens of seconds on the CPU adapter
(`SLOW`), and the terminal UI's need a terminal: those are parsed as the command line would parse
them, not run.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from workbench.cli import COMMANDS, build_parser, routed, subcommands
from workbench.cli.examples import HEADING

from .conftest import REPO, run_main

PAGES = ["", *subcommands(build_parser())]
# Tens of seconds on the CPU adapter: every kernel checked, two rooflines, every shipped fixture.
SLOW = {"workbench check --all --quick", "workbench adapters --roofline", "workbench replay"}


def help_text(page: str) -> str:
    """The page `workbench [PAGE] --help` prints (argparse's own text for that parser)."""
    parser = build_parser()
    return (subcommands(parser)[page] if page else parser).format_help()


def shown_examples(page: str) -> list[str]:
    """The lines under the last `examples:` heading of the page, as typed."""
    lines = help_text(page).rstrip("\n").splitlines()
    start = max(i for i, ln in enumerate(lines) if ln == HEADING)
    assert all(ln.startswith("  ") for ln in lines[start + 1 :]), "the page ends with its examples"
    return [ln[2:] for ln in lines[start + 1 :]]


def commands_shown(page: str) -> list[tuple[str, bool]]:
    """Each command line of the page's examples, and whether it is an example (a comment above it
    says what it shows) rather than a setup step."""
    lines = shown_examples(page)
    return [
        (line, i > 0 and lines[i - 1].startswith("# "))
        for i, line in enumerate(lines)
        if not line.startswith("# ")
    ]


def parses(line: str) -> None:
    """The line's arguments are accepted as the command line would take them."""
    words = shlex.split(line)
    argv = words[words.index("workbench") + 1 :]
    build_parser().parse_args(routed(argv))


@pytest.mark.parametrize("page", PAGES, ids=[p or "workbench" for p in PAGES])
def test_every_help_page_ends_with_two_or_three_examples(page):
    examples = [line for line, example in commands_shown(page) if example]
    assert 2 <= len(examples) <= 3, examples
    if page:
        assert all(page in shlex.split(ex) or page == "ui" for ex in examples)


def run_line(line: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """One line as typed, through bash, with `workbench` this checkout's command."""
    env = {k: v for k, v in os.environ.items() if k != "WORKBENCH_CORPUS"}
    env |= {"PYTHONPATH": str(REPO), "WB_PYTHON": sys.executable}
    shell = 'workbench() { "$WB_PYTHON" -m workbench "$@"; }\n'
    return subprocess.run(
        ["bash", "-c", shell + line], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


def run_example(line: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """A plain `workbench ARGS` line in-process; any other through bash (`run_line`)."""
    words = shlex.split(line)
    if words[0] == "workbench" and shlex.join(words) == line:  # no shell syntax in it
        return run_main(*words[1:], cwd=cwd)
    return run_line(line, cwd)


@pytest.mark.parametrize("page", PAGES, ids=[p or "workbench" for p in PAGES])
def test_the_examples_work_as_typed(page, tmp_path, monkeypatch):
    monkeypatch.delenv("WORKBENCH_CORPUS", raising=False)  # as `run_line` runs them
    for line, _ in commands_shown(page):
        if page == "ui" or line in SLOW:
            parses(line)
            continue
        proc = run_example(line, tmp_path)
        assert proc.returncode == 0, f"{line}\n{proc.stderr}"
        assert "Traceback" not in proc.stderr, proc.stderr
        if "--json" in shlex.split(line):
            assert isinstance(json.loads(proc.stdout), dict), line


def test_a_line_that_fails_is_seen_failing(tmp_path):
    """The runner above can fail: a line's exit code comes back through bash."""
    assert run_line("workbench run no_such_kernel", tmp_path).returncode == 2
    assert run_line("workbench --version", tmp_path).returncode == 0


def test_the_page_shown_is_the_page_printed():
    """`help_text` is what `workbench run --help` prints."""
    proc = run_line("workbench run --help", REPO)
    assert proc.returncode == 0 and shown_examples("run") == [
        ln[2:] for ln in proc.stdout.rstrip("\n").splitlines()[-len(shown_examples("run")) :]
    ]


def test_each_command_module_registers_the_commands_its_entry_names():
    """The table a command line is routed by (`COMMANDS`: a named command imports its module
    alone) says what each module registers, in the order the top-level help lists them."""
    assert list(subcommands(build_parser())) == [n for names in COMMANDS.values() for n in names]
    for names in COMMANDS.values():
        for name in names:
            assert list(subcommands(build_parser(name))) == list(names)
