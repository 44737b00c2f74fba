"""The one language of size expressions: kernel descriptions (`workbench.toml`) and pipeline files.

An expression is integers, names (a kernel's dims), `+ - * / // %`, unary minus, parentheses and
the functions `ceil`, `cdiv`, `min`, `max`, e.g. `ceil(N / 16)`, `cdiv(N, 16)` or
`min(K, 64) * 4`. It is parsed into a tree once and evaluated for given dims; it never reaches
Python's `eval`. `/` is true division (so `ceil(N / 16)` rounds up), `//` and `%` are floor
division and remainder, `cdiv(a, b)` is division rounded up. A shape or grid must come out as an
integer: callers ask for one with `Expr.integer` (or `evaluate`). Every refusal is one
`ExprError` line quoting the expression and saying what in it is wrong.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

Number = int | float
# A parsed node: (kind, operands...), e.g. ("num", 3), ("+", left, right), ("call", "min", a, b).
Node = tuple[Any, ...]

# A name may be dotted (`params.eps`, `dims.x`): a uniform's field or lane where callers allow it.
_TOKEN = re.compile(r"\s*(?:(\d+)|([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*)|(//|[-+*/%(),]))")
# Deep nesting and huge literals are refused rather than evaluated.
MAX_LENGTH = 400
MAX_VALUE = 1 << 62


class ExprError(ValueError):
    """An expression that cannot be parsed or evaluated; the message says why."""


def _cdiv(a: Number, b: Number) -> Number:
    if b == 0:
        raise ExprError("cdiv takes two numbers, the second not 0")
    return -(-a // b)


# name -> (number of arguments, -1 for two or more; the function).
_FUNCTIONS: dict[str, tuple[int, Callable[..., Number]]] = {
    "ceil": (1, lambda x: math.ceil(x)),
    "cdiv": (2, _cdiv),
    "min": (-1, min),
    "max": (-1, max),
}
_FUNCTION_NAMES = ", ".join(_FUNCTIONS)


@dataclass(frozen=True)
class Expr:
    """A parsed expression: its text, the names it mentions, and its tree."""

    text: str
    names: frozenset[str]
    _tree: Node

    def value(self, env: Mapping[str, Number]) -> Number:
        """The value with names taken from `env`; an ExprError quotes this expression."""
        try:
            return _eval(self._tree, env)
        except ExprError as exc:
            raise ExprError(f"{self.text!r}: {exc}") from None

    def integer(self, env: Mapping[str, Number]) -> int:
        """The value, which must be a whole number (a shape, a grid, a u32)."""
        v = self.value(env)
        if isinstance(v, float):
            if not v.is_integer():
                raise ExprError(f"{self.text!r} gives {v:g}, not an integer")
            v = int(v)
        return v


def parse(text: str | int, known: frozenset[str] | set[str] | None = None) -> Expr:
    """Parse `text` (or take an integer as it is); with `known`, any other name is an error."""
    if isinstance(text, bool) or not isinstance(text, (str, int)):
        raise ExprError(f"expected an integer or an expression in quotes, got {text!r}")
    if isinstance(text, int):
        return Expr(str(text), frozenset(), ("num", text))
    if len(text) > MAX_LENGTH:
        raise ExprError(f"expression longer than {MAX_LENGTH} characters")
    tokens = _tokenize(text)
    parser = _Parser(tokens, text)
    tree = parser.expression()
    if parser.i != len(tokens):
        raise ExprError(f"{text!r}: unexpected {tokens[parser.i]!r}")
    names = frozenset(parser.names)
    if known is not None:
        unknown = sorted(names - set(known))
        if unknown:
            have = ", ".join(sorted(known)) or "none"
            raise ExprError(f"{text!r}: unknown name {', '.join(unknown)} (dims: {have})")
    return Expr(text, names, tree)


def evaluate(value: int | float | str, env: Mapping[str, Number]) -> int:
    """A whole number as it is (a TOML float such as 4.0 too), or an expression evaluated with
    `env` that must come out whole."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, float):
        raise ExprError(f"{value!r} is not a whole number or an expression of dims")
    return parse(value).integer(env)


def _tokenize(text: str) -> list[str]:
    tokens, pos = [], 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        m = _TOKEN.match(text, pos)
        if m is None:
            bad = text[pos:].strip()[:1]
            raise ExprError(
                f"{text!r}: unexpected {bad!r} (integers, dim names, + - * / // %, "
                f"{_FUNCTION_NAMES} and parentheses only)"
            )
        tokens.append(m.group(m.lastindex or 0))
        pos = m.end()
    if not tokens:
        raise ExprError("empty expression")
    return tokens


