"""Trace instrumentation: a copy of a kernel's module that records one invocation's execution.

Read from the typed syntax tree, the copy records, for the invocation whose
`global_invocation_id` equals the target in the trace buffer's header: each value assigned
(`let`, `var`, assignment, compound assignment, `++`/`--`), function parameters on entry and
return values with the call depth, every loop iteration (the loop variable of a `for`, or the
iteration number) and each loop's end, the branch taken at each `if`/`switch`, loads from and
stores to storage and workgroup arrays with index and value, atomics with the value they return,
and each barrier reached.

Like `instrument`, the copy never moves a line: every edit is inserted on the line it belongs to,
and the recorders are appended after the user's last line. The user's file is never changed.

The trace buffer `TRACE_NAME` holds a `HEADER_WORDS` header (the atomic count of records
attempted, the capacity, the dispatch's extent in invocations along x and y, the chosen
invocation's id x, y, z, the mode, then for `MODE_SCAN` the atomic count of invocations that made
a non-finite value and the atomic minimum of their linear ids, for `MODE_WATCH` the watched
element's index, and a spare word) and then `RECORD_WORDS` words per record: the location word,
the index, the call depth, the invocation's linear id, and the value's bits in four words
(f32/i32 bitcast, bool 0/1, f16 through `pack2x16float`, vectors one word per component; in `MODE_WATCH` the
storing invocation's id instead). The location word holds the id that indexes
`TracePlan.locations` (what a record is: its kind, the name and type of its value, where it is in
the module's text and what it was computed from), the kind again in bits 24-27 for the recorder,
and `WATCHED` for a store to the watched binding.

The mode is a constant of the copy (`TracePlan.kernel_for`), one module per mode, so the compiler
keeps only that mode's recorder code at each record point; the header's mode word says which.

Uniformity: the recorders decide in their own body whether the invocation records (read once
into private variables at the entry point), and they contain no barrier, so a record point never
makes a barrier or a subgroup operation of the kernel non-uniform; every record sits where the
statement it records is. Where no barrier or subgroup operation is reachable from the entry point,
the invocations that are not traced leave at once for an uninstrumented copy of the user's
functions (`wb_plain_*`, appended), so tracing one invocation costs the others about nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from workbench.errors import ReflectionError
from workbench.wgsl import syntax as s
from workbench.wgsl.checker import Checker, check
from workbench.wgsl.corpus import Kernel
from workbench.wgsl.instrument import (
    InstrumentedKernel,
    builtin_of,
    entry_params_of,
    free_binding,
)
from workbench.wgsl.parser import parse
from workbench.wgsl.types import WType

TRACE_NAME = "wb_trace"
HEADER_WORDS = 12
# Modes (header word 7): trace the chosen invocation; scan every invocation for its first
# non-finite value; list the invocations that store to the watched element; trace every
# invocation whose linear id is in [chosen.x, chosen.y) (each record holds its linear id).
MODE_TRACE, MODE_SCAN, MODE_WATCH, MODE_RANGE = 0, 1, 2, 3
WATCHED = 0x80000000  # location word bit: a store to the watched binding
LOCATION_MASK = 0xFFFFFF  # location word bits: the location id (bits 24-27: its kind)
RECORD_WORDS = 8
# The line of the recorders that names the mode (`TracePlan.kernel_for` sets it).
_MODE_TRACE_LINE = f"const wb_mode: u32 = {MODE_TRACE}u;"
DEFAULT_CAPACITY = 100_000
KINDS = ("assign", "param", "return", "branch", "loop", "load", "store", "atomic", "barrier")
# A record of workgroup memory as the traced invocation sees it after a barrier: not a step.
MEMORY = "memory"
RECORDABLE_SCALARS = ("f32", "i32", "u32", "f16", "bool")
_CONCRETE = {"abstract-float": "f32", "abstract-int": "i32"}
_BARRIERS = ("workgroupBarrier", "storageBarrier", "textureBarrier")
_MEMORY = ("storage", "workgroup")


@dataclass(frozen=True)
class Location:
    """What a record with this location id is: its kind, the name and WGSL type of its value
    ("" when it has none) and the character offset in the kernel's text it stands for."""

    kind: str
    name: str
    type: str
    offset: int
    operands: tuple[str, ...] = ()  # the names and loads the value was computed from
    function: str = ""  # the function whose body it is in (the call stack's frames)
    # A matrix or struct value is recorded in `parts` records, one per column or member (each
    # of the part's own `type`), at consecutive location ids: this is part `part`, at `path`
    # (`[1]`, `.pos`) of a value of type `whole`.
    whole: str = ""
    part: int = 0
    parts: int = 0
    path: str = ""


