"""How often Python's garbage collector runs, for the terminal UI (and the suite that drives it).

A Textual app makes tens of thousands of short-lived objects a frame (strips, segments, style
lookups), and with Python's default thresholds (700, 10, 10) that starts a full collection every
few frames; each full collection walks every live object (a few hundred thousand once wgpu, numpy
and the app are loaded: about 0.3 s on a 2-core machine). Measured over tests/ui/test_app.py on
lavapipe: 64 full collections took 19 s of the 75 s of CPU with the defaults; 5 took 3 s with
these thresholds. The objects are the same; only how often the collector looks changes.
"""

from __future__ import annotations

import gc

# Young objects allocated before a young collection; young collections before a middle one;
# middle ones before a full one.
THRESHOLDS = (10_000, 20, 100)


def tune_for_ui() -> None:
    """Collect less often than Python's defaults (see the module's docstring)."""
    gc.set_threshold(*THRESHOLDS)
