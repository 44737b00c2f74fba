"""Resolver and type checker: every identifier to its declaration, every expression to its type,
every const-expression to its value.

Module-scope declarations may come in any order: a name is resolved when it is first needed, and
a cycle resolves to unknown. Inside functions, scopes follow blocks. Types are `WType`s (scalars
including f16 and the abstract numerics, vectors, matrices, arrays, structs, pointers, atomics;
textures with the type their texels read as, samplers). Values come from `consteval`.

The checker never refuses a module: what it cannot work out (a construct it does not know, a
builtin it has no rule for, a name that is not declared) becomes the unknown type and is noted in
`unknowns`; the compiler judges legality. Only callers that need a type to act (reflection laying
out a binding) ask for it strictly and get a `ReflectionError` saying why.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from workbench.errors import ReflectionError
from workbench.wgsl import consteval as ce
from workbench.wgsl import syntax as s
from workbench.wgsl.consteval import Typed
from workbench.wgsl.lexer import line_of
from workbench.wgsl.parser import recursion_room
from workbench.wgsl.types import (
    ABSTRACT_FLOAT,
    ABSTRACT_INT,
    SAMPLERS,
    SCALARS,
    TEXTURE_DIMENSIONS,
    UNKNOWN,
    WType,
    make_array,
    make_atomic,
    make_matrix,
    make_pointer,
    make_scalar,
    make_struct,
    make_texture,
    make_vector,
    vector_shorthand,
)

_SCALAR_NAMES = frozenset(SCALARS)
_SWIZZLE = ("xyzw", "rgba")


_Scope = dict[str, tuple[s.Node, Typed]]  # a block's names: declaration and typed value


@dataclass
class FunctionFacts:
    """What one function's body mentions: module-scope names it resolves to, and the names that
    resolve to nothing the module declares (builtins such as `subgroupAdd`)."""

    globals: set[str] = field(default_factory=set)
    builtins: set[str] = field(default_factory=set)


class Checker:
    """Checks one parsed module; `overrides` gives values of `override` declarations."""

    def __init__(
        self, module: s.Module, where: str = "<wgsl>", overrides: Mapping[str, float] | None = None
    ) -> None:
        self.module = module
        self.where = where
        self.override_values = dict(overrides or {})
        self.globals: dict[str, s.Decl] = {}
        for d in module.decls:
            name = getattr(d, "name", None)
            if isinstance(name, str):
                self.globals.setdefault(name, d)
        self.types: dict[int, WType] = {}  # id(expression) -> its type
        self.resolved: dict[int, s.Node | str] = {}  # id(Ident) -> declaration, or "builtin"
        self.unknowns: list[tuple[s.Span, str]] = []
        self.facts: dict[str, FunctionFacts] = {}
        self.pending: set[str] = set()  # default-less overrides met since last cleared
        self._values: dict[str, Typed] = {}
        self._structs: dict[str, WType] = {}
        self._busy: set[str] = set()
        self._scopes: list[_Scope] = []
        self._facts: FunctionFacts | None = None

    # -- whole module ------------------------------------------------------------------------
    def check(self) -> Checker:
        """Type every declaration and every function body; returns itself."""
        with recursion_room():
            for d in self.module.decls:
                if isinstance(d, s.Function):
                    self.function(d)
                elif isinstance(d, s.VarDecl):
                    self.global_value(d.name)
                elif isinstance(d, s.Struct):
                    self.struct_type(d.name)
                elif isinstance(d, s.Alias):
                    self.resolve_type(d.type)
                elif isinstance(d, s.ConstAssert):
                    self.expr(d.condition)
        return self

    def err(self, span: s.Span, msg: str) -> ReflectionError:
        return ReflectionError(f"{self.where}:{line_of(self.module.text, span[0])}: {msg}")

    def _unknown(self, span: s.Span, why: str) -> WType:
        self.unknowns.append((span, why))
        return UNKNOWN

    # -- types -------------------------------------------------------------------------------
    def struct_type(self, name: str, strict: bool = False) -> WType:
        if name in self._structs and not strict:
            return self._structs[name]
        decl = self.globals.get(name)
        if not isinstance(decl, s.Struct) or name in self._busy:
            return UNKNOWN
        self._busy.add(name)
        try:
            fields: list[tuple[str, WType]] = []
            layout: list[tuple[int | None, int | None]] = []
            for m in decl.members:
                fields.append((m.name, self.resolve_type(m.type, strict)))
                layout.append(
                    (
                        self._layout_attr(m.attrs, "align", strict),
                        self._layout_attr(m.attrs, "size", strict),
                    )
                )
        finally:
            self._busy.discard(name)
        if any(t.kind in _NO_LAYOUT for _, t in fields):
            # No layout for what the compiler will judge; a strict caller has raised already.
            t = WType("struct", name, members=tuple())
        else:
            t = make_struct(name, fields, attrs=layout)
        self._structs[name] = t
        return t

    def _layout_attr(self, attrs: tuple[s.Attribute, ...], what: str, strict: bool) -> int | None:
        a = next((x for x in attrs if x.name == what), None)
        if a is None:
            return None
        v = self.expr(a.args[0]).value if a.args else None
        if isinstance(v, bool) or not isinstance(v, (int, float)) or v != int(v) or v <= 0:
            if strict:
                raise self.err(
                    a.span, f"@{what} on a struct member needs a positive integer constant"
                )
            return None
        return int(v)

    def resolve_type(self, e: s.Expr, strict: bool = False) -> WType:
        """The type a type expression names; unknown (or, when `strict`, a ReflectionError)
        when it cannot be worked out."""
        t = self._resolve_type(e, strict)
        self.types[id(e)] = t
        return t

    def _resolve_type(self, e: s.Expr, strict: bool) -> WType:
        if not isinstance(e, s.Ident):
            return self._fail(e.span, "expected a type", strict)
        name, args = e.name, e.template or ()
        decl = self.globals.get(name)
        if decl is not None:
            self.resolved[id(e)] = decl
            self._note_global(name)
            if isinstance(decl, s.Struct):
                return self.struct_type(name, strict)
            if isinstance(decl, s.Alias):
                if name in self._busy:
                    return self._fail(e.span, f"alias '{name}' refers to itself", strict)
                self._busy.add(name)
                try:
                    return self.resolve_type(decl.type, strict)
                finally:
                    self._busy.discard(name)
            return self._fail(e.span, f"'{name}' is not a type", strict)
        self.resolved[id(e)] = "builtin"
        if name in _SCALAR_NAMES and not args:
            return make_scalar(name)
        short = vector_shorthand(name)
        if short is not None and not args:
            return short
        if name in ("vec2", "vec3", "vec4", "atomic") or _is_matrix(name):
            if len(args) != 1:
                return self._fail(e.span, f"{name}<...> needs one type", strict)
            inner = self.resolve_type(args[0], strict)
            if inner.kind != "scalar":
                return self._fail(
                    e.span, f"{name}<...> needs a scalar type, not '{inner.text}'", strict
                )
            scalar = inner.text
            if name == "atomic":
                return make_atomic(inner)
            if name.startswith("vec"):
                return make_vector(int(name[3]), scalar)
            return make_matrix(int(name[3]), int(name[5]), scalar)
        if name == "array":
            if not args:
                return self._fail(e.span, "array needs an element type", strict)
            element = self.resolve_type(args[0], strict)
            if len(args) == 1:
                return make_array(element, None)
            return make_array(element, self._array_length(args[1], e.span, strict))
        if name == "ptr":
            words = [a.name if isinstance(a, s.Ident) else "" for a in args]
            store = self.resolve_type(args[1], strict) if len(args) > 1 else UNKNOWN
            return make_pointer(
                words[0] if words else "", store, words[2] if len(words) > 2 else ""
            )
        if name in TEXTURE_DIMENSIONS:
            return make_texture(name, tuple(a.name if isinstance(a, s.Ident) else "" for a in args))
        if name in SAMPLERS:
            return WType("sampler", name)
        if name.startswith(("texture", "sampler", "binding_array")) or name in _OPAQUE:
            for a in args:
                if isinstance(a, s.Ident) and a.template is not None:
                    self.resolve_type(a)
            return WType("opaque", name)
        if strict:
            raise self.err(e.span, f"unknown type '{name}'")
        return self._unknown(e.span, f"unknown type '{name}'")

    def _array_length(self, e: s.Expr, span: s.Span, strict: bool) -> int | None:
        before = set(self.pending)
        v = self.expr(e)
        value = v.value
        waiting = self.pending - before
        if value is None and waiting:
            return 1  # sized by an override given at pipeline creation: 1 until it is known
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            if strict:
                raise self.err(span, "array length must be a positive constant")
            self._unknown(span, "array length not worked out")
            return 1
        return value

    def _fail(self, span: s.Span, why: str, strict: bool) -> WType:
        if strict:
            raise self.err(span, why)
        return self._unknown(span, why)

    # -- module-scope values -----------------------------------------------------------------
    def global_value(self, name: str) -> Typed:
        """The type and (for consts and overrides with values) value of a module-scope
        `const`, `override` or `var`."""
        if name in self._values:
            return self._values[name]
        decl = self.globals.get(name)
        if not isinstance(decl, s.VarDecl) or name in self._busy:
            return ce.UNKNOWN_TYPED
        self._busy.add(name)
        saved, self._scopes = self._scopes, []
        try:
            result = self._declared(decl)
        finally:
            self._scopes = saved
            self._busy.discard(name)
        if decl.kind == "override" and name in self.override_values:
            result = Typed(result.type, _given(self.override_values[name], result.type))
        if decl.kind == "override" and result.value is None and name not in self.override_values:
            self.pending.add(name)
            return result  # not cached: every use notes the override it waits for
        if decl.kind == "var":
            result = Typed(result.type)
        self._values[name] = result
        return result

    def _declared(self, decl: s.VarDecl) -> Typed:
        """The type and value of a declaration from its written type and its initializer."""
        declared = self.resolve_type(decl.type) if decl.type is not None else None
        init = self.expr(decl.init) if decl.init is not None else None
        if declared is not None:
            if init is None or init.value is None:
                return Typed(declared)
            return _converted(init, declared)
        if init is None:
            return ce.UNKNOWN_TYPED
        if decl.kind in ("const",):
            return init
        return Typed(ce.concrete(init.type), _converted(init, ce.concrete(init.type)).value)

    def _note_global(self, name: str) -> None:
        if self._facts is not None:
            self._facts.globals.add(name)

    # -- functions ---------------------------------------------------------------------------
    def function(self, fn: s.Function) -> FunctionFacts:
        facts = self.facts.setdefault(fn.name, FunctionFacts())
        outer = self._facts
        self._facts = facts
        saved, self._scopes = self._scopes, [{}]
        try:
            for a in fn.attrs:
                self._attribute(a)
            for p in fn.params:
                for a in p.attrs:
                    self._attribute(a)
                t = self.resolve_type(p.type)
                self._scopes[-1][p.name] = (p, Typed(t))
            for a in fn.result_attrs:
                self._attribute(a)
            if fn.result is not None:
                self.resolve_type(fn.result)
            if fn.unparsed:
                at = fn.unparsed_at
                self.unknowns.append(
                    ((at, at), f"the body of '{fn.name}' was not read: {fn.unparsed}")
                )
                for name in fn.loose_names:
                    if name in self.globals and self._lookup(name) is None:
                        facts.globals.add(name)
                    else:
                        facts.builtins.add(name)
            self.block(fn.body, new_scope=False)
        finally:
            self._scopes = saved
            self._facts = outer
        return facts

    def _attribute(self, a: s.Attribute) -> None:
        for arg in a.args:
            if isinstance(arg, s.Ident) and arg.template is None and arg.name not in self.globals:
                # `@builtin(subgroup_size)`, `@interpolate(flat)`: words, not names.
                if self._facts is not None:
                    self._facts.builtins.add(arg.name)
            else:
                self.expr(arg)

    def return_type(self, name: str) -> WType:
        decl = self.globals.get(name)
        if isinstance(decl, s.Function):
            return self.resolve_type(decl.result) if decl.result is not None else ce.VOID
        return UNKNOWN

    def block(self, b: s.Block, new_scope: bool = True) -> None:
        if new_scope:
            self._scopes.append({})
        try:
            for st in b.body:
                self.statement(st)
        finally:
            if new_scope:
                self._scopes.pop()

    def statement(self, st: s.Stmt) -> None:
        if isinstance(st, s.Block):
            self.block(st)
        elif isinstance(st, s.VarDecl):
            t = self._declared(st)
            if st.kind != "const":
                t = Typed(t.type)
            self._scopes[-1][st.name] = (st, t)
        elif isinstance(st, s.Assign):
            if not (isinstance(st.lhs, s.Ident) and st.lhs.name == "_"):
                self.expr(st.lhs)
            self.expr(st.rhs)
        elif isinstance(st, s.Increment):
            self.expr(st.target)
        elif isinstance(st, s.CallStmt):
            self.expr(st.call)
        elif isinstance(st, s.Return):
            if st.value is not None:
                self.expr(st.value)
        elif isinstance(st, s.If):
            for cond, body in st.clauses:
                self.expr(cond)
                self.block(body)
            if st.otherwise is not None:
                self.block(st.otherwise)
        elif isinstance(st, s.Switch):
            self.expr(st.value)
            for clause in st.clauses:
                for sel in clause.selectors:
                    if sel is not None:
                        self.expr(sel)
                self.block(clause.body)
        elif isinstance(st, s.Loop):
            self._scopes.append({})
            try:
                self.block(st.body, new_scope=False)
                if st.continuing is not None:
                    self.block(st.continuing)
                if st.break_if is not None:
                    self.expr(st.break_if)
            finally:
                self._scopes.pop()
        elif isinstance(st, s.For):
            self._scopes.append({})
            try:
                if st.init is not None:
                    self.statement(st.init)
                if st.condition is not None:
                    self.expr(st.condition)
                if st.update is not None:
                    self.statement(st.update)
                self.block(st.body)
            finally:
                self._scopes.pop()
        elif isinstance(st, s.While):
            self.expr(st.condition)
            self.block(st.body)
        elif isinstance(st, s.ConstAssert):
            self.expr(st.condition)

    # -- expressions -------------------------------------------------------------------------
    def expr(self, e: s.Expr) -> Typed:
        """The type and (for a constant) value of an expression; recorded in `types`."""
        result = self._expr(e)
        self.types[id(e)] = result.type
        return result

    def _lookup(self, name: str) -> tuple[s.Node, Typed] | None:
        scopes = self._scopes
        for k in range(len(scopes) - 1, -1, -1):
            found = scopes[k].get(name)
            if found is not None:
                return found
        return None

    def _expr(self, e: s.Expr) -> Typed:
        if isinstance(e, s.Literal):
            return ce.literal(e.text, e.kind)
        if isinstance(e, s.Paren):
            return self.expr(e.inner)
        if isinstance(e, s.Binary):
            return ce.binary(e.op, self.expr(e.lhs), self.expr(e.rhs))
        if isinstance(e, s.Unary):
            inner = self.expr(e.operand)
            if e.op == "&":
                return Typed(make_pointer(self._space_of(e.operand), inner.type))
            if e.op == "*":
                t = inner.type
                return Typed(t.element if t.kind == "pointer" and t.element else UNKNOWN)
            return ce.unary(e.op, inner)
        if isinstance(e, s.Ident):
            return self._ident(e)
        if isinstance(e, s.Call):
            return self._call(e)
        if isinstance(e, s.Member):
            return self._member(e)
        if isinstance(e, s.Index):
            return self._index(e)
        return ce.UNKNOWN_TYPED

    def _ident(self, e: s.Ident) -> Typed:
        if e.template is not None:
            self.resolve_type(e)
            return ce.UNKNOWN_TYPED
        local = self._lookup(e.name)
        if local is not None:
            self.resolved[id(e)] = local[0]
            return local[1]
        decl = self.globals.get(e.name)
        if decl is not None:
            self.resolved[id(e)] = decl
            self._note_global(e.name)
            if isinstance(decl, s.VarDecl):
                return self.global_value(e.name)
            return ce.UNKNOWN_TYPED
        self.resolved[id(e)] = "builtin"
        if self._facts is not None:
            self._facts.builtins.add(e.name)
        self._unknown(e.span, f"'{e.name}' is not declared")
        return ce.UNKNOWN_TYPED

    def _space_of(self, e: s.Expr) -> str:
        """The address space of the variable a reference expression names (best effort)."""
        while isinstance(e, (s.Member, s.Index, s.Paren)):
            e = e.inner if isinstance(e, s.Paren) else e.base
        if isinstance(e, s.Ident):
            decl = self._lookup(e.name)
            node = decl[0] if decl is not None else self.globals.get(e.name)
            if isinstance(node, s.VarDecl):
                if node.template:
                    return node.template[0]
                return "function" if decl is not None else "handle"
        return ""

    def _call(self, e: s.Call) -> Typed:
        callee = e.callee
        name = callee.name
        decl = self.globals.get(name)
        if isinstance(decl, s.Function):
            self.resolved[id(callee)] = decl
            self._note_global(name)
            for a in e.args:
                self.expr(a)
            return Typed(self.return_type(name))
        if isinstance(decl, (s.Struct, s.Alias)):
            t = self.resolve_type(callee)
            return ce.construct(t, [self.expr(a) for a in e.args])
        args = [self.expr(a) for a in e.args]
        self.resolved[id(callee)] = "builtin"
        if self._facts is not None:
            self._facts.builtins.add(name)
        if name == "bitcast":
            if callee.template:
                return Typed(self.resolve_type(callee.template[0]))
            return ce.UNKNOWN_TYPED
        if _is_type_name(name) or (callee.template is not None and name in _TEMPLATED_TYPES):
            if callee.template is None and (
                name in ("vec2", "vec3", "vec4", "array") or _is_matrix(name)
            ):
                t = ce.infer_constructed(name, args)
            else:
                t = self.resolve_type(callee)
            return ce.construct(t, args)
        try:
            result = ce.builtin(name, args)
        except (ArithmeticError, ValueError, TypeError, IndexError, AttributeError):
            result = None  # arguments no rule expects: the compiler will say what is wrong
        if result is None:
            self._unknown(e.span, f"no rule for the builtin '{name}'")
            return ce.UNKNOWN_TYPED
        return result

    def _member(self, e: s.Member) -> Typed:
        base = self.expr(e.base)
        t = base.type
        if t.kind == "pointer" and t.element is not None:
            t = t.element
            base = Typed(t)
        if t.kind == "vector":
            letters = next((sw for sw in _SWIZZLE if all(c in sw for c in e.name)), None)
            if letters is None or not 1 <= len(e.name) <= 4:
                return Typed(self._unknown(e.span, f"no swizzle '{e.name}'"))
            picks = [letters.index(c) for c in e.name]
            scalar = t.scalar or ""
            rt = make_scalar(scalar) if len(picks) == 1 else make_vector(len(picks), scalar)
            v = base.value
            if isinstance(v, tuple) and all(p < len(v) for p in picks):
                return Typed(rt, v[picks[0]] if len(picks) == 1 else tuple(v[p] for p in picks))
            return Typed(rt)
        if t.kind == "struct":
            for k, m in enumerate(t.members):
                if m.name == e.name:
                    v = base.value
                    return Typed(m.type, v[k] if isinstance(v, tuple) and k < len(v) else None)
        return Typed(self._unknown(e.span, f"no member '{e.name}' worked out"))

    def _index(self, e: s.Index) -> Typed:
        base = self.expr(e.base)
        index = self.expr(e.index)
        t = base.type
        if t.kind == "pointer" and t.element is not None:
            t = t.element
        if t.kind == "array" and t.element is not None:
            rt = t.element
        elif t.kind == "vector":
            rt = make_scalar(t.scalar or "")
        elif t.kind == "matrix":
            rt = make_vector(t.rows, t.scalar or "")
        else:
            return Typed(self._unknown(e.span, "indexing a value of unknown type"))
        v, k = base.value, index.value
        if (
            isinstance(v, tuple)
            and isinstance(k, int)
            and not isinstance(k, bool)
            and 0 <= k < len(v)
        ):
            return Typed(rt, v[k])
        return Typed(rt)


# Predeclared types written with a template list (`vec3<f32>(...)` constructs one); any other
# templated call is a builtin function such as `bitcast<T>` or an extension's.
_TEMPLATED_TYPES = frozenset({"vec2", "vec3", "vec4", "array", "atomic", "ptr"})
_OPAQUE = frozenset({"acceleration_structure", "ray_query"})
_NO_LAYOUT = frozenset({"unknown", "opaque", "pointer", "texture", "sampler"})


def _is_matrix(name: str) -> bool:
    return (
        len(name) == 6
        and name.startswith("mat")
        and name[3] in "234"
        and name[4] == "x"
        and name[5] in "234"
    )


def _is_type_name(name: str) -> bool:
    return (
        name in _SCALAR_NAMES
        or vector_shorthand(name) is not None
        or name in ("vec2", "vec3", "vec4", "array")
        or _is_matrix(name)
    )


def _converted(v: Typed, t: WType) -> Typed:
    """A value as a value of the declared type `t` (abstract numerics convert)."""
    scalar = t.scalar
    if v.value is None or scalar is None or t.kind not in ("scalar", "vector", "array", "matrix"):
        return Typed(t, v.value if v.type == t else None)
    if v.type.scalar == scalar:
        return Typed(t, v.value)
    converted = ce.convert(v, scalar)
    return Typed(t, converted.value)


def _given(value: float, t: WType) -> ce.Value:
    """An override's value given by a run, as a value of the override's type."""
    if t.scalar in ("i32", "u32", ABSTRACT_INT) and float(value).is_integer():
        return int(value)
    if t.scalar == "bool":
        return bool(value)
    if t.scalar in ("f32", "f16", ABSTRACT_FLOAT):
        return float(value)
    return int(value) if float(value).is_integer() and not isinstance(value, float) else value


def check(
    module: s.Module, where: str = "<wgsl>", overrides: Mapping[str, float] | None = None
) -> Checker:
    """A checked module."""
    return Checker(module, where, overrides).check()
