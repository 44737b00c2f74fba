"""Which modules compiled into a compute pipeline on which adapter, remembered across runs.

`workbench list` says of every kernel whether it compiles on its adapter, and on a corpus of
distinct files those compiles are most of its time: wgpu reads and validates a module in a couple
of milliseconds, but creating the pipeline runs the driver's compiler (LLVM on lavapipe, 20 to 70
ms a kernel measured here), so a listing of 119 kernels spent seconds compiling what had not
changed since the last one. The outcome of a compile depends only on the module text, the entry
point, its bind group layout, the override constants, the adapter, its driver, the device's
features and limits, and wgpu's version; one digest of all of them names a success.

Successes are kept in `$XDG_CACHE_HOME/workbench/compiled.json` (default `~/.cache/workbench`),
newest last, at most MAX_ENTRIES, written through the one writer. Failures are never kept: the
compiler words its error afresh, naming the user's files as they are now. A cache that cannot be
read or written only means compiling again, never an error; two processes writing at once may
lose each other's newest entries, which costs a compile.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

from workbench.errors import WorkbenchError
from workbench.gpu.adapters import USEFUL_FEATURES, AdapterInfo
from workbench.safewrite import write_text

# Bump when what a key covers changes, so older entries no longer match.
VERSION = 2
MAX_ENTRIES = 4096

_lock = threading.Lock()
_writing = threading.Lock()
_known: dict[str, None] | None = None  # read from the file once per process, then kept here


def cache_path() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "workbench" / "compiled.json"


def compile_key(
    adapter: AdapterInfo,
    module_text: str,
    entry: str,
    layout: tuple[Any, ...],
    constants: Mapping[str, float] | None,
) -> str:
    """The digest naming one compile: everything its outcome depends on."""
    what = {"entry": entry, "layout": repr(layout), "constants": sorted((constants or {}).items())}
    h = _adapter_digest(adapter, tuple(sorted(adapter.limits.items()))).copy()
    h.update(json.dumps(what, sort_keys=True).encode())
    h.update(b"\0")
    h.update(module_text.encode("utf-8", "surrogatepass"))
    return str(h.hexdigest())


@cache
def _adapter_digest(adapter: AdapterInfo, limits: tuple[tuple[str, int], ...]) -> Any:
    """The digest so far of what every compile on `adapter` shares (made once per adapter: a
    listing asks for a key per kernel)."""
    import wgpu
    import wgpu.backends.wgpu_native as native

    what = {
        "v": VERSION,
        "wgpu": [wgpu.__version__, native.__version__],
        "adapter": [adapter.name, adapter.backend, adapter.type, adapter.vendor, adapter.driver],
        "features": sorted(f for f in USEFUL_FEATURES if f in adapter.features),
        "limits": limits,
    }
    h = hashlib.sha256(json.dumps(what, sort_keys=True).encode())
    h.update(b"\0")
    return h


def known(key: str) -> bool:
    """Whether a compile with this key succeeded before (in this process or an earlier one)."""
    with _lock:
        return key in _entries()


def remember(key: str) -> None:
    """Record a successful compile, on disk too (the oldest entries beyond MAX_ENTRIES dropped)."""
    with _lock:
        entries = _entries()
        if key in entries:
            return
        entries[key] = None
        while len(entries) > MAX_ENTRIES:
            del entries[next(iter(entries))]
    # One write at a time, each of every entry known when it starts: with compiles on several
    # threads, the last file written holds them all.
    with _writing:
        with _lock:
            text = json.dumps({"version": VERSION, "compiled": list(_entries())})
        path = cache_path()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_text(path, text, overwrite=True)
        except (OSError, WorkbenchError):
            return  # an unwritable cache only means compiling again next time


def forget() -> None:
    """Forget what this process read (the file is read again at the next question)."""
    global _known
    with _lock:
        _known = None


def _entries() -> dict[str, None]:
    global _known
    if _known is None:
        _known = {}
        try:
            data = json.loads(cache_path().read_text(encoding="utf-8"))
        except (OSError, ValueError, UnicodeDecodeError):
            return _known
        if not isinstance(data, dict) or data.get("version") != VERSION:
            return _known
        keys = data.get("compiled")
        if isinstance(keys, list):
            _known = {k: None for k in keys if isinstance(k, str)}
    return _known
