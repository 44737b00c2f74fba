"""WGSL lexer: source text to tokens, in one pass and linear time, with template lists found.

Tokens are identifiers (keywords included: the parser tells them apart), integer and float
literals, and punctuation, each with its character span. Comments (nested block comments too) and
blankspace are skipped as the spec defines them: space, tab, the line breaks LF, VT, FF, CR
(so CRLF and CR files read as the compiler reads them), NEL, LS and PS, and the two direction
marks. Everything else that is not a token is one `ReflectionError` naming the file and line; a
byte-order mark, which naga rejects, is named as one.

No regular expression here can backtrack over the user's text: identifiers, digit runs and
blankspace are each one greedy character class, and numbers are assembled from digit runs by hand,
so a line of 10,000 spaces or zeros costs what reading it costs.

Template lists (`array<f32, 4>`, `vec3<u32>`, `ptr<function, f32>`) are found by the spec's
template-list discovery algorithm and their `<` and `>` become `TEMPLATE_OPEN` and
`TEMPLATE_CLOSE` tokens; a `>>` or `>=` whose first `>` closes a list is split.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from workbench.errors import ReflectionError

IDENT = "ident"
INT = "int"
FLOAT = "float"
PUNCT = "punct"
TEMPLATE_OPEN = "<template"
TEMPLATE_CLOSE = "template>"
EOF = "eof"

_DIGITS = re.compile(r"[0-9]*")
_HEX_DIGITS = re.compile(r"[0-9a-fA-F]*")
# One alternative per token class, each a single greedy character class or a literal, so a match
# never backtracks over more than the token it reads. Numbers are read by hand (`_number`).
_BLANKS = "[ \t\n\v\f\r\u0085\u200e\u200f\u2028\u2029]"
# One alternative per token class, each a single greedy character class or a literal, so a match
# never backtracks over more than the token it reads; the blankspace after a token is read in the
# same match. Numbers are read by hand (`_number`).
_TOKEN = re.compile(
    f"(?P<blank>{_BLANKS}+)"
    # A line-ending comment ends at any of the spec's line breaks.
    "|(?P<line>//[^\n\v\f\r\u0085\u2028\u2029]*)"
    "|(?P<block>/\\*)"
    f"|(?P<ident>[^\\W\\d]\\w*){_BLANKS}*"
    "|(?P<number>[0-9]|\\.[0-9])"
    "|(?P<punct><<=|>>=|->|<=|>=|==|!=|&&|\\|\\||<<|>>|\\+\\+|--|\\+=|-=|\\*=|/=|%=|&=|\\|=|\\^="
    f"|[(){{}}\\[\\],;:.=+\\-*/%&|^!~@<>]){_BLANKS}*"
)
BOM = "\ufeff"


class Token(NamedTuple):
    """One token: its kind, its text and its character span [start, end) in the source."""

    kind: str
    text: str
    start: int
    end: int

    @property
    def offset(self) -> int:
        return self.start


def line_of(text: str, offset: int) -> int:
    """1-based line number of a character offset (lines end at LF, as the compiler counts)."""
    return text.count("\n", 0, offset) + 1


def column_of(text: str, offset: int) -> int:
    """1-based column (in characters) of a character offset."""
    return offset - (text.rfind("\n", 0, offset) + 1) + 1


def tokenize(text: str, where: str = "<wgsl>") -> list[Token]:
    """The tokens of `text`, template lists marked, ending with one `EOF` token.

    `where` names the file in error messages (`where:line: why`)."""
    return _discover_templates(_scan(text, where))


def token_texts(text: str, where: str = "<wgsl>") -> list[str]:
    """The text of every token in order, as written (`>>` one token even where it closes two
    template lists), without the end token: a module's words, whatever its comments and spacing
    (what identifies a kernel's meaning)."""
    return [t.text for t in _scan(text, where)[:-1]]


def _scan(text: str, where: str) -> list[Token]:
    tokens: list[Token] = []
    append = tokens.append
    match = _TOKEN.match
    new = tuple.__new__  # a Token without the NamedTuple constructor's extra call
    i, n = 0, len(text)
    while i < n:
        m = match(text, i)
        if m is None:
            c = text[i]
            if c == BOM:
                raise ReflectionError(
                    f"{where}:{line_of(text, i)}: a byte-order mark (U+FEFF), which the shader "
                    "compiler rejects; save the file as UTF-8 without a BOM"
                )
            raise ReflectionError(
                f"{where}:{line_of(text, i)}: unexpected character {c!r} in WGSL source"
            )
        kind = m.lastgroup
        j = m.end()
        if kind == "ident":
            append(new(Token, (IDENT, m.group(kind), i, m.end(kind))))
        elif kind == "punct":
            append(new(Token, (PUNCT, m.group(kind), i, m.end(kind))))
        elif kind == "number":
            j, number_kind = _number(text, i)
            append(Token(number_kind, text[i:j], i, j))
        elif kind == "block":
            j = _skip_block_comment(text, i)
        i = j
    append(Token(EOF, "", n, n))
    return tokens


def _number(text: str, i: int) -> tuple[int, str]:
    """(end, kind) of the numeric literal starting at `i`; every character is looked at once."""
    n = len(text)
    if text.startswith(("0x", "0X"), i):
        j = _HEX_DIGITS.match(text, i + 2).end()  # type: ignore[union-attr]
        is_float = False
        if j < n and text[j] == ".":
            j = _HEX_DIGITS.match(text, j + 1).end()  # type: ignore[union-attr]
            is_float = True
        if j < n and text[j] in "pP" and _exponent_at(text, j + 1):
            j = _exponent_end(text, j + 1)
            is_float = True
            if j < n and text[j] in "fh":
                j += 1
        elif not is_float and j < n and text[j] in "iu":
            j += 1
        return j, FLOAT if is_float else INT
    j = _DIGITS.match(text, i).end()  # type: ignore[union-attr]
    is_float = False
    if j < n and text[j] == ".":
        j = _DIGITS.match(text, j + 1).end()  # type: ignore[union-attr]
        is_float = True
    if j < n and text[j] in "eE" and _exponent_at(text, j + 1):
        j = _exponent_end(text, j + 1)
        is_float = True
    if j < n and text[j] in "fh":
        return j + 1, FLOAT
    if not is_float and j < n and text[j] in "iu":
        return j + 1, INT
    return j, FLOAT if is_float else INT


def _exponent_at(text: str, j: int) -> bool:
    if j < len(text) and text[j] in "+-":
        j += 1
    return j < len(text) and "0" <= text[j] <= "9"


def _exponent_end(text: str, j: int) -> int:
    if text[j] in "+-":
        j += 1
    return _DIGITS.match(text, j).end()  # type: ignore[union-attr]


def _skip_block_comment(text: str, start: int) -> int:
    """End of the (nested) block comment opening at `start` (the end of the text when it is never
    closed: the compiler accepts that, so the front end does too)."""
    depth, i = 0, start
    while True:
        opened = text.find("/*", i)
        closed = text.find("*/", i)
        if closed < 0:
            return len(text)  # naga reads an unterminated comment to the end of the module
        if 0 <= opened < closed:
            depth += 1
            i = opened + 2
        else:
            depth -= 1
            i = closed + 2
            if depth == 0:
                return i


def _discover_templates(tokens: list[Token]) -> list[Token]:
    """The spec's template-list discovery over tokens: an identifier followed by `<` opens a
    candidate list that a `>` at the same bracket depth closes; `=`, `;`, `{`, `:` and the
    short-circuit operators end candidates. Linear: each token is pushed and popped once."""
    out: list[Token] = []
    pending: list[tuple[int, int]] = []  # (index in `out` of the '<', bracket depth)
    depth = 0
    k, n = 0, len(tokens)
    carry: Token | None = None  # the rest of a split '>>' or '>=' still to look at
    while k < n or carry is not None:
        if carry is not None:
            tok, carry = carry, None
        else:
            tok = tokens[k]
            k += 1
        text = tok.text
        if tok.kind != PUNCT:
            out.append(tok)
            continue
        if text == "<" and out and out[-1].kind == IDENT:
            pending.append((len(out), depth))
            out.append(tok)
            continue
        if text[0] == ">" and text not in ("->",) and pending and pending[-1][1] == depth:
            at, _ = pending.pop()
            opener = out[at]
            out[at] = Token(TEMPLATE_OPEN, "<", opener.start, opener.end)
            out.append(Token(TEMPLATE_CLOSE, ">", tok.start, tok.start + 1))
            if len(text) > 1:
                carry = Token(PUNCT, text[1:], tok.start + 1, tok.end)
            continue
        if text in ("(", "["):
            depth += 1
        elif text in (")", "]"):
            while pending and pending[-1][1] >= depth:
                pending.pop()
            depth = max(depth - 1, 0)
        elif text in ("=", ";", "{", ":") or (text.endswith("=") and text not in _COMPARE):
            # An assignment or a statement boundary: no template list spans it.
            depth = 0
            pending.clear()
        elif text in ("&&", "||"):
            while pending and pending[-1][1] >= depth:
                pending.pop()
        out.append(tok)
    return out


_COMPARE = frozenset({"==", "!=", "<=", ">="})
