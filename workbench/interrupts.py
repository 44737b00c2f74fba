"""Ctrl-C that is never lost.

Python raises KeyboardInterrupt wherever the main thread happens to be when SIGINT arrives. When
that is inside a finalizer (a `__del__`, a weakref or garbage-collector callback: wgpu's objects
and the collector run them at any allocation), the exception is printed as "ignored" and dropped,
and a long wait (a reference computing, a dispatch) goes on as if nothing had been pressed. The
command line's handler also records the press, and the tool's long waits look at the record.
"""

from __future__ import annotations

import signal
import threading
from types import FrameType

_pressed = threading.Event()


def _on_sigint(signum: int, frame: FrameType | None) -> None:
    _pressed.set()
    raise KeyboardInterrupt


def install() -> None:
    """Record every Ctrl-C of this process (call from the main thread of a whole process: a call
    inside a longer-lived one, a test's, leaves its handler alone)."""
    signal.signal(signal.SIGINT, _on_sigint)


def raise_if_pressed() -> None:
    """Raise KeyboardInterrupt if Ctrl-C was pressed, even when its first raise was lost."""
    if _pressed.is_set():
        raise KeyboardInterrupt
