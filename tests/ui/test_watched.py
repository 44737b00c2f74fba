"""The files a corpus depends on: its WGSL, wgslconfig.toml, workbench.toml and the reference
modules workbench.toml names; a change to any of them (an edit, one that came or went) shows in
their stamps."""

from __future__ import annotations

import os
from pathlib import Path

from tests.described.corpora import MATMUL_TOML, matmul_corpus
from workbench.viewmodel.watched import stamps, watched_files


def test_the_reference_modules_named_are_watched(tmp_path: Path) -> None:
    root = matmul_corpus(tmp_path)
    (root / "other.py").write_text("# named by nothing\n", encoding="utf-8")
    files = watched_files(root)
    assert root / "refs.py" in files and root / "other.py" not in files
    assert {root / "matmul.wgsl", root / "wgslconfig.toml", root / "workbench.toml"} <= set(files)


def test_an_unreadable_workbench_toml_is_still_watched(tmp_path: Path) -> None:
    root = matmul_corpus(tmp_path, toml=MATMUL_TOML.replace("[kernels.matmul]", "[kernels.matmul"))
    assert root / "workbench.toml" in watched_files(root)
    assert root / "refs.py" not in watched_files(root)  # named again once the file reads


def test_stamps_change_with_an_edit_and_a_file_that_comes_or_goes(tmp_path: Path) -> None:
    root = matmul_corpus(tmp_path)
    before = stamps(root)
    refs = root / "refs.py"
    st = refs.stat()
    refs.write_text(refs.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    os.utime(refs, ns=(st.st_atime_ns, st.st_mtime_ns))  # the same mtime: the size tells
    assert stamps(root) != before
    edited = stamps(root)
    (root / "wgslconfig.toml").write_text("", encoding="utf-8")
    assert stamps(root) != edited
