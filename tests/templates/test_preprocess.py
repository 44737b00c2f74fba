"""The template preprocessor (workbench.wgsl.preprocess): each directive, macro substitution,
#if expressions, includes, the line map back to the template, and one-line errors naming file:line.
Expected outputs are written out by hand."""

from __future__ import annotations

import pytest

from workbench.errors import CorpusError
from workbench.wgsl.preprocess import TemplateError, define_value, directive_line, expand


def run(files: dict[str, str], defines: dict[str, object] | None = None, top: str = "t.wgsl"):
    def read(rel: str) -> str:
        if rel not in files:
            raise CorpusError(f"{rel} does not exist")
        return files[rel]

    given = {
        k: v for k, v in ((k, define_value(v)) for k, v in (defines or {}).items()) if v is not None
    }
    return expand(top, given, read)


def lines(files: dict[str, str], defines: dict[str, object] | None = None) -> list[str]:
    return run(files, defines).text.splitlines()


T = """\
#ifdef TYPE_F16
enable f16;
#define TYPE f16
#else
#define TYPE f32
#endif
var<storage, read_write> src: array<TYPE>;  // TYPE stays in comments
#ifndef INPLACE
var<storage, read_write> dst: array<TYPE>;
#endif
"""


def test_ifdef_else_and_substitution() -> None:
    assert lines({"t.wgsl": T}) == [
        "var<storage, read_write> src: array<f32>;  // TYPE stays in comments",
        "var<storage, read_write> dst: array<f32>;",
    ]
    assert lines({"t.wgsl": T}, {"TYPE_F16": True, "INPLACE": True}) == [
        "enable f16;",
        "var<storage, read_write> src: array<f16>;  // TYPE stays in comments",
    ]
    # false means "not defined", as a description's defines = { INPLACE = false } says.
    assert len(lines({"t.wgsl": T}, {"INPLACE": False})) == 2


def test_whole_identifiers_only_and_nested_values() -> None:
    src = "#define N 4\n#define M (N * 2)\nlet a = M + NN + N_1 + N;\n"
    assert lines({"t.wgsl": src}) == ["let a = (4 * 2) + NN + N_1 + 4;"]
    assert lines({"t.wgsl": "#define X 1\n#undef X\nlet x = X;\n"}) == ["let x = X;"]


@pytest.mark.parametrize(
    ("cond", "kept"),
    [
        ("defined(A) && !defined(B)", True),
        ("defined A || defined B", True),
        ("WG > 64 && WG % 64 == 0", True),
        ("(WG >> 6) == 2", True),
        ("WG == 0x80", True),
        ("UNDEFINED_NAME", False),
        ("WG ? 0 : 1", False),
        ("A", False),  # defined with no value: 0, as the host code reads it
        ("-1 < 0 && ~0 == -1 && 7 / 2 == 3 && -7 / 2 == -3", True),
        ("B", False),
    ],
)
def test_if_expressions(cond: str, kept: bool) -> None:
    src = f"#if {cond}\nyes\n#endif\n"
    assert lines({"t.wgsl": src}, {"A": True, "WG": 128}) == (["yes"] if kept else [])


def test_the_variants_defines_win_over_the_templates_defaults() -> None:
    src = "#define WG 64\n#undef TYPE_F16\nlet a = WG;\n#ifdef TYPE_F16\nf16\n#endif\n"
    assert lines({"t.wgsl": src}) == ["let a = 64;"]
    assert lines({"t.wgsl": src}, {"WG": 256, "TYPE_F16": True}) == ["let a = 256;", "f16"]


def test_backslash_continues_a_line() -> None:
    src = "#if defined(A) || \\\n    defined(B)\nyes\n#endif\nlast\n"
    out = run({"t.wgsl": src}, {"B": True})
    assert out.text.splitlines() == ["yes", "last"] and out.lines == (("t.wgsl", 3), ("t.wgsl", 5))


