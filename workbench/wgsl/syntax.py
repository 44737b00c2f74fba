"""The WGSL syntax tree: one small class per production the parser builds.

Every node carries `span`, the [start, end) character offsets of its text in the module it was
read from; `workbench.wgsl.lexer.line_of` and a kernel's source map turn that into the user's file
and line. Types are written as expressions (`Ident` with template arguments), as the spec's grammar
has them: `array<f32, N>` is `Ident("array", (Ident("f32"), Ident("N")))`.

An `if` with its `else if` branches is one `If` with a list of (condition, block) clauses, so a
chain of 10,000 branches is a list, not 10,000 nested nodes that every walk would recurse into.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

Span = tuple[int, int]


@dataclass(slots=True)
class Attribute:
    """`@name` or `@name(args)`."""

    name: str
    args: tuple[Expr, ...]
    span: Span


# -- expressions -------------------------------------------------------------------------------


@dataclass(slots=True)
class Expr:
    span: Span


@dataclass(slots=True)
class Literal(Expr):
    """A number (its text as written, suffix included) or `true`/`false`; kind: int, float, bool."""

    text: str
    kind: str


@dataclass(slots=True)
class Ident(Expr):
    """A name, with its template arguments when it has a template list (`vec3<f32>`)."""

    name: str
    template: tuple[Expr, ...] | None = None


@dataclass(slots=True)
class Call(Expr):
    """A function call or a value constructor: `f(a, b)`, `vec3<f32>(x)`, `S(1, 2)`."""

    callee: Ident
    args: tuple[Expr, ...]


@dataclass(slots=True)
class Member(Expr):
    """`base.name`: a struct member or a swizzle."""

    base: Expr
    name: str


@dataclass(slots=True)
class Index(Expr):
    base: Expr
    index: Expr


@dataclass(slots=True)
class Unary(Expr):
    """`-x`, `!x`, `~x`, `*p` (dereference), `&x` (address of)."""

    op: str
    operand: Expr


@dataclass(slots=True)
class Binary(Expr):
    op: str
    lhs: Expr
    rhs: Expr


@dataclass(slots=True)
class Paren(Expr):
    inner: Expr


# -- statements --------------------------------------------------------------------------------


@dataclass(slots=True)
class Stmt:
    span: Span


@dataclass(slots=True)
class Block(Stmt):
    body: list[Stmt]
    attrs: tuple[Attribute, ...] = ()


@dataclass(slots=True)
class VarDecl(Stmt):
    """`var`, `let`, `const` or `override`, at module or function scope.

    `template` holds `var<space, access>`'s words; `attrs` the attributes before it."""

    kind: str
    name: str
    name_span: Span
    type: Expr | None
    init: Expr | None
    template: tuple[str, ...] = ()
    attrs: tuple[Attribute, ...] = ()


@dataclass(slots=True)
class Assign(Stmt):
    """`lhs = rhs`, `lhs += rhs`, ...; `_ = e` has `Ident("_")` as its lhs."""

    lhs: Expr
    op: str
    rhs: Expr


@dataclass(slots=True)
class Increment(Stmt):
    """`x++` or `x--`."""

    target: Expr
    op: str


@dataclass(slots=True)
class CallStmt(Stmt):
    call: Call


@dataclass(slots=True)
class Return(Stmt):
    value: Expr | None


@dataclass(slots=True)
class If(Stmt):
    """`if c0 {..} else if c1 {..} ... else {..}`: one clause per condition."""

    clauses: list[tuple[Expr, Block]]
    otherwise: Block | None
    attrs: tuple[Attribute, ...] = ()


@dataclass(slots=True)
class SwitchClause:
    """`case a, b, default: {..}`; `default` appears as None among the selectors."""

    selectors: tuple[Expr | None, ...]
    body: Block
    span: Span


@dataclass(slots=True)
class Switch(Stmt):
    value: Expr
    clauses: list[SwitchClause]
    attrs: tuple[Attribute, ...] = ()
    body_attrs: tuple[Attribute, ...] = ()


@dataclass(slots=True)
class Loop(Stmt):
    """`loop { body continuing { ... break if c; } }`."""

    body: Block
    continuing: Block | None = None
    break_if: Expr | None = None
    attrs: tuple[Attribute, ...] = ()
    continuing_attrs: tuple[Attribute, ...] = ()


@dataclass(slots=True)
class For(Stmt):
    init: Stmt | None
    condition: Expr | None
    update: Stmt | None
    body: Block
    attrs: tuple[Attribute, ...] = ()


@dataclass(slots=True)
class While(Stmt):
    condition: Expr
    body: Block
    attrs: tuple[Attribute, ...] = ()


@dataclass(slots=True)
class Jump(Stmt):
    """`break`, `continue` or `discard`."""

    word: str


@dataclass(slots=True)
class ConstAssert(Stmt):
    condition: Expr


@dataclass(slots=True)
class Empty(Stmt):
    """A lone `;`."""


# -- module-scope declarations ------------------------------------------------------------------


@dataclass(slots=True)
class Directive(Stmt):
    """`enable a, b;`, `requires x;` or `diagnostic(severity, rule);`: kind and its words."""

    kind: str
    words: tuple[str, ...]


