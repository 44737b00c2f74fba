"""WGSL tokenizer: turns source text into tokens, skipping comments (nested block comments too).

Only what reflection needs: identifiers, numbers, punctuation and attributes, each with its offset so
errors can name a line. Anything it cannot read raises `ReflectionError` with a line number; it never
raises anything else, whatever the input (a property the fuzz tests hold it to).
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
    return tokens


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
