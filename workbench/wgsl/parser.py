"""WGSL parser: tokens to a `syntax.Module`, by recursive descent over the spec's grammar.

Every module-scope declaration in any order, every statement and expression, attributes, template
lists, aliases, overrides, `const_assert`, and the `enable`, `requires` and `diagnostic`
directives. It accepts more than the spec in places (operator mixing rules, reserved words, which
attribute goes where): the compiler judges legality, and the parser only has to read what the
compiler reads. Every failure is one `ReflectionError`, `file:line: why`.

Input cannot exhaust a stack. Operator chains and postfix chains (`a.b[i].yzwx...`) are read by
loops, and real nesting (parentheses, brackets, braces, template lists) is counted: past
`MAX_NESTING` levels, or `MAX_OPERATORS` operators or `MAX_ACCESSORS` member and index
accessors in one statement, or
`MAX_ELSE_IF` branches in one `if`, the module is refused with a `TooDeepError`. The bounds are
about a tenth of where the native shader compiler (naga inside wgpu, which recurses) kills the
process with an 8 MiB stack, measured on lavapipe (scripts/nesting_limit.py and by hand): about
2,950 nested parentheses, 2,770 nested array types, 14,520 operators in one expression, between
10,000 and 40,000 chained swizzles, between 5,000 and 7,000 `else if` branches.
"""

from __future__ import annotations

import functools
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from workbench.errors import ReflectionError
from workbench.wgsl import syntax as s
from workbench.wgsl.lexer import (
    EOF,
    FLOAT,
    IDENT,
    INT,
    PUNCT,
    TEMPLATE_CLOSE,
    TEMPLATE_OPEN,
    Token,
    line_of,
    tokenize,
)

MAX_NESTING = 256
MAX_OPERATORS = 2048
MAX_ACCESSORS = 2048
MAX_ELSE_IF = 1000
# Python frames one nesting level may take in the parser and in the walks over its tree.
_FRAMES_PER_LEVEL = 6

_BINARY = {
    "||": 1,
    "&&": 2,
    "|": 3,
    "^": 4,
    "&": 5,
    "==": 6,
    "!=": 6,
    "<": 7,
    ">": 7,
    "<=": 7,
    ">=": 7,
    "<<": 8,
    ">>": 8,
    "+": 9,
    "-": 9,
    "*": 10,
    "/": 10,
    "%": 10,
}
_UNARY = frozenset({"-", "!", "~", "*", "&"})
_ASSIGN = frozenset({"=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="})
_COMPOUND = frozenset({"if", "switch", "loop", "for", "while"})


class TooDeepError(ReflectionError):
    """Source nested deeper (or with longer expressions) than the shader compiler survives."""


_room_lock = threading.Lock()
_room_users = 0
_room_saved = 0


@contextmanager
def recursion_room() -> Iterator[None]:
    """Enough Python recursion for the deepest tree the bounds let through: a statement may hold
    `MAX_OPERATORS` left-nested operators and `MAX_NESTING` levels of brackets. (Python calls
    Python functions without using the C stack, so this costs only heap.) The limit is put back
    when the last reader leaves: other readers (TOML) rely on the default to refuse deep input."""
    global _room_users, _room_saved
    need = (MAX_OPERATORS + MAX_ACCESSORS) * 2 + MAX_NESTING * _FRAMES_PER_LEVEL + 2000
    with _room_lock:
        if _room_users == 0:
            _room_saved = sys.getrecursionlimit()
            sys.setrecursionlimit(max(_room_saved, need))
        _room_users += 1
    try:
        yield
    finally:
        with _room_lock:
            _room_users -= 1
            if _room_users == 0:
                sys.setrecursionlimit(_room_saved)


def parse(text: str, where: str = "<wgsl>") -> s.Module:
    """The syntax tree of a whole module; `where` names the file in error messages.

    Trees are shared: the same text read again (a preamble in every kernel of a corpus, a
    kernel's text by each feature that reads it) is parsed once. Nothing changes a tree."""
    return _parse_cached(text, where)


def clear_cache() -> None:
    """Forget the trees and directives read so far (for measuring a cold read)."""
    _parse_cached.cache_clear()
    _directives_cached.cache_clear()


@functools.lru_cache(maxsize=32)  # a tree of a 50 KB module is a few MB
def _parse_cached(text: str, where: str) -> s.Module:
    with recursion_room():
        return _Parser(text, where).module()


