"""Workgroup memory: `var<workgroup>` sizes by the layout rules, what each entry point reaches, the
adapter's max-compute-workgroup-storage-size enforced on lavapipe (which would otherwise run an
oversized array without complaint), the figures of the shipped kernels, and the uniform buffer count
limit."""

from __future__ import annotations

import json

import numpy as np
import pytest

from workbench.cli import main
from workbench.errors import LimitError
from workbench.wgsl.lexer import tokenize
from workbench.wgsl.reflect import EntryPoint, reflect
from workbench.wgsl.types import round_up

from .conftest import SHARED_PREAMBLE


def test_workgroup_variables_are_sized_by_the_layout_rules_and_rounded_to_16():
    info = reflect(
        """
        const CHUNK: u32 = 1024u;
        const HALO: u32 = 3u;
        override TILE: u32 = 8u;
        struct Pair { a: f32, b: vec3<f32> }
        var<workgroup> chunk: array<f32, CHUNK + HALO>;
        var<workgroup> vecs: array<vec3<f32>, 10>;
        var<workgroup> pairs: array<Pair, 2>;
        var<workgroup> tile: array<array<f32, TILE>, TILE>;
        var<workgroup> counter: atomic<u32>;
        var<workgroup> flag: bool;
        var<private> not_shared: array<f32, 4096>;
        @compute @workgroup_size(64)
        fn everything() {
            chunk[0] = vecs[0].x + pairs[0].a + tile[0][0] + f32(atomicLoad(&counter));
            flag = true;
            not_shared[0] = 1.0;
        }
        """
    )
    sizes = {name: v.size for name, v in info.workgroup_vars.items()}
    # f32 x 1027; vec3 strides 16; Pair is {f32 @0, vec3 @16} = 32; 8x8 f32; one atomic; one bool.
    assert sizes == {
        "chunk": 4108,
        "vecs": 160,
        "pairs": 64,
        "tile": 256,
        "counter": 4,
        "flag": 4,
    }
    ep = info.entry_points["everything"]
    assert [v.name for v in ep.workgroup_vars] == list(sizes)
    # WebGPU counts each variable rounded up to 16 bytes.
    assert ep.workgroup_bytes == 4112 + 160 + 64 + 256 + 16 + 16
    assert info.workgroup_vars["chunk"].line == 6


def test_entry_points_count_only_the_workgroup_variables_they_reach():
    info = reflect(
        """
        var<workgroup> scratch: array<f32, 256>;
        var<workgroup> other: array<u32, 64>;
        fn reduce(v: f32, lid: u32) -> f32 { scratch[lid] = v; workgroupBarrier(); return scratch[0]; }
        fn via_reduce(v: f32, lid: u32) -> f32 { return reduce(v, lid); }
        @compute @workgroup_size(256)
        fn uses_helper(@builtin(local_invocation_index) lid: u32) { _ = via_reduce(1.0, lid); }
        @compute @workgroup_size(64)
        fn uses_other(@builtin(local_invocation_index) lid: u32) { other[lid] = lid; }
        @compute @workgroup_size(64)
        fn uses_none() {}
        """
    )
    eps = info.entry_points
    assert [v.name for v in eps["uses_helper"].workgroup_vars] == ["scratch"]
    assert eps["uses_helper"].workgroup_bytes == 1024
    assert eps["uses_other"].workgroup_bytes == 256
    assert eps["uses_none"].workgroup_bytes == 0 and eps["uses_none"].workgroup_vars == ()
    # Constructors that predate workgroup memory still work.
    assert EntryPoint("old", (1, 1, 1), (), 1).workgroup_bytes == 0


def test_shipped_kernels_report_the_workgroup_memory_they_reach(session):
    cap = session.adapter.limits["max-compute-workgroup-storage-size"]
    shared = reflect(SHARED_PREAMBLE.read_text()).workgroup_vars
    assert set(shared) == {"wg_scratch"}, "the shared preamble's one workgroup array"
    for k in session.corpus.kernels:
        ep = k.entry_point
        assert ep.workgroup_bytes == sum(round_up(16, v.size) for v in ep.workgroup_vars)
        # Within the adapter's limit (lavapipe 32 KiB, the H100 48 KiB): attention_forward's
        # tiles (issue 30) take 26,624 bytes, over WebGPU's 16 KiB default; every kernel fits 32 KiB.
        assert ep.workgroup_bytes <= min(cap, 32768), f"{k.name} needs {ep.workgroup_bytes} bytes"
        # wg_scratch is counted only where a kernel calls wg_reduce_sum / wg_reduce_max (the
        # shipped kernels call them from their own section, never through a local helper).
        calls_reduce = any(
            t.text.startswith("wg_reduce_")
            for t in tokenize(k.pieces[-1].text)
            if t.kind == "ident"
        )
        assert ("wg_scratch" in {v.name for v in ep.workgroup_vars}) == calls_reduce, k.name
    by_name = {k.name: k.entry_point for k in session.corpus.kernels}
    short = by_name.get("attention_backward_short")
    if short is not None:
        # Its own arrays: the Q (or dO) chunk of 16 queries and the K (or V) chunk of 32 keys as
        # padded vec4 rows, the tile's dS and the row partials, 16,128 bytes; no reduction tree,
        # so no wg_scratch.
        own = sum(v.size for v in short.workgroup_vars if v.name != "wg_scratch")
        assert own == 16128
        assert short.workgroup_bytes == own
    if "gelu_inplace" in by_name:
        assert by_name["gelu_inplace"].workgroup_bytes == 0


