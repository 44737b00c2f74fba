"""Instrumented copies of a module (text only, then compiled on the real adapter): a module without
probes assembles exactly as before, the guard finds builtins wherever they are declared and a free
binding, and compile errors in an instrumented module still name the user's file and line."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from workbench.errors import CompileError
from workbench.session import Session
from workbench.wgsl.corpus import load_corpus
from workbench.wgsl.instrument import entry_params, free_binding, instrument, probe_calls
from workbench.wgsl.probes import NOOP_DEFINITIONS
from workbench.workgroups.guarded import GuardedRunner, Selection

# A preamble with a directive, a file with an enable: what the host moves around when assembling.
PREAMBLE = "diagnostic(off, derivative_uniformity);\nconst SCALE: f32 = 2.0;\n"
KERNEL = """enable f16;
@group(0) @binding(0) var<storage, read_write> out: array<f32>;
@compute @workgroup_size(64)
fn k(@builtin(global_invocation_id) gid: vec3<u32>) {
    out[gid.x] = f32(1.0h) * SCALE;
}
"""
# The module this corpus assembled to before probes existed, byte for byte.
ASSEMBLED_BEFORE = (
    "enable f16;\ndiagnostic(off, derivative_uniformity);\n// (directive hoisted by host)\n"
    "const SCALE: f32 = 2.0;\n// (enable hoisted by host)\n"
    "@group(0) @binding(0) var<storage, read_write> out: array<f32>;\n"
    "@compute @workgroup_size(64)\nfn k(@builtin(global_invocation_id) gid: vec3<u32>) {\n"
    "    out[gid.x] = f32(1.0h) * SCALE;\n}\n"
)


def _corpus(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return root


def test_a_kernel_without_probes_assembles_byte_identical_to_before(tmp_path):
    root = _corpus(
        tmp_path,
        {
            "wgslconfig.toml": '[preamble]\nfiles = ["pre.wgsl"]\nauto_inject_into = ["*.wgsl"]\n',
            "pre.wgsl": PREAMBLE,
            "k.wgsl": KERNEL,
        },
    )
    kernel = load_corpus(root).find("k")
    assert probe_calls(kernel) == ()
    assert kernel.assemble({"shader-f16"})[0] == ASSEMBLED_BEFORE


def test_no_shipped_kernel_gains_a_line_from_probe_support(session: Session):
    for kernel in session.corpus.kernels:
        text, smap = kernel.assemble(session.adapter.features)
        assert "wb_" not in text, kernel.name
        assert text.endswith(kernel.text), kernel.name
        assert all(file != "<workbench>" for file, _, _ in smap.runs), kernel.name


def test_the_documented_no_op_lines_compile_and_are_two_lines(session: Session, tmp_path):
    assert NOOP_DEFINITIONS.count("\n") == 2
    body = (
        "@group(0) @binding(0) var<storage, read_write> out: array<f32>;\n"
        + NOOP_DEFINITIONS
        + "@compute @workgroup_size(1)\nfn p() { wb_probe(1u, 2.0); wb_probe_vec4(2u, vec4<f32>()); "
        "wb_probe_u32(3u, 1u); wb_probe_i32(4u, -1); out[0] = 1.0; }\n"
    )
    sess = Session(load_corpus(_corpus(tmp_path, {"p.wgsl": body})), session.gpu)
    run = sess.run(sess.case("p", dims={"n": 1}), reference=False)
    assert run.outputs["out"][0] == 1.0
    kernel = sess.kernel("p")
    # An ordinary run compiles the user's own no-ops: nothing is appended.
    assert kernel.assemble()[0] == kernel.text


def test_builtins_are_found_directly_or_in_structs_and_the_guard_runs(session, tmp_path):
    text = """
    struct Ids { @builtin(workgroup_id) group: vec3<u32>, @builtin(local_invocation_id) me: vec3<u32> }
    @group(0) @binding(0) var<storage, read_write> out: array<u32>;
    @compute @workgroup_size(4)
    fn s(ids: Ids, @builtin(num_workgroups) n: vec3<u32>,) { out[ids.group.x] = n.x; }
    """
    sess = Session(load_corpus(_corpus(tmp_path, {"s.wgsl": text})), session.gpu)
    kernel = sess.kernel("s")
    ep = entry_params(kernel.text, "s")
    assert (ep.workgroup_id, ep.num_workgroups, ep.local_invocation_id) == (
        "ids.group",
        "n",
        "ids.me",
    )
    assert not ep.needs_comma  # a trailing comma is already there
    guarded = instrument(kernel, guard=True)
    assert "if (!wb_selected(ids.group, n)) { return; }" in guarded.text
    assert "wb_wg" not in guarded.text and "wb_nwg" not in guarded.text
    case = sess.case("s", dims={"n": 16})
    out = GuardedRunner(sess, case).run(Selection(1, 3))["out"]
    assert out.tolist() == [0, 4, 4, 0] + [0] * 12


def test_the_free_binding_skips_bindings_other_entry_points_declare(tmp_path):
    text = """
    @group(0) @binding(0) var<storage, read_write> a: array<u32>;
    @group(0) @binding(5) var<storage, read_write> b: array<u32>;
    @compute @workgroup_size(1)
    fn uses_a() { a[0] = 1u; }
    @compute @workgroup_size(1)
    fn uses_b() { b[0] = 1u; }
    """
    corpus = load_corpus(_corpus(tmp_path, {"two.wgsl": text}))
    assert free_binding(corpus.find("uses_a")) == (0, 6)


def test_compile_errors_in_an_instrumented_module_name_the_users_line(session: Session, tmp_path):
    text = """
    @group(0) @binding(0) var<storage, read_write> out: array<f32>;
    @compute @workgroup_size(64)
    fn broken(@builtin(global_invocation_id) gid: vec3<u32>) {
        out[gid.x] = undefined_name;
    }
    """
    sess = Session(load_corpus(_corpus(tmp_path, {"broken.wgsl": text})), session.gpu)
    runner = GuardedRunner(sess, sess.case("broken"))
    with pytest.raises(CompileError, match=r"^broken\.wgsl:4:\d+: .*undefined_name"):
        runner.run(Selection(0, 1))
    assert "wb_selected" in runner.source()