@dataclass(slots=True)
class StructMember:
    name: str
    type: Expr
    attrs: tuple[Attribute, ...]
    span: Span


@dataclass(slots=True)
class Struct(Stmt):
    name: str
    name_span: Span
    members: list[StructMember]


@dataclass(slots=True)
class Alias(Stmt):
    name: str
    name_span: Span
    type: Expr


@dataclass(slots=True)
class Param:
    name: str
    type: Expr
    attrs: tuple[Attribute, ...]
    span: Span


@dataclass(slots=True)
class Function(Stmt):
    """A function; `span` runs from its first attribute to its closing brace."""

    name: str
    name_span: Span
    params: list[Param]
    params_span: Span  # from `(` to `)` inclusive
    result: Expr | None
    result_attrs: tuple[Attribute, ...]
    body: Block
    attrs: tuple[Attribute, ...] = ()
    # Why the body could not be parsed ("" when it was), without a place, and where the reading
    # stopped (a character offset): the body is then an empty block, and `loose_names` holds the
    # names its text mentions; the compiler judges the text.
    unparsed: str = ""
    loose_names: tuple[str, ...] = ()
    unparsed_at: int = 0

    def attr(self, name: str) -> Attribute | None:
        return next((a for a in self.attrs if a.name == name), None)


Decl = Directive | Struct | Alias | VarDecl | Function | ConstAssert | Empty


@dataclass(slots=True)
class Module:
    """A parsed module: its declarations in source order, and the text they were read from."""

    text: str
    decls: list[Decl] = field(default_factory=list)
    words: frozenset[str] = frozenset()  # every identifier written, keywords included
    half_literals: bool = False  # whether a literal has the f16 suffix `h`

    def functions(self) -> list[Function]:
        return [d for d in self.decls if isinstance(d, Function)]

    def directives(self) -> list[Directive]:
        return [d for d in self.decls if isinstance(d, Directive)]


Node = Expr | Stmt | Attribute | StructMember | Param | SwitchClause


def children(node: Node) -> list[Node]:
    """The node's direct children in source order."""
    if isinstance(node, (Literal, Directive, Empty, Jump)):
        return []
    if isinstance(node, Ident):
        return list(node.template or ())
    if isinstance(node, Call):
        return [node.callee, *node.args]
    if isinstance(node, Member):
        return [node.base]
    if isinstance(node, Index):
        return [node.base, node.index]
    if isinstance(node, Unary):
        return [node.operand]
    if isinstance(node, Binary):
        return [node.lhs, node.rhs]
    if isinstance(node, Paren):
        return [node.inner]
    if isinstance(node, Attribute):
        return list(node.args)
    if isinstance(node, Block):
        return [*node.attrs, *node.body]
    if isinstance(node, VarDecl):
        return [*node.attrs, *(x for x in (node.type, node.init) if x is not None)]
    if isinstance(node, Assign):
        return [node.lhs, node.rhs]
    if isinstance(node, Increment):
        return [node.target]
    if isinstance(node, CallStmt):
        return [node.call]
    if isinstance(node, Return):
        return [] if node.value is None else [node.value]
    if isinstance(node, ConstAssert):
        return [node.condition]
    if isinstance(node, If):
        out: list[Node] = [*node.attrs]
        for cond, block in node.clauses:
            out += [cond, block]
        return out + ([node.otherwise] if node.otherwise is not None else [])
    if isinstance(node, Switch):
        return [*node.attrs, node.value, *node.body_attrs, *node.clauses]
    if isinstance(node, SwitchClause):
        return [*(x for x in node.selectors if x is not None), node.body]
    if isinstance(node, Loop):
        out = [*node.attrs, node.body, *node.continuing_attrs]
        out += [x for x in (node.continuing, node.break_if) if x is not None]
        return out
    if isinstance(node, For):
        parts = (node.init, node.condition, node.update)
        return [*node.attrs, *(x for x in parts if x is not None), node.body]
    if isinstance(node, While):
        return [*node.attrs, node.condition, node.body]
    if isinstance(node, StructMember):
        return [*node.attrs, node.type]
    if isinstance(node, Struct):
        return list(node.members)
    if isinstance(node, Alias):
        return [node.type]
    if isinstance(node, Param):
        return [*node.attrs, node.type]
    if isinstance(node, Function):
        out = [*node.attrs, *node.params, *node.result_attrs]
        return out + ([node.result] if node.result is not None else []) + [node.body]
    return []


def walk(root: Node) -> Iterator[Node]:
    """Every node under `root` (itself first), in source order, without recursion: a tree may be
    thousands of operators deep."""
    stack: list[Node] = [root]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(children(node)))


def root_ident(e: Expr) -> str | None:
    """The variable a reference expression starts from: `x` of `x[i].m`, `(x)`, `*x`."""
    while True:
        if isinstance(e, (Member, Index)):
            e = e.base
        elif isinstance(e, Paren):
            e = e.inner
        elif isinstance(e, Unary) and e.op in ("*", "&"):
            e = e.operand
        elif isinstance(e, Ident):
            return e.name
        else:
            return None