def parse_expression(text: str, where: str = "<wgsl>") -> s.Expr:
    """One expression on its own (for tests and tools)."""
    with recursion_room():
        p = _Parser(text, where)
        e = p.expression()
        p.expect_kind(EOF, "end of the expression")
        return e


class _Parser:
    def __init__(self, text: str, where: str) -> None:
        self.text = text
        self.where = where
        self.toks = tokenize(text, where)
        self.i = 0
        self.depth = 0
        self.operators = self.accessors = 0
        self.failed: tuple[int, str] | None = None  # where and why the last `err` was made

    # -- tokens --------------------------------------------------------------------------------
    def err(self, msg: str, tok: Token | None = None) -> ReflectionError:
        tok = tok or self.toks[self.i]
        self.failed = (tok.start, msg)  # a body that does not parse is noted with these
        return ReflectionError(f"{self.where}:{line_of(self.text, tok.start)}: {msg}")

    def peek(self, k: int = 0) -> Token:
        j = self.i + k
        return self.toks[j] if j < len(self.toks) else self.toks[-1]

    def next(self) -> Token:
        tok = self.toks[self.i]
        if tok.kind == EOF:
            raise self.err("unexpected end of source")
        self.i += 1
        return tok

    def at(self, text: str) -> bool:
        tok = self.toks[self.i]
        return tok.text == text and tok.kind != EOF

    def accept(self, text: str) -> Token | None:
        tok = self.toks[self.i]
        if tok.text == text and tok.kind not in (EOF, TEMPLATE_OPEN, TEMPLATE_CLOSE):
            self.i += 1
            return tok
        return None

    def expect(self, text: str, what: str = "") -> Token:
        tok = self.toks[self.i]
        if tok.text != text or tok.kind in (TEMPLATE_OPEN, TEMPLATE_CLOSE):
            if tok.kind == EOF:
                raise self.err("unexpected end of source")
            raise self.err(f"expected '{text}'{what} but found '{tok.text}'", tok)
        self.i += 1
        return tok

    def expect_kind(self, kind: str, what: str) -> Token:
        tok = self.toks[self.i]
        if tok.kind != kind:
            if tok.kind == EOF:
                raise self.err("unexpected end of source")
            raise self.err(f"expected {what} but found '{tok.text}'", tok)
        self.i += 1
        return tok

    def ident(self) -> Token:
        return self.expect_kind(IDENT, "a name")

    def enter(self, tok: Token) -> None:
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise TooDeepError(
                f"{self.where}:{line_of(self.text, tok.start)}: nested too deeply: more than "
                f"{MAX_NESTING} levels of parentheses, brackets, braces or type templates, and "
                "the shader compiler crashes on deep enough nesting; use intermediate `let`s "
                "or aliases"
            )

    def count(self, tok: Token) -> None:
        self.operators += 1
        if self.operators > MAX_OPERATORS:
            raise TooDeepError(
                f"{self.where}:{line_of(self.text, tok.start)}: one statement with more than "
                f"{MAX_OPERATORS} operators; the shader compiler crashes on long enough "
                "expressions, so this is refused: split it into several `let`s"
            )

    def count_accessor(self, tok: Token) -> None:
        self.accessors += 1
        if self.accessors > MAX_ACCESSORS:
            raise TooDeepError(
                f"{self.where}:{line_of(self.text, tok.start)}: one statement with more than "
                f"{MAX_ACCESSORS} member, swizzle or index accessors; the shader compiler "
                "crashes on long enough chains, so this is refused: split it into several `let`s"
            )

    def span_from(self, start: int) -> s.Span:
        return (start, self.toks[self.i - 1].end)

    # -- module --------------------------------------------------------------------------------
    def module(self) -> s.Module:
        toks = self.toks
        words = frozenset(t.text for t in toks if t.kind == IDENT)
        half = any(
            t.kind == FLOAT and t.text[-1] == "h" and t.text[:2] not in ("0x", "0X") for t in toks
        )
        mod = s.Module(self.text, words=words, half_literals=half)
        while self.toks[self.i].kind != EOF:
            self.operators = self.accessors = 0
            mod.decls.append(self.global_decl())
        return mod

    def global_decl(self) -> s.Decl:
        tok = self.toks[self.i]
        start = tok.start
        if tok.kind == IDENT and tok.text in ("enable", "requires"):
            self.i += 1
            words = [self.ident().text]
            while self.accept(","):
                if self.at(";"):
                    break
                words.append(self.ident().text)
            self.expect(";")
            return s.Directive(self.span_from(start), tok.text, tuple(words))
        if tok.kind == IDENT and tok.text == "diagnostic" and self.peek(1).text == "(":
            self.i += 1
            control = self.diagnostic_control()
            self.expect(";")
            return s.Directive(self.span_from(start), "diagnostic", control)
        if self.accept(";"):
            return s.Empty(self.span_from(start))
        attrs = self.attributes()
        tok = self.next()
        word = tok.text if tok.kind == IDENT else ""
        if word == "struct":
            return self.struct(start)
        if word == "alias":
            name = self.ident()
            self.expect("=")
            ty = self.type_expr()
            self.expect(";")
            return s.Alias(self.span_from(start), name.text, (name.start, name.end), ty)
        if word in ("const", "override", "var"):
            decl = self.var_decl(word, start, attrs)
            self.expect(";")
            decl.span = self.span_from(start)
            return decl
        if word == "fn":
            return self.function(start, attrs)
        if word == "const_assert":
            cond = self.expression()
            self.expect(";")
            return s.ConstAssert(self.span_from(start), cond)
        raise self.err(f"unexpected '{tok.text}' at module scope", tok)

    def diagnostic_control(self) -> tuple[str, ...]:
        """`(severity, rule)` or `(severity, a.b)`: the words, the rule's dotted name as one."""
        self.expect("(")
        return self.diagnostic_control_inner()

    def attributes(self) -> tuple[s.Attribute, ...]:
        attrs: list[s.Attribute] = []
        while self.at("@"):
            at = self.next()
            name = self.ident().text
            args: list[s.Expr] = []
            if self.at("("):
                open_ = self.next()
                self.enter(open_)
                if name == "diagnostic":
                    words = self.diagnostic_control_inner()
                    args = [s.Ident((open_.start, open_.end), w) for w in words]
                else:
                    while not self.accept(")"):
                        args.append(self.expression())
                        if not self.accept(","):
                            self.expect(")")
                            break
                self.depth -= 1
            attrs.append(s.Attribute(name, tuple(args), self.span_from(at.start)))
        return tuple(attrs)

    def diagnostic_control_inner(self) -> tuple[str, ...]:
        words = [self.ident().text]
        self.expect(",")
        rule = self.ident().text
        if self.accept("."):
            rule += "." + self.ident().text
        words.append(rule)
        self.accept(",")
        self.expect(")")
        return tuple(words)

    def struct(self, start: int) -> s.Struct:
        name = self.ident()
        open_ = self.expect("{")
        self.enter(open_)
        members: list[s.StructMember] = []
        while not self.accept("}"):
            mstart = self.toks[self.i].start
            attrs = self.attributes()
            mname = self.ident().text
            self.expect(":")
            ty = self.type_expr()
            members.append(s.StructMember(mname, ty, attrs, self.span_from(mstart)))
            if not self.accept(","):
                self.expect("}")
                break
        self.depth -= 1
        return s.Struct(self.span_from(start), name.text, (name.start, name.end), members)

    def var_decl(self, word: str, start: int, attrs: tuple[s.Attribute, ...]) -> s.VarDecl:
        """`var<...> name: T = e`, `let name: T = e`, `const ...`, `override ...` (no `;`)."""
        template: list[str] = []
        if word == "var" and self.toks[self.i].kind == TEMPLATE_OPEN:
            self.next()
            while self.toks[self.i].kind != TEMPLATE_CLOSE:
                template.append(self.ident().text)
                if not self.accept(","):
                    break
            self.expect_kind(TEMPLATE_CLOSE, "'>'")
        name = self.ident()
        ty = self.type_expr() if self.accept(":") else None
        init = self.expression() if self.accept("=") else None
        return s.VarDecl(
            self.span_from(start),
            word,
            name.text,
            (name.start, name.end),
            ty,
            init,
            tuple(template),
            attrs,
        )

    def function(self, start: int, attrs: tuple[s.Attribute, ...]) -> s.Function:
        name = self.ident()
        open_ = self.expect("(")
        params: list[s.Param] = []
        while not self.at(")"):
            pstart = self.toks[self.i].start
            pattrs = self.attributes()
            pname = self.ident().text
            self.expect(":")
            params.append(s.Param(pname, self.type_expr(), pattrs, self.span_from(pstart)))
            if not self.accept(","):
                break
        close = self.expect(")")
        result: s.Expr | None = None
        result_attrs: tuple[s.Attribute, ...] = ()
        if self.accept("->"):
            result_attrs = self.attributes()
            result = self.type_expr()
        body, unparsed, loose, unparsed_at = self.function_body()
        return s.Function(
            self.span_from(start),
            name.text,
            (name.start, name.end),
            params,
            (open_.start, close.end),
            result,
            result_attrs,
            body,
            attrs,
            unparsed,
            loose,
            unparsed_at,
        )

    def function_body(self) -> tuple[s.Block, str, tuple[str, ...], int]:
        """The body; when it does not parse (and is not too deep), an empty block, the reason,
        the names the body mentions, read from its tokens up to the matching brace, and where
        the reading stopped: the compiler then says what is wrong in its own words, with the
        column, and reflection still sees what the function reaches."""
        start, depth, operators, accessors = self.i, self.depth, self.operators, self.accessors
        self.failed = None
        try:
            return self.block(), "", (), 0
        except TooDeepError:
            raise
        except ReflectionError as exc:
            at, why = self.failed or (self.toks[start].start, str(exc))
        self.i, self.depth, self.operators, self.accessors = start, depth, operators, accessors
        open_ = self.expect("{")
        level, names = 1, []
        while level:
            tok = self.next()
            if tok.kind == IDENT and self.toks[self.i - 2].text != ".":
                names.append(tok.text)
            elif tok.text == "{" and tok.kind != EOF:
                level += 1
            elif tok.text == "}" and tok.kind != EOF:
                level -= 1
        block = s.Block(self.span_from(open_.start), [])
        return block, why, tuple(dict.fromkeys(names)), at

    # -- statements ----------------------------------------------------------------------------
    def block(self, attrs: tuple[s.Attribute, ...] = ()) -> s.Block:
        open_ = self.expect("{")
        self.enter(open_)
        body: list[s.Stmt] = []
        while not self.accept("}"):
            body.append(self.statement())
        self.depth -= 1
        return s.Block(self.span_from(open_.start), body, attrs)

    def statement(self) -> s.Stmt:
        self.operators = self.accessors = 0
        tok = self.toks[self.i]
        start = tok.start
        if tok.text == ";" and tok.kind != EOF:
            self.i += 1
            return s.Empty(self.span_from(start))
        attrs = self.attributes() if tok.text == "@" else ()
        tok = self.toks[self.i]
        word = tok.text if tok.kind == IDENT else ""
        if tok.text == "{" and tok.kind != EOF:
            return self.block(attrs)
        if word in _COMPOUND:
            self.i += 1
            return self.compound(word, start, attrs)
        if attrs:
            raise self.err(f"expected a statement after attributes but found '{tok.text}'")
        if word == "return":
            self.i += 1
            value = None if self.at(";") else self.expression()
            self.expect(";")
            return s.Return(self.span_from(start), value)
        if word in ("break", "continue", "discard"):
            self.i += 1
            if (
                word == "break"
                and self.toks[self.i].text == "if"
                and self.toks[self.i].kind == IDENT
            ):
                raise self.err("'break if' belongs at the end of a 'continuing' block")
            self.expect(";")
            return s.Jump(self.span_from(start), word)
        if word == "const_assert":
            self.i += 1
            cond = self.expression()
            self.expect(";")
            return s.ConstAssert(self.span_from(start), cond)
        stmt = self.simple_statement()
        self.expect(";")
        stmt.span = self.span_from(start)
        return stmt

    def simple_statement(self) -> s.Stmt:
        """A declaration, assignment, increment or call: what may also sit in a `for` header."""
        tok = self.toks[self.i]
        start = tok.start
        if tok.kind == IDENT and tok.text in ("var", "let", "const"):
            self.i += 1
            return self.var_decl(tok.text, start, ())
        target = self.expression()
        op = self.toks[self.i]
        if op.text in _ASSIGN and op.kind != EOF:
            self.i += 1
            rhs = self.expression()
            return s.Assign(self.span_from(start), target, op.text, rhs)
        if op.text in ("++", "--"):
            self.i += 1
            return s.Increment(self.span_from(start), target, op.text)
        if isinstance(target, s.Call):
            return s.CallStmt(self.span_from(start), target)
        raise self.err(f"expected an assignment or a call but found '{op.text}'", op)

    def compound(self, word: str, start: int, attrs: tuple[s.Attribute, ...]) -> s.Stmt:
        if word == "if":
            clauses = [(self.expression(), self.block())]
            otherwise = None
            while self.toks[self.i].text == "else" and self.toks[self.i].kind == IDENT:
                self.i += 1
                if self.toks[self.i].text == "if" and self.toks[self.i].kind == IDENT:
                    at = self.next()
                    if len(clauses) > MAX_ELSE_IF:
                        raise TooDeepError(
                            f"{self.where}:{line_of(self.text, at.start)}: more than "
                            f"{MAX_ELSE_IF} 'else if' branches in one 'if'; the shader "
                            "compiler crashes on long enough chains: use a 'switch' or "
                            "split the chain"
                        )
                    self.operators = self.accessors = 0
                    clauses.append((self.expression(), self.block()))
                    continue
                otherwise = self.block()
                break
            return s.If(self.span_from(start), clauses, otherwise, attrs)
        if word == "switch":
            value = self.expression()
            body_attrs = self.attributes()
            open_ = self.expect("{")
            self.enter(open_)
            cases: list[s.SwitchClause] = []
            while not self.accept("}"):
                cstart = self.toks[self.i].start
                selectors: list[s.Expr | None] = []
                if self.accept("default"):
                    selectors.append(None)
                else:
                    self.expect("case", " or 'default'")
                    while True:
                        if self.accept("default"):
                            selectors.append(None)
                        else:
                            selectors.append(self.expression())
                        if not self.accept(","):
                            break
                        if self.at(":") or self.at("{"):
                            break
                self.accept(":")
                cbody = self.block(self.attributes())
                cases.append(s.SwitchClause(tuple(selectors), cbody, self.span_from(cstart)))
            self.depth -= 1
            return s.Switch(self.span_from(start), value, cases, attrs, body_attrs)
        if word == "loop":
            body_attrs = self.attributes()
            open_ = self.expect("{")
            self.enter(open_)
            body: list[s.Stmt] = []
            continuing: s.Block | None = None
            break_if: s.Expr | None = None
            cont_attrs: tuple[s.Attribute, ...] = ()
            while not self.accept("}"):
                if self.toks[self.i].text == "continuing" and self.toks[self.i].kind == IDENT:
                    self.i += 1
                    cont_attrs = self.attributes()
                    continuing, break_if = self.continuing()
                    self.expect("}")
                    break
                body.append(self.statement())
            self.depth -= 1
            block = s.Block(self.span_from(open_.start), body, body_attrs)
            return s.Loop(self.span_from(start), block, continuing, break_if, attrs, cont_attrs)
        if word == "for":
            open_ = self.expect("(")
            self.enter(open_)
            init = None if self.at(";") else self.simple_statement()
            self.expect(";")
            cond = None if self.at(";") else self.expression()
            self.expect(";")
            update = None if self.at(")") else self.simple_statement()
            self.expect(")")
            self.depth -= 1
            return s.For(self.span_from(start), init, cond, update, self.block(), attrs)
        cond = self.expression()
        return s.While(self.span_from(start), cond, self.block(), attrs)

    def continuing(self) -> tuple[s.Block, s.Expr | None]:
        open_ = self.expect("{")
        self.enter(open_)
        body: list[s.Stmt] = []
        break_if = None
        while not self.accept("}"):
            if (
                self.toks[self.i].text == "break"
                and self.peek(1).text == "if"
                and self.peek(1).kind == IDENT
            ):
                self.i += 2
                self.operators = self.accessors = 0
                break_if = self.expression()
                self.expect(";")
                self.expect("}")
                break
            body.append(self.statement())
        self.depth -= 1
        return s.Block(self.span_from(open_.start), body), break_if

    # -- expressions ---------------------------------------------------------------------------
    def type_expr(self) -> s.Expr:
        """A type: a name with an optional template list (checked later, not here)."""
        tok = self.ident()
        return self.template_ident(tok)

    def template_ident(self, tok: Token) -> s.Ident:
        if self.toks[self.i].kind != TEMPLATE_OPEN:
            return s.Ident((tok.start, tok.end), tok.text)
        open_ = self.next()
        self.enter(open_)
        args: list[s.Expr] = []
        while self.toks[self.i].kind != TEMPLATE_CLOSE:
            args.append(self.expression())
            if not self.accept(","):
                break
        self.expect_kind(TEMPLATE_CLOSE, "'>' closing the template list")
        self.depth -= 1
        return s.Ident(self.span_from(tok.start), tok.text, tuple(args))

    def expression(self) -> s.Expr:
        """Binary operators by precedence, with explicit stacks (no recursion per operator)."""
        first = self.unary()
        tok = self.toks[self.i]
        if tok.kind != PUNCT or tok.text not in _BINARY:
            return first  # most expressions: no operator at all
        operands = [first]
        ops: list[tuple[str, int]] = []
        while True:
            tok = self.toks[self.i]
            prec = _BINARY.get(tok.text) if tok.kind not in (EOF, TEMPLATE_CLOSE) else None
            if prec is None:
                break
            self.i += 1
            self.count(tok)
            while ops and ops[-1][1] >= prec:
                self._reduce(operands, ops)
            ops.append((tok.text, prec))
            operands.append(self.unary())
        while ops:
            self._reduce(operands, ops)
        return operands[0]

    @staticmethod
    def _reduce(operands: list[s.Expr], ops: list[tuple[str, int]]) -> None:
        op, _ = ops.pop()
        rhs = operands.pop()
        lhs = operands.pop()
        operands.append(s.Binary((lhs.span[0], rhs.span[1]), op, lhs, rhs))

    def unary(self) -> s.Expr:
        prefix: list[Token] = []
        while True:
            tok = self.toks[self.i]
            if tok.kind == EOF or (tok.text not in _UNARY and tok.text not in ("--", "&&")):
                break
            if tok.text in ("--", "&&"):
                raise self.err(f"unexpected '{tok.text}' in an expression", tok)
            self.i += 1
            self.count(tok)
            prefix.append(tok)
        e = self.postfix(self.primary())
        for tok in reversed(prefix):
            e = s.Unary((tok.start, e.span[1]), tok.text, e)
        return e

    def postfix(self, e: s.Expr) -> s.Expr:
        while True:
            tok = self.toks[self.i]
            if tok.kind == EOF:
                return e
            if tok.text == ".":
                self.i += 1
                self.count_accessor(tok)
                name = self.ident()
                e = s.Member((e.span[0], name.end), e, name.text)
            elif tok.text == "[":
                self.i += 1
                self.count_accessor(tok)
                self.enter(tok)
                index = self.expression()
                close = self.expect("]")
                self.depth -= 1
                e = s.Index((e.span[0], close.end), e, index)
            else:
                return e

    def primary(self) -> s.Expr:
        tok = self.next()
        if tok.kind in (INT, FLOAT):
            return s.Literal((tok.start, tok.end), tok.text, tok.kind)
        if tok.kind == IDENT:
            if tok.text in ("true", "false"):
                return s.Literal((tok.start, tok.end), tok.text, "bool")
            callee = self.template_ident(tok)
            if self.at("("):
                open_ = self.next()
                self.enter(open_)
                args: list[s.Expr] = []
                while not self.accept(")"):
                    args.append(self.expression())
                    if not self.accept(","):
                        self.expect(")")
                        break
                self.depth -= 1
                return s.Call(self.span_from(tok.start), callee, tuple(args))
            return callee
        if tok.text == "(" and tok.kind != TEMPLATE_OPEN:
            self.enter(tok)
            inner = self.expression()
            self.expect(")")
            self.depth -= 1
            return s.Paren(self.span_from(tok.start), inner)
        raise self.err(f"expected an expression but found '{tok.text}'", tok)


