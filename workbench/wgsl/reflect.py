"""Reflection: the module-scope declarations of a WGSL module and what each entry point uses, read
from the syntax tree and the checker (wgpu has no reflection API).

Bindings (`var<storage>`/`var<uniform>` with `@group/@binding`), structs with their host-shareable
layouts, `const`s and `override`s with their values, `var<workgroup>`s, and each `@compute`
function's workgroup size, the bindings and workgroup variables it reaches through the functions
it calls, and the device features it needs. Every failure is a `ReflectionError` naming the line.

An `override` without a default may size a workgroup (`@workgroup_size(wg)`) or a `var<workgroup>`
array: reflection then records which overrides the entry point `needs` (sizes stand at 1 until
they are given) and `reflect(text, overrides=...)` resolves them with the values a run uses. Per
entry point it also records whether it reads `num_workgroups` (only such a kernel may have its
grid folded into 2-D), the features what it reaches needs, and which `array<atomic<u32>>`
bindings it reads as f32 bits (`bitcast<f32>(atomicLoad(...))`, the CAS float-add pattern).
The types a module writes are needs of all its entry points, since the compiler validates every
type of a module: f16 needs `shader-f16`, and `atomic<f32>` (native float atomics: atomicAdd,
atomicSub, atomicExchange, load and store, in storage only) `shader-float32-atomic`, which needs
no `enable` (measured on lavapipe with wgpu 0.32's naga).

An `enable` the host does not manage (anything but `f16` and `subgroups`) is a feature every
entry point of the module needs, named as written, so a kernel that enables an extension the
compiler or the adapter lacks is listed as needing it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from workbench.wgsl import syntax as s
from workbench.wgsl.checker import Checker
from workbench.wgsl.hazards import CHAIN_SUSPECT, Site
from workbench.wgsl.hazards import sites as hazard_sites
from workbench.wgsl.lexer import line_of
from workbench.wgsl.parser import parse, recursion_room
from workbench.wgsl.printer import print_expr
from workbench.wgsl.types import INTEGERS, WType, round_up, uniform_layout

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
# The device feature a module needs for each kind of type it writes: naga validates every type of
# a module, used or not (an unused `array<atomic<f32>>` binding is refused on a device without the
# feature: "Capability SHADER_FLOAT32_ATOMIC is required"), so these are the whole module's needs.
F16_FEATURE = "shader-f16"
F32_ATOMIC_FEATURE = "shader-float32-atomic"
# Extensions whose `enable` the host writes itself (from what the module uses and the adapter has).
HOST_ENABLES = frozenset({"f16", "subgroups"})
# Enable-extensions whose wgpu device feature is spelt otherwise (the rest keep their name).
_ENABLE_FEATURES = {
    "f16": F16_FEATURE,
    "subgroups": "subgroup",
    "clip_distances": "clip-distances",
    "dual_source_blending": "dual-source-blending",
    "primitive_index": "primitive-index",
}


def enable_feature(extension: str) -> str:
    """The device feature an `enable`d extension needs, by wgpu's name where it has one."""
    return _ENABLE_FEATURES.get(extension, extension)


# The per-dimension bound naga puts on @workgroup_size (measured: 16384 compiles, 16385 does not).
MAX_WORKGROUP_DIMENSION = 16384
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
    # What the type checker could not work out in those functions, (module line, why): left to
    # the compiler, and named so a feature that needs the knowledge can say why it cannot act.
    deferred: tuple[tuple[int, str], ...] = ()
    # In those functions: loops that may run long, and else-if chains of CHAIN_SUSPECT branches
    # or more (`hazards`), what some adapters compute wrongly.
    loops: tuple[Site, ...] = ()
    chains: tuple[Site, ...] = ()


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
    uses_f32_atomics: bool = False  # a type written in it is atomic<f32>
    uses_subgroups: bool = False
    functions: dict[str, tuple[int, int]] = field(default_factory=dict)  # name -> text span
    enables: tuple[str, ...] = ()  # every extension the module's `enable`s name, in order
    # The syntax tree read; None when the result was remembered from an earlier run (`reflected`).
    tree: s.Module | None = field(default=None, repr=False)

    @property
    def enabled_features(self) -> tuple[str, ...]:
        """Features named by `enable`s the host does not manage (wgpu's name where it has one,
        else the extension as written)."""
        return tuple(enable_feature(e) for e in self.enables if e not in HOST_ENABLES)

    @property
    def type_features(self) -> tuple[str, ...]:
        """Device features the types written in the module need, whatever an entry point
        reaches (the compiler validates every type of the module)."""
        need = []
        if self.uses_f16:
            need.append(F16_FEATURE)
        if self.uses_f32_atomics:
            need.append(F32_ATOMIC_FEATURE)
        return tuple(need)

    @property
    def features(self) -> tuple[str, ...]:
        """Device features the module needs (wgpu feature names)."""
        need = list(self.type_features)
        if self.uses_subgroups:
            need.append("subgroup")
        return tuple(need) + self.enabled_features


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