class _Parser:
    """Recursive descent: sum := term (('+'|'-') term)*, term := unary (('*'|'/'|'//'|'%') unary)*."""

    def __init__(self, tokens: list[str], text: str) -> None:
        self.t = tokens
        self.text = text
        self.i = 0
        self.depth = 0
        self.names: set[str] = set()

    def _peek(self) -> str | None:
        return self.t[self.i] if self.i < len(self.t) else None

    def _take(self, want: str) -> None:
        if self._peek() != want:
            found = self._peek() or "the end"
            raise ExprError(f"{self.text!r}: expected {want!r}, found {found!r}")
        self.i += 1

    def expression(self) -> Node:
        self.depth += 1
        if self.depth > 50:
            raise ExprError(f"{self.text!r}: nested too deeply")
        left = self._term()
        while self._peek() in ("+", "-"):
            op = self.t[self.i]
            self.i += 1
            left = (op, left, self._term())
        self.depth -= 1
        return left

    def _term(self) -> Node:
        left = self._unary()
        while self._peek() in ("*", "/", "//", "%"):
            op = self.t[self.i]
            self.i += 1
            left = (op, left, self._unary())
        return left

    def _unary(self) -> Node:
        if self._peek() == "-":
            self.i += 1
            return ("neg", self._unary())
        if self._peek() == "+":
            self.i += 1
            return self._unary()
        return self._atom()

    def _atom(self) -> Node:
        tok = self._peek()
        if tok is None:
            raise ExprError(f"{self.text!r}: ends too early")
        self.i += 1
        if tok == "(":
            inner = self.expression()
            self._take(")")
            return inner
        if tok.isdigit():
            value = int(tok)
            if value > MAX_VALUE:
                raise ExprError(f"{self.text!r}: {tok} is too large")
            return ("num", value)
        if tok[0].isalpha() or tok[0] == "_":
            if self._peek() == "(":
                return self._call(tok)
            if tok in _FUNCTIONS:
                raise ExprError(f"{self.text!r}: {tok} needs its arguments in parentheses")
            self.names.add(tok)
            return ("name", tok)
        raise ExprError(f"{self.text!r}: unexpected {tok!r}")

    def _call(self, name: str) -> Node:
        if name not in _FUNCTIONS:
            raise ExprError(f"{self.text!r}: unknown function {name} ({_FUNCTION_NAMES})")
        self._take("(")
        args = [self.expression()]
        while self._peek() == ",":
            self.i += 1
            args.append(self.expression())
        self._take(")")
        arity = _FUNCTIONS[name][0]
        if (arity > 0 and len(args) != arity) or (arity < 0 and len(args) < 2):
            want = {1: "one argument", 2: "two arguments"}.get(arity, "two or more arguments")
            raise ExprError(f"{self.text!r}: {name} takes {want}")
        return ("call", name, *args)


def _eval(node: Node, env: Mapping[str, Number]) -> Number:
    kind = node[0]
    if kind == "num":
        value: Number = node[1]
        return value
    if kind == "name":
        if node[1] not in env:
            raise ExprError(f"unknown name {node[1]}")
        return env[node[1]]
    if kind == "neg":
        return -_eval(node[1], env)
    if kind == "call":
        fn = _FUNCTIONS[node[1]][1]
        return _checked(fn(*(_eval(a, env) for a in node[2:])))
    a, b = _eval(node[1], env), _eval(node[2], env)
    if kind in ("/", "//", "%") and b == 0:
        raise ExprError(f"division by zero ({_show(node[2])} is 0)")
    if kind == "+":
        return _checked(a + b)
    if kind == "-":
        return _checked(a - b)
    if kind == "*":
        return _checked(a * b)
    if kind == "/":
        q = a / b
        return int(q) if q.is_integer() and isinstance(a, int) and isinstance(b, int) else q
    if kind == "//":
        return _checked(a // b)
    return _checked(a % b)


def _checked(v: Number) -> Number:
    if abs(v) > MAX_VALUE:
        raise ExprError(f"value {v:g} is too large")
    return v


def _show(node: Node) -> str:
    return str(node[1]) if node[0] in ("num", "name") else "the divisor"
