"""WGSL tokenizer: turns source text into tokens, skipping comments (nested block comments too).

Only what reflection needs: identifiers, numbers, punctuation and attributes, each with its offset so
errors can name a line. Anything it cannot read raises `ReflectionError` with a line number; it never
raises anything else, whatever the input (a property the fuzz tests hold it to).

It also bounds nesting, because the native shader compiler (naga inside wgpu) parses and lowers
recursively and kills the whole process on deep enough source: measured on lavapipe with an 8 MiB
stack (scripts/nesting_limit.py), about 2,950 nested parentheses, 2,770 nested array types, 2,440
nested calls, 2,680 nested indexing, or one expression of about 14,520 operators. Every module is
tokenized before it is compiled, so a source over these bounds never reaches the compiler.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from workbench.errors import ReflectionError

# WGSL identifiers are Unicode (XID_Start XID_Continue*); `\w` is the close Python equivalent.
_IDENT = re.compile(r"[^\W\d]\w*")
# Hex floats and ints, decimal floats with exponents, then suffixes (u, i, f, h).
_NUMBER = re.compile(
    r"0[xX][0-9a-fA-F]*\.?[0-9a-fA-F]*(?:[pP][+-]?[0-9]+)?[fh]?[iu]?"
    r"|(?:[0-9]+\.[0-9]*|\.[0-9]+|[0-9]+)(?:[eE][+-]?[0-9]+)?[fhiu]?"
)
_PUNCT = (
    "<<=",
    ">>=",
    "->",
    "<=",
    ">=",
    "==",
    "!=",
    "&&",
    "||",
    "<<",
    ">>",
    "++",
    "--",
    "+=",
    "-=",
    "*=",
    "/=",
    "%=",
    "&=",
    "|=",
    "^=",
)
_SINGLE = set("(){}[]<>,;:.=+-*/%&|^!~@?")
# About a tenth of the measured crash points above: nesting of (), [], {} and type templates
# (array<...>, vec4<...>, ...), and operators in one statement. Both at once still stay under a
# third of the compiler's stack, so a smaller stack (a thread's, a lower ulimit) keeps a margin.
MAX_NESTING = 256
MAX_OPERATORS = 2048
_OPEN = {"(": ")", "[": "]", "{": "}"}
_TEMPLATED = re.compile(
    r"^(?:array|vec[234][fhiu]?|mat[234]x[234][fh]?|ptr|atomic|bitcast|binding_array|texture_\w+)$"
)
_OPERATORS = frozenset(
    [
        "+",
        "-",
        "*",
        "/",
        "%",
        "&",
        "|",
        "^",
        "!",
        "~",
        "<",
        ">",
        "<=",
        ">=",
        "==",
        "!=",
        "&&",
        "||",
        "<<",
        ">>",
    ]
)


class TooDeepError(ReflectionError):
    """Source nested deeper (or with longer expressions) than the shader compiler survives."""


@dataclass(frozen=True, slots=True)
class Token:
    kind: str  # "ident", "number", "punct"
    text: str
    offset: int


def line_of(text: str, offset: int) -> int:
    """1-based line number of a character offset."""
    return text.count("\n", 0, offset) + 1


def tokenize(text: str, where: str = "<wgsl>") -> list[Token]:
    """Tokens of `text`; `where` names the file in error messages."""
    tokens: list[Token] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in " \t\r\n\f\v" or c.isspace():
            i += 1
            continue
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j + 1
            continue
        if text.startswith("/*", i):
            i = _skip_block_comment(text, i, where)
            continue
        if c == '"':
            # WGSL has no string literals, but a stray quote must not derail the scan.
            j = text.find('"', i + 1)
            if j < 0:
                raise ReflectionError(f"{where}:{line_of(text, i)}: unterminated string literal")
            i = j + 1
            continue
        m = _IDENT.match(text, i)
        if m:
            tokens.append(Token("ident", m.group(), i))
            i = m.end()
            continue
        m = _NUMBER.match(text, i)
        if m and m.group():
            tokens.append(Token("number", m.group(), i))
            i = m.end()
            continue
        for p in _PUNCT:
            if text.startswith(p, i):
                tokens.append(Token("punct", p, i))
                i += len(p)
                break
        else:
            if c in _SINGLE:
                tokens.append(Token("punct", c, i))
                i += 1
            else:
                raise ReflectionError(
                    f"{where}:{line_of(text, i)}: unexpected character {c!r} in WGSL source"
                )
    check_nesting(tokens, text, where)
    return tokens


def check_nesting(tokens: list[Token], text: str, where: str) -> None:
    """Refuse source nested deeper, or with longer expressions, than the compiler survives."""
    stack: list[str] = []  # expected closers; ">" for an open template list
    operators = 0
    for i, t in enumerate(tokens):
        if t.kind != "punct":
            continue
        c = t.text
        if c in _OPEN:
            stack.append(_OPEN[c])
        elif (
            c == "<"
            and i
            and tokens[i - 1].kind == "ident"
            and _TEMPLATED.match(tokens[i - 1].text)
        ):
            stack.append(">")
            continue
        elif c in (">", ">>") and stack and stack[-1] == ">":
            for _ in range(len(c)):
                if stack and stack[-1] == ">":
                    stack.pop()
            continue
        elif c in (")", "]", "}") and c in stack:
            # Closing a bracket also closes any template list left open inside it.
            while stack.pop() != c:
                pass
        if len(stack) > MAX_NESTING:
            raise TooDeepError(
                f"{where}:{line_of(text, t.offset)}: nested too deeply: more than {MAX_NESTING} "
                "levels of parentheses, brackets, braces or type templates, and the shader "
                "compiler crashes on deep enough nesting; use intermediate `let`s or aliases"
            )
        if c in (";", "{", "}"):
            operators = 0
        elif c in _OPERATORS:
            operators += 1
            if operators > MAX_OPERATORS:
                raise TooDeepError(
                    f"{where}:{line_of(text, t.offset)}: one statement with more than "
                    f"{MAX_OPERATORS} operators; the shader compiler crashes on long enough "
                    "expressions, so this is refused: split it into several `let`s"
                )


def _skip_block_comment(text: str, start: int, where: str) -> int:
    depth, i, n = 0, start, len(text)
    while i < n:
        if text.startswith("/*", i):
            depth += 1
            i += 2
        elif text.startswith("*/", i):
            depth -= 1
            i += 2
            if depth == 0:
                return i
        else:
            i += 1
    raise ReflectionError(f"{where}:{line_of(text, start)}: unterminated block comment")
