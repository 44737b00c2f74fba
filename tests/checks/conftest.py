"""Helpers for the checks tests: temporary corpora holding altered copies of shipped kernels, and
sessions on them that share the real adapter's device with the `session` fixture."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from workbench.session import Session
from workbench.wgsl.corpus import SHIPPED, load_corpus

Edit = Callable[[str], str]


def replace_once(old: str, new: str) -> Edit:
    """An edit that replaces `old` (which must occur exactly once) by `new`."""

    def edit(text: str) -> str:
        assert text.count(old) == 1, f"expected exactly one {old!r} in the shipped source"
        return text.replace(old, new)

    return edit


@pytest.fixture
def altered(tmp_path: Path, session: Session) -> Callable[[str, Edit], Session]:
    """`altered(file, edit)`: a session on a corpus of the shipped preamble, config and `file`
    with `edit` applied; same kernel names and ABI as the shipped ones."""

    def make(file: str, edit: Edit) -> Session:
        for name in ("wgslconfig.toml", "00_shared.wgsl"):
            shutil.copy(SHIPPED / name, tmp_path / name)
        (tmp_path / file).write_text(edit((SHIPPED / file).read_text()))
        return Session(load_corpus(tmp_path), session.gpu)

    return make


@pytest.fixture
def own_corpus(tmp_path: Path, session: Session) -> Callable[[str], Session]:
    """`own_corpus(source)`: a session on a corpus of one file written from `source`."""

    def make(source: str) -> Session:
        (tmp_path / "kernels.wgsl").write_text(source)
        return Session(load_corpus(tmp_path), session.gpu)

    return make
