"""Which storage bindings an entry point stores to, read from the syntax tree: the root variable of
every assignment's and increment's left side, of the pointer an atomic read-modify-write (anything
but `atomicLoad`) is given, and of any `&binding...` passed to a function of the module (which may
store through it), in the functions the entry point reaches. `describe` gives the others the role
of inputs, whatever their access mode."""

from __future__ import annotations

from collections.abc import Collection, Iterable

from workbench.wgsl import syntax as s
from workbench.wgsl.parser import parse


def _root(e: s.Expr) -> str | None:
    """The variable an lvalue or pointer expression names: `a[i].x` -> a, `*p` -> p, `&a[i]` -> a."""
    while True:
        if isinstance(e, s.Ident):
            return e.name
        if isinstance(e, (s.Member, s.Index)):
            e = e.base
        elif isinstance(e, s.Paren):
            e = e.inner
        elif isinstance(e, s.Unary) and e.op in ("*", "&"):
            e = e.operand
        else:
            return None


def stored_bindings(
    text: str, functions: Iterable[str], names: Collection[str], where: str = "<wgsl>"
) -> frozenset[str]:
    """The bindings among `names` that the `functions` of module `text` store to."""
    tree = parse(text, where)
    reached = set(functions)
    own = {f.name for f in tree.functions()}
    stack: list[s.Node] = [f.body for f in tree.functions() if f.name in reached]
    out: set[str] = set()
    while stack:
        node = stack.pop()
        target: list[s.Expr] = []
        if isinstance(node, s.Assign):
            target.append(node.lhs)
        elif isinstance(node, s.Increment):
            target.append(node.target)
        elif isinstance(node, s.Call):
            callee = node.callee.name
            if callee.startswith("atomic") and callee != "atomicLoad" and node.args:
                target.append(node.args[0])
            elif callee in own:
                target += [a for a in node.args if isinstance(a, s.Unary) and a.op == "&"]
        for t in target:
            name = _root(t)
            if name is not None and name in names:
                out.add(name)
        stack.extend(s.children(node))
    return frozenset(out)
