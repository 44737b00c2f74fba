"""The files a corpus depends on, and their stamps: what live reload watches.

A corpus is its WGSL files, `wgslconfig.toml`, `workbench.toml`, and the reference modules that
`workbench.toml` names (`function = "refs.py:matmul"`, always a `.py` file in the corpus folder).
A change to any of them (an edit, a file that came or went) re-reads the corpus.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Iterator
from pathlib import Path

Stamps = dict[Path, tuple[int, int]]


def _named_modules(root: Path) -> set[Path]:
    """The `.py` files `workbench.toml` names; none while it cannot be read (its own stamp
    changes when it is fixed, and the modules are read again then)."""
    try:
        table = tomllib.loads((root / "workbench.toml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return set()
    return {root / name for name in _functions(table) if name.endswith(".py")}


def _functions(value: object) -> Iterator[str]:
    """The file part of every `function = "FILE:NAME"` anywhere in the table."""
    if isinstance(value, dict):
        for k, v in value.items():
            if k == "function" and isinstance(v, str) and ":" in v:
                yield v.rsplit(":", 1)[0]
            else:
                yield from _functions(v)
    elif isinstance(value, list):
        for v in value:
            yield from _functions(v)


def watched_files(root: Path) -> list[Path]:
    """Every file the corpus at `root` depends on (some may not exist yet)."""
    return [
        *sorted(root.rglob("*.wgsl")),
        root / "wgslconfig.toml",
        root / "workbench.toml",
        *sorted(_named_modules(root)),
    ]


def stamps(root: Path, extra: Iterable[Path] = ()) -> Stamps:
    """(mtime, size) of each watched file that exists: two scans differ when one changed.
    `extra`: files the loaded corpus read besides (its variants' includes, a generator's inputs:
    `Corpus.watched`)."""
    out: Stamps = {}
    for path in [*watched_files(root), *extra]:
        try:
            st = path.stat()
        except OSError:
            continue
        out[path] = (st.st_mtime_ns, st.st_size)
    return out
