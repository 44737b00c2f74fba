"""What reflection found in a kernel's module, remembered across runs.

`workbench list` of a corpus of distinct files reads every kernel's module in full: lexing,
parsing and typing every statement cost about 10 ms a kernel on the development machine, so 119
kernels took more than a second of every listing though no file had changed. Reflection's result
(bindings, layouts, entry points, what each reaches, its hazards and what the checker deferred)
depends only on the module's text, the name its errors give the file, and the front end's own
code; one digest of the three names it. The syntax tree is not kept (it is several times the
text's size): a `ModuleInfo` read back has `tree` None, and a feature that needs the tree parses
the text again.

Each result is one pickle in `$XDG_CACHE_HOME/workbench/reflected/` (default `~/.cache`), written
through the one writer; past MAX_ENTRIES the least recently written are removed. The folder is
the user's own, written only by workbench, like any cache of this kind: pickles are read from
nowhere else. A file that cannot be read, or holds anything but a `ModuleInfo`, is a miss; a
cache that cannot be written only means reading the module again next time, never an error.
"""

from __future__ import annotations

import hashlib
import os
import pickle
from dataclasses import replace
from functools import cache
from pathlib import Path

from workbench.errors import WorkbenchError
from workbench.safewrite import write_file
from workbench.wgsl.reflect import ModuleInfo

# Bump when what is kept changes in a way the front end's code digest would not show.
VERSION = 1
MAX_ENTRIES = 2048
_FRONT_END = Path(__file__).resolve().parent


def folder() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "workbench" / "reflected"


@cache
def _front_end_digest() -> bytes:
    """A digest of the front end's code (this package and the errors it raises): a changed
    reader never reads an older reader's results."""
    h = hashlib.sha256(f"v{VERSION}".encode())
    for path in sorted([*_FRONT_END.glob("*.py"), _FRONT_END.parent / "errors.py"]):
        h.update(path.name.encode() + b"\0" + path.read_bytes())
    return h.digest()


def _key(text: str, where: str) -> str:
    h = hashlib.sha256(_front_end_digest())
    h.update(where.encode("utf-8", "surrogatepass") + b"\0")
    h.update(text.encode("utf-8", "surrogatepass"))
    return h.hexdigest()


def load(text: str, where: str) -> ModuleInfo | None:
    """The remembered reflection of `text` (read as file `where`), or None."""
    try:
        data = (folder() / f"{_key(text, where)}.pickle").read_bytes()
        info = pickle.loads(data)
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError, TypeError):
        return None
    return info if isinstance(info, ModuleInfo) else None


def store(text: str, where: str, info: ModuleInfo) -> None:
    """Remember `info`, the reflection of `text` (without its tree)."""
    data = pickle.dumps(replace(info, tree=None), protocol=pickle.HIGHEST_PROTOCOL)
    path = folder() / f"{_key(text, where)}.pickle"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_file(path, lambda f: f.write(data), overwrite=True)
        _prune(path.parent)
    except (OSError, WorkbenchError):
        return  # an unwritable cache only means reading the module again next time


def _prune(where: Path) -> None:
    """Remove the least recently written results past MAX_ENTRIES (down to three quarters)."""
    entries = list(os.scandir(where))
    if len(entries) <= MAX_ENTRIES:
        return
    entries.sort(key=lambda e: e.stat().st_mtime)
    for e in entries[: len(entries) - MAX_ENTRIES * 3 // 4]:
        os.unlink(e.path)