BIG_SHARED = """
var<workgroup> big: array<f32, 16384>;
var<workgroup> small: array<f32, 64>;
@group(0) @binding(0) var<storage, read_write> out: array<f32>;
@compute @workgroup_size(64)
fn big_shared(@builtin(local_invocation_index) i: u32) {
    big[i * 256u] = f32(i);
    small[i] = 1.0;
    workgroupBarrier();
    out[i] = big[(63u - i) * 256u] + small[i];
}
@compute @workgroup_size(64)
fn small_only(@builtin(local_invocation_index) i: u32) {
    small[i] = f32(i);
    workgroupBarrier();
    out[i] = small[63u - i];
}
"""


def test_a_64_kib_workgroup_array_is_refused_with_the_limit_and_the_variables(
    make_corpus, on_corpus
):
    sess = on_corpus(make_corpus({"shared.wgsl": BIG_SHARED}))
    cap = sess.adapter.limits["max-compute-workgroup-storage-size"]
    if cap >= 65536 + 256:
        pytest.skip("this adapter allows 64 KiB of workgroup memory")
    big = sess.kernel("big_shared")
    assert big.entry_point.workgroup_bytes == 65536 + 256

    with pytest.raises(LimitError) as err:
        sess.run("big_shared", dims={"n": 64})
    msg = str(err.value)
    assert "max-compute-workgroup-storage-size" in msg and f"{cap:,} bytes" in msg
    assert "65,792 bytes" in msg
    assert "big: array<f32, 16384> 65,536 bytes" in msg and "small: array<f32, 64>" in msg
    assert "\n" not in msg

    # `list` marks it, and planning the case refuses it before any input is made.
    status = sess.status(big).text
    assert status.startswith("error: ") and "max-compute-workgroup-storage-size" in status
    with pytest.raises(LimitError, match="max-compute-workgroup-storage-size"):
        sess.case("big_shared", dims={"n": 64})

    # The other entry point of the same module does not reach `big`, and runs.
    run = sess.run("small_only", dims={"n": 64})
    np.testing.assert_array_equal(run.outputs["out"], np.arange(64, dtype=np.float32)[::-1])


def test_workgroup_memory_exactly_at_the_limit_runs(make_corpus, on_corpus, session):
    cap = session.adapter.limits["max-compute-workgroup-storage-size"]
    words = cap // 4
    root = make_corpus(
        {
            "edge.wgsl": f"""
            var<workgroup> all_of_it: array<u32, {words}>;
            @group(0) @binding(0) var<storage, read_write> out: array<u32>;
            @compute @workgroup_size(64)
            fn edge(@builtin(local_invocation_index) i: u32) {{
                for (var k = i; k < {words}u; k += 64u) {{ all_of_it[k] = k; }}
                workgroupBarrier();
                out[i] = all_of_it[{words - 1}u - i];
            }}
            """
        }
    )
    sess = on_corpus(root)
    assert sess.kernel("edge").entry_point.workgroup_bytes == cap
    run = sess.run("edge", dims={"n": 64})
    want = words - 1 - np.arange(64, dtype=np.uint32)
    np.testing.assert_array_equal(run.outputs["out"], want)


def test_list_json_shows_workgroup_bytes_and_where_each_variable_is(make_corpus, capsys):
    root = make_corpus({"shared.wgsl": BIG_SHARED})
    assert main(["list", str(root), "--json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)["kernels"]}
    assert rows["big_shared"]["workgroup_bytes"] == 65792
    assert rows["big_shared"]["workgroup_vars"] == [
        {"name": "big", "type": "array<f32, 16384>", "bytes": 65536, "at": "shared.wgsl:1"},
        {"name": "small", "type": "array<f32, 64>", "bytes": 256, "at": "shared.wgsl:2"},
    ]
    assert rows["small_only"]["workgroup_bytes"] == 256
    assert "max-compute-workgroup-storage-size" in rows["big_shared"]["status"]
    assert rows["small_only"]["status"] == "ok"

    assert main(["list", str(root)]) == 0
    text = capsys.readouterr().out
    line = next(ln for ln in text.splitlines() if ln.strip().startswith("big_shared "))
    assert "shared 64.2 KiB" in line
    line = next(ln for ln in text.splitlines() if ln.strip().startswith("small_only "))
    assert "shared    256 B" in line


def test_shipped_preamble_scratch_shows_in_list_json_with_its_file(session, capsys):
    assert main(["list", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["kernels"]
    for r in rows:
        for v in r["workgroup_vars"]:
            if v["name"] == "wg_scratch":
                assert v["at"].startswith(f"{SHARED_PREAMBLE.name}:")
                assert v["bytes"] == 1024


def test_too_many_uniform_buffers_is_a_limit_error(make_corpus, on_corpus, session):
    cap = session.adapter.limits["max-uniform-buffers-per-shader-stage"]
    if cap > 64:
        pytest.skip("this adapter allows more uniform buffers than the test declares")
    decls = "\n".join(f"@group(0) @binding({i}) var<uniform> u{i}: u32;" for i in range(cap + 1))
    uses = " + ".join(f"u{i}" for i in range(cap + 1))
    root = make_corpus(
        {
            "uniforms.wgsl": f"""{decls}
@group(0) @binding({cap + 1}) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(1)
fn uniforms() {{ out[0] = {uses}; }}
"""
        }
    )
    with pytest.raises(LimitError) as err:
        on_corpus(root).case("uniforms", dims={"n": 4})
    msg = str(err.value)
    assert f"{cap + 1} uniform buffers" in msg
    assert f"max-uniform-buffers-per-shader-stage of {cap}" in msg
