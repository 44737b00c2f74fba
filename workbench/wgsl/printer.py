"""Prints a syntax tree back to WGSL text that means the same: one declaration or statement a line,
four-space indents, comments dropped, parentheses kept where the source had them."""

from __future__ import annotations

from workbench.wgsl import syntax as s
from workbench.wgsl.parser import recursion_room


def print_module(module: s.Module) -> str:
    """The module as text; compiling it gives what compiling the source gives."""
    with recursion_room():
        out: list[str] = []
        for decl in module.decls:
            _decl(decl, out, module.text)
        return "\n".join(out) + "\n"


def print_expr(e: s.Expr) -> str:
    with recursion_room():
        return _expr(e)


def _attrs(attrs: tuple[s.Attribute, ...]) -> str:
    parts = []
    for a in attrs:
        if a.name == "diagnostic":
            parts.append(f"@diagnostic({', '.join(_expr(x) for x in a.args)}) ")
        elif a.args:
            parts.append(f"@{a.name}({', '.join(_expr(x) for x in a.args)}) ")
        else:
            parts.append(f"@{a.name} ")
    return "".join(parts)


def _decl(d: s.Decl, out: list[str], text: str) -> None:
    if isinstance(d, s.Directive):
        if d.kind == "diagnostic":
            out.append(f"diagnostic({', '.join(d.words)});")
        else:
            out.append(f"{d.kind} {', '.join(d.words)};")
    elif isinstance(d, s.Struct):
        members = [f"    {_attrs(m.attrs)}{m.name}: {_expr(m.type)}," for m in d.members]
        out.extend([f"struct {d.name} {{", *members, "}"])
    elif isinstance(d, s.Alias):
        out.append(f"alias {d.name} = {_expr(d.type)};")
    elif isinstance(d, s.VarDecl):
        out.append(_var(d) + ";")
    elif isinstance(d, s.Function):
        params = ", ".join(f"{_attrs(p.attrs)}{p.name}: {_expr(p.type)}" for p in d.params)
        result = ""
        if d.result is not None:
            result = f" -> {_attrs(d.result_attrs)}{_expr(d.result)}"
        head = f"{_attrs(d.attrs)}fn {d.name}({params}){result} "
        if d.unparsed:
            # A body the parser could not read is kept as written, for the compiler to judge.
            out.append(head + text[d.body.span[0] : d.body.span[1]])
            return
        out.append(head + "{")
        _body(d.body.body, out, 1)
        out.append("}")
    elif isinstance(d, s.ConstAssert):
        out.append(f"const_assert {_expr(d.condition)};")
    else:
        out.append(";")


def _var(d: s.VarDecl) -> str:
    text = _attrs(d.attrs) + d.kind
    if d.template:
        text += f"<{', '.join(d.template)}>"
    text += f" {d.name}"
    if d.type is not None:
        text += f": {_expr(d.type)}"
    if d.init is not None:
        text += f" = {_expr(d.init)}"
    return text


def _body(stmts: list[s.Stmt], out: list[str], level: int) -> None:
    for st in stmts:
        _stmt(st, out, level)


def _block(b: s.Block, out: list[str], level: int, head: str) -> None:
    """`head {`, the statements one level in, and `}`."""
    pad = "    " * level
    out.append(f"{pad}{head}{_attrs(b.attrs)}{{")
    _body(b.body, out, level + 1)
    out.append(f"{pad}}}")


def _simple(st: s.Stmt | None) -> str:
    """A statement that may sit in a `for` header, without its `;`."""
    if st is None:
        return ""
    if isinstance(st, s.VarDecl):
        return _var(st)
    if isinstance(st, s.Assign):
        return f"{_expr(st.lhs)} {st.op} {_expr(st.rhs)}"
    if isinstance(st, s.Increment):
        return f"{_expr(st.target)}{st.op}"
    if isinstance(st, s.CallStmt):
        return _expr(st.call)
    raise TypeError(f"not a simple statement: {type(st).__name__}")