@dataclass
class TracePlan:
    """The instrumented kernel and the table its records' location ids index."""

    kernel: InstrumentedKernel
    locations: list[Location] = field(default_factory=list)

    def kernel_for(self, mode: int) -> InstrumentedKernel:
        """The instrumented kernel for one mode: the mode is a constant of its module, so the
        compiler drops every other mode's recorder code. Each record point holds a copy of the
        recorder (drivers inline every call): with all four modes in it, lavapipe's LLVM took
        20 s over a traced rope_q, 3 s with one."""
        return replace(
            self.kernel,
            appended=self.kernel.appended.replace(
                _MODE_TRACE_LINE, f"const wb_mode: u32 = {mode}u;", 1
            ),
        )

    def location(self, word: int) -> Location:
        """The location a record's first word names."""
        return self.locations[word & LOCATION_MASK]


@dataclass
class _Edit:
    """Replace text[start:end] with prefix + (rendered text[inner_start:inner_end]) + suffix."""

    start: int
    end: int
    inner: tuple[int, int]
    prefix: str
    suffix: str = ""
    outer: bool = False  # goes outside an edit of the same span (a store around its load)


def scalar_type(t: WType) -> str | None:
    """The WGSL type text a value of type `t` is recorded as, or None when it is not recorded
    (matrices, arrays, structs, pointers, atomics)."""
    if t.kind not in ("scalar", "vector") or t.scalar is None:
        return None
    scalar = _CONCRETE.get(t.scalar, t.scalar)
    if scalar not in RECORDABLE_SCALARS:
        return None
    return scalar if t.kind == "scalar" else f"vec{t.count}<{scalar}>"


MAX_PARTS = 16  # columns or members of a matrix or struct value recorded; a larger one is not


def value_parts(t: WType) -> list[tuple[str, str]] | None:
    """How a matrix or struct value is recorded: (path, scalar or vector type) per column of a
    matrix, per member of a struct (nested matrices and structs by their parts; arrays left
    out). None when `t` is neither, or has no part that can be recorded."""
    if t.kind == "matrix" and t.scalar is not None:
        column = scalar_type(WType("vector", "", t.scalar, t.rows))
        return [(f"[{c}]", column) for c in range(t.count or 0)] if column else None
    if t.kind != "struct" or t.text.startswith("__"):  # builtins' result structs: unnamable
        return None
    if any(m.type.kind == "atomic" or m.type.runtime_sized for m in t.members):
        return None
    out: list[tuple[str, str]] = []
    for m in t.members:
        single = scalar_type(m.type)
        inner = [("", single)] if single else (value_parts(m.type) or [])
        out += [(f".{m.name}{path}", part) for path, part in inner]
    return out or None


def whole_type(t: WType) -> str:
    """The WGSL text of a matrix or struct type, as the recorders declare it."""
    if t.kind == "matrix":
        return f"mat{t.count}x{t.rows}<{_CONCRETE.get(t.scalar or 'f32', t.scalar)}>"
    return t.text


def _tag(type_text: str) -> str:
    return type_text.replace("<", "").replace(">", "")


def _word(scalar: str, v: str) -> str:
    if scalar == "u32":
        return v
    if scalar == "bool":
        return f"select(0u, 1u, {v})"
    if scalar == "f16":
        return f"pack2x16float(vec2<f32>(f32({v}), 0.0))"
    return f"bitcast<u32>({v})"


def _recorder(type_text: str) -> str:
    """`wb_rec_T(loc, idx, v)` records a value of type T; `wb_see_T(v, loc, idx)` records and
    returns it, so an expression can be recorded where it stands."""
    if type_text.startswith("vec"):
        n, scalar = int(type_text[3]), type_text[5:-1]
        words = [_word(scalar, f"v.{'xyzw'[k]}") for k in range(n)] + ["0u"] * (4 - n)
    else:
        scalar = type_text
        words = [_word(type_text, "v"), "0u", "0u", "0u"]
    # Unused words are 0, which no exponent mask matches.
    mask = {"f32": "0x7f800000u", "f16": "0x7c00u"}.get(scalar)
    nonfinite = f"any((w & vec4<u32>({mask})) == vec4<u32>({mask}))" if mask else "false"
    tag = _tag(type_text)
    return (
        f"fn wb_rec_{tag}(loc: u32, idx: u32, v: {type_text}) {{ if (!wb_live) {{ return; }} "
        f"let w = vec4<u32>({', '.join(words)}); wb_put(loc, idx, w, {nonfinite}); }}\n"
        f"fn wb_see_{tag}(v: {type_text}, loc: u32, idx: u32) -> {type_text} {{ "
        f"wb_rec_{tag}(loc, idx, v); return v; }}\n"
    )


