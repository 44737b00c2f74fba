"""Corpus loading on the real adapter: kernel split by markers, file-local preambles, plain files with
several entry points, duplicate names, wgslconfig.toml preamble globs, and enable hoisting."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.errors import CorpusError, UserError
from workbench.wgsl.corpus import load_corpus

from .conftest import gl_session

OUT_U32 = "@group(0) @binding(0) var<storage, read_write> out: array<u32>;"


def module_line_of(text: str, needle: str) -> int:
    """1-based line of the first line of `text` containing `needle`."""
    return next(i for i, ln in enumerate(text.splitlines(), 1) if needle in ln)


def test_markers_split_file_and_prepend_the_local_preamble_to_each_kernel(make_corpus, on_corpus):
    root = make_corpus(
        {
            "k.wgsl": f"""
            // file-local preamble: helpers shared by this file's kernels
            fn helper(x: u32) -> u32 {{ return x + 1u; }}
            // --- KERNEL: first ---
            {OUT_U32}
            @compute @workgroup_size(64)
            fn first(@builtin(global_invocation_id) gid: vec3<u32>) {{
                if (gid.x < arrayLength(&out)) {{ out[gid.x] = helper(gid.x); }}
            }}
            // --- KERNEL: second ---
            {OUT_U32}
            @group(0) @binding(1) var<uniform> n: u32;
            @compute @workgroup_size(32)
            fn second(@builtin(global_invocation_id) gid: vec3<u32>) {{
                if (gid.x < n) {{ out[gid.x] = helper(helper(gid.x)); }}
            }}
            """
        }
    )
    sess = on_corpus(root)
    first, second = sess.corpus.kernels
    assert (first.name, first.line, first.entry) == ("first", 3, "first")
    assert (second.name, second.line, second.entry) == ("second", 9, "second")
    for k in (first, second):
        assert [p.file for p in k.pieces] == ["k.wgsl", "k.wgsl"]
        assert k.pieces[0].first_line == 1
        assert k.text.count("fn helper") == 1
    assert "fn second" not in first.text and "fn first" not in second.text
    assert [b.name for b in second.entry_point.bindings] == ["out", "n"]
    assert second.entry_point.workgroup_size == (32, 1, 1)

    # The source map takes a module line back to the line in the file.
    text, smap = second.assemble(sess.adapter.features)
    assert smap.locate(module_line_of(text, "fn second")) == ("k.wgsl", 13)
    assert smap.locate(module_line_of(text, "fn helper")) == ("k.wgsl", 2)

    # Each kernel is its own module (both declare `out`), and both run.
    ids = np.arange(300, dtype=np.uint32)
    assert np.array_equal(sess.run("first", dims={"n": 300}).outputs["out"], ids + 1)
    assert np.array_equal(sess.run("second", dims={"n": 300}).outputs["out"], ids + 2)


def test_plain_file_with_several_entry_points_gives_one_kernel_each(make_corpus, on_corpus):
    root = make_corpus(
        {
            "plain.wgsl": """
            @group(0) @binding(0) var<storage, read_write> a: array<u32>;
            @group(0) @binding(1) var<storage, read_write> b: array<u32>;
            fn seven() -> u32 { return 7u; }
            @compute @workgroup_size(16)
            fn fill_a(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&a)) { a[gid.x] = seven(); }
            }
            @compute @workgroup_size(8, 2)
            fn fill_b(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&b)) { b[gid.x] = gid.x; }
            }
            """
        }
    )
    sess = on_corpus(root)
    kernels = {k.name: k for k in sess.corpus.kernels}
    assert list(kernels) == ["fill_a", "fill_b"]
    assert kernels["fill_a"].line == 5 and kernels["fill_b"].line == 9
    # Each entry point binds only what it reaches.
    assert [b.name for b in kernels["fill_a"].entry_point.bindings] == ["a"]
    assert [b.name for b in kernels["fill_b"].entry_point.bindings] == ["b"]
    assert kernels["fill_b"].entry_point.workgroup_size == (8, 2, 1)
    assert np.all(sess.run("fill_a", dims={"n": 50}).outputs["a"] == 7)
    assert np.array_equal(sess.run("fill_b", dims={"n": 50}).outputs["b"], np.arange(50))


def test_the_same_kernel_name_in_two_files_needs_file_colon_name(make_corpus, on_corpus):
    body = """
    {out}
    @compute @workgroup_size(64)
    fn dup(@builtin(global_invocation_id) gid: vec3<u32>) {{
        if (gid.x < arrayLength(&out)) {{ out[gid.x] = {value}u; }}
    }}
    """
    root = make_corpus(
        {
            "a.wgsl": body.format(out=OUT_U32, value=1),
            "sub/b.wgsl": body.format(out=OUT_U32, value=2),
        }
    )
    sess = on_corpus(root)
    with pytest.raises(UserError) as err:
        sess.corpus.find("dup")
    assert "a.wgsl:dup" in str(err.value) and "sub/b.wgsl:dup" in str(err.value)
    assert "FILE:NAME" in str(err.value)
    assert sess.corpus.find("sub/b.wgsl:dup").file == "sub/b.wgsl"
    assert np.all(sess.run("a.wgsl:dup", dims={"n": 10}).outputs["out"] == 1)
    assert np.all(sess.run("sub/b.wgsl:dup", dims={"n": 10}).outputs["out"] == 2)
    with pytest.raises(UserError, match="no kernel named"):
        sess.corpus.find("c.wgsl:dup")


def test_preambles_are_prepended_in_order_to_files_matching_the_globs(make_corpus, on_corpus):
    root = make_corpus(
        {
            "wgslconfig.toml": """
            [preamble]
            files = ["lib/p1.wgsl", "lib/p2.wgsl"]
            auto_inject_into = ["k_*.wgsl"]
            """,
            # p2 calls p1: it only compiles when p1 comes first.
            "lib/p1.wgsl": "fn p1() -> u32 { return 1u; }\n",
            "lib/p2.wgsl": "fn p2() -> u32 { return p1() + 10u; }\n",
            "k_match.wgsl": f"""
            {OUT_U32}
            @compute @workgroup_size(64)
            fn k_match(@builtin(global_invocation_id) gid: vec3<u32>) {{
                if (gid.x < arrayLength(&out)) {{ out[gid.x] = p2(); }}
            }}
            """,
            # Not matched by the glob: defining p1 again would clash if a preamble were injected.
            "other.wgsl": f"""
            fn p1() -> u32 {{ return 5u; }}
            {OUT_U32}
            @compute @workgroup_size(64)
            fn other(@builtin(global_invocation_id) gid: vec3<u32>) {{
                if (gid.x < arrayLength(&out)) {{ out[gid.x] = p1(); }}
            }}
            """,
        }
    )
    sess = on_corpus(root)
    assert sess.corpus.preambles == ("lib/p1.wgsl", "lib/p2.wgsl")
    kernels = {k.name: k for k in sess.corpus.kernels}
    # Preamble files are not kernel files themselves.
    assert sorted(kernels) == ["k_match", "other"]
    assert [p.file for p in kernels["k_match"].pieces] == [
        "lib/p1.wgsl",
        "lib/p2.wgsl",
        "k_match.wgsl",
    ]
    assert [p.file for p in kernels["other"].pieces] == ["other.wgsl"]
    # Lines stay the file's own, not the module's, once preambles sit in front.
    assert kernels["k_match"].line == 3
    assert np.all(sess.run("k_match", dims={"n": 20}).outputs["out"] == 11)
    assert np.all(sess.run("other", dims={"n": 20}).outputs["out"] == 5)


def test_a_preamble_never_injects_into_itself_and_the_glob_defaults_to_every_file(
    make_corpus, on_corpus
):
    root = make_corpus(
        {
            # No auto_inject_into: every .wgsl, the preamble included, matches "*.wgsl".
            "wgslconfig.toml": '[preamble]\nfiles = ["shared.wgsl"]\n',
            "shared.wgsl": "const K: u32 = 3u;\nfn k3() -> u32 { return K; }\n",
            "a.wgsl": f"""
            {OUT_U32}
            @compute @workgroup_size(64)
            fn a(@builtin(global_invocation_id) gid: vec3<u32>) {{
                if (gid.x < arrayLength(&out)) {{ out[gid.x] = k3(); }}
            }}
            """,
        }
    )
    sess = on_corpus(root)
    assert [k.name for k in sess.corpus.kernels] == ["a"]
    assert not sess.corpus.problems
    (a,) = sess.corpus.kernels
    assert [p.file for p in a.pieces] == ["shared.wgsl", "a.wgsl"]
    assert a.text.count("const K") == 1
    assert np.all(sess.run("a", dims={"n": 8}).outputs["out"] == 3)


def test_the_shipped_preamble_reaches_every_shipped_kernel_file(session):
    corpus = session.corpus
    assert corpus.preambles == ("00_shared.wgsl",)
    assert corpus.kernels, "the shipped corpus has kernels"
    for k in corpus.kernels:
        assert k.pieces[0].file == "00_shared.wgsl"
        assert k.file != "00_shared.wgsl"
        assert not k.problem, f"{k.file}:{k.name}: {k.problem}"


def test_enable_f16_in_a_preamble_is_hoisted_and_only_emitted_where_f16_is_used(
    session, make_corpus, on_corpus
):
    root = make_corpus(
        {
            "wgslconfig.toml": '[preamble]\nfiles = ["pre.wgsl"]\n',
            "pre.wgsl": """
            enable f16;
            fn scale(x: f32) -> f32 { return 2.0 * x; }
            """,
            "k.wgsl": """
            // --- KERNEL: halves ---
            @group(0) @binding(0) var<storage, read> src: array<f32>;
            @group(0) @binding(1) var<storage, read_write> dst: array<f16>;
            @compute @workgroup_size(64)
            fn halves(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&dst)) { dst[gid.x] = f16(scale(src[gid.x])); }
            }
            // --- KERNEL: floats ---
            enable f16;
            @group(0) @binding(0) var<storage, read> src: array<f32>;
            @group(0) @binding(1) var<storage, read_write> dst: array<f32>;
            @compute @workgroup_size(64)
            fn floats(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&dst)) { dst[gid.x] = scale(src[gid.x]); }
            }
            """,
        }
    )
    sess = on_corpus(root)
    halves, floats = sess.corpus.kernels
    assert halves.features == ("shader-f16",) and floats.features == ()

    text, smap = halves.assemble(sess.adapter.features)
    lines = text.splitlines()
    assert lines[0] == "enable f16;"
    assert sum(ln.strip().startswith("enable") for ln in lines) == 1
    assert smap.locate(1) == ("<host>", 1)
    assert smap.locate(module_line_of(text, "fn halves")) == ("k.wgsl", 5)
    assert smap.locate(module_line_of(text, "fn scale")) == ("pre.wgsl", 2)

    text, _ = floats.assemble(sess.adapter.features)
    assert not any(ln.strip().startswith("enable") for ln in text.splitlines())

    src = np.linspace(-4, 4, 100, dtype=np.float32)
    run = sess.run("halves", dims={"n": 100}, inputs={"src": src})
    assert run.outputs["dst"].dtype == np.float16
    np.testing.assert_array_equal(run.outputs["dst"], (2 * src).astype(np.float16))
    run = sess.run("floats", dims={"n": 100}, inputs={"src": src})
    np.testing.assert_array_equal(run.outputs["dst"], 2 * src)

    # Without the user's enable in the module, the f32 kernel compiles on an adapter without f16.
    gl = gl_session(root, need_device=True)
    assert gl.status(gl.kernel("floats")).text == "ok"
    assert gl.status(gl.kernel("halves")).text == "needs shader-f16"


def test_subgroup_builtins_request_the_feature_and_enable_subgroups_is_never_emitted(
    session, make_corpus, on_corpus
):
    root = make_corpus(
        {
            "sg.wgsl": """
            enable subgroups;
            @group(0) @binding(0) var<storage, read_write> out: array<u32>;
            @compute @workgroup_size(64)
            fn sg(@builtin(global_invocation_id) gid: vec3<u32>) {
                let total = subgroupAdd(1u);
                if (gid.x < arrayLength(&out)) { out[gid.x] = total; }
            }
            """
        }
    )
    sess = on_corpus(root)
    (k,) = sess.corpus.kernels
    assert k.features == ("subgroup",)
    text, _ = k.assemble(frozenset(sess.adapter.features) | {"subgroup", "shader-f16"})
    assert "enable subgroups" not in text
    if "subgroup" not in sess.adapter.features:
        pytest.skip(f"{sess.adapter.label} has no subgroups")
    out = sess.run("sg", dims={"n": 128}).outputs["out"]
    assert np.all(out == session.gpu.subgroup_size)
    gl = gl_session(root)
    assert gl.status(gl.kernel("sg")).text == "needs subgroup"


def test_a_marker_inside_a_block_comment_does_not_split_the_file(make_corpus, on_corpus):
    root = make_corpus(
        {
            "k.wgsl": f"""
            // --- KERNEL: live ---
            {OUT_U32}
            @compute @workgroup_size(64)
            fn live(@builtin(global_invocation_id) gid: vec3<u32>) {{
                if (gid.x < arrayLength(&out)) {{ out[gid.x] = 4u; }}
            }}
            /* a section switched off while debugging:
            // --- KERNEL: disabled ---
            fn disabled() {{}}
            */
            """
        }
    )
    sess = on_corpus(root)
    assert [k.name for k in sess.corpus.kernels] == ["live"]
    assert np.all(sess.run("live", dims={"n": 5}).outputs["out"] == 4)


def test_problems_are_reported_per_file_with_the_files_own_line(make_corpus, on_corpus):
    root = make_corpus(
        {
            "wgslconfig.toml": '[preamble]\nfiles = ["pre.wgsl"]\n',
            "pre.wgsl": "// one\n// two\n// three\nfn p() {}\n",
            "broken.wgsl": """
            @group(0) @binding(0) var<storage, read_write> out: array<u32>;
            @compute @workgroup_size(64)
            fn broken() {}
            @group(0) var<storage, read_write> nobinding: array<u32>;
            """,
            "nocompute.wgsl": "fn helper() {}\n",
        }
    )
    (root / "latin1.wgsl").write_bytes(b"// caf\xe9\n")
    sess = on_corpus(root)
    kernels = {k.file: k for k in sess.corpus.kernels}
    # Line 4 of broken.wgsl, not line 8 of the module behind the 4-line preamble.
    assert kernels["broken.wgsl"].problem.startswith("broken.wgsl:4: ")
    assert "@group and @binding" in kernels["broken.wgsl"].problem
    assert kernels["nocompute.wgsl"].problem == "no @compute entry point"
    assert "not UTF-8" in sess.corpus.problems["latin1.wgsl"]
    assert sess.status(kernels["broken.wgsl"]).text.startswith("error: broken.wgsl:4:")
    with pytest.raises(UserError, match=r"broken\.wgsl:4"):
        sess.case("broken")


@pytest.mark.parametrize(
    ("config", "why"),
    [
        ("[preamble\nfiles = 1", "not valid TOML"),
        ("preamble = 3", "must be a table"),
        ('[preamble]\nfiles = "pre.wgsl"', "must be a list of strings"),
        ('[preamble]\nfiles = ["pre.wgsl"]\nauto_inject_into = [1]', "must be a list of strings"),
        ('[preamble]\nfiles = ["../outside.wgsl"]', "outside the corpus folder"),
        ('[preamble]\nfiles = ["missing.wgsl"]', "missing.wgsl"),
    ],
)
def test_a_bad_wgslconfig_is_a_corpus_error(make_corpus, config, why):
    root = make_corpus({"wgslconfig.toml": config, "pre.wgsl": "fn p() {}\n"})
    with pytest.raises(CorpusError, match=why):
        load_corpus(root)


def test_a_wgslconfig_that_cannot_be_read_is_a_corpus_error(tmp_path):
    (tmp_path / "wgslconfig.toml").mkdir()
    with pytest.raises(CorpusError, match="cannot read"):
        load_corpus(tmp_path)


def test_missing_or_wrong_corpus_paths_are_user_errors(tmp_path):
    with pytest.raises(UserError, match="does not exist"):
        load_corpus(tmp_path / "nope")
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(UserError, match=r"not a \.wgsl file"):
        load_corpus(tmp_path / "notes.txt")