def _stmt(st: s.Stmt, out: list[str], level: int) -> None:
    pad = "    " * level
    if isinstance(st, s.Block):
        _block(st, out, level, "")
    elif isinstance(st, (s.VarDecl, s.Assign, s.Increment, s.CallStmt)):
        out.append(f"{pad}{_simple(st)};")
    elif isinstance(st, s.Return):
        out.append(f"{pad}return{'' if st.value is None else ' ' + _expr(st.value)};")
    elif isinstance(st, s.If):
        for k, (test, body) in enumerate(st.clauses):
            head = (
                f"{_attrs(st.attrs)}if {_expr(test)} " if k == 0 else f"}} else if {_expr(test)} "
            )
            out.append(f"{pad}{head}{_attrs(body.attrs)}{{")
            _body(body.body, out, level + 1)
        if st.otherwise is not None:
            out.append(f"{pad}}} else {_attrs(st.otherwise.attrs)}{{")
            _body(st.otherwise.body, out, level + 1)
        out.append(f"{pad}}}")
    elif isinstance(st, s.Switch):
        out.append(f"{pad}{_attrs(st.attrs)}switch {_expr(st.value)} {_attrs(st.body_attrs)}{{")
        for clause in st.clauses:
            sels = ", ".join("default" if x is None else _expr(x) for x in clause.selectors)
            _block(clause.body, out, level + 1, f"case {sels}: ")
        out.append(f"{pad}}}")
    elif isinstance(st, s.Loop):
        out.append(f"{pad}{_attrs(st.attrs)}loop {_attrs(st.body.attrs)}{{")
        _body(st.body.body, out, level + 1)
        if st.continuing is not None:
            inner = "    " * (level + 1)
            out.append(f"{inner}continuing {_attrs(st.continuing_attrs)}{{")
            _body(st.continuing.body, out, level + 2)
            if st.break_if is not None:
                out.append(f"{inner}    break if {_expr(st.break_if)};")
            out.append(f"{inner}}}")
        out.append(f"{pad}}}")
    elif isinstance(st, s.For):
        cond = "" if st.condition is None else _expr(st.condition)
        head = f"{_attrs(st.attrs)}for ({_simple(st.init)}; {cond}; {_simple(st.update)}) "
        _block(st.body, out, level, head)
    elif isinstance(st, s.While):
        _block(st.body, out, level, f"{_attrs(st.attrs)}while {_expr(st.condition)} ")
    elif isinstance(st, s.Jump):
        out.append(f"{pad}{st.word};")
    elif isinstance(st, s.ConstAssert):
        out.append(f"{pad}const_assert {_expr(st.condition)};")
    else:
        out.append(f"{pad};")


def _expr(e: s.Expr) -> str:
    if isinstance(e, s.Literal):
        return e.text
    if isinstance(e, s.Ident):
        if e.template is None:
            return e.name
        return f"{e.name}<{', '.join(_expr(a) for a in e.template)}>"
    if isinstance(e, s.Call):
        return f"{_expr(e.callee)}({', '.join(_expr(a) for a in e.args)})"
    if isinstance(e, s.Member):
        return f"{_expr(e.base)}.{e.name}"
    if isinstance(e, s.Index):
        return f"{_expr(e.base)}[{_expr(e.index)}]"
    if isinstance(e, s.Unary):
        inner = _expr(e.operand)
        # `- -x` must not print as the decrement token, nor `& &x` as `&&`.
        sep = " " if inner.startswith(e.op) else ""
        return f"{e.op}{sep}{inner}"
    if isinstance(e, s.Binary):
        return f"{_expr(e.lhs)} {e.op} {_expr(e.rhs)}"
    if isinstance(e, s.Paren):
        return f"({_expr(e.inner)})"
    raise TypeError(f"not an expression: {type(e).__name__}")