def _composite(type_text: str, parts: list[tuple[str, str]]) -> str:
    """The recorders of a matrix or struct type: one record per part, at consecutive ids."""
    calls = "".join(
        f" wb_rec_{_tag(part)}(loc + {k}u, idx, v{path});" for k, (path, part) in enumerate(parts)
    )
    tag = _tag(type_text)
    return (
        f"fn wb_rec_{tag}(loc: u32, idx: u32, v: {type_text}) {{ if (!wb_live) {{ return; }}"
        f"{calls} }}\n"
        f"fn wb_see_{tag}(v: {type_text}, loc: u32, idx: u32) -> {type_text} {{ "
        f"wb_rec_{tag}(loc, idx, v); return v; }}\n"
    )


def _definitions(
    group: int, binding: int, types: list[str], composites: dict[str, list[tuple[str, str]]]
) -> str:
    load = KINDS.index("load")
    head = f"""// workbench: trace of one invocation (a debug run only)
struct WbTrace {{ next: atomic<u32>, cap: u32, ext: vec2<u32>, chosen: vec4<u32>, hits: atomic<u32>, first: atomic<u32>, watch: u32, pad: u32, words: array<vec4<u32>> }}
@group({group}) @binding({binding}) var<storage, read_write> {TRACE_NAME}: WbTrace;
var<private> wb_on: bool;
var<private> wb_live: bool;
{_MODE_TRACE_LINE}
var<private> wb_gid: vec3<u32>;
var<private> wb_lin: u32;
var<private> wb_depth: u32;
var<private> wb_seen: bool;
var<private> wb_count: u32;
var<private> wb_cap: u32;
fn wb_start(gid: vec3<u32>) {{
    wb_gid = gid;
    let e = {TRACE_NAME}.ext;
    wb_lin = gid.x + e.x * (gid.y + e.y * gid.z);
    let c = {TRACE_NAME}.chosen;
    wb_on = (wb_mode == {MODE_TRACE}u && all(gid == c.xyz))
        || (wb_mode == {MODE_RANGE}u && wb_lin >= c.x && wb_lin < c.y);
    wb_live = wb_on || wb_mode == {MODE_SCAN}u || wb_mode == {MODE_WATCH}u;
    if (wb_on) {{
        wb_cap = {TRACE_NAME}.cap;
    }}
}}
// The one traced invocation numbers its records itself: no atomic round trip (nor a load of the
// capacity) on its path per record, which is the dispatch's longest.
fn wb_own(first: vec4<u32>, second: vec4<u32>) {{
    let slot = wb_count;
    wb_count = slot + 1u;
    if (slot < wb_cap) {{
        {TRACE_NAME}.words[2u * slot] = first;
        {TRACE_NAME}.words[2u * slot + 1u] = second;
    }}
    atomicStore(&{TRACE_NAME}.next, wb_count);
}}
fn wb_keep(first: vec4<u32>, second: vec4<u32>) {{
    let slot = atomicAdd(&{TRACE_NAME}.next, 1u);
    if (slot < {TRACE_NAME}.cap) {{
        {TRACE_NAME}.words[2u * slot] = first;
        {TRACE_NAME}.words[2u * slot + 1u] = second;
    }}
}}
fn wb_put(loc: u32, idx: u32, v: vec4<u32>, nonfinite: bool) {{
    if (wb_on) {{
        if (wb_mode == {MODE_RANGE}u) {{
            wb_keep(vec4<u32>(loc, idx, wb_depth, wb_lin), v);  // several invocations: atomic
        }} else {{
            wb_own(vec4<u32>(loc, idx, wb_depth, wb_lin), v);
        }}
    }} else if (wb_mode == {MODE_SCAN}u) {{
        if (nonfinite && !wb_seen) {{
            wb_seen = true;
            if (((loc >> 24u) & 15u) != {load}u) {{
                atomicAdd(&{TRACE_NAME}.hits, 1u);
                atomicMin(&{TRACE_NAME}.first, wb_lin);
            }}
        }}
    }} else if (wb_mode == {MODE_WATCH}u) {{
        if ((loc & {WATCHED:#x}u) != 0u && idx == {TRACE_NAME}.watch) {{
            wb_keep(vec4<u32>(loc, idx, 0u, 0u), vec4<u32>(wb_gid, 0u));
        }}
    }}
}}
"""
    return head + "".join(
        _composite(t, composites[t]) if t in composites else _recorder(t) for t in types
    )