_DIRECTIVE_WORDS = frozenset({"enable", "requires", "diagnostic"})


def directives(text: str, where: str = "<wgsl>") -> tuple[s.Directive, ...]:
    """The `enable`, `requires` and `diagnostic` directives written at module scope in `text`, a
    piece of a module that need not parse as a whole (a file after its preambles' text, a kernel
    section); () when it cannot even be tokenized (the module's parse then says why)."""
    if "enable" not in text and "requires" not in text and "diagnostic" not in text:
        return ()
    return _directives_cached(text, where)


@functools.lru_cache(maxsize=256)
def _directives_cached(text: str, where: str) -> tuple[s.Directive, ...]:
    try:
        p = _Parser(text, where)
    except ReflectionError:
        return ()
    found: list[s.Directive] = []
    depth = 0
    toks = p.toks
    k = 0
    while k < len(toks):
        tok = toks[k]
        if tok.text in ("{", "(", "[") and tok.kind != EOF:
            depth += 1
        elif tok.text in ("}", ")", "]") and tok.kind != EOF:
            depth = max(depth - 1, 0)
        elif (
            depth == 0
            and tok.kind == IDENT
            and tok.text in _DIRECTIVE_WORDS
            and (k == 0 or toks[k - 1].text in (";", "}"))
            and (tok.text != "diagnostic" or toks[k + 1].text == "(")
        ):
            p.i = k
            try:
                decl = p.global_decl()
            except ReflectionError:
                k += 1
                continue
            if isinstance(decl, s.Directive):
                found.append(decl)
            k = p.i
            continue
        k += 1
    return tuple(found)