def test_elif_chain_takes_the_first_true_branch_only() -> None:
    src = "#ifdef OP_ADD\nadd\n#elif defined(OP_MUL)\nmul\n#elif 1\none\n#else\nelse\n#endif\n"
    assert lines({"t.wgsl": src}, {"OP_MUL": True}) == ["mul"]
    assert lines({"t.wgsl": src}, {"OP_ADD": True, "OP_MUL": True}) == ["add"]
    assert lines({"t.wgsl": src}) == ["one"]
    nested = "#ifdef A\n#ifdef B\nab\n#else\na\n#endif\n#else\n#if 1\nnot a\n#endif\n#endif\n"
    assert lines({"t.wgsl": nested}, {"A": True}) == ["a"]
    assert lines({"t.wgsl": nested}) == ["not a"]


def test_include_and_line_map() -> None:
    files = {
        "t.wgsl": '#include "lib/decls.tmpl"\n#ifdef X\nskipped\n#endif\nbody\n',
        "lib/decls.tmpl": '// decls\n#include "more.tmpl"\ndecl\n',
        "lib/more.tmpl": "more\n",
    }
    out = run(files)
    assert out.text.splitlines() == ["// decls", "more", "decl", "body"]
    assert out.lines == (
        ("lib/decls.tmpl", 1),
        ("lib/more.tmpl", 1),
        ("lib/decls.tmpl", 3),
        ("t.wgsl", 5),
    )
    assert out.runs() == [
        ("lib/decls.tmpl", 1, 1, 1),
        ("lib/more.tmpl", 1, 1, 2),
        ("lib/decls.tmpl", 3, 1, 3),
        ("t.wgsl", 5, 1, 4),
    ]


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ({"t.wgsl": "#ifdef A\nx\n"}, "t.wgsl:1: #ifdef without #endif"),
        ({"t.wgsl": "#endif\n"}, "t.wgsl:1: #endif without #if"),
        ({"t.wgsl": "x\n#else\n"}, "t.wgsl:2: #else without #if"),
        ({"t.wgsl": "#if 1 +\n#endif\n"}, "t.wgsl:1: #if 1 +: ends too early"),
        ({"t.wgsl": "#if 1 / 0\n#endif\n"}, "division by zero"),
        ({"t.wgsl": "#if 1 $ 2\n#endif\n"}, "unexpected '$'"),
        ({"t.wgsl": "#define\n"}, "t.wgsl:1: #define needs a name"),
        ({"t.wgsl": "#define F(x) x\n"}, "function-like macros are not supported"),
        (
            {"t.wgsl": "#define A B\n#define B A\nlet x = A;\n"},
            "t.wgsl:3: macro A expands to itself",
        ),
        ({"t.wgsl": "#include <x.tmpl>\n"}, "t.wgsl:1: #include needs a quoted file name"),
        (
            {"t.wgsl": '#include "gone.tmpl"\n'},
            "t.wgsl:1: #include 'gone.tmpl': gone.tmpl does not",
        ),
        ({"t.wgsl": '#include "t.wgsl"\n'}, "#include cycle: t.wgsl -> t.wgsl"),
        (
            {"t.wgsl": '#include "a.tmpl"\n#endif\n', "a.tmpl": "#ifdef X\n"},
            "a.tmpl:1: #ifdef without #endif in the same file",
        ),
    ],
)
def test_errors_name_file_and_line(files: dict[str, str], message: str) -> None:
    with pytest.raises(TemplateError) as err:
        run(files)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_directive_line_finds_templates_and_ignores_plain_wgsl() -> None:
    assert directive_line(T) == 1
    assert directive_line("fn f() {}\n  #ifdef X\n") == 2
    assert directive_line("let a = 1; // #define in a comment is not at line start\n") == 0


def test_expansion_is_linear_in_the_input() -> None:
    # Many uses of a chain of macros: each use expands the chain once.
    chain = "".join(f"#define M{i} (M{i - 1} + 1)\n" for i in range(1, 60))
    body = "let x = M59;\n" * 3000
    out = run({"t.wgsl": "#define M0 0\n" + chain + body})
    assert len(out.lines) == 3000 and out.text.count("+ 1)") == 3000 * 59
