"""A kernel's reflection is remembered across runs (workbench.wgsl.reflected): a later load of the
same text under the same file name reads the result back instead of parsing and typing the module
again, with everything reflection found but the tree; a changed text or name, or a damaged file,
is read afresh."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from workbench.wgsl import corpus, reflected
from workbench.wgsl.corpus import load_corpus
from workbench.wgsl.reflect import reflect

KERNEL = """
@group(0) @binding(0) var<storage, read_write> out: array<f32>;
@group(0) @binding(1) var<uniform> n: u32;
var<workgroup> tile: array<f32, 64>;
@compute @workgroup_size(64)
fn k(@builtin(local_invocation_id) lid: vec3<u32>) {
    var i = 0u;
    while (i < n) { tile[lid.x] += 1.0; i += 1u; }
    out[lid.x] = f32(dot4U8Packed(1u, 2u)) + tile[lid.x];
}
"""


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    yield reflected.folder()


def _kernel(root: Path, text: str = KERNEL, name: str = "k.wgsl") -> corpus.Kernel:
    root.mkdir(parents=True, exist_ok=True)
    (root / name).write_text(text, encoding="utf-8")
    return load_corpus(root / name).find("k")


def _no_reading(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(corpus, "reflect", lambda *a, **k: pytest.fail("read the module again"))


def test_a_later_load_reads_the_result_back_without_the_tree(tmp_path, cache, monkeypatch):
    kernel = _kernel(tmp_path)
    fresh = replace(reflect(kernel.text, kernel.file), tree=None)
    assert kernel.module is not None and replace(kernel.module, tree=None) == fresh
    assert len(list(cache.iterdir())) == 1
    _no_reading(monkeypatch)
    later = _kernel(tmp_path)
    assert later.module == fresh
    ep = later.entry_point
    assert ep is not None and ep.workgroup_bytes == 256
    assert [site.what for site in ep.loops] == ["a while loop"]
    assert later.deferred == ("k.wgsl:9: no rule for the builtin 'dot4U8Packed'",)


def test_a_changed_text_or_file_name_is_read_afresh(tmp_path, cache, monkeypatch):
    _kernel(tmp_path)
    _kernel(tmp_path, KERNEL.replace("64", "32"))
    (tmp_path / "k.wgsl").unlink()
    _kernel(tmp_path, name="other.wgsl")
    _no_reading(monkeypatch)
    with pytest.raises(pytest.fail.Exception):
        _kernel(tmp_path, KERNEL.replace("64", "16"), name="other.wgsl")


def test_a_damaged_file_is_read_afresh(tmp_path, cache, monkeypatch):
    kernel = _kernel(tmp_path)
    fresh = replace(reflect(kernel.text, kernel.file), tree=None)
    (entry,) = cache.iterdir()
    entry.write_bytes(b"not a pickle")
    assert _kernel(tmp_path).module is not None  # read again, and remembered again
    _no_reading(monkeypatch)
    assert _kernel(tmp_path).module == fresh
