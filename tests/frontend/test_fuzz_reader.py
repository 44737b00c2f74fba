"""Fuzzing the WGSL front end with hypothesis: random token soups, mutated shipped kernels and
deep nesting of every kind. Whatever the input, parsing, checking, reflecting and printing raise
nothing but the tool's own one-line `ReflectionError` (never RecursionError, IndexError, ...), and
what parses prints back to text that parses to the same print. A few hundred examples run with the
suite; `pytest -m fuzz` runs many more, each input under a deadline."""

from __future__ import annotations

from datetime import timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workbench.errors import ReflectionError
from workbench.wgsl.checker import check
from workbench.wgsl.corpus import SHIPPED
from workbench.wgsl.parser import parse
from workbench.wgsl.printer import print_module
from workbench.wgsl.reflect import reflect_tree

SHIPPED_TEXTS = [p.read_text(encoding="utf-8") for p in sorted(SHIPPED.glob("*.wgsl"))]
TOKENS = [
    "fn", "main", "(", ")", "{", "}", "[", "]", "<", ">", ">>", ">=", "<<", "<=", "=", "==", "!=",
    ";", ":", ",", ".", "@", "->", "+", "-", "*", "/", "%", "&", "&&", "|", "||", "^", "!", "~",
    "++", "--", "+=", "<<=", ">>=", "_", "let", "var", "const", "override", "struct", "alias",
    "if", "else", "switch", "case", "default", "loop", "continuing", "break", "continue", "for",
    "while", "return", "discard", "const_assert", "enable", "requires", "diagnostic", "true",
    "false", "compute", "workgroup_size", "group", "binding", "builtin", "id", "align", "size",
    "storage", "uniform", "workgroup", "private", "function", "read", "read_write", "array",
    "vec2", "vec3", "vec4", "vec4f", "mat2x2", "mat3x3f", "ptr", "atomic", "f32", "f16", "u32",
    "i32", "bool", "bitcast", "select", "min", "max", "clamp", "abs", "dot", "atomicLoad",
    "arrayLength", "subgroupAdd", "x", "y", "xyzw", "S", "N", "0", "1", "2u", "3i", "1.5",
    "1.5h", "2f", "0x1F", "0x1p4", "1e3", ".5", "4294967295", "99999999999999999999", "\n",
    "\r\n", "\r", "\t", " ", "/*", "*/", "//", "é", "\ufeff", "$",
]  # fmt: skip
NORMAL = settings(
    max_examples=120, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)
LONG = settings(
    max_examples=3000,
    deadline=timedelta(seconds=5),
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)

soups = st.lists(st.sampled_from(TOKENS), max_size=200).map(" ".join) | st.lists(
    st.sampled_from(TOKENS), max_size=200
).map("".join)


@st.composite
def mutated(draw: st.DrawFn) -> str:
    text = draw(st.sampled_from(SHIPPED_TEXTS))
    for _ in range(draw(st.integers(1, 6))):
        at = draw(st.integers(0, len(text)))
        kind = draw(st.sampled_from(["insert", "delete", "cut", "repeat"]))
        if kind == "insert":
            text = text[:at] + draw(st.sampled_from(TOKENS)) + text[at:]
        elif kind == "delete":
            text = text[:at] + text[at + draw(st.integers(1, 40)) :]
        elif kind == "cut":
            text = text[:at]
        else:
            piece = text[at : at + draw(st.integers(1, 30))]
            text = text[:at] + piece * draw(st.integers(2, 50)) + text[at:]
    return text


@st.composite
def deep(draw: st.DrawFn) -> str:
    n = draw(st.integers(1, 12_000))
    kind = draw(st.sampled_from(["paren", "block", "elseif", "swizzle", "ops", "array", "unary"]))
    body = {
        "paren": "let a = " + "(" * n + "1" + ")" * n + ";",
        "block": "{" * n + "}" * n,
        "elseif": "if true {}" + " else if true {}" * n,
        "swizzle": "let v = vec4f(1.0); let w = v" + ".x" * n + ";",
        "ops": "let a = 1" + " + 1" * n + ";",
        "array": "var a: " + "array<" * n + "f32" + ", 1>" * n + ";",
        "unary": "let a = " + "-" * n + "1;",
    }[kind]
    return "@compute @workgroup_size(1) fn main() {" + body + "}"


def read(text: str) -> None:
    """Everything the front end does with a module; only one-line ReflectionErrors may escape."""
    try:
        tree = parse(text, "fuzz.wgsl")
        check(tree, "fuzz.wgsl")
        info = reflect_tree(tree, "fuzz.wgsl")
    except ReflectionError as exc:
        assert "\n" not in str(exc)
        return
    for b in info.bindings.values():
        _ = (b.fixed_size, b.element_stride, b.signature)
    printed = print_module(tree)
    assert print_module(parse(printed, "printed.wgsl")) == printed


@NORMAL
@given(text=soups)
def test_token_soups(text):
    read(text)


@NORMAL
@given(text=mutated())
def test_mutated_shipped_kernels(text):
    read(text)


@NORMAL
@given(text=deep())
def test_deep_nesting_of_every_kind(text):
    read(text)


@pytest.mark.fuzz
def test_long_fuzz(request: pytest.FixtureRequest) -> None:
    """All three kinds of input together: a few examples in the suite, many under -m fuzz, each
    input then under a deadline."""
    long = "fuzz" in (request.config.getoption("markexpr") or "")

    @(LONG if long else NORMAL)
    @given(text=soups | mutated() | deep())
    def read_one(text: str) -> None:
        read(text)

    read_one()
