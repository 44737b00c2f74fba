"""Reflection by parsing: module-scope declarations of a WGSL module and what each entry point uses.

wgpu has no reflection API, so this reads the declarations itself: `struct`, `alias`, `const`,
`override`, resource `var`s with `@group/@binding`, `var<workgroup>`s, and `fn`s with
`@compute @workgroup_size`. Function bodies are not parsed, only scanned for the identifiers they
mention, which is enough to find the bindings and workgroup variables an entry point reaches through
the functions it calls. Every failure is a `ReflectionError` naming the line.

An `override` without a default may size a workgroup (`@workgroup_size(wg)`) or a `var<workgroup>`
array: reflection then records which overrides the entry point `needs` (sizes stand at 1 until
they are given) and `reflect(text, overrides=...)` resolves them with the values a run uses. Per
entry point it also records whether it reads `num_workgroups` (only such a kernel may have its
grid folded into 2-D), the features what it reaches needs, and which `array<atomic<u32>>`
bindings it reads as f32 bits (`bitcast<f32>(atomicLoad(...))`, the CAS float-add pattern).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import ClassVar

from workbench.errors import ReflectionError
from workbench.wgsl.scan import Token, line_of, tokenize
from workbench.wgsl.types import (
    SCALARS,
    WType,
    make_array,
    make_atomic,
    make_matrix,
    make_scalar,
    make_struct,
    make_vector,
    round_up,
    uniform_layout,
    vector_shorthand,
)

SUBGROUP_WORDS = frozenset(
    {
        "subgroup_size",
        "subgroup_invocation_id",
        "subgroupAdd",
        "subgroupExclusiveAdd",
        "subgroupInclusiveAdd",
        "subgroupMul",
        "subgroupMax",
        "subgroupMin",
        "subgroupAnd",
        "subgroupOr",
        "subgroupXor",
        "subgroupAll",
        "subgroupAny",
        "subgroupBallot",
        "subgroupBroadcast",
        "subgroupBroadcastFirst",
        "subgroupElect",
        "subgroupShuffle",
        "subgroupShuffleDown",
        "subgroupShuffleUp",
        "subgroupShuffleXor",
        "subgroupBarrier",
        "quadBroadcast",
        "quadSwapX",
        "quadSwapY",
        "quadSwapDiagonal",
    }
)
F16_WORDS = frozenset(
    {"f16", "vec2h", "vec3h", "vec4h"} | {f"mat{c}x{r}h" for c in "234" for r in "234"}
)


@dataclass(frozen=True)
class Binding:
    """One resource variable: where it binds, what it holds, and its layout."""

    group: int
    binding: int
    name: str
    space: str  # "storage" or "uniform"
    access: str  # "read", "read_write" (storage) or "" (uniform)
    type: WType
    line: int

    @property
    def runtime_sized(self) -> bool:
        return self.type.runtime_sized

    @property
    def element(self) -> WType:
        """The array element type, or the type itself for a non-array binding."""
        return self.type.element if self.type.kind == "array" and self.type.element else self.type

    @property
    def element_stride(self) -> int:
        if self.type.kind == "array":
            return self.type.stride(self.space == "uniform")
        return self.type.size(self.space == "uniform")

    @property
    def fixed_size(self) -> int | None:
        """Bytes of a fixed-size binding; None when runtime-sized."""
        if self.runtime_sized:
            return None
        return self.type.size(self.space == "uniform")

    @property
    def signature(self) -> tuple[int, int, str, str, str]:
        return (self.group, self.binding, self.space, self.access, self.type.text)


@dataclass(frozen=True)
class Override:
    name: str
    type: str
    default: float | int | None
    id: int | None


@dataclass(frozen=True)
class WorkgroupVar:
    """One module-scope `var<workgroup>`: memory shared by the invocations of a workgroup."""

    name: str
    type: WType
    line: int
    needs: tuple[str, ...] = ()  # default-less overrides its array length depends on

    @property
    def size(self) -> int:
        """Bytes of the type by the storage layout rules."""
        return self.type.size()

    @property
    def footprint(self) -> int:
        """What WebGPU counts against max-compute-workgroup-storage-size: the size rounded up
        to 16 bytes (createComputePipeline's workgroupStorageUsed)."""
        return round_up(16, self.size)


@dataclass(frozen=True)
class EntryPoint:
    name: str
    workgroup_size: tuple[int, int, int]
    bindings: tuple[Binding, ...]  # those the entry point reaches, sorted by (group, binding)
    line: int
    workgroup_bytes: int = 0  # sum of the footprints of `workgroup_vars`
    workgroup_vars: tuple[WorkgroupVar, ...] = ()  # those the entry point reaches, in source order
    needs: tuple[str, ...] = ()  # default-less overrides its sizes depend on, not yet given
    reads_num_workgroups: bool = False
    indexes_by_global_id: bool = False  # it takes @builtin(global_invocation_id)
    features: tuple[str, ...] = ()  # device features of what it reaches (wgpu names)
    f32_bits: tuple[str, ...] = ()  # array<atomic<u32>> bindings it reads as f32 bits
    functions: tuple[str, ...] = ()  # the functions it reaches, itself included


@dataclass
class ModuleInfo:
    """Everything reflection found in one module."""

    bindings: dict[str, Binding] = field(default_factory=dict)
    workgroup_vars: dict[str, WorkgroupVar] = field(default_factory=dict)
    structs: dict[str, WType] = field(default_factory=dict)
    consts: dict[str, float | int] = field(default_factory=dict)
    overrides: dict[str, Override] = field(default_factory=dict)
    entry_points: dict[str, EntryPoint] = field(default_factory=dict)
    # @compute functions that cannot be entry points: name -> (module line, why). One bad kernel
    # must not hide the module's other kernels.
    entry_problems: dict[str, tuple[int, str]] = field(default_factory=dict)
    uses_f16: bool = False
    uses_subgroups: bool = False
    functions: dict[str, tuple[int, int]] = field(default_factory=dict)  # name -> text span

    @property
    def features(self) -> tuple[str, ...]:
        """Device features the module needs (wgpu feature names)."""
        need = []
        if self.uses_f16:
            need.append("shader-f16")
        if self.uses_subgroups:
            need.append("subgroup")
        return tuple(need)


_SUBGROUP_WIDTH_NAME = re.compile(
    r"(subgroup|simdgroup|sg|warp|wave|simd)_?(size|width|lanes|len)", re.I
)


def subgroup_width_constants(module: ModuleInfo) -> dict[str, int]:
    """Module-scope integer constants named like a subgroup width (`SUBGROUP_SIZE`, `WARP_SIZE`,
    `sg_width`, ...) in a module that uses subgroup builtins: code that hard-codes the width runs
    wrongly on an adapter whose subgroups are another size."""
    if not module.uses_subgroups:
        return {}
    return {
        name: int(value)
        for name, value in module.consts.items()
        if _SUBGROUP_WIDTH_NAME.fullmatch(name) and float(value).is_integer()
    }


@dataclass
class _Fn:
    name: str
    attrs: dict[str, list[list[Token]]]
    idents: set[str]
    line: int
    params: set[str] = field(default_factory=set)
    bitcast_loads: set[str] = field(default_factory=set)  # atomics read via bitcast<f32>
    span: tuple[int, int] = (0, 0)  # text offsets from its first attribute to its closing brace


def reflect(
    text: str, where: str = "<wgsl>", overrides: Mapping[str, float] | None = None
) -> ModuleInfo:
    """Reflect a whole module. `where` names the file (or module) in error messages; `overrides`
    gives values of `override` constants (they replace defaults, and resolve default-less ones)."""
    parser = _Parser(text, where, overrides or {})
    try:
        return parser.parse()
    except RecursionError:
        # Types and expressions are parsed recursively; absurd nesting must not escape as a crash.
        raise parser._err("expression or type nested too deeply") from None


class _Parser:
    def __init__(self, text: str, where: str, overrides: Mapping[str, float]) -> None:
        self.text = text
        self.where = where
        self.values = dict(overrides)
        self.pending: set[str] = set()  # default-less overrides met while sizing the current type
        self.toks = tokenize(text, where)
        self.i = 0
        self.info = ModuleInfo()
        self.aliases: dict[str, WType] = {}
        self.fns: dict[str, _Fn] = {}

    # -- token helpers -------------------------------------------------------------------------
    def _err(self, msg: str, tok: Token | None = None) -> ReflectionError:
        tok = tok or (self.toks[self.i] if self.i < len(self.toks) else None)
        line = line_of(self.text, tok.offset) if tok else line_of(self.text, len(self.text))
        return ReflectionError(f"{self.where}:{line}: {msg}")

    def _peek(self, k: int = 0) -> Token | None:
        j = self.i + k
        return self.toks[j] if j < len(self.toks) else None

    def _peek_text(self) -> str | None:
        tok = self._peek()
        return tok.text if tok is not None else None

    def _next(self) -> Token:
        if self.i >= len(self.toks):
            raise self._err("unexpected end of source")
        tok = self.toks[self.i]
        self.i += 1
        return tok

    def _expect(self, text: str) -> Token:
        tok = self._next()
        if tok.text != text:
            # `>>` and `>=` close two things at once inside nested template lists.
            if text == ">" and tok.text in (">>", ">=", ">>="):
                rest = tok.text[1:]
                self.toks.insert(self.i, Token("punct", rest, tok.offset + 1))
                return Token("punct", ">", tok.offset)
            raise self._err(f"expected '{text}' but found '{tok.text}'", tok)
        return tok

    def _accept(self, text: str) -> bool:
        tok = self._peek()
        if tok is not None and tok.text == text:
            self.i += 1
            return True
        return False

    def _ident(self) -> Token:
        tok = self._next()
        if tok.kind != "ident":
            raise self._err(f"expected a name but found '{tok.text}'", tok)
        return tok

    def _skip_balanced(self, open_: str, close: str) -> list[Token]:
        """Consume from an opening bracket to its match; returns the tokens inside."""
        self._expect(open_)
        depth, inner = 1, list[Token]()
        while True:
            tok = self._next()
            if tok.text == open_:
                depth += 1
            elif tok.text == close:
                depth -= 1
                if depth == 0:
                    return inner
            inner.append(tok)

    def _skip_to_semicolon(self) -> list[Token]:
        out: list[Token] = []
        depth = 0
        while True:
            tok = self._next()
            if tok.text in "({[":
                depth += 1
            elif tok.text in ")}]":
                depth -= 1
            elif tok.text == ";" and depth <= 0:
                return out
            out.append(tok)

    # -- grammar -------------------------------------------------------------------------------
    def parse(self) -> ModuleInfo:
        words = {t.text for t in self.toks if t.kind == "ident"}
        self.info.uses_f16 = bool(words & F16_WORDS) or any(
            t.kind == "number" and t.text.endswith("h") and not t.text.startswith(("0x", "0X"))
            for t in self.toks
        )
        self.info.uses_subgroups = bool(words & SUBGROUP_WORDS)
        while self.i < len(self.toks):
            self._global()
        self._finish_entry_points()
        return self.info

    def _attributes(self) -> dict[str, list[list[Token]]]:
        attrs: dict[str, list[list[Token]]] = {}
        while self._accept("@"):
            name = self._ident().text
            args: list[list[Token]] = []
            if self._peek_text() == "(":
                inner = self._skip_balanced("(", ")")
                args = _split_commas(inner)
            attrs[name] = args
        return attrs

    def _global(self) -> None:
        tok = self._peek()
        if tok is None:
            return
        if tok.text == ";":
            self.i += 1
            return
        if tok.text in ("enable", "requires", "diagnostic"):
            self._skip_to_semicolon()
            return
        start = tok.offset
        attrs = self._attributes()
        tok = self._next()
        word = tok.text
        if word == "struct":
            self._struct()
        elif word == "alias":
            name = self._ident().text
            self._expect("=")
            self.aliases[name] = self._type()
            self._expect(";")
        elif word == "const":
            self._const()
        elif word == "override":
            self._override(attrs)
        elif word == "var":
            self._var(attrs, tok)
        elif word == "fn":
            self._fn(attrs, tok, start)
        elif word == "const_assert":
            self._skip_to_semicolon()
        else:
            raise self._err(f"unexpected '{word}' at module scope", tok)

    def _struct(self) -> None:
        name = self._ident().text
        self._expect("{")
        fields: list[tuple[str, WType]] = []
        layout: list[tuple[int | None, int | None]] = []
        while not self._accept("}"):
            attrs = self._attributes()
            fname = self._ident().text
            self._expect(":")
            fields.append((fname, self._type()))
            # @align and @size move members and pad structs: the host must lay them out too.
            layout.append((self._layout_attr(attrs, "align"), self._layout_attr(attrs, "size")))
            if not self._accept(","):
                self._expect("}")
                break
        self._accept(";")
        self.info.structs[name] = make_struct(name, fields, attrs=layout)

    def _layout_attr(self, attrs: dict[str, list[list[Token]]], what: str) -> int | None:
        if what not in attrs:
            return None
        value = self._eval(attrs[what][0]) if attrs[what] else None
        if value is None or value != int(value) or value <= 0:
            raise self._err(f"@{what} on a struct member needs a positive integer constant")
        return int(value)

    def _const(self) -> None:
        name = self._ident().text
        if self._accept(":"):
            self._type()
        self._expect("=")
        expr = self._skip_to_semicolon()
        value = self._eval(expr)
        if value is not None:
            self.info.consts[name] = value

    def _override(self, attrs: dict[str, list[list[Token]]]) -> None:
        name = self._ident().text
        tname = ""
        if self._accept(":"):
            tname = self._type().text
        default = None
        if self._accept("="):
            default = self._eval(self._skip_to_semicolon())
        else:
            self._expect(";")
        oid = None
        if attrs.get("id"):
            v = self._eval(attrs["id"][0])
            oid = int(v) if v is not None else None
        self.info.overrides[name] = Override(name, tname, default, oid)
        if name in self.values:
            self.info.consts[name] = self.values[name]
        elif default is not None:
            self.info.consts.setdefault(name, default)

    def _var(self, attrs: dict[str, list[list[Token]]], at: Token) -> None:
        space, access = "function", ""
        if self._peek_text() == "<":
            self._next()
            space = self._ident().text
            if self._accept(","):
                access = self._ident().text
            self._expect(">")
        name = self._ident().text
        vtype = None
        self.pending = set()
        if self._accept(":"):
            vtype = self._type()
        self._skip_to_semicolon()
        if space == "workgroup":
            if vtype is None:
                raise self._err(f"workgroup variable '{name}' needs a type", at)
            self.info.workgroup_vars[name] = WorkgroupVar(
                name, vtype, line_of(self.text, at.offset), tuple(sorted(self.pending))
            )
            return
        if self.pending:
            raise self._err(
                f"resource variable '{name}' is sized by override "
                f"{', '.join(sorted(self.pending))}, which has no default; give it a default",
                at,
            )
        if space not in ("storage", "uniform"):
            return
        if "group" not in attrs or "binding" not in attrs:
            raise self._err(f"resource variable '{name}' needs @group and @binding", at)
        if vtype is None:
            raise self._err(f"resource variable '{name}' needs a type", at)
        group = self._int_attr(attrs["group"], "group", at)
        binding = self._int_attr(attrs["binding"], "binding", at)
        if space == "storage" and not access:
            access = "read"
        if space == "uniform":
            vtype = uniform_layout(vtype)
        self.info.bindings[name] = Binding(
            group, binding, name, space, access, vtype, line_of(self.text, at.offset)
        )

    def _int_attr(self, args: list[list[Token]], what: str, at: Token) -> int:
        value = self._eval(args[0]) if args else None
        if value is None or int(value) != value or not 0 <= value <= 0xFFFFFFFF:
            raise self._err(f"@{what} needs a non-negative integer that fits in u32", at)
        return int(value)

    def _fn(self, attrs: dict[str, list[list[Token]]], at: Token, start: int) -> None:
        name = self._ident().text
        params = self._skip_balanced("(", ")")
        while self._peek_text() != "{":
            self._next()
        body = self._skip_balanced("{", "}")
        # A name after `.` is a member or swizzle (`dims.y`), never a module-scope variable.
        idents = {
            t.text
            for i, t in enumerate(body)
            if t.kind == "ident" and not (i and body[i - 1].text == ".")
        }
        param_idents = {t.text for t in params if t.kind == "ident"}
        idents |= param_idents
        self.fns[name] = _Fn(
            name,
            attrs,
            idents,
            line_of(self.text, at.offset),
            param_idents,
            _bitcast_loads(body),
            (start, self.toks[self.i - 1].offset + 1),
        )
        self.info.functions[name] = self.fns[name].span

    # -- types and constant expressions --------------------------------------------------------
    def _type(self) -> WType:
        tok = self._ident()
        name = tok.text
        if name in SCALARS:
            return make_scalar(name)
        short = vector_shorthand(name)
        if short is not None:
            return short
        if name in self.aliases:
            return self.aliases[name]
        if name in self.info.structs:
            return self.info.structs[name]
        if name.startswith("vec") and name[3:] in ("2", "3", "4"):
            return make_vector(int(name[3:]), self._scalar_parameter(name))
        if (
            name.startswith("mat")
            and len(name) == 6
            and name[3] in "234"
            and name[4] == "x"
            and name[5] in "234"
        ):
            return make_matrix(int(name[3]), int(name[5]), self._scalar_parameter(name))
        if name == "atomic":
            return make_atomic(make_scalar(self._scalar_parameter(name)))
        if name == "array":
            self._expect("<")
            elem = self._type()
            count = None
            if self._accept(","):
                expr = []
                depth = 0
                while True:
                    t = self._peek()
                    if t is None:
                        raise self._err("unterminated array type")
                    if depth == 0 and t.text in (">", ">>", ">=", ">>="):
                        break
                    if t.text in "([":
                        depth += 1
                    elif t.text in ")]":
                        depth -= 1
                    expr.append(self._next())
                value = self._eval(expr)
                waiting = self._pending_in(expr)
                if value is None and waiting:
                    # Sized by an override given at pipeline creation: 1 until it is known.
                    self.pending |= waiting
                    value = 1
                if value is None or value != int(value) or value <= 0:
                    raise self._err("array length must be a positive constant", tok)
                count = int(value)
            self._expect(">")
            return make_array(elem, count)
        if name in ("ptr", "texture_2d", "sampler") or name.startswith("texture"):
            if self._peek_text() == "<":
                self._skip_template()
            return WType("opaque", name)
        raise self._err(f"unknown type '{name}'", tok)

    def _scalar_parameter(self, outer: str) -> str:
        """The `<T>` of a vector, matrix or atomic, which must be a scalar type."""
        self._expect("<")
        inner = self._type()
        if inner.kind != "scalar":
            raise self._err(f"{outer}<...> needs a scalar type, not '{inner.text}'")
        self._expect(">")
        return inner.text

    def _skip_template(self) -> None:
        self._expect("<")
        depth = 1
        while depth:
            t = self._next()
            if t.text == "<":
                depth += 1
            elif t.text == ">":
                depth -= 1
            elif t.text == ">>":
                depth -= 2
        if depth < 0:
            raise self._err("unbalanced template list")

    def _eval(self, expr: list[Token]) -> float | int | None:
        """Value of a constant expression, or None when it is not one this evaluator knows."""
        if not expr:
            return None
        try:
            value = _ConstEval(expr, self.info.consts).value()
        except (ValueError, ZeroDivisionError, OverflowError, IndexError, KeyError, TypeError):
            return None
        # Infinity and NaN are no constant WGSL accepts, and int() of them would raise.
        return value if isinstance(value, int) or math.isfinite(value) else None

    def _pending_in(self, expr: list[Token]) -> set[str]:
        """Default-less overrides without a given value that `expr` mentions."""
        return {
            t.text for t in expr if t.text in self.info.overrides and t.text not in self.info.consts
        }

    # -- entry points ------------------------------------------------------------------------
    def _finish_entry_points(self) -> None:
        for fn in self.fns.values():
            if "compute" not in fn.attrs:
                continue
            size, needs, problem = self._workgroup_size(fn)
            if problem:
                self.info.entry_problems[fn.name] = (fn.line, problem)
                continue
            while len(size) < 3:
                size.append(1)
            used, bitcasts, reached = self._reachable(fn.name)
            bindings = sorted(
                (b for n, b in self.info.bindings.items() if n in used),
                key=lambda b: (b.group, b.binding),
            )
            shared = tuple(v for n, v in self.info.workgroup_vars.items() if n in used)
            for var in shared:
                needs |= set(var.needs)
            features = []
            if self.info.uses_f16:
                features.append("shader-f16")
            if used & SUBGROUP_WORDS:
                features.append("subgroup")
            f32_bits = tuple(
                b.name
                for b in bindings
                if b.name in bitcasts and b.element.kind == "atomic" and b.element.scalar == "u32"
            )
            self.info.entry_points[fn.name] = EntryPoint(
                fn.name,
                (size[0], size[1], size[2]),
                tuple(bindings),
                fn.line,
                workgroup_bytes=sum(v.footprint for v in shared),
                workgroup_vars=shared,
                needs=tuple(sorted(needs)),
                reads_num_workgroups="num_workgroups" in fn.params,
                indexes_by_global_id="global_invocation_id" in fn.params,
                features=tuple(features),
                f32_bits=f32_bits,
                functions=tuple(sorted(reached)),
            )

    def _workgroup_size(self, fn: _Fn) -> tuple[list[int], set[str], str]:
        """The sizes of `fn`'s @workgroup_size, the overrides they wait for, or why they cannot
        be used."""
        wg_args = fn.attrs.get("workgroup_size")
        if not wg_args:
            return [], set(), f"@compute fn '{fn.name}' has no @workgroup_size"
        size = []
        needs: set[str] = set()
        for arg in wg_args[:3]:
            v = self._eval(arg)
            waiting = self._pending_in(arg)
            if v is None and waiting:
                needs |= waiting
                v = 1
            text = " ".join(t.text for t in arg)
            if v is not None and (not math.isfinite(v) or v != int(v)):
                return (
                    [],
                    set(),
                    f"@workgroup_size of '{fn.name}' has {text} = {v:g}: every size must be a "
                    "whole number >= 1",
                )
            if v is None:
                return (
                    [],
                    set(),
                    (
                        f"cannot evaluate @workgroup_size argument '{text}' of '{fn.name}' (use "
                        "literals, module-scope consts or overrides with defaults)"
                    ),
                )
            if v <= 0:
                return (
                    [],
                    set(),
                    (
                        f"@workgroup_size of '{fn.name}' has {text} = {v:g}: every size must be at "
                        "least 1"
                    ),
                )
            size.append(int(v))
        return size, needs, ""

    def _reachable(self, root: str) -> tuple[set[str], set[str], set[str]]:
        """Identifiers of `root` and every function it calls, the atomics they bitcast, and the
        functions themselves."""
        seen_fns, idents, bitcasts, todo = {root}, set(), set(), [root]
        while todo:
            fn = self.fns[todo.pop()]
            idents |= fn.idents
            bitcasts |= fn.bitcast_loads
            for word in fn.idents:
                if word in self.fns and word not in seen_fns:
                    seen_fns.add(word)
                    todo.append(word)
        return idents, bitcasts, seen_fns


def _bitcast_loads(body: list[Token]) -> set[str]:
    """Atomics a function uses as f32 bits: in a body that has `bitcast<f32>`, the X of every
    `atomicLoad(&X...)` and `atomicCompareExchangeWeak(&X...)` (the CAS float-add pattern)."""
    texts = [t.text for t in body]
    casts_f32 = any(texts[i : i + 4] == ["bitcast", "<", "f32", ">"] for i in range(len(texts)))
    if not casts_f32:
        return set()
    return {
        body[i + 3].text
        for i in range(len(texts) - 3)
        if texts[i] in ("atomicLoad", "atomicCompareExchangeWeak")
        and texts[i + 1 : i + 3] == ["(", "&"]
        and body[i + 3].kind == "ident"
    }


def _split_commas(tokens: list[Token]) -> list[list[Token]]:
    out: list[list[Token]] = [[]]
    depth = 0
    for t in tokens:
        if t.text in "([":
            depth += 1
        elif t.text in ")]":
            depth -= 1
        if t.text == "," and depth == 0:
            out.append([])
        else:
            out[-1].append(t)
    return [a for a in out if a]


class _ConstEval:
    """Precedence-climbing evaluator for the integer/float constant expressions reflection needs."""

    _BINARY: ClassVar[dict[str, int]] = {
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

    def __init__(self, toks: list[Token], consts: dict[str, float | int]) -> None:
        self.t = toks
        self.i = 0
        self.consts = consts

    def value(self) -> float | int:
        v = self._expr(0)
        if self.i != len(self.t):
            raise ValueError("trailing tokens")
        return v

    def _expr(self, min_prec: int) -> float | int:
        lhs = self._unary()
        while self.i < len(self.t):
            op = self.t[self.i].text
            prec = self._BINARY.get(op)
            if prec is None or prec < min_prec:
                break
            self.i += 1
            rhs = self._expr(prec + 1)
            lhs = _apply(op, lhs, rhs)
        return lhs

    def _unary(self) -> float | int:
        tok = self.t[self.i]
        if tok.text in ("-", "+", "~", "!"):
            self.i += 1
            v = self._unary()
            unary: dict[str, Callable[[float | int], float | int]] = {
                "-": lambda x: -x,
                "+": lambda x: x,
                "~": lambda x: ~int(x),
                "!": lambda x: int(not x),
            }
            return unary[tok.text](v)
        if tok.text == "(":
            self.i += 1
            v = self._expr(0)
            if self.t[self.i].text != ")":
                raise ValueError("missing )")
            self.i += 1
            return v
        self.i += 1
        if tok.kind == "number":
            return _number(tok.text)
        if tok.kind == "ident":
            if self.i < len(self.t) and self.t[self.i].text == "(":
                self.i += 1
                v = self._expr(0)
                if self.t[self.i].text != ")":
                    raise ValueError("call with several arguments")
                self.i += 1
                if tok.text in ("u32", "i32"):
                    return int(v)
                if tok.text in ("f32", "f16"):
                    return float(v)
                raise ValueError("unknown call")
            return self.consts[tok.text]
        raise ValueError("not a constant")


def _apply(op: str, a: float | int, b: float | int) -> float | int:
    if op == "/":
        q = a / b
        return int(q) if isinstance(a, int) and isinstance(b, int) else q
    if op == "%":
        return (
            math.fmod(a, b)
            if isinstance(a, float) or isinstance(b, float)
            else int(math.fmod(a, b))
        )
    if op in ("<<", ">>") and (b < 0 or b > 63):
        raise ValueError("shift out of range")
    ops: dict[str, Callable[[], float | int]] = {
        "+": lambda: a + b,
        "-": lambda: a - b,
        "*": lambda: a * b,
        "<<": lambda: int(a) << int(b),
        ">>": lambda: int(a) >> int(b),
        "&": lambda: int(a) & int(b),
        "|": lambda: int(a) | int(b),
        "^": lambda: int(a) ^ int(b),
        "==": lambda: int(a == b),
        "!=": lambda: int(a != b),
        "<": lambda: int(a < b),
        ">": lambda: int(a > b),
        "<=": lambda: int(a <= b),
        ">=": lambda: int(a >= b),
        "&&": lambda: int(bool(a) and bool(b)),
        "||": lambda: int(bool(a) or bool(b)),
    }
    result = ops[op]()
    if isinstance(result, int) and abs(result) > 1 << 64:
        raise OverflowError("constant too large")
    return result


def _number(text: str) -> float | int:
    t = text.rstrip("uif") if not text.lower().startswith("0x") else text.rstrip("ui")
    if t.endswith("h") and not text.lower().startswith("0x"):
        return float(t[:-1])
    if t.lower().startswith("0x"):
        if "." in t or "p" in t.lower():
            return float.fromhex(t)
        return int(t, 16)
    if any(c in t for c in ".eE") or text.endswith(("f", "h")):
        return float(t)
    return int(t)
