"""Helpers for the tests of described and ad-hoc kernels: the command line run in-process, its
exit code, stdout and stderr without the one line that announces the CPU adapter."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from workbench.cli import main


class Result:
    def __init__(self, rc: int, out: str, err: str) -> None:
        self.rc = rc
        self.out = out
        self.err = "\n".join(
            ln for ln in err.splitlines() if ln and not ln.startswith("workbench: no GPU found")
        )

    def json(self) -> Any:
        return json.loads(self.out)


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., Result]:
    """Runs `workbench ARGS...` in this process and returns what it printed."""

    def run(*argv: str) -> Result:
        rc = main(list(argv))
        captured = capsys.readouterr()
        return Result(rc, captured.out, captured.err)

    return run