def reflect(
    text: str, where: str = "<wgsl>", overrides: Mapping[str, float] | None = None
) -> ModuleInfo:
    """Reflect a whole module. `where` names the file (or module) in error messages; `overrides`
    gives values of `override` constants (they replace defaults, and resolve default-less ones)."""
    return reflect_tree(parse(text, where), where, overrides)


def reflect_tree(
    tree: s.Module, where: str = "<wgsl>", overrides: Mapping[str, float] | None = None
) -> ModuleInfo:
    """Reflect an already parsed module."""
    return _Reflector(tree, where, overrides or {}).run()


class _Reflector:
    def __init__(self, tree: s.Module, where: str, overrides: Mapping[str, float]) -> None:
        self.tree = tree
        self.text = tree.text
        self.where = where
        self.checker = Checker(tree, where, overrides)
        self.info = ModuleInfo(tree=tree)

    def line(self, span: s.Span) -> int:
        return line_of(self.text, span[0])

    def run(self) -> ModuleInfo:
        with recursion_room():
            return self._run()

    def _run(self) -> ModuleInfo:
        checker, info = self.checker, self.info
        words = self.tree.words
        info.uses_f16 = self.tree.half_literals or bool(words & F16_WORDS)
        info.uses_f32_atomics = "atomic" in words and self.writes_f32_atomic()
        info.uses_subgroups = bool(words & SUBGROUP_WORDS)
        enables: list[str] = []
        for d in self.tree.decls:
            if isinstance(d, s.Directive) and d.kind == "enable":
                enables += [w for w in d.words if w not in enables]
            elif isinstance(d, s.Struct):
                info.structs.setdefault(d.name, checker.struct_type(d.name, strict=True))
            elif isinstance(d, s.VarDecl):
                self.var(d)
            elif isinstance(d, s.Function):
                info.functions.setdefault(d.name, d.span)
        info.enables = tuple(enables)
        for fn in self.tree.functions():
            if fn.attr("compute") is not None and fn.name not in info.entry_points:
                self.entry_point(fn)
        return info

    def writes_f32_atomic(self) -> bool:
        """Whether a type written anywhere in the module is `atomic<f32>` (through an alias of
        f32 too)."""
        for decl in self.tree.decls:
            for node in s.walk(decl):
                if (
                    isinstance(node, s.Ident)
                    and node.name == "atomic"
                    and node.template
                    and self.checker.resolve_type(node.template[0]).text == "f32"
                ):
                    return True
        return False

    def var(self, d: s.VarDecl) -> None:
        checker, info = self.checker, self.info
        if d.kind == "const":
            v = checker.global_value(d.name).value
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                info.consts[d.name] = v
            return
        if d.kind == "override":
            self.override(d)
            return
        space = d.template[0] if d.template else ""
        if space not in ("storage", "uniform", "workgroup"):
            return
        checker.pending = set()
        vtype = checker.resolve_type(d.type, strict=True) if d.type is not None else None
        pending = tuple(sorted(checker.pending))
        if space == "workgroup":
            if vtype is None:
                raise checker.err(d.span, f"workgroup variable '{d.name}' needs a type")
            info.workgroup_vars[d.name] = WorkgroupVar(
                d.name, vtype, self.line(d.name_span), pending
            )
            return
        if pending:
            raise checker.err(
                d.span,
                f"resource variable '{d.name}' is sized by override {', '.join(pending)}, which "
                "has no default; give it a default",
            )
        group = next((a for a in d.attrs if a.name == "group"), None)
        binding = next((a for a in d.attrs if a.name == "binding"), None)
        if group is None or binding is None:
            raise checker.err(d.span, f"resource variable '{d.name}' needs @group and @binding")
        if vtype is None:
            raise checker.err(d.span, f"resource variable '{d.name}' needs a type")
        access = d.template[1] if len(d.template) > 1 else ("read" if space == "storage" else "")
        if space == "uniform":
            vtype = uniform_layout(vtype)
        info.bindings[d.name] = Binding(
            self.int_attr(group, d),
            self.int_attr(binding, d),
            d.name,
            space,
            access,
            vtype,
            self.line(d.name_span),
        )

    def int_attr(self, a: s.Attribute, d: s.VarDecl) -> int:
        value = self.checker.expr(a.args[0]).value if a.args else None
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 0xFFFFFFFF:
            raise self.checker.err(
                d.span, f"@{a.name} needs a non-negative integer that fits in u32"
            )
        return value

    def override(self, d: s.VarDecl) -> None:
        checker, info = self.checker, self.info
        default = None
        if d.init is not None:
            v = checker.expr(d.init).value
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                default = v
                if (
                    d.type is not None
                    and isinstance(d.type, s.Ident)
                    and d.type.name in ("f32", "f16")
                ):
                    default = float(v)
        oid_attr = next((a for a in d.attrs if a.name == "id"), None)
        oid = None
        if oid_attr is not None and oid_attr.args:
            v = checker.expr(oid_attr.args[0]).value
            oid = v if isinstance(v, int) and not isinstance(v, bool) else None
        tname = print_expr(d.type) if d.type is not None else ""
        info.overrides[d.name] = Override(d.name, tname, default, oid)
        value = checker.global_value(d.name).value
        checker.pending.discard(d.name)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            info.consts[d.name] = value

    def entry_point(self, fn: s.Function) -> None:
        info = self.info
        size, needs, problem = self.workgroup_size(fn)
        line = self.line(fn.name_span)
        if problem:
            info.entry_problems[fn.name] = (line, problem)
            return
        used, reached = self.reachable(fn.name)
        bindings = sorted(
            (b for n, b in info.bindings.items() if n in used), key=lambda b: (b.group, b.binding)
        )
        shared = tuple(v for n, v in info.workgroup_vars.items() if n in used)
        for var in shared:
            needs |= set(var.needs)
        builtins = set().union(
            *(self.checker.facts[f].builtins for f in reached if f in self.checker.facts)
        )
        features = list(info.type_features)
        if builtins & SUBGROUP_WORDS:
            features.append("subgroup")
        features += info.enabled_features
        bitcasts: set[str] = set()
        if "bitcast" in self.tree.words and self.tree.words & _CAS_CALLS:  # else no walk
            bitcasts = bitcasts.union(*(_bitcast_loads(self.tree_fn(f)) for f in reached))
        f32_bits = tuple(
            b.name
            for b in bindings
            if b.name in bitcasts and b.element.kind == "atomic" and b.element.scalar == "u32"
        )
        params = self.param_builtins(fn)
        spans = [f.span for f in map(self.tree_fn, reached) if f is not None]
        deferred = dict.fromkeys(
            (self.line(span), why)
            for span, why in self.checker.unknowns
            if any(a <= span[0] < b for a, b in spans)
        )
        loops, chains = hazard_sites(self.tree, self.where, reached, CHAIN_SUSPECT)
        info.entry_points[fn.name] = EntryPoint(
            fn.name,
            (size[0], size[1], size[2]),
            tuple(bindings),
            line,
            workgroup_bytes=sum(v.footprint for v in shared),
            workgroup_vars=shared,
            needs=tuple(sorted(needs)),
            reads_num_workgroups="num_workgroups" in params,
            indexes_by_global_id="global_invocation_id" in params,
            features=tuple(features),
            f32_bits=f32_bits,
            functions=tuple(sorted(reached)),
            deferred=tuple(deferred),
            loops=tuple(loops),
            chains=tuple(chains),
        )

    def tree_fn(self, name: str) -> s.Function | None:
        d = self.checker.globals.get(name)
        return d if isinstance(d, s.Function) else None

    def param_builtins(self, fn: s.Function) -> set[str]:
        """The builtins the entry point takes, as parameters or members of struct parameters."""
        out: set[str] = set()
        for p in fn.params:
            out |= _builtins(p.attrs)
            decl = self.checker.globals.get(p.type.name) if isinstance(p.type, s.Ident) else None
            if isinstance(decl, s.Struct):
                for m in decl.members:
                    out |= _builtins(m.attrs)
        return out

    def workgroup_size(self, fn: s.Function) -> tuple[list[int], set[str], str]:
        """The sizes of `fn`'s @workgroup_size, the overrides they wait for, or why they cannot
        be used."""
        unknown = [a.name for a in fn.attrs if a.name not in _FUNCTION_ATTRIBUTES]
        if unknown:
            return (
                [],
                set(),
                (
                    f"@{unknown[0]} is no attribute of a function ('{fn.name}'); the shader compiler "
                    "rejects it"
                ),
            )
        attr = fn.attr("workgroup_size")
        if attr is None or not attr.args:
            return [], set(), f"@compute fn '{fn.name}' has no @workgroup_size"
        checker = self.checker
        size: list[int] = []
        needs: set[str] = set()
        for arg in attr.args[:3]:
            checker.pending = set()
            typed = checker.expr(arg)
            v = typed.value
            text = print_expr(arg)
            if v is None and checker.pending:
                needs |= checker.pending
                v = 1
            if isinstance(v, float) and v.is_integer():
                v = int(v)
            if isinstance(v, float) and typed.type.scalar in INTEGERS:
                # An integer override given a fraction by a run.
                return (
                    [],
                    set(),
                    f"@workgroup_size of '{fn.name}' has {text} = {v:g}: every size must be a "
                    "whole number >= 1",
                )
            if isinstance(v, bool) or not isinstance(v, int):
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
                        f"@workgroup_size of '{fn.name}' has {text} = {v}: every size must be at "
                        "least 1"
                    ),
                )
            if v > MAX_WORKGROUP_DIMENSION:
                return (
                    [],
                    set(),
                    (
                        f"@workgroup_size of '{fn.name}' has {text} = {v}: the shader compiler allows "
                        f"at most {MAX_WORKGROUP_DIMENSION} in each dimension"
                    ),
                )
            size.append(v)
        while len(size) < 3:
            size.append(1)
        return size, needs, ""

    def reachable(self, root: str) -> tuple[set[str], set[str]]:
        """Module-scope names `root` and every function it calls mention, and those functions
        (each checked when first reached: what no entry point reaches is never typed here)."""
        facts = self.checker.facts
        seen, names, todo = {root}, set[str](), [root]
        while todo:
            name = todo.pop()
            if name not in facts:
                fn = self.tree_fn(name)
                if fn is None:
                    continue
                self.checker.function(fn)
            f = facts[name]
            names |= f.globals
            for called in f.globals:
                if called not in seen and self.tree_fn(called) is not None:
                    seen.add(called)
                    todo.append(called)
        return names, seen