class _Instrumenter:
    """Walks one module's functions and collects the edits and the location table."""

    def __init__(self, tree: s.Module, checker: Checker, watch: str, memory: bool) -> None:
        self.watch = watch  # the binding whose stores are marked `WATCHED` ("" for none)
        self.memory_dump = memory  # record workgroup arrays after each workgroupBarrier
        self.globals = {d.name for d in tree.decls if isinstance(d, s.VarDecl)}
        self.text = tree.text
        self.tree = tree
        self.checker = checker
        self.edits: list[_Edit] = []
        self.locations: list[Location] = []
        self.types: dict[str, None] = {}  # recorded value types, in first-use order
        self.composites: dict[str, list[tuple[str, str]]] = {}  # matrix/struct types' parts
        self.returns: dict[str, None] = {}  # return types of instrumented functions
        self.counter = 0
        self.functions = {f.name for f in tree.functions()}
        self.entry_prologue = ""  # after `wb_start`: the untraced invocations' way out
        self.function_name = ""  # the function being walked

    # -- helpers --------------------------------------------------------------------------
    def loc(
        self,
        kind: str,
        name: str,
        type_text: str,
        offset: int,
        operands: tuple[str, ...] = (),
        watched: bool = False,
    ) -> int:
        """A new location's word: its id, its kind in bits 24-27, `WATCHED` for a store to the
        watched binding."""
        if type_text:
            self.types.setdefault(type_text, None)
        first = len(self.locations)
        parts = self.composites.get(type_text)
        if parts is None:
            self.locations.append(
                Location(kind, name, type_text, offset, operands, self.function_name)
            )
        for k, (path, part) in enumerate(parts or []):
            self.types.setdefault(part, None)
            self.locations.append(
                Location(
                    kind,
                    name,
                    part,
                    offset,
                    operands,
                    self.function_name,
                    type_text,
                    k,
                    len(parts or []),
                    path,
                )
            )
        code = len(KINDS) if kind == MEMORY else KINDS.index(kind)
        word = first | (code << 24)
        return word | (WATCHED if watched else 0)

    def operands(self, *roots: s.Expr) -> tuple[str, ...]:
        """The local names and storage/workgroup loads an expression's value is made from."""
        found: dict[str, None] = {}
        for root in roots:
            for n in s.walk(root):
                if isinstance(n, s.Ident) and isinstance(
                    self.checker.resolved.get(id(n)), (s.VarDecl, s.Param)
                ):
                    decl = self.checker.resolved[id(n)]
                    if not (isinstance(decl, s.VarDecl) and decl.name in self.globals):
                        found.setdefault(n.name, None)
                elif isinstance(n, s.Index) and self.memory(n) is not None:
                    found.setdefault(self.src(n), None)
        return tuple(found)

    def insert(self, at: int, text: str) -> None:
        self.edits.append(_Edit(at, at, (at, at), text))

    def wrap(self, span: s.Span, prefix: str, suffix: str, outer: bool = False) -> None:
        self.edits.append(_Edit(span[0], span[1], span, prefix, suffix, outer))

    def type_of(self, e: s.Expr) -> str | None:
        return self.recordable(self.checker.types.get(id(e)))

    def recordable(self, t: WType | None) -> str | None:
        """The type text a value of type `t` is recorded as (a matrix or struct: its parts,
        the recorders for it noted), or None when it is not recorded."""
        if t is None:
            return None
        single = scalar_type(t)
        parts = None if single else value_parts(t)
        if parts is None or len(parts) > MAX_PARTS:
            return single
        text = whole_type(t)
        self.composites[text] = parts
        return text

    def src(self, node: s.Expr) -> str:
        return self.text[node.span[0] : node.span[1]]

    def record(
        self,
        kind: str,
        name: str,
        type_text: str,
        offset: int,
        value: str,
        idx: str,
        operands: tuple[str, ...] = (),
    ) -> str:
        loc = self.loc(kind, name, type_text, offset, operands)
        return f" wb_rec_{_tag(type_text)}({loc}u, {idx}, {value});"

    def memory(self, e: s.Expr) -> tuple[str, str] | None:
        """(variable, WGSL text of the flat element index) when `e` is `NAME`, `NAME[i]`,
        `NAME[i][j]` (an array of fixed-size arrays) or `NAME.member[i]` of a storage or
        workgroup variable; None otherwise. The index is "0u" where it has none, or where
        evaluating it again could change something."""
        parts: list[s.Expr] = []
        root = e
        if isinstance(root, s.Index):
            parts.append(root.index)
            root = root.base
            inner = self.checker.types.get(id(root))
            if isinstance(root, s.Index) and inner is not None and inner.count:
                parts.insert(0, root.index)
                root = root.base
                rows = inner.count
            elif isinstance(root, s.Member):
                root = root.base
        if not isinstance(root, s.Ident):
            return None
        decl = self.checker.resolved.get(id(root))
        if not (isinstance(decl, s.VarDecl) and decl.template and decl.template[0] in _MEMORY):
            return None
        if not parts or any(self.impure(p) for p in parts):
            return root.name, "0u"
        if len(parts) == 2:
            return root.name, f"(u32({self.src(parts[0])}) * {rows}u + u32({self.src(parts[1])}))"
        return root.name, f"u32({self.src(parts[0])})"

    def impure(self, e: s.Expr) -> bool:
        """Whether evaluating `e` again could change something or give another value: it calls
        a function of the module, an atomic or a barrier."""
        return any(
            isinstance(n, s.Call)
            and (
                n.callee.name in self.functions
                or n.callee.name.startswith("atomic")
                or n.callee.name in _BARRIERS
            )
            for n in s.walk(e)
        )

    # -- functions ------------------------------------------------------------------------
    def function(self, fn: s.Function, entry: bool, gid: str) -> None:
        self.function_name = fn.name
        open_at = fn.body.span[0] + 1
        if entry:
            self.insert(open_at, f" wb_start({gid});{self.entry_prologue}")
        else:
            prologue = " wb_depth++;"
            for p in fn.params:
                t = self.recordable(self.checker.resolve_type(p.type))
                if t:
                    prologue += self.record("param", p.name, t, p.span[0], p.name, "0u")
            self.insert(open_at, prologue)
        result = None
        if fn.result is not None and not entry:
            result = self.recordable(self.checker.resolve_type(fn.result))
        self.block(fn.body, fn, result, entry)
        last = fn.body.body[-1] if fn.body.body else None
        if not entry and fn.result is None and not isinstance(last, s.Return):
            self.insert(fn.body.span[1] - 1, " wb_depth--; ")

    def block(self, b: s.Block, fn: s.Function, result: str | None, entry: bool) -> None:
        for st in b.body:
            self.statement(st, fn, result, entry)

    def statement(self, st: s.Stmt, fn: s.Function, result: str | None, entry: bool) -> None:
        end = _end(st)
        for e in _expressions(st):
            self.expressions(e)
        if isinstance(st, s.VarDecl) and st.kind in ("let", "var") and st.init is not None:
            t = self.type_of(st.init)
            if st.type is not None:
                t = self.recordable(self.checker.resolve_type(st.type))
            if t:
                why = self.operands(st.init)
                self.insert(end, self.record("assign", st.name, t, st.span[0], st.name, "0u", why))
        elif isinstance(st, (s.Assign, s.Increment)):
            self.assignment(st, end)
        elif isinstance(st, s.CallStmt) and st.call.callee.name in _BARRIERS:
            loc = self.loc("barrier", st.call.callee.name, "", st.span[0])
            self.insert(end, f" wb_rec_u32({loc}u, 0u, 0u);")
            if self.memory_dump and st.call.callee.name == "workgroupBarrier":
                self.insert(end, self.dump(st.span[0]))
        elif isinstance(st, s.Return):
            self.ret(st, result, entry)
        elif isinstance(st, s.If):
            self.branches(
                st, [body for _, body in st.clauses], st.otherwise, "if", fn, result, entry
            )
        elif isinstance(st, s.Switch):
            self.branches(st, [c.body for c in st.clauses], None, "switch", fn, result, entry)
        elif isinstance(st, (s.For, s.While, s.Loop)):
            self.loop(st, end, fn, result, entry)
        elif isinstance(st, s.Block):
            self.block(st, fn, result, entry)

    def dump(self, offset: int) -> str:
        """Statements recording every workgroup array of scalars or vectors, element by element,
        for the traced invocation only (no barrier inside, so uniformity is unchanged)."""
        out = ""
        for d in self.tree.decls:
            if not (isinstance(d, s.VarDecl) and d.template[:1] == ("workgroup",)):
                continue
            decl_type = self.checker.global_value(d.name).type
            element = decl_type.element if decl_type.kind == "array" else None
            t = scalar_type(element) if element is not None else None
            if t is None or not decl_type.count:
                continue
            loc = self.loc(MEMORY, d.name, t, offset)
            self.counter += 1
            k = f"wb_m{self.counter}"
            out += (
                f" if (wb_on) {{ for (var {k} = 0u; {k} < {decl_type.count}u; {k}++) "
                f"{{ wb_rec_{_tag(t)}({loc}u, {k}, {d.name}[{k}]); }} }}"
            )
        return out

    def assignment(self, st: s.Assign | s.Increment, end: int) -> None:
        target = st.target if isinstance(st, s.Increment) else st.lhs
        if isinstance(target, s.Ident) and target.name == "_":
            return
        t = self.type_of(target)
        if not t or self.impure(target):
            return
        mem = self.memory(target)
        name = self.src(target)
        plain = isinstance(st, s.Assign) and st.op == "="
        why = self.operands(*([st.rhs] if isinstance(st, s.Assign) else []))
        if not plain:
            why = (name, *(w for w in why if w != name))
        if mem is None:
            self.insert(end, self.record("assign", name, t, st.span[0], name, "0u", why))
            return
        idx = mem[1]
        loc = self.loc("store", name, t, st.span[0], why, watched=mem[0] == self.watch)
        if isinstance(st, s.Assign) and plain:
            self.wrap(st.rhs.span, f"wb_see_{_tag(t)}(", f", {loc}u, {idx})", outer=True)
        else:
            self.insert(end, f" wb_rec_{_tag(t)}({loc}u, {idx}, {name});")

    def ret(self, st: s.Return, result: str | None, entry: bool) -> None:
        if entry:
            return
        if st.value is None or result is None:
            self.insert(st.span[0], "{ wb_depth--; ")
            self.insert(_end(st), " }")
            return
        loc = self.loc("return", "return", result, st.span[0], self.operands(st.value))
        tag = _tag(result)
        self.wrap(st.value.span, f"wb_ret_{tag}(wb_see_{tag}(", f", {loc}u, 0u))")
        self.returns.setdefault(result, None)

    def branches(
        self,
        st: s.If | s.Switch,
        bodies: list[s.Block],
        otherwise: s.Block | None,
        word: str,
        fn: s.Function,
        result: str | None,
        entry: bool,
    ) -> None:
        loc = self.loc("branch", word, "u32", st.span[0])
        for k, body in enumerate(bodies):
            self.insert(body.span[0] + 1, f" wb_rec_u32({loc}u, 0u, {k}u);")
            self.block(body, fn, result, entry)
        if otherwise is not None:
            self.insert(otherwise.span[0] + 1, f" wb_rec_u32({loc}u, 0u, {len(bodies)}u);")
            self.block(otherwise, fn, result, entry)
        elif isinstance(st, s.If):
            self.insert(_end(st), f" else {{ wb_rec_u32({loc}u, 0u, {len(bodies)}u); }}")

    def loop(
        self,
        st: s.For | s.While | s.Loop,
        end: int,
        fn: s.Function,
        result: str | None,
        entry: bool,
    ) -> None:
        self.counter += 1
        it = f"wb_it{self.counter}"
        name, t, value = "iteration", "u32", it
        if isinstance(st, s.For) and isinstance(st.init, s.VarDecl):
            init_t = self.type_of(st.init.init) if st.init.init is not None else None
            if st.init.type is not None:
                init_t = self.recordable(self.checker.resolve_type(st.init.type))
            if init_t:
                name, t, value = st.init.name, init_t, st.init.name
        self.insert(st.span[0], f"var {it}: u32 = 0u; ")
        body_loc = self.loc("loop", name, t, st.span[0])
        self.insert(st.body.span[0] + 1, f" wb_rec_{_tag(t)}({body_loc}u, {it}, {value}); {it}++;")
        end_loc = self.loc("loop", "end", "u32", st.span[0])
        self.insert(end, f" wb_rec_u32({end_loc}u, {it}, {it});")
        self.types.setdefault("u32", None)
        self.block(st.body, fn, result, entry)
        if isinstance(st, s.Loop) and st.continuing is not None:
            self.block(st.continuing, fn, result, entry)

    # -- expressions ----------------------------------------------------------------------
    def expressions(self, root: s.Expr) -> None:
        """Wrap each load of a storage/workgroup element and each atomic call under `root`."""
        skip: set[int] = set()
        for node in s.walk(root):
            if isinstance(node, s.Unary) and node.op == "&":
                skip.add(id(node.operand))
            if id(node) in skip or not isinstance(node, (s.Index, s.Call)):
                continue
            if isinstance(node, s.Call):
                self.atomic(node)
                continue
            mem = self.memory(node)
            t = self.type_of(node)
            if mem is None or not t or self.impure(node):
                continue
            loc = self.loc("load", self.src(node), t, node.span[0])
            self.wrap(node.span, f"wb_see_{_tag(t)}(", f", {loc}u, {mem[1]})")

    def atomic(self, call: s.Call) -> None:
        name = call.callee.name
        if not name.startswith("atomic") or name == "atomicStore" or not call.args:
            return
        ptr = call.args[0]
        t = self.type_of(call)
        if not t or not (isinstance(ptr, s.Unary) and ptr.op == "&"):
            return
        mem = self.memory(ptr.operand)
        idx = mem[1] if mem is not None else "0u"
        watched = mem is not None and mem[0] == self.watch
        loc = self.loc("atomic", f"{name}({self.src(ptr.operand)})", t, call.span[0], (), watched)
        self.wrap(call.span, f"wb_see_{_tag(t)}(", f", {loc}u, {idx})")

    # -- output ---------------------------------------------------------------------------
    def render(self, start: int, end: int, edits: list[_Edit]) -> str:
        """text[start:end] with `edits` (sorted by start, outer before inner) applied; an edit's
        inner edits are those that start before it ends."""
        out, at, k = [], start, 0
        while k < len(edits):
            e = edits[k]
            inside = [x for x in edits[k + 1 :] if x.start < e.end]
            out.append(self.text[at : e.start])
            out.append(e.prefix + self.render(e.inner[0], e.inner[1], inside) + e.suffix)
            at = e.end
            k += 1 + len(inside)
        out.append(self.text[at:end])
        return "".join(out)


