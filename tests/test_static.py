"""The static checks run with the suite, so the README's test command (and `.ci/run`) enforces
them: `ruff check`, `ruff format --check`, and mypy in strict mode over the whole package. Each
prints what it found when it fails."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    "command",
    [
        ["ruff", "check", "."],
        ["ruff", "format", "--check", "."],
        ["mypy"],
    ],
    ids=["ruff-check", "ruff-format", "mypy-strict"],
)
def test_static_check_is_clean(command: list[str]) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", *command],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, f"{' '.join(command)} found problems:\n{proc.stdout}{proc.stderr}"


def test_mypy_is_strict_over_the_whole_package() -> None:
    mypy = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    assert mypy["strict"] is True and mypy["files"] == ["workbench"]
