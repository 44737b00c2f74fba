"""Templated corpora end to end on the real adapter: variants declared in workbench.toml are
kernels named by the variant (`VARIANT:ENTRY` for several entry points), described with `std:`
references they PASS, planted bugs FAIL, compile errors name the template's file:line, a template
without a variant says so, and a generator command runs into a cache when its inputs change."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from workbench.errors import CorpusError
from workbench.wgsl.corpus import load_corpus

from .templated import SUMS, TOML, UNARY, templated_corpus

FAST = "compare,evidence"


def test_variants_are_kernels_named_by_the_variant(tmp_path: Path) -> None:
    corpus = load_corpus(templated_corpus(tmp_path))
    names = {k.name: k.file for k in corpus.kernels}
    assert names == {
        "silu_f32": "unary.wgsl",
        "relu_f16": "unary.wgsl",
        "scale_f32": "unary.wgsl",
        "cumsum:main": "sums.wgsl",
        "cumsum:zero": "sums.wgsl",
    }
    assert not corpus.problems
    assert corpus.find("cumsum:main").entry == "main"
    # Lines map back through the include and the conditionals to the templates.
    k = corpus.find("relu_f16")
    files = {p.file for p in k.pieces}
    assert files == {"unary.wgsl", "common.tmpl"}
    # Live reload watches what the variants include, besides the .wgsl files.
    assert corpus.root / "common.tmpl" in corpus.watched


@pytest.mark.parametrize("kernel", ["silu_f32", "relu_f16", "scale_f32", "cumsum:main"])
def test_described_variants_pass(tmp_path: Path, cli, kernel: str) -> None:
    res = cli("check", kernel, "--corpus", str(templated_corpus(tmp_path)), "--what", FAST)
    assert res.rc == 0 and "verdict: PASS" in res.out, res.out + res.err


@pytest.mark.parametrize(
    ("kernel", "bug", "where"),
    [
        ("silu_f32", ("x / (1.0 + exp(-x))", "x / (1.0 + exp(x))"), UNARY),
        ("relu_f16", ("max(x, 0.0)", "max(x, 0.01)"), UNARY),
        ("scale_f32", ("x * params.alpha", "x * 1.5"), UNARY),
        (
            "cumsum:main",
            ("dst[r * params.y + c] = s;", "dst[r * params.y + c] = s - src[r];"),
            SUMS,
        ),
    ],
)
def test_planted_bugs_fail(tmp_path: Path, cli, kernel, bug, where) -> None:
    assert bug[0] in where
    root = (
        templated_corpus(tmp_path, unary=UNARY.replace(*bug))
        if where is UNARY
        else templated_corpus(tmp_path, sums=SUMS.replace(*bug))
    )
    res = cli("check", kernel, "--corpus", str(root), "--what", FAST)
    assert res.rc == 1 and "verdict: FAIL" in res.out, res.out + res.err


def test_check_all_covers_every_variant(tmp_path: Path, cli) -> None:
    res = cli("check", "--all", "--corpus", str(templated_corpus(tmp_path)), "--what", FAST)
    for name in ("silu_f32", "relu_f16", "scale_f32", "cumsum:main", "cumsum:zero"):
        assert name in res.out
    assert "4 pass" in res.out


def test_compile_error_names_the_template_line(tmp_path: Path, cli) -> None:
    bad = UNARY.replace("return max(x, 0.0);", "return max(x, 0.0) +;")
    line = bad.splitlines().index("    return max(x, 0.0) +;") + 1
    res = cli("run", "relu_f16", "--corpus", str(templated_corpus(tmp_path, unary=bad)))
    assert res.rc != 0 and f"unary.wgsl:{line}:" in res.err, res.err
    # The other variants of the template never see that branch and still run.
    ok = cli("run", "silu_f32", "--corpus", str(templated_corpus(tmp_path / "b", unary=bad)))
    assert ok.rc == 0, ok.err


def test_template_without_variant_says_it_needs_one(tmp_path: Path, cli) -> None:
    root = templated_corpus(tmp_path, toml="")
    res = cli("list", "--corpus", str(root))
    assert "unexpected character" not in res.out + res.err
    assert "unary.wgsl:1: a template (preprocessor directives): it needs a variant" in res.out


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ('[variants.v]\nfile = "gone.wgsl"\n', "gone.wgsl"),
        ('[variants.v]\nfile = "unary.wgsl"\ndefines = { X = [1] }\n', "variants.v.defines.X"),
        ('[variants.v]\nfiles = "unary.wgsl"\n', "variants.v.files: unknown key"),
        ('[variants."a b"]\nfile = "unary.wgsl"\n', "a variant name is a plain name"),
        ('[generate]\ncommand = "true"\n', "generate.command: a command writing into {out}"),
    ],
)
def test_variant_mistakes(tmp_path: Path, toml: str, message: str) -> None:
    root = templated_corpus(tmp_path, toml=toml)
    try:
        corpus = load_corpus(root)
    except CorpusError as exc:
        assert message in str(exc)
        return
    assert any(message in p for p in corpus.problems.values()), corpus.problems


def test_a_variant_with_a_bad_define_is_a_problem_of_that_variant(tmp_path: Path) -> None:
    toml = TOML + '[variants.broken]\nfile = "unary.wgsl"\ndefines = { WG_SIZE = "WG_SIZE" }\n'
    corpus = load_corpus(templated_corpus(tmp_path, toml=toml))
    assert "macro WG_SIZE expands to itself" in corpus.problems["broken"]
    assert corpus.find("silu_f32").entry == "main"


GEN = """\
import pathlib, sys
out = pathlib.Path(sys.argv[1])
runs = pathlib.Path("runs.txt")
runs.write_text(runs.read_text() + "x" if runs.exists() else "x")
n = pathlib.Path("size.tmpl").read_text().strip()
if n == "fail":
    print("making the shaders")
    sys.exit("size.tmpl says fail")
(out / "fill.wgsl").write_text(
    "@group(0) @binding(0) var<storage, read_write> y: array<f32>;\\n"
    f"@compute @workgroup_size({n})\\nfn fill(@builtin(global_invocation_id) g: vec3<u32>) "
    "{ y[g.x] = 1.0; }\\n"
)
"""


def test_generator_runs_when_inputs_change_and_fails_in_one_line(tmp_path: Path) -> None:
    root = tmp_path / "gen"
    root.mkdir()
    (root / "gen.py").write_text(GEN)
    (root / "size.tmpl").write_text("32\n")
    (root / "workbench.toml").write_text(
        f'[generate]\ncommand = "{sys.executable} gen.py {{out}}"\ninputs = ["*.tmpl", "gen.py"]\n'
    )
    corpus = load_corpus(root)
    assert {root / "size.tmpl", root / "gen.py"} <= set(corpus.watched)
    (fill,) = corpus.kernels
    assert fill.name == "fill" and fill.entry_point.workgroup_size == (32, 1, 1)
    load_corpus(root)
    assert (root / "runs.txt").read_text() == "x"  # inputs unchanged: not run again
    (root / "size.tmpl").write_text("64\n")
    (fill,) = load_corpus(root).kernels
    assert fill.entry_point.workgroup_size == (64, 1, 1)
    assert (root / "runs.txt").read_text() == "xx"
    (root / "size.tmpl").write_text("fail\n")
    with pytest.raises(CorpusError) as err:
        load_corpus(root)
    msg = str(err.value)
    assert "exited with 1" in msg and "making the shaders" in msg and "size.tmpl says fail" in msg
    assert "\n" not in msg
