"""The one size-expression language (descriptions and pipelines): arithmetic, functions, names,
and what it refuses, each refusal one line quoting the expression."""

from __future__ import annotations

import pytest

from workbench.specs.expr import ExprError, evaluate, parse

DIMS = {"M": 256, "N": 192, "K": 130}


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("ceil(N / 16)", 12),
        ("ceil(K / 16)", 9),
        ("K // 16", 8),
        ("K % 16", 2),
        ("-(M - N) * 2 + 1", -127),
        ("min(M, N, K)", 130),
        ("max(1, min(M, 64)) * 4", 256),
        ("((M))", 256),
        ("N / 4", 48),
        ("cdiv(N, 16)", 12),
        ("cdiv(K, 16)", 9),
        ("cdiv(-K, 16)", -8),
        (7, 7),
    ],
)
def test_values(text, value):
    assert parse(text, set(DIMS)).value(DIMS) == value


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("Q + 1", "unknown name Q"),
        ("__import__('os')", "unexpected"),
        ("M ** 2", "unexpected"),
        ("M +", "ends too early"),
        ("ceil(M, N)", "takes one argument"),
        ("max(M)", "two or more"),
        ("cdiv(M)", "cdiv takes two arguments"),
        ("cdiv", "cdiv needs its arguments in parentheses"),
        ("sqrt(M)", "unknown function"),
        ("M.real", "unknown name M.real"),  # a dotted name is a uniform path, never an attribute
        ("", "empty"),
        ("(M", "expected ')'"),
        (1.5, "expected an integer"),
        (True, "expected an integer"),
    ],
)
def test_refused(text, why):
    with pytest.raises(ExprError, match=why.replace("(", r"\(").replace(")", r"\)")):
        parse(text, set(DIMS))


def test_integer_and_division_by_zero():
    with pytest.raises(ExprError, match="not an integer"):
        parse("N / 5").integer(DIMS)
    with pytest.raises(ExprError, match="division by zero"):
        parse("M // (N - 192)").value(DIMS)
    assert parse("ceil(N / 5)").integer(DIMS) == 39


@pytest.mark.parametrize(
    ("value", "dims", "want"),
    [
        ("cdiv(seq * d_ff, 256)", {"seq": 64, "d_ff": 130}, 33),  # a pipeline's grid
        (
            "ceil(seq * d_ff / 256)",
            {"seq": 64, "d_ff": 130},
            33,
        ),  # the same, as descriptions write it
        ("seq // 2", {"seq": 7}, 3),
        (4.0, {}, 4),  # a TOML float that is whole
        (12, {}, 12),
    ],
)
def test_evaluate_takes_both_spellings(value, dims, want):
    got = evaluate(value, dims)
    assert got == want and isinstance(got, int)


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("seq2 * 4", "'seq2 * 4': unknown name seq2"),
        ("cdiv(seq, 0)", "'cdiv(seq, 0)': cdiv takes two numbers, the second not 0"),
        ("seq / 2", "'seq / 2' gives 3.5, not an integer"),
        ("seq // (seq - 7)", "'seq // (seq - 7)': division by zero"),
        ("seq\n+ 1 ²", "unexpected '²'"),
        (2.5, "2.5 is not a whole number"),
    ],
)
def test_evaluate_refuses_in_one_line_quoting_the_expression(value, why):
    with pytest.raises(ExprError) as info:
        evaluate(value, {"seq": 7})
    message = str(info.value)
    assert why in message and "\n" not in message
