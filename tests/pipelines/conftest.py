"""Helpers for the pipeline tests: pipeline files and corpora written to temporary folders, and
the command line run in-process (the same `main` the `workbench` script calls)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from workbench.cli import main
from workbench.pipelines import SHIPPED as SHIPPED_PIPELINES
from workbench.wgsl.corpus import SHIPPED


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., tuple[int, str, str]]:
    """`cli(*args)` runs `workbench ARGS` in-process: (exit code, stdout, stderr without the note
    that no GPU was found, which machines without one print first)."""

    def run(*args: str) -> tuple[int, str, str]:
        rc = main(list(args))
        out, err = capsys.readouterr()
        assert "Traceback" not in err, err
        err = "".join(line for line in err.splitlines(keepends=True) if "no GPU found" not in line)
        return rc, out, err

    return run


def step_json(cli: Callable[..., tuple[int, str, str]], *args: str) -> tuple[int, dict[str, Any]]:
    rc, out, err = cli("step", *args, "--json")
    assert out, err
    return rc, json.loads(out)


@pytest.fixture
def corpus_copy(tmp_path: Path) -> Callable[[str, str, str], Path]:
    """`corpus_copy(file, old, new)`: the shipped corpus in a temporary folder with `old`
    (which must occur once in `file`) replaced by `new`."""

    def make(file: str, old: str, new: str) -> Path:
        root = tmp_path / "corpus"
        shutil.copytree(SHIPPED, root)
        path = root / file
        text = path.read_text(encoding="utf-8")
        assert text.count(old) == 1, f"expected exactly one {old!r} in {file}"
        path.write_text(text.replace(old, new), encoding="utf-8")
        return root

    return make


def shipped_text(name: str) -> str:
    return (SHIPPED_PIPELINES / f"{name}.toml").read_text(encoding="utf-8")