def _end(st: s.Stmt) -> int:
    """Where a statement's text ends, its body included (a `for`'s span stops at its `)`)."""
    end = st.span[1]
    for child in s.children(st):
        if isinstance(child, s.Block):
            end = max(end, child.span[1])
    return end


def _expressions(st: s.Stmt) -> list[s.Expr]:
    """The expressions a statement evaluates itself (not those of the statements it holds)."""
    if isinstance(st, s.VarDecl):
        return [st.init] if st.init is not None else []
    if isinstance(st, s.Assign):
        lhs_parts = [st.lhs.index] if isinstance(st.lhs, s.Index) else []
        return [*lhs_parts, st.rhs]
    if isinstance(st, s.CallStmt):
        return [st.call]
    if isinstance(st, s.Return):
        return [st.value] if st.value is not None else []
    if isinstance(st, s.If):
        return [cond for cond, _ in st.clauses]
    if isinstance(st, s.Switch):
        return [st.value]
    if isinstance(st, s.While):
        return [st.condition]
    if isinstance(st, s.For):
        return [st.condition] if st.condition is not None else []
    if isinstance(st, s.Loop):
        return [st.break_if] if st.break_if is not None else []
    return []


def instrument_trace(kernel: Kernel, watch: str = "", memory: bool = False) -> TracePlan:
    """A copy of `kernel` that traces the invocation the trace buffer's header names; its stores
    to the binding `watch` are marked for `MODE_WATCH`; with `memory`, each workgroup array as
    the traced invocation sees it after each `workgroupBarrier` (locations of kind `MEMORY`)."""
    text = kernel.text if kernel.text.endswith("\n") else kernel.text + "\n"
    tree = parse(text, kernel.file)
    checker = check(tree, kernel.file)
    ep = entry_params_of(tree, kernel.entry, kernel.file)
    entry = next(f for f in tree.functions() if f.name == kernel.entry)
    if entry.unparsed:
        file, line, _ = kernel.position(entry.unparsed_at)
        raise ReflectionError(
            f"{file}:{line}: the body of '{kernel.entry}' could not be read: {entry.unparsed}"
        )
    gid = _builtin_name(tree, entry, "global_invocation_id")
    work = _Instrumenter(tree, checker, watch, memory)
    plain = _plain_copies(tree, entry)
    if plain:
        args = ", ".join(p.name for p in entry.params)
        work.entry_prologue = f" if (!wb_live) {{ wb_plain_{entry.name}({args}); return; }}"
    extra = ""
    if gid is None:
        gid = "wb_global_id"
        extra = f"@builtin(global_invocation_id) {gid}: vec3<u32>"
        extra = (", " if ep.needs_comma else "") + extra
    for fn in tree.functions():
        if not fn.unparsed:
            work.function(fn, fn.name == kernel.entry, gid)
    if extra:
        work.insert(ep.close_paren, extra)
    work.types.setdefault("u32", None)
    edits = sorted(work.edits, key=lambda e: (e.start, -(e.end - e.start), not e.outer))
    edited = work.render(0, len(text), edits)
    group, binding = free_binding(kernel)
    appended = _definitions(group, binding, list(work.types), work.composites) + plain
    appended += "".join(
        f"fn wb_ret_{_tag(t)}(v: {t}) -> {t} {{ wb_depth--; return v; }}\n" for t in work.returns
    )
    return TracePlan(
        InstrumentedKernel(
            name=kernel.name,
            file=kernel.file,
            line=kernel.line,
            pieces=kernel.pieces,
            entry=kernel.entry,
            problem=kernel.problem,
            edited=edited,
            appended=appended,
            bindings_added=((TRACE_NAME, group, binding),),
        ),
        work.locations,
    )


