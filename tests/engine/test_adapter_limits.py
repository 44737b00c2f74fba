"""Issue 27, "the adapter changes results and nobody says so": the canary kernels measure each
adapter's result-changing limits once (cached per adapter and driver), the WGSL detector finds
the loops and else-if chains that could meet them, and a run, check or record of such a kernel
says so, in its verdict output and in the fixture. On the real adapter (lavapipe here, whose loop
cap and else-if limit are what the canaries find), never a mock.
"""

from __future__ import annotations

import json
import tomllib

import pytest

from workbench.cli import main
from workbench.gpu import canaries as canary_module
from workbench.gpu.canaries import LOOP_ITERATIONS, cache_path, canaries
from workbench.session import Session
from workbench.wgsl.hazards import else_if_chains, loops_without_small_constant_bound

from .conftest import write_corpus

ON_CPU = Session.choose_adapter().is_cpu
on_lavapipe = pytest.mark.skipif(not ON_CPU, reason="the measured limits are the CPU adapter's")

# A loop bounded by a uniform: lavapipe stops it after 65,535 iterations without a word.
SUM = """
@group(0) @binding(0) var<storage, read_write> out: array<f32>;
@group(0) @binding(1) var<uniform> iters: u32;
@compute @workgroup_size(1)
fn sum() {
    var acc = 0.0;
    for (var i = 0u; i < iters; i++) { acc += 1.0; }
    out[0] = acc;
}
"""

FILL = """
@group(0) @binding(0) var<storage, read_write> out: array<f32>;
@compute @workgroup_size(64)
fn fill(@builtin(global_invocation_id) gid: vec3<u32>) {
    for (var k = 0u; k < 4u; k++) {
        if (gid.x < arrayLength(&out)) { out[gid.x] = f32(k); }
    }
}
"""


# 99 else-if branches: lavapipe computes the ones from about 79 on wrongly.
CHAIN = (
    "@group(0) @binding(0) var<storage, read_write> out: array<u32>;\n"
    "@compute @workgroup_size(64)\n"
    "fn chain(@builtin(global_invocation_id) gid: vec3<u32>) {\n"
    "    let i = gid.x;\n    var v = 1u;\n    if (i == 0u) { v = 2u; }\n"
    + "".join(f"    else if (i == {k}u) {{ v = {k + 2}u; }}\n" for k in range(1, 100))
    + "    if (i < arrayLength(&out)) { out[i] = v; }\n}\n"
)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory):
    return write_corpus(
        tmp_path_factory.mktemp("limits"), {"sum.wgsl": SUM, "fill.wgsl": FILL, "chain.wgsl": CHAIN}
    )


def test_loops_without_a_small_constant_bound_are_found_and_small_constant_ones_are_not():
    src = (
        "const N = 16u;\nconst BIG: u32 = 100000u;\noverride M = 4u;\n"
        "fn f() {\n"
        "  for (var i = 0u; i < 8u; i++) { }\n"  # 5: small literal
        "  for (var i = 0u; i < N; i++) { }\n"  # 6: small const
        "  for (var i = 0u; (i <= 0x10); i++) { }\n"  # 7: small hex literal
        "  for (var i = 0u; i < BIG; i++) { }\n"  # 8
        "  for (var i = 0u; i < M; i++) { }\n"  # 9: an override is set by a run
        "  for (var i = 0u; i < params.n; i += 1u) { }\n"  # 10
        "  for (;;) { break; }\n"  # 11
        "  loop { break; }\n"  # 12
        "  while (x < 3) { }\n"  # 13
        "}\n"
    )
    assert [s.line for s in loops_without_small_constant_bound(src)] == [8, 9, 10, 11, 12, 13]
    assert loops_without_small_constant_bound("fn f( {{ ` broken") == []


def test_else_if_chains_are_counted_per_chain_and_nesting_level():
    chain = "fn g() {\n  if (i == 0u) { }\n" + "".join(
        f"  else if (i == {k}u) {{ if (a) {{ }} else if (b) {{ }} }}\n" for k in range(1, 100)
    )
    chain += "  x = 1;\n  if (c) { } else if (d) { }\n}\n"
    found = else_if_chains(chain, 50)
    assert [(s.line, s.size) for s in found] == [(2, 99)]
    assert len(else_if_chains(chain, 1)) == 99 + 1 + 1


@on_lavapipe
def test_the_canaries_measure_the_loop_cap_and_else_if_limit_once_per_adapter_and_driver(
    session, tmp_path, monkeypatch
):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(canary_module, "KNOWN", {})
    found = canaries(session.gpu)
    # Measured, not assumed: lavapipe stops loops at 65,535 and breaks an else-if chain near 79.
    assert found.loop_iterations is not None and 1000 < found.loop_iterations < LOOP_ITERATIONS
    assert found.else_if_branches is not None and 10 < found.else_if_branches < 127
    cached = json.loads(cache_path().read_text())
    (key,) = cached
    assert session.adapter.driver in key and session.adapter.name in key
    # A second process reads the cache; it does not measure again.
    monkeypatch.setattr(canary_module, "KNOWN", {})
    monkeypatch.setattr(canary_module, "measure", lambda ctx: pytest.fail("measured again"))
    assert canaries(session.gpu) == found


@on_lavapipe
def test_a_run_check_and_record_of_a_loop_bounded_by_a_uniform_warn_and_the_fixture_keeps_it(
    corpus, capsys, tmp_path
):
    case = ["sum", "--corpus", str(corpus), "--set", "iters=200000", "--size", "out=1"]
    assert main(["run", *case, "--reps", "0", "--json"]) == 0
    run = json.loads(capsys.readouterr().out)
    # The silent wrong result the warning is about: 200,000 iterations summed to 65,535.
    assert run["outputs"]["out"]["max"] < 200000
    warned = [n for n in run["notes"] if "stops loops after" in n]
    assert warned and "sum.wgsl:6" in warned[0], run["notes"]
    # No reference to compare with: the check verifies nothing (exit 1), and still warns.
    assert main(["check", *case]) == 1
    assert "stops loops after" in capsys.readouterr().out
    out = tmp_path / "sumfx"
    assert main(["record", *case, "--out", str(out)]) == 0
    assert "stops loops after" in capsys.readouterr().out
    manifest = tomllib.loads((tmp_path / "sumfx.toml").read_text())
    assert any("stops loops after" in w for w in manifest["warnings"])


@on_lavapipe
def test_a_run_of_a_long_else_if_chain_warns_where_the_adapter_breaks_it(corpus, capsys):
    argv = ["run", "chain", "--corpus", str(corpus), "--size", "out=100", "--reps", "0", "--json"]
    assert main(argv) == 0
    run = json.loads(capsys.readouterr().out)
    (warned,) = [n for n in run["notes"] if "else-if branch" in n]
    assert "chain.wgsl:6 has an if with 99 else-if branches" in warned, warned


def test_a_kernel_whose_loops_have_small_constant_bounds_carries_no_adapter_limit_warning(
    corpus, capsys
):
    assert main(["run", "fill", "--corpus", str(corpus), "--reps", "0", "--json"]) == 0
    notes = json.loads(capsys.readouterr().out)["notes"]
    assert not [n for n in notes if "this adapter" in n]


@on_lavapipe
def test_workbench_adapters_lists_the_measured_result_changing_limits(capsys):
    assert main(["adapters", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["adapters"]
    cpu = [r for r in rows if r["type"] == "CPU" and r["compute"]]
    assert cpu and cpu[0]["canaries"]["loop_iterations"] is not None
    assert main(["adapters"]) == 0
    assert "! changes results: loops stop after" in capsys.readouterr().out