# The attributes a function may carry (WGSL spec, "Attributes"); naga rejects any other.
_FUNCTION_ATTRIBUTES = frozenset(
    {"compute", "workgroup_size", "vertex", "fragment", "must_use", "diagnostic"}
)


def _builtins(attrs: tuple[s.Attribute, ...]) -> set[str]:
    return {
        a.args[0].name
        for a in attrs
        if a.name == "builtin" and a.args and isinstance(a.args[0], s.Ident)
    }


_CAS_CALLS = frozenset({"atomicLoad", "atomicCompareExchangeWeak"})


def _bitcast_loads(fn: s.Function | None) -> set[str]:
    """Atomics a function uses as f32 bits: in a body that has `bitcast<f32>`, the variable of
    every `atomicLoad(&X...)` and `atomicCompareExchangeWeak(&X...)` (the CAS float-add pattern)."""
    if fn is None:
        return set()
    calls = [n for n in s.walk(fn.body) if isinstance(n, s.Call)]
    casts_f32 = any(
        c.callee.name == "bitcast"
        and c.callee.template is not None
        and len(c.callee.template) == 1
        and isinstance(c.callee.template[0], s.Ident)
        and c.callee.template[0].name == "f32"
        for c in calls
    )
    if not casts_f32:
        return set()
    out = set()
    for c in calls:
        if c.callee.name in _CAS_CALLS and c.args:
            arg = c.args[0]
            if isinstance(arg, s.Unary) and arg.op == "&":
                root = s.root_ident(arg.operand)
                if root is not None:
                    out.add(root)
    return out
