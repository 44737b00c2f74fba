"""A kernel's status remembers a successful compile (workbench.gpu.compiled): the same module, entry
point and layout on the same adapter, driver and wgpu is not compiled again by a later process, and
no device is made for it; a failure is never remembered, and a changed module compiles again."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from workbench.gpu import compiled
from workbench.gpu.device import GpuContext
from workbench.session import Session
from workbench.wgsl.corpus import load_corpus

GOOD = """
@group(0) @binding(0) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(64)
fn good(@builtin(global_invocation_id) gid: vec3<u32>) {
    y[gid.x] = 2.0 * y[gid.x];
}
"""
# Reflection reads it; the compiler refuses it (a store through a read-only binding).
BAD = """
@group(0) @binding(0) var<storage, read> x: array<f32>;
@compute @workgroup_size(64)
fn bad(@builtin(global_invocation_id) gid: vec3<u32>) {
    x[gid.x] = 1.0;
}
"""


@pytest.fixture
def fresh_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    compiled.forget()
    yield compiled.cache_path()
    compiled.forget()  # later tests read the run's own cache again


def _later_process(root: Path, session: Session) -> Session:
    """A session as a new process has it: the cache file read afresh, no device made yet."""
    compiled.forget()
    return Session(load_corpus(root), GpuContext(session.adapter))


def test_a_compile_is_remembered_and_a_failure_is_not(
    make_corpus, session, fresh_cache, monkeypatch
):
    root = make_corpus({"good.wgsl": GOOD, "bad.wgsl": BAD})
    first = Session(load_corpus(root), session.gpu)
    good, bad = first.kernel("good"), first.kernel("bad")
    assert first.status(good).text == "ok"
    assert first.status(bad).text.startswith("compile error")
    assert len(json.loads(fresh_cache.read_text())["compiled"]) == 1

    later = _later_process(root, session)
    assert later.status(later.kernel("bad")).text.startswith("compile error")
    later = _later_process(root, session)
    monkeypatch.setattr(GpuContext, "device", property(lambda self: pytest.fail("compiled")))
    assert later.status(later.kernel("good")).text == "ok"
    # The remembered compile answers the probe too: this adapter makes pipelines.
    assert later.probe_compute() is None


def test_a_changed_module_compiles_again(make_corpus, session, fresh_cache, monkeypatch):
    root = make_corpus({"good.wgsl": GOOD})
    first = Session(load_corpus(root), session.gpu)
    assert first.status(first.kernel("good")).text == "ok"
    (root / "good.wgsl").write_text(GOOD.replace("2.0", "3.0"), encoding="utf-8")
    later = _later_process(root, session)
    made: list[GpuContext] = []
    real = GpuContext.device
    monkeypatch.setattr(
        GpuContext, "device", property(lambda self: made.append(self) or real.fget(self))
    )
    assert later.status(later.kernel("good")).text == "ok"
    assert later.gpu in made  # compiled again: the device was asked for
    assert len(json.loads(fresh_cache.read_text())["compiled"]) == 2


def test_an_unreadable_cache_only_means_compiling_again(make_corpus, session, fresh_cache):
    fresh_cache.parent.mkdir(parents=True)
    fresh_cache.write_text("{not json", encoding="utf-8")
    root = make_corpus({"good.wgsl": GOOD})
    later = _later_process(root, session)
    assert later.status(later.kernel("good")).text == "ok"
    assert len(json.loads(fresh_cache.read_text())["compiled"]) == 1


def test_statuses_compile_on_several_threads_as_status_does_one_by_one(
    make_corpus, session, fresh_cache, monkeypatch
):
    """The listing's statuses: the compiles not remembered run on a thread each (four here,
    whatever the machine has), each kernel gets the status `status` gives it, in order, and
    every success is remembered in the one file the threads write."""
    files = {
        f"good{i}.wgsl": GOOD.replace("2.0", f"{i}.5").replace("good", f"good{i}") for i in range(6)
    }
    files |= {f"bad{i}.wgsl": BAD.replace("bad", f"bad{i}") for i in range(2)}
    root = make_corpus(files)
    monkeypatch.setattr("workbench.session._cpus", lambda: 4)
    later = _later_process(root, session)
    found = [s.text for s in later.statuses(later.corpus.kernels)]
    assert len(json.loads(fresh_cache.read_text())["compiled"]) == 6
    one_by_one = _later_process(root, session)
    compiled.forget()
    fresh_cache.unlink()
    assert found == [one_by_one.status(k).text for k in one_by_one.corpus.kernels]
    assert sum(t == "ok" for t in found) == 6
    assert sum(t.startswith("compile error") for t in found) == 2
