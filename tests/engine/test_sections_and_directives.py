"""Corpus corners on the real adapter: a kernel section name used twice in one file, `diagnostic`
and `requires` directives in files behind a preamble (hoisted, with the source map kept right), and
the `@compute` entry points of a preamble file itself."""

from __future__ import annotations

import json

import numpy as np
import pytest

from workbench.cli import main
from workbench.errors import CompileError, UserError
from workbench.wgsl.corpus import load_corpus

from .test_corpus import OUT_U32, module_line_of
from .test_session import _caret_column

PRE_CONFIG = '[preamble]\nfiles = ["pre.wgsl"]\n'
PRE = "// shared helpers\nfn plus_one(x: u32) -> u32 { return x + 1u; }\n"


def _fill(name: str, value: str) -> str:
    return f"""{OUT_U32}
@compute @workgroup_size(64)
fn {name}(@builtin(global_invocation_id) gid: vec3<u32>) {{
    if (gid.x < arrayLength(&out)) {{ out[gid.x] = {value}; }}
}}
"""


# -- duplicate kernel sections ------------------------------------------------------------------


def test_a_repeated_section_name_is_listed_with_its_reason_and_the_first_stays_usable(
    make_corpus, on_corpus, capsys
):
    text = (
        "// --- KERNEL: twice ---\n"
        + _fill("twice", "1u")
        + "// --- KERNEL: other ---\n"
        + _fill("other", "2u")
        + "// --- KERNEL: twice ---\n"
        + _fill("twice", "3u")
    )
    root = make_corpus({"k.wgsl": text})
    sess = on_corpus(root)
    names = [(k.name, k.line, k.problem) for k in sess.corpus.kernels]
    assert names == [
        ("twice", 1, ""),
        ("other", 7, ""),
        ("twice", 13, "duplicate kernel section 'twice' (first at line 1)"),
    ]
    first, _, dup = sess.corpus.kernels
    assert sess.kernel("twice") is first and sess.kernel("k.wgsl:twice") is first
    assert sess.status(dup).text == "error: duplicate kernel section 'twice' (first at line 1)"
    with pytest.raises(UserError, match="duplicate kernel section 'twice'"):
        sess.case(dup)
    np.testing.assert_array_equal(sess.run("twice", dims={"n": 70}).outputs["out"], np.ones(70))

    # A kernel of the same name in another file still needs FILE:NAME.
    root2 = make_corpus(
        {"k.wgsl": text, "j.wgsl": "// --- KERNEL: twice ---\n" + _fill("twice", "4u")}
    )
    corpus = load_corpus(root2)
    with pytest.raises(UserError, match="more than once"):
        corpus.find("twice")
    assert corpus.find("k.wgsl:twice").line == 1 and corpus.find("j.wgsl:twice").line == 1

    assert main(["list", str(root), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["kernels"]
    assert [(r["name"], r["line"], r["status"]) for r in rows] == [
        ("twice", 1, "ok"),
        ("other", 7, "ok"),
        ("twice", 13, "error: duplicate kernel section 'twice' (first at line 1)"),
    ]


# -- diagnostic and requires directives ---------------------------------------------------------

DIRECTIVES = """\
diagnostic(off, derivative_uniformity);
requires pointer_composite_access;   // a language extension naga has
/* diagnostic(error, derivative_uniformity); in a comment: not hoisted */
fn local_two() -> u32 { return 2u; }
// --- KERNEL: good ---
diagnostic(off, derivative_uniformity);
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(64)
fn good(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x < arrayLength(&out)) { out[gid.x] = plus_one(gid.x) * local_two(); }
}
// --- KERNEL: bad ---
  diagnostic(off, chromium.unreachable_code);
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(64)
fn bad(@builtin(global_invocation_id) gid: vec3<u32>) {
    out[gid.x] = plus_one(gid.x) + missing;
}
// --- KERNEL: clash ---
diagnostic(warning, derivative_uniformity);
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(64)
fn clash(@builtin(global_invocation_id) gid: vec3<u32>) { out[gid.x] = 1u; }
"""


def test_diagnostic_and_requires_behind_a_preamble_are_hoisted_and_compile(make_corpus, on_corpus):
    root = make_corpus({"wgslconfig.toml": PRE_CONFIG, "pre.wgsl": PRE, "k.wgsl": DIRECTIVES})
    sess = on_corpus(root)
    good = sess.kernel("good")
    text, smap = good.assemble(sess.adapter.features)
    lines = text.splitlines()
    # At the top, once each (the section repeats the local preamble's diagnostic), as written.
    assert lines[:2] == [
        "diagnostic(off, derivative_uniformity);",
        "requires pointer_composite_access;   // a language extension naga has",
    ]
    assert (
        sum("diagnostic(" in ln and not ln.lstrip().startswith(("/*", "//")) for ln in lines) == 1
    )
    assert smap.locate(1) == ("k.wgsl", 1) and smap.locate(2) == ("k.wgsl", 2)
    # Their own lines are blanked, so every other line keeps its place.
    assert smap.locate(module_line_of(text, "fn good")) == ("k.wgsl", 9)
    assert smap.locate(module_line_of(text, "fn plus_one")) == ("pre.wgsl", 2)
    assert smap.locate(module_line_of(text, "fn local_two")) == ("k.wgsl", 4)
    assert "/* diagnostic(error" in text
    assert good.text.count("\n") == text.count("\n") - 2

    assert sess.status(good).text == "ok"
    run = sess.run("good", dims={"n": 100})
    np.testing.assert_array_equal(run.outputs["out"], (np.arange(100) + 1) * 2)


def test_a_compile_error_after_hoisted_directives_names_the_right_line(make_corpus, on_corpus):
    root = make_corpus({"wgslconfig.toml": PRE_CONFIG, "pre.wgsl": PRE, "k.wgsl": DIRECTIVES})
    sess = on_corpus(root)
    text, _ = sess.kernel("bad").assemble(sess.adapter.features)
    # The indented directive is hoisted as written, so columns in it stay right too.
    assert text.splitlines()[2] == "  diagnostic(off, chromium.unreachable_code);"
    with pytest.raises(CompileError) as err:
        sess.run("bad", dims={"n": 4})
    msg = str(err.value)
    assert msg.startswith("k.wgsl:17:"), msg
    col, src = _caret_column(msg)
    assert src.startswith("missing")
    assert col == DIRECTIVES.splitlines()[16].index("missing") + 1

    # A directive that conflicts with one hoisted from the local preamble: naga names the first of
    # the two, which the source map takes back to the user's file, not to a host line.
    with pytest.raises(CompileError) as err:
        sess.run("clash", dims={"n": 4})
    msg = str(err.value)
    assert msg.startswith("k.wgsl:1:1: found conflicting 'diagnostic(…)' rule(s)"), msg
    assert msg.splitlines()[1] == "1 | diagnostic(off, derivative_uniformity);"


def test_directives_in_a_preamble_are_hoisted_for_every_file_it_reaches(make_corpus, on_corpus):
    root = make_corpus(
        {
            "wgslconfig.toml": PRE_CONFIG,
            "pre.wgsl": "diagnostic(off, derivative_uniformity);\n" + PRE,
            "a.wgsl": "diagnostic(off, derivative_uniformity);\n" + _fill("a", "plus_one(5u)"),
        }
    )
    sess = on_corpus(root)
    text, smap = sess.kernel("a").assemble(sess.adapter.features)
    assert text.count("diagnostic(off, derivative_uniformity);") == 1
    assert text.startswith("diagnostic(off, derivative_uniformity);\n")
    assert smap.locate(1) == ("pre.wgsl", 1)
    run = sess.run("a", dims={"n": 10})
    np.testing.assert_array_equal(run.outputs["out"], np.full(10, 6))


def test_a_reflection_problem_after_hoisted_directives_keeps_its_line(make_corpus, on_corpus):
    root = make_corpus(
        {
            "wgslconfig.toml": PRE_CONFIG,
            "pre.wgsl": "diagnostic(off, derivative_uniformity);\n" + PRE,
            "r.wgsl": "requires pointer_composite_access;\n\n@group(0) var<storage> x: array<u32>;\n",
        }
    )
    (k,) = on_corpus(root).corpus.kernels
    assert k.problem.startswith("r.wgsl:3: "), k.problem


# -- a preamble file's own kernels --------------------------------------------------------------


def test_a_preamble_files_own_entry_points_are_its_kernels(make_corpus, on_corpus):
    root = make_corpus(
        {
            "wgslconfig.toml": '[preamble]\nfiles = ["base.wgsl", "more.wgsl"]\n',
            # Helpers only: listed as no kernel at all.
            "base.wgsl": "const K: u32 = 3u;\nfn times_k(x: u32) -> u32 { return x * K; }\n",
            # Builds on base.wgsl (K, times_k) and has a kernel of its own.
            "more.wgsl": """
            fn plus_k(x: u32) -> u32 { return x + K; }
            @group(0) @binding(0) var<storage, read_write> more_out: array<u32>;
            @compute @workgroup_size(64)
            fn more_fill(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&more_out)) { more_out[gid.x] = plus_k(times_k(gid.x)); }
            }
            """,
            "user.wgsl": "// --- KERNEL: user ---\n" + _fill("user", "plus_k(gid.x)"),
        }
    )
    sess = on_corpus(root)
    kernels = {k.name: k for k in sess.corpus.kernels}
    assert set(kernels) == {"more_fill", "user"}
    more = kernels["more_fill"]
    assert (more.file, more.line, more.problem) == ("more.wgsl", 4, "")
    assert [p.file for p in more.pieces] == ["base.wgsl", "more.wgsl"]
    assert [b.name for b in more.entry_point.bindings] == ["more_out"]
    assert [p.file for p in kernels["user"].pieces] == ["base.wgsl", "more.wgsl", "user.wgsl"]

    ids = np.arange(130, dtype=np.uint32)
    run = sess.run("more_fill", dims={"n": 130})
    np.testing.assert_array_equal(run.outputs["more_out"], ids * 3 + 3)
    run = sess.run("user", dims={"n": 130})
    np.testing.assert_array_equal(run.outputs["out"], ids + 3)

    # A compile error in the preamble's kernel names the preamble's own line.
    (root / "more.wgsl").write_text(
        (root / "more.wgsl").read_text().replace("plus_k(times_k(gid.x))", "nope(gid.x)")
    )
    sess = on_corpus(root)
    status = sess.status(sess.kernel("more_fill")).text
    assert status.startswith("compile error: more.wgsl:5:"), status


def test_loading_one_file_does_not_list_its_preambles_kernels(make_corpus):
    root = make_corpus(
        {
            "wgslconfig.toml": PRE_CONFIG,
            "pre.wgsl": PRE + _fill("pre_fill", "plus_one(0u)").replace("out", "pre_out"),
            "user.wgsl": _fill("user", "plus_one(gid.x)"),
        }
    )
    assert sorted(k.name for k in load_corpus(root).kernels) == ["pre_fill", "user"]
    assert [k.name for k in load_corpus(root / "user.wgsl").kernels] == ["user"]
