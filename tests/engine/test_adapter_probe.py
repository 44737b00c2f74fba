"""Adapters that list but cannot run compute shaders (an H100 machine's OpenGL 3.3 adapter): the
probe `workbench adapters` runs once per adapter, the marks it prints, the default choice that skips
an adapter a probe has failed (and never probes by itself), and the message when no device can be
made. Both local adapters can compute, so a failed probe is simulated by setting the remembered
probe result; a failed device is a real one (limits the adapter cannot give), never a mock."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator

import pytest

from workbench.cli import main
from workbench.cli.advice import cli_message
from workbench.errors import GpuError
from workbench.gpu.adapters import COMPUTE_PROBES, choose_adapter, compute_problem, list_adapters
from workbench.gpu.device import GpuContext
from workbench.session import Session

SIMULATED = "simulated: this driver has no compute shaders"


@pytest.fixture
def probes(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[int, str]]:
    """The remembered probe results, restored after the test; no adapter forced by the env."""
    monkeypatch.delenv("WORKBENCH_ADAPTER", raising=False)
    saved = dict(COMPUTE_PROBES)
    yield COMPUTE_PROBES
    COMPUTE_PROBES.clear()
    COMPUTE_PROBES.update(saved)


def test_both_local_adapters_can_run_compute_and_are_probed_once(probes, monkeypatch):
    for a in list_adapters():
        problem = GpuContext(a).probe_compute()
        if "llvmpipe" in a.name:
            assert problem is None, f"{a.label}: {problem}"
        assert probes[a.index] == (problem or "")
    # Once known, the answer is not probed again: a fresh context makes no device for it.
    monkeypatch.setattr(GpuContext, "device", property(lambda self: pytest.fail("probed again")))
    for a in list_adapters():
        assert GpuContext(a).probe_compute() == compute_problem(a)


def test_choosing_the_default_adapter_never_probes(probes, monkeypatch):
    probes.clear()
    monkeypatch.setattr(GpuContext, "probe_compute", lambda self: pytest.fail("probed"))
    monkeypatch.setattr(GpuContext, "device", property(lambda self: pytest.fail("device made")))
    choose_adapter()
    Session.open()
    assert probes == {}


def _others_that_compute(index: int) -> list:
    """Adapters other than `index` whose real probe passes (the H100 machine's GL 3.3 fails)."""
    return [
        a for a in list_adapters() if a.index != index and GpuContext(a).probe_compute() is None
    ]


def test_the_default_skips_an_adapter_a_probe_found_unable_to_compute(probes):
    adapters = list_adapters()
    best = choose_adapter()
    if not _others_that_compute(best.index):
        pytest.skip("no second adapter that runs compute: nothing else to choose")
    probes[best.index] = SIMULATED
    other = choose_adapter()
    assert other.index != best.index
    # Named explicitly, by index, it is still given (and fails with a clear message when used).
    assert choose_adapter(str(best.index)).index == best.index
    # Every adapter failing: the default is still the best one, not an error.
    for a in adapters:
        probes[a.index] = SIMULATED
    assert choose_adapter().index == best.index


def test_adapters_marks_one_that_cannot_run_compute_in_json_and_text(probes, capsys):
    adapters = list_adapters()
    bad = choose_adapter()
    probes[bad.index] = SIMULATED
    assert main(["adapters", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    rows = {r["index"]: r for r in data["adapters"]}
    assert rows[bad.index]["compute"] is False
    assert rows[bad.index]["problem"] == SIMULATED
    assert rows[bad.index]["subgroup_size"] is None
    assert [i for i, r in rows.items() if r["default"]] == [data["default"]]
    if _others_that_compute(bad.index):
        assert rows[bad.index]["default"] is False
    for a in adapters:
        if a.index != bad.index and "llvmpipe" in a.name:
            assert rows[a.index]["compute"] is True and rows[a.index]["problem"] is None

    assert main(["adapters"]) == 0
    lines = capsys.readouterr().out.splitlines()
    head = next(i for i, ln in enumerate(lines) if ln[2:].startswith(f"{bad.index}: "))
    assert lines[head + 1].strip() == f"! cannot run compute shaders: {SIMULATED}"
    assert sum(SIMULATED in ln for ln in lines) == 1


def test_list_says_once_when_its_adapter_cannot_run_compute(probes, capsys):
    default = choose_adapter()
    probes[default.index] = SIMULATED
    # Named explicitly, so the known-bad adapter is still the one listed on.
    assert main(["list", "--adapter", str(default.index), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["adapter_problem"] == SIMULATED
    probes[default.index] = ""
    assert main(["list", "--adapter", str(default.index), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["adapter_problem"] is None


def test_a_device_that_cannot_be_made_says_the_adapter_cannot_run_compute(probes, session):
    # A real failure: ask the adapter for far more workgroup memory than it has.
    gl = [a for a in list_adapters() if a.backend == "OpenGL"]
    vulkan = [a for a in list_adapters() if a.backend == "Vulkan"]
    target = (gl or list_adapters())[0]
    # Forget what earlier tests (an across-adapter check) learnt of this adapter, so it is probed.
    probes.pop(target.index, None)
    key = "max-compute-workgroup-storage-size"
    broken = dataclasses.replace(target, limits={**target.limits, key: target.limits[key] * 64})
    ctx = GpuContext(broken)
    with pytest.raises(GpuError) as err:
        _ = ctx.device
    msg = str(err.value)
    assert msg.startswith(f"{target.label}: could not create a device (")
    assert "this adapter cannot run compute shaders" in msg and "\n" not in msg
    if vulkan and target.backend != "Vulkan":
        assert "try the Vulkan adapter" in msg
    else:
        assert "another adapter" in msg or "Vulkan driver" in msg
    # The command line words the remedy with its flag; the engine's message names none.
    assert "--" not in msg and "--adapter" in cli_message(err.value)
    # Not retried: the same answer again, and the probe reports it.
    with pytest.raises(GpuError, match="could not create a device"):
        _ = ctx.device
    problem = ctx.probe_compute()
    assert problem is not None and problem.startswith("could not create a device (")
    assert compute_problem(target) == problem

    # A session on it lists every kernel with the reason instead of crashing.
    sess = Session(session.corpus, ctx)
    plain = next(k for k in sess.corpus.kernels if not k.features)
    status = sess.status(plain).text
    assert status.startswith("error: ") and "cannot run compute shaders" in status
