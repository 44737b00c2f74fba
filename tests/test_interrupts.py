"""Ctrl-C is never lost, even when it arrives while a finalizer runs (workbench.interrupts)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Ctrl-C arrives while an object's __del__ runs: Python drops the KeyboardInterrupt raised there
# ("Exception ignored in"), so only the record of the press can stop what follows.
SCRIPT = """
import os, signal, sys
from workbench import interrupts
if sys.argv[1] == "installed":
    interrupts.install()
else:  # Python's own handler (a parent that ignores SIGINT, as a test runner may, hands that on)
    signal.signal(signal.SIGINT, signal.default_int_handler)

class Finalized:
    def __del__(self):
        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(10_000):  # the handler runs here, inside the finalizer
            pass

Finalized()
try:
    interrupts.raise_if_pressed()
except KeyboardInterrupt:
    sys.exit(130)
"""


def _run(mode: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", SCRIPT, mode],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )


def test_a_ctrl_c_dropped_inside_a_finalizer_is_still_seen() -> None:
    res = _run("installed")
    assert "Exception ignored" in res.stderr and "KeyboardInterrupt" in res.stderr
    assert res.returncode == 130


def test_without_the_record_python_drops_it() -> None:
    # What the record is for: with Python's own handler the press is gone.
    res = _run("python's own")
    assert "Exception ignored" in res.stderr
    assert res.returncode == 0