# Calls whose result or legality depends on which invocations run them together: the traced
# invocation and the others must then run the same code (the recorders' own early return).
_COLLECTIVE = (*_BARRIERS, "workgroupUniformLoad")


def _plain_copies(tree: s.Module, entry: s.Function) -> str:
    """Uninstrumented copies of the entry point and every function it reaches, named `wb_plain_*`,
    for the invocations that are not traced: in `MODE_TRACE` they run the user's code as written
    instead of passing every record point (a call and a branch each, as costly as the arithmetic
    of a tight loop). "" when a barrier or a subgroup or quad operation is reachable: then every
    invocation must take the same path, and the recorders return early instead."""
    functions = {f.name: f for f in tree.functions()}
    reached: dict[str, s.Function] = {}
    todo = [entry]
    while todo:
        fn = todo.pop()
        if fn.name in reached:
            continue
        if fn.unparsed:
            return ""
        reached[fn.name] = fn
        for n in s.walk(fn.body):
            if not isinstance(n, s.Call):
                continue
            name = n.callee.name
            if name in _COLLECTIVE or name.startswith(("subgroup", "quad")):
                return ""
            if name in functions:
                todo.append(functions[name])
    text = tree.text
    out = ""
    for fn in reached.values():
        params = ", ".join(f"{p.name}: {text[p.type.span[0] : p.type.span[1]]}" for p in fn.params)
        result = f" -> {text[fn.result.span[0] : fn.result.span[1]]}" if fn.result else ""
        calls = sorted(
            n.callee.span[0]
            for n in s.walk(fn.body)
            if isinstance(n, s.Call) and n.callee.name in reached
        )
        body, at = "", fn.body.span[0]
        for start in calls:
            body += text[at:start] + "wb_plain_"
            at = start
        body += text[at : fn.body.span[1]]
        out += f"fn wb_plain_{fn.name}({params}){result} {body}\n"
    return out


def _builtin_name(tree: s.Module, fn: s.Function, builtin: str) -> str | None:
    """How the function's body names `builtin`: a parameter or a member of a struct parameter."""
    structs = {d.name: d for d in tree.decls if isinstance(d, s.Struct)}
    for p in fn.params:
        if builtin_of(p.attrs) == builtin:
            return p.name
        if isinstance(p.type, s.Ident) and p.type.name in structs:
            for m in structs[p.type.name].members:
                if builtin_of(m.attrs) == builtin:
                    return f"{p.name}.{m.name}"
    return None
