"""Constructs in WGSL text whose results some adapters change: loops that may run long and long
`else if` chains. The CPU adapter (lavapipe) stops every loop after 65,536 iterations and
miscompiles a chain of about 100 `else if` branches; `workbench.gpu.canaries` measures what each
adapter does, and this module says which kernels could meet it.

The questions are asked of the syntax tree's loop and `if` nodes (an `if` holds its `else if`
branches as one list), read without recursion. Text that does not parse has no findings (it does
not compile either); a function body the parser leaves to the compiler has none either. A caller
that holds the module's tree already (a kernel's reflection keeps it) passes the tree, and the
functions a run can reach, so nothing is parsed twice.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from operator import attrgetter

from workbench.errors import ReflectionError
from workbench.wgsl import syntax as s
from workbench.wgsl.checker import Checker
from workbench.wgsl.consteval import literal
from workbench.wgsl.lexer import line_of
from workbench.wgsl.parser import parse, recursion_room
from workbench.wgsl.printer import print_expr

# A loop bounded by a literal (or a module-scope const) up to this count cannot reach any measured
# cap (lavapipe: 65,536) however it steps; anything else could.
SMALL_BOUND = 4096
# Chains shorter than this are not measured against the adapter (lavapipe breaks at about 79).
CHAIN_SUSPECT = 32
_COMPARISONS = frozenset(["<", "<=", ">", ">=", "!="])
_LOOP_WORDS = frozenset(["loop", "while", "for"])
_LOOP = "a loop { } (bounded only by its break)"


@dataclass(frozen=True)
class Site:
    """Where a construct starts (1-based line of the text given) and what it is, in words."""

    line: int
    what: str
    size: int = 0  # an else-if chain's branches


def loops_without_small_constant_bound(
    source: str | s.Module, where: str = "<wgsl>", functions: Collection[str] | None = None
) -> list[Site]:
    """Every `loop`, every `while`, and every `for` whose condition is not `i OP BOUND` with BOUND
    a literal or a module-scope const of at most SMALL_BOUND, in `source` (WGSL text or its tree),
    in the named `functions` only when given."""
    tree = _tree(source, where)
    return [] if tree is None else sites(tree, where, functions, None)[0]


def else_if_chains(
    source: str | s.Module,
    at_least: int,
    where: str = "<wgsl>",
    functions: Collection[str] | None = None,
) -> list[Site]:
    """Every `if` followed by `at_least` or more `else if` branches (nested chains on their own),
    in `source` (WGSL text or its tree), in the named `functions` only when given."""
    tree = _tree(source, where)
    return [] if tree is None else sites(tree, where, functions, at_least)[1]


def sites(
    tree: s.Module, where: str, functions: Collection[str] | None, at_least: int | None
) -> tuple[list[Site], list[Site]]:
    """Both questions in one walk: the loops as `loops_without_small_constant_bound` finds them,
    and the else-if chains of `at_least` branches or more (none asked when None)."""
    want_loops = bool(tree.words & _LOOP_WORDS)  # no loop written: no loop to look for
    want_chains = at_least is not None and "else" in tree.words
    if not want_loops and not want_chains:
        return [], []
    checker = Checker(tree, where) if want_loops else None
    loops, chains = [], []
    with recursion_room():  # a const or a condition may be thousands of operators long
        for node in _statements(tree, functions):
            if isinstance(node, s.If):
                count = len(node.clauses) - 1
                if want_chains and at_least is not None and count >= at_least:
                    line = line_of(tree.text, node.span[0])
                    chains.append(Site(line, f"an if with {count} else-if branches", count))
            elif checker is None:
                continue
            elif isinstance(node, s.Loop):
                loops.append(Site(line_of(tree.text, node.span[0]), _LOOP))
            elif isinstance(node, s.While):
                loops.append(Site(line_of(tree.text, node.span[0]), "a while loop"))
            elif isinstance(node, s.For) and _small_bound(node.condition, checker) is None:
                text = print_expr(node.condition) if node.condition is not None else "nothing"
                loops.append(
                    Site(line_of(tree.text, node.span[0]), f"a for loop bounded by {text}")
                )
    by_line = attrgetter("line")
    return sorted(loops, key=by_line), sorted(chains, key=by_line)


def _tree(source: str | s.Module, where: str) -> s.Module | None:
    if isinstance(source, s.Module):
        return source
    try:
        return parse(source, where)
    except ReflectionError:
        return None


def _statements(tree: s.Module, functions: Collection[str] | None) -> list[s.Node]:
    """Every statement of every function body (of the named ones when given), in source order."""
    return [
        n
        for f in tree.functions()
        if functions is None or f.name in functions
        for n in s.walk(f.body)
        if isinstance(n, s.Stmt)
    ]


def _small_bound(condition: s.Expr | None, checker: Checker) -> int | None:
    """BOUND of a condition `NAME OP BOUND` (or `BOUND OP NAME`), when it is at most SMALL_BOUND:
    BOUND an integer literal or a module-scope `const` of integer value (an override is not
    constant: a run sets it)."""
    while isinstance(condition, s.Paren):
        condition = condition.inner
    if not isinstance(condition, s.Binary) or condition.op not in _COMPARISONS:
        return None
    sides = [_unwrapped(condition.lhs), _unwrapped(condition.rhs)]
    if not all(isinstance(e, (s.Ident, s.Literal)) for e in sides):
        return None
    for side in (sides[1], sides[0]):
        value = _integer(side, checker)
        if value is not None and 0 <= value <= SMALL_BOUND:
            return value
    return None


def _unwrapped(e: s.Expr) -> s.Expr:
    while isinstance(e, s.Paren):
        e = e.inner
    return e


def _integer(e: s.Expr, checker: Checker) -> int | None:
    """The integer value of a literal or of a module-scope const, else None."""
    if isinstance(e, s.Literal) and e.kind == "int":
        value = literal(e.text, e.kind).value
    elif isinstance(e, s.Ident) and e.template is None:
        decl = checker.globals.get(e.name)
        if not isinstance(decl, s.VarDecl) or decl.kind != "const":
            return None
        value = checker.global_value(e.name).value
    else:
        return None
    return value if isinstance(value, int) and not isinstance(value, bool) else None
