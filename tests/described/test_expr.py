"""The size-expression evaluator: arithmetic, functions, names, and what it refuses."""

from __future__ import annotations

import pytest

from workbench.specs.expr import ExprError, parse

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
