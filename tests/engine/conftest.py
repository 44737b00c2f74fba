"""Helpers for the engine tests: throw-away corpora on disk, sessions on them that share the real
adapter's device (lavapipe here, never a mock), and the command line run as a subprocess
(`run_cli`, for what only a real process shows: exit codes through a shell, what reaches the
terminal) or in-process through `workbench.cli.main` (`run_main`, the same code path without a
new interpreter, adapter list and device per call)."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import raw_library_lines
from workbench.cli import main
from workbench.errors import GpuError
from workbench.gpu.adapters import list_adapters
from workbench.session import Session
from workbench.wgsl.corpus import SHIPPED, load_corpus

REPO = Path(__file__).resolve().parents[2]
SHARED_PREAMBLE = SHIPPED / "00_shared.wgsl"


def write_corpus(root: Path, files: dict[str, str]) -> Path:
    """Write `files` (relative path -> text, dedented) under `root` and return it."""
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return root


@pytest.fixture
def make_corpus(tmp_path: Path) -> Callable[[dict[str, str]], Path]:
    """Writes a corpus folder from a dict of files; each call gets a fresh folder."""
    count = 0

    def make(files: dict[str, str]) -> Path:
        nonlocal count
        count += 1
        return write_corpus(tmp_path / f"corpus{count}", files)

    return make


@pytest.fixture
def on_corpus(session: Session) -> Callable[[Path], Session]:
    """A Session over another folder that reuses the default adapter's device."""

    def open_(path: Path) -> Session:
        return Session(load_corpus(path), session.gpu)

    return open_


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`python -m workbench ARGS` in a subprocess; a traceback on stderr fails the test at once."""
    full_env = dict(os.environ)
    full_env.setdefault("XDG_RUNTIME_DIR", "/tmp/workbench-xdg-tests")
    full_env.update(env or {})
    proc = subprocess.run(
        [sys.executable, "-m", "workbench", *args],
        capture_output=True,
        text=True,
        env=full_env,
        cwd=REPO,
        timeout=300,
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    leaked = raw_library_lines(proc.stdout + proc.stderr)
    assert not leaked, f"raw library output: {leaked}"
    return proc


def run_main(
    *args: str, env: dict[str, str] | None = None, cwd: Path = REPO
) -> subprocess.CompletedProcess[str]:
    """`workbench ARGS` through `workbench.cli.main` in this process, answered as `run_cli`
    answers (exit code, stdout, stderr). An exception the command lets out fails the test with
    its traceback; raw library output (written to the process's file descriptors) is caught by
    the suite's guard on what the test printed."""
    out, err = io.StringIO(), io.StringIO()
    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    os.environ.update(env or {})
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(list(args))
            except SystemExit as exc:  # argparse's own refusals
                code = exc.code if isinstance(exc.code, int) else 2
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
    assert "Traceback" not in err.getvalue(), err.getvalue()
    return subprocess.CompletedProcess(["workbench", *args], code, out.getvalue(), err.getvalue())


def gl_session(corpus: Path, need_device: bool = False) -> Session:
    """A Session on the OpenGL adapter (which has no f16 and no subgroups), or skip the test.

    `need_device`: the test compiles, so the adapter must also give a device that runs compute
    shaders (an H100's GL adapter is OpenGL 3.3: it lists, but its device cannot be created).
    """
    if not any(a.backend == "OpenGL" for a in list_adapters()):
        pytest.skip("no OpenGL adapter on this machine")
    sess = Session.open(adapter="gl", corpus=corpus)
    if need_device:
        try:
            _ = sess.gpu.device
        except GpuError as exc:
            pytest.skip(f"the OpenGL adapter gives no compute device here: {exc}")
    return sess
