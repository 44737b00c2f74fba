"""The template dialect many WGSL corpora use, expanded the way their host code does: `#define NAME
[value]`, `#undef`, `#ifdef`, `#ifndef`, `#if`/`#elif` with integer expressions and `defined()`,
`#else`, `#endif`, `#include "file"`, lines continued by a final backslash. Defined names are replaced in the code lines, as whole
identifiers, by their values (expanded again, a cycle being an error). The defines a variant gives
are the host's: the template's own `#define`/`#undef` of such a name is a default and is ignored.

Expansion is one pass over the lines, linear in the input: each line is read once, each macro value
expanded once per use with a bound on the nesting of includes and definitions. The result is the
text with a line map (which template file and line every output line came from), so a compile error
names the template's file:line. Every mistake is a `TemplateError` naming file:line.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from workbench.errors import CorpusError

_DIRECTIVE = re.compile(r"^[ \t]*#[ \t]*([A-Za-z_]+)\b(.*)$")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_EXPR_TOKEN = re.compile(
    r"\s*(?:(0[xX][0-9a-fA-F]+|\d+)[uUlL]*|([A-Za-z_][A-Za-z0-9_]*)"
    r"|(&&|\|\||==|!=|<=|>=|<<|>>|[-+*/%()!~<>&|^?:]))"
)
DIRECTIVES = ("define", "undef", "ifdef", "ifndef", "if", "elif", "else", "endif", "include")
MAX_INCLUDE_DEPTH = 32
MAX_EXPANSION_DEPTH = 64
MAX_OUTPUT_BYTES = 16 * 1024 * 1024
# Binary operators by precedence, loosest first (C's).
_LEVELS: tuple[tuple[str, ...], ...] = (
    ("||",),
    ("&&",),
    ("|",),
    ("^",),
    ("&",),
    ("==", "!="),
    ("<", "<=", ">", ">="),
    ("<<", ">>"),
    ("+", "-"),
    ("*", "/", "%"),
)


class TemplateError(CorpusError):
    """A template that cannot be expanded; the message starts with file:line."""


@dataclass(frozen=True)
class Expanded:
    """Expanded text and, for each of its lines, the (file, line) it came from."""

    text: str
    lines: tuple[tuple[str, int], ...]

    def runs(self) -> list[tuple[str, int, int, int]]:
        """Consecutive lines from one file: (file, first line, count, first output line 1-based)."""
        out: list[tuple[str, int, int, int]] = []
        for i, (file, line) in enumerate(self.lines, start=1):
            if out and out[-1][0] == file and out[-1][1] + out[-1][2] == line:
                f, first, n, at = out[-1]
                out[-1] = (f, first, n + 1, at)
            else:
                out.append((file, line, 1, i))
        return out


def directive_line(text: str) -> int:
    """The 1-based line of the first preprocessor directive in `text`, or 0 when it has none."""
    for i, line in enumerate(text.splitlines(), start=1):
        m = _DIRECTIVE.match(line)
        if m and m.group(1) in DIRECTIVES:
            return i
    return 0


def define_value(value: object) -> str | None:
    """A define's value as the description gives it: true -> defined (empty), false -> not
    defined (None), a number -> its digits, a string -> itself."""
    if value is True:
        return ""
    if value is False:
        return None
    if isinstance(value, (int, float, str)):
        return str(value)
    raise TemplateError(f"a define must be true, false, a number or a string, got {value!r}")


def expand(file: str, defines: Mapping[str, str], read: Callable[[str], str]) -> Expanded:
    """Expand `file` (a path relative to the corpus) with `defines`; `read(rel)` gives a file's
    text (includes are relative to the including file's folder)."""
    state = _State(dict(defines), read)
    # The host's defines win: the template's own #define/#undef of one of them is a default.
    state.fixed = frozenset(defines)
    state.file(file, [])
    if state.stack:
        file, line, what = state.stack[-1]
        raise TemplateError(f"{file}:{line}: #{what} without #endif")
    return Expanded("".join(t + "\n" for t in state.out), tuple(state.where))


class _State:
    def __init__(self, macros: dict[str, str], read: Callable[[str], str]) -> None:
        self.macros = macros
        self.read = read
        self.out: list[str] = []
        self.where: list[tuple[str, int]] = []
        self.size = 0
        # Open conditionals: (file, line, directive); `active` has one entry per level: whether
        # lines are kept there, and whether a branch of that level was taken already.
        self.fixed: frozenset[str] = frozenset()
        self.stack: list[tuple[str, int, str]] = []
        self.active: list[tuple[bool, bool]] = []

    def kept(self) -> bool:
        return all(a for a, _ in self.active)

    def file(self, rel: str, chain: list[str]) -> None:
        if rel in chain:
            raise TemplateError(f"{chain[-1]}: #include cycle: {' -> '.join([*chain, rel])}")
        if len(chain) >= MAX_INCLUDE_DEPTH:
            raise TemplateError(f"{chain[-1]}: includes nested more than {MAX_INCLUDE_DEPTH} deep")
        depth = len(self.stack)
        text = self.read(rel)
        pending: list[str] = []
        first = 0
        for n, line in enumerate(text.splitlines(), start=1):
            line = line.rstrip("\r")
            if not pending:
                first = n
            # A line ending in a backslash continues on the next (one logical line, mapped to
            # its first), as C preprocessors and the host code read it.
            if line.endswith("\\"):
                pending.append(line[:-1])
                continue
            self.line(rel, first, " ".join([*pending, line]) if pending else line, [*chain, rel])
            pending = []
        if pending:
            self.line(rel, first, " ".join(pending), [*chain, rel])
        if len(self.stack) != depth:
            file, at, what = self.stack[-1]
            raise TemplateError(f"{file}:{at}: #{what} without #endif in the same file")

    def line(self, rel: str, n: int, line: str, chain: list[str]) -> None:
        m = _DIRECTIVE.match(line)
        if m is None or m.group(1) not in DIRECTIVES:
            if self.kept():
                self.emit(rel, n, self.substitute(line, rel, n))
            return
        what, rest = m.group(1), _strip_comment(m.group(2)).strip()
        at = f"{rel}:{n}"
        if what in ("ifdef", "ifndef", "if"):
            if what == "if":
                cond = self.kept() and self.condition(rest, at) != 0
            else:
                name = self.name(rest, at, what)
                cond = (name in self.macros) == (what == "ifdef")
            self.stack.append((rel, n, what))
            self.active.append((cond, cond))
        elif what in ("elif", "else"):
            if not self.active:
                raise TemplateError(f"{at}: #{what} without #if")
            _, taken = self.active[-1]
            outer = all(a for a, _ in self.active[:-1])
            cond = not taken and outer and (what == "else" or self.condition(rest, at) != 0)
            self.active[-1] = (cond, taken or cond)
        elif what == "endif":
            if not self.active:
                raise TemplateError(f"{at}: #endif without #if")
            self.active.pop()
            self.stack.pop()
        elif not self.kept():
            return
        elif what == "define":
            m_name = _IDENT.match(rest)
            name = self.name(m_name.group(0) if m_name else rest, at, what)
            if rest[len(name) : len(name) + 1] == "(":
                raise TemplateError(f"{at}: function-like macros are not supported ({name})")
            if name not in self.fixed:
                self.macros[name] = rest[len(name) :].strip()
        elif what == "undef":
            name = self.name(rest, at, what)
            if name not in self.fixed:
                self.macros.pop(name, None)
        else:
            inc = re.fullmatch(r'"([^"]+)"', rest)
            if inc is None:
                raise TemplateError(f'{at}: #include needs a quoted file name: #include "x.tmpl"')
            folder = rel.rpartition("/")[0]
            target = f"{folder}/{inc.group(1)}" if folder else inc.group(1)
            try:
                self.file(target, chain)
            except TemplateError:
                raise
            except CorpusError as exc:
                raise TemplateError(f"{at}: #include {inc.group(1)!r}: {exc}") from None

    def name(self, rest: str, at: str, what: str) -> str:
        name = rest.split(None, 1)[0] if rest else ""
        if not _IDENT.fullmatch(name):
            raise TemplateError(f"{at}: #{what} needs a name, got {rest!r}")
        return name

    def emit(self, rel: str, n: int, text: str) -> None:
        self.size += len(text) + 1
        if self.size > MAX_OUTPUT_BYTES:
            raise TemplateError(f"{rel}:{n}: the expansion passes {MAX_OUTPUT_BYTES} bytes")
        self.out.append(text)
        self.where.append((rel, n))

    def substitute(self, line: str, rel: str, n: int) -> str:
        if not self.macros:
            return line
        code, sep, comment = line.partition("//")
        return self.expand_text(code, f"{rel}:{n}", ()) + sep + comment

    def expand_text(self, text: str, at: str, visiting: tuple[str, ...]) -> str:
        def one(m: re.Match[str]) -> str:
            word = m.group(0)
            if word not in self.macros:
                return word
            if word in visiting:
                raise TemplateError(f"{at}: macro {word} expands to itself")
            if len(visiting) >= MAX_EXPANSION_DEPTH:
                raise TemplateError(f"{at}: macros nested more than {MAX_EXPANSION_DEPTH} deep")
            return self.expand_text(self.macros[word], at, (*visiting, word))

        return _IDENT.sub(one, text)

    def condition(self, text: str, at: str) -> int:
        if not text:
            raise TemplateError(f"{at}: #if needs an expression")
        return _Cond(text, self, at).value()


def _strip_comment(text: str) -> str:
    return text.split("//", 1)[0]


class _Cond:
    """An #if expression: integers, names (a macro's value, 0 when undefined), defined(NAME),
    C's unary, binary and ?: operators. Parsed by precedence climbing with a depth bound."""

    def __init__(self, text: str, state: _State, at: str) -> None:
        self.text, self.state, self.at = text, state, at
        self.tokens: list[str] = []
        pos = 0
        while pos < len(text) and text[pos:].strip():
            m = _EXPR_TOKEN.match(text, pos)
            if m is None:
                raise self.error(f"unexpected {text[pos:].strip()[:1]!r}")
            self.tokens.append(m.group(1) or m.group(2) or m.group(3))
            pos = m.end()
        self.i = 0
        self.depth = 0

    def error(self, msg: str) -> TemplateError:
        return TemplateError(f"{self.at}: #if {self.text.strip()}: {msg}")

    def value(self) -> int:
        v = self.ternary()
        if self.i != len(self.tokens):
            raise self.error(f"unexpected {self.tokens[self.i]!r}")
        return v

    def peek(self) -> str | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self, want: str) -> None:
        if self.peek() != want:
            raise self.error(f"expected {want!r}")
        self.i += 1

    def ternary(self) -> int:
        self.depth += 1
        if self.depth > MAX_EXPANSION_DEPTH:
            raise self.error("nested too deeply")
        cond = self.binary(0)
        if self.peek() == "?":
            self.i += 1
            a = self.ternary()
            self.take(":")
            b = self.ternary()
            cond = a if cond else b
        self.depth -= 1
        return cond

    def binary(self, level: int) -> int:
        if level == len(_LEVELS):
            return self.unary()
        left = self.binary(level + 1)
        while self.peek() in _LEVELS[level]:
            op = self.tokens[self.i]
            self.i += 1
            left = self.apply(op, left, self.binary(level + 1))
        return left

    def apply(self, op: str, a: int, b: int) -> int:
        if op in ("/", "%") and b == 0:
            raise self.error("division by zero")
        if op in ("<<", ">>") and not 0 <= b < 64:
            raise self.error(f"shift by {b}")
        ops: dict[str, Callable[[int, int], int]] = {
            "||": lambda x, y: int(bool(x) or bool(y)),
            "&&": lambda x, y: int(bool(x) and bool(y)),
            "|": lambda x, y: x | y,
            "^": lambda x, y: x ^ y,
            "&": lambda x, y: x & y,
            "==": lambda x, y: int(x == y),
            "!=": lambda x, y: int(x != y),
            "<": lambda x, y: int(x < y),
            "<=": lambda x, y: int(x <= y),
            ">": lambda x, y: int(x > y),
            ">=": lambda x, y: int(x >= y),
            "<<": lambda x, y: x << y,
            ">>": lambda x, y: x >> y,
            "+": lambda x, y: x + y,
            "-": lambda x, y: x - y,
            "*": lambda x, y: x * y,
            "/": lambda x, y: int(x / y),  # C truncates towards zero
            "%": lambda x, y: x - int(x / y) * y,
        }
        return ops[op](a, b)

    def unary(self) -> int:
        tok = self.peek()
        if tok is None:
            raise self.error("ends too early")
        self.i += 1
        if tok == "!":
            return int(not self.unary())
        if tok == "~":
            return ~self.unary()
        if tok == "-":
            return -self.unary()
        if tok == "+":
            return self.unary()
        if tok == "(":
            v = self.ternary()
            self.take(")")
            return v
        if tok[0].isdigit():
            return int(tok, 16) if tok[:2].lower() == "0x" else int(tok)
        if tok == "defined":
            paren = self.peek() == "("
            if paren:
                self.i += 1
            name = self.peek()
            if name is None or not _IDENT.fullmatch(name):
                raise self.error("defined needs a name")
            self.i += 1
            if paren:
                self.take(")")
            return int(name in self.state.macros)
        if _IDENT.fullmatch(tok):
            if tok not in self.state.macros:
                return 0
            text = self.state.expand_text(tok, self.at, ())
            return _Cond(text or "0", self.state, self.at).value() if text.strip() else 0
        raise self.error(f"unexpected {tok!r}")
