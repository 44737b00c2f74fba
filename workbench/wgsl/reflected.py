"""What reflection found in a kernel's module, remembered across runs.

`workbench list` of a corpus of distinct files reads every kernel's module in full: lexing,
parsing and typing every statement cost about 10 ms a kernel on the development machine, so 119
kernels took more than a second of every listing though no file had changed. Reflection's result
(bindings, layouts, entry points, what each reaches, its hazards and what the checker deferred)
depends only on the module's text, the name its errors give the file, and the front end's own
code; one digest of the three names it. The syntax tree is not kept (it is several times the
text's size): a `ModuleInfo` read back has `tree` None, and a feature that needs the tree parses
the text again.

The results for one corpus folder are one pickle, `$XDG_CACHE_HOME/workbench/reflected/<digest of
the folder>.pickle` (default `~/.cache`): read once when the corpus is loaded, and written once
after, through the one writer, holding the modules of that load only (so it never grows past
the corpus). Past MAX_FOLDERS folders the least recently written are removed. The cache folder is
the user's own, written only by workbench, like any cache of this kind: pickles are read from
nowhere else. A file that cannot be read, or holds anything but results, is a miss; a cache that
cannot be written only means reading the modules again next time, never an error.
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
VERSION = 2
MAX_FOLDERS = 64
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


class Remembered:
    """The reflections remembered for one corpus folder, while it is loaded."""

    def __init__(self, root: Path) -> None:
        name = hashlib.sha256(str(root.resolve()).encode("utf-8", "surrogatepass")).hexdigest()
        self.path = folder() / f"{name}.pickle"
        self.known = _read(self.path)
        self.used: dict[str, ModuleInfo] = {}

    def get(self, text: str, where: str) -> ModuleInfo | None:
        """The remembered reflection of `text` (read as file `where`), or None."""
        key = _key(text, where)
        info = self.used.get(key) or self.known.get(key)
        if info is not None:
            self.used[key] = info
        return info

    def put(self, text: str, where: str, info: ModuleInfo) -> None:
        """Remember `info`, the reflection of `text`, without its tree (written by `save`)."""
        self.used[_key(text, where)] = replace(info, tree=None)

    def save(self) -> None:
        """Write the results of this load, if they differ from what was read."""
        if self.used.keys() == self.known.keys():
            return
        data = pickle.dumps(self.used, protocol=pickle.HIGHEST_PROTOCOL)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            write_file(self.path, lambda f: f.write(data), overwrite=True)
            _prune(self.path.parent)
        except (OSError, WorkbenchError):
            return  # an unwritable cache only means reading the modules again next time


def _read(path: Path) -> dict[str, ModuleInfo]:
    try:
        data = pickle.loads(path.read_bytes())
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError, TypeError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, ModuleInfo)}


def _prune(where: Path) -> None:
    """Remove the least recently written folders' results past MAX_FOLDERS."""
    entries = [e for e in os.scandir(where) if e.name.endswith(".pickle")]
    if len(entries) <= MAX_FOLDERS:
        return
    entries.sort(key=lambda e: e.stat().st_mtime)
    for e in entries[: len(entries) - MAX_FOLDERS]:
        os.unlink(e.path)
