"""Case planning: turning a kernel, dims and inputs into a `Case`, with no GPU work at all.

A `Case` is everything needed to dispatch a kernel once — kernel, spec (if one matches by name AND
binding signature), dims, buffer shapes, inputs, uniform values, grid. Planning needs only the
adapter's description (its limits, to refuse an oversized case before its inputs are made), never
a device. Kernels without a spec are planned "ad hoc": one size `n`, every runtime-sized array `n`
elements, a uniform named n/size/len/count set to `n`, grid ceil(n / workgroup_size.x).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import numpy as np

from workbench.errors import Advice, LimitError, SpecMismatchError, UserError
from workbench.gpu.adapters import AdapterInfo
from workbench.gpu.limits import check_limits
from workbench.gpu.uniforms import check_scalar, default_value, set_field
from workbench.recipes import DEFAULT_SEED, make_input, takes_run_seed
from workbench.specs.base import Buffer, Cost, KernelSpec
from workbench.specs.described import described_for
from workbench.specs.registry import spec_for
from workbench.wgsl.corpus import SHIPPED, Corpus, Kernel, load_corpus
from workbench.wgsl.reflect import Binding, EntryPoint
from workbench.wgsl.types import NUMPY_DTYPE, WType, round_up

# A dtype name, or the structured dtype of a struct element.
HostDtype = str | np.dtype[Any]
ADHOC_N = 1024
ADHOC_SIZE_NAMES = ("n", "size", "len", "count")


@dataclass(frozen=True)
class BindingPlan:
    """One binding of a case: its role, host shape/dtype and byte size."""

    binding: Binding
    name: str  # the spec's name for it (the kernel's own name for ad-hoc kernels)
    role: str  # "input", "output", "inout", "scratch" (zeroed, not compared) or "uniform"
    shape: tuple[int, ...]
    axes: tuple[str, ...]
    dtype: HostDtype
    nbytes: int
    source: str = ""  # how its contents were made (recipe, spec generator, zeros)


@dataclass
class Case:
    """A kernel ready to dispatch: no GPU work has happened yet."""

    kernel: Kernel
    spec: KernelSpec | None
    dims: dict[str, int]
    seed: int
    bindings: list[BindingPlan]
    inputs: dict[str, np.ndarray]
    uniforms: dict[str, Any]
    grid: tuple[int, int, int]
    notes: list[str] = field(default_factory=list)
    overrides: dict[str, float] = field(default_factory=dict)  # pipeline constants, by name

    @property
    def name(self) -> str:
        return self.kernel.name

    def plan(self, name: str) -> BindingPlan:
        return next(p for p in self.bindings if p.name == name)

    @property
    def outputs(self) -> list[str]:
        return [p.name for p in self.bindings if p.role in ("output", "inout", "scratch")]

    @property
    def workgroups(self) -> int:
        return math.prod(self.grid)

    @property
    def entry_point(self) -> EntryPoint | None:
        """The kernel's entry point with this case's override values applied (workgroup size and
        workgroup arrays sized by overrides)."""
        return self.kernel.resolved(self.overrides)

    @property
    def cost(self) -> Cost | None:
        return self.spec.cost(self.dims) if self.spec else None


@cache
def shipped_corpus() -> Corpus:
    return load_corpus(SHIPPED)


def spec_signature_problem(kernel: Kernel, spec: KernelSpec) -> str | None:
    """Why `kernel` does not have the binding signature of the shipped kernel `spec` describes."""
    shipped = next((k for k in shipped_corpus().kernels if k.name == spec.name), None)
    if shipped is None or shipped.entry_point is None:
        return None
    if kernel.entry_point is None:
        return "it has no entry point to compare"
    want = [b.signature for b in shipped.entry_point.bindings]
    have = [b.signature for b in kernel.entry_point.bindings]
    if want == have:
        return None
    lines = []
    for i in range(max(len(want), len(have))):
        w = want[i] if i < len(want) else None
        h = have[i] if i < len(have) else None
        if w != h:
            lines.append(f"expected {_signature_text(w)}, found {_signature_text(h)}")
    return "; ".join(lines[:4])


def _signature_text(s: tuple[int, int, str, str, str] | None) -> str:
    if s is None:
        return "nothing"
    return f"@group({s[0]}) @binding({s[1]}) {s[2]}{', ' + s[3] if s[3] else ''} {s[4]}"


def match_spec(
    kernel: Kernel, adhoc: bool = False, described: Mapping[str, KernelSpec] | None = None
) -> KernelSpec | None:
    """The spec matching `kernel`, None for ad hoc; a signature mismatch is an error, never guessed.

    `described` holds the specs of the corpus's workbench.toml; one for this kernel's file wins
    over a shipped spec of the same name.
    """
    if adhoc:
        return None
    mine = described_for(described or {}, kernel)
    if mine is not None:
        return mine
    spec = spec_for(kernel.name)
    if spec is None:
        return None
    problem = spec_signature_problem(kernel, spec)
    if problem:
        raise SpecMismatchError(
            f"{kernel.file}:{kernel.name} has the name of a shipped kernel but not its binding "
            f"signature: {problem}; match the ABI, or run it ad hoc",
            advice=Advice.RUN_ADHOC,
        )
    return spec


def plan_case(
    kernel: Kernel,
    adapter: AdapterInfo,
    dims: Mapping[str, int] | None = None,
    inputs: Mapping[str, np.ndarray | str] | None = None,
    sizes: Mapping[str, int] | None = None,
    sets: Mapping[str, float] | None = None,
    seed: int = DEFAULT_SEED,
    adhoc: bool = False,
    described: Mapping[str, KernelSpec] | None = None,
    grid: tuple[int, int, int] | None = None,
    overrides: Mapping[str, float] | None = None,
) -> Case:
    """The case for `kernel` on `adapter` (whose limits it must fit); UserError for bad input.

    `described` holds the specs the kernel's corpus describes in its workbench.toml; `grid`
    replaces the planned workgroup counts; `overrides` gives values of `override` constants
    (over a description's); `sets` gives uniform fields' values (`params.eps`), which a
    described kernel's reference sees where the description gives the field a value of its own
    (`KernelSpec.settable`). A kernel with a shipped kernel's name but another binding signature
    is planned ad hoc, with a note.
    """
    k = kernel
    if k.problem:
        raise UserError(f"{k.file}:{k.name}: {k.problem}")
    ep = k.entry_point
    if ep is None:
        raise UserError(f"{k.file}:{k.name}: no @compute entry point could be reflected")
    if seed < 0:
        raise UserError(f"seed must be >= 0, got {seed}")
    notes = []
    try:
        spec = match_spec(k, adhoc, described)
    except SpecMismatchError:
        spec = None
        shipped = spec_for(k.name)
        problem = spec_signature_problem(k, shipped) if shipped is not None else None
        notes.append(
            f"{k.name} has the name of a shipped kernel but not its binding signature "
            f"({problem}): it runs ad hoc, without the shipped reference"
        )
    values = _override_values(k, spec, overrides or {})
    resolved = k.resolved(values)
    if values and resolved is None:
        raise UserError(f"{k.file}:{k.name}: {k.override_problem(values)}")
    ep = resolved or ep
    if ep.needs:
        name = ep.needs[0]
        raise UserError(
            f"{k.file}:{k.name}: override {name} has no default and sizes the kernel; give its "
            f"value (an override {name}=V, or overrides = {{ {name} = V }} in workbench.toml)",
            advice=Advice.GIVE_OVERRIDE,
        )
    left = dict(sets or {})
    if spec is not None:
        # A field the description gives a value of its own (eps) is set in the spec, so the
        # reference sees it too; any other field is set in the case alone (with a note).
        spec = spec.with_values({p: left.pop(p) for p in spec.settable if p in left})
        case = _spec_case(k, ep, adapter, spec, dims or {}, sizes or {}, seed, grid)
    else:
        case = _adhoc_case(k, ep, adapter, dims or {}, sizes or {}, seed, grid)
    case.overrides = values
    case.notes[:0] = notes
    for key, value in (inputs or {}).items():
        _give_input(case, key, value)
    for key, number in left.items():
        _set_uniform(case, key, number)
    return case


def _override_values(
    k: Kernel, spec: KernelSpec | None, given: Mapping[str, float]
) -> dict[str, float]:
    """The description's override values with the given ones over them, names checked."""
    declared = k.module.overrides if k.module else {}
    unknown = sorted(set(given) - set(declared))
    if unknown:
        have = ", ".join(declared) or "none"
        raise UserError(f"{k.name} has no override {unknown[0]}; its overrides: {have}")
    for name, value in given.items():
        check_scalar(declared[name].type, value, f"override {name}")
    return {**(spec.overrides if spec is not None else {}), **given}


def _given_grid(
    k: Kernel,
    ep: EntryPoint,
    adapter: AdapterInfo,
    sized: list[tuple[Binding, int]],
    grid: tuple[int, int, int],
) -> tuple[int, int, int]:
    """A grid given by the user, checked against the adapter's limits."""
    if len(grid) != 3 or any(int(v) < 0 for v in grid):
        raise UserError(f"a grid is three workgroup counts >= 0, got {grid}")
    gx, gy, gz = (int(v) for v in grid)
    check_limits(adapter, sized, ep.workgroup_size, (gx, gy, gz), k.name, entry=ep)
    return (gx, gy, gz)


def check_case_limits(case: Case, adapter: AdapterInfo) -> tuple[int, int, int]:
    """LimitError if `case` exceeds `adapter`'s limits; else the grid as it will be dispatched."""
    ep = case.entry_point
    if ep is None:
        raise UserError(f"{case.kernel.file}:{case.name}: no @compute entry point")
    sized = [(p.binding, p.nbytes) for p in case.bindings]
    return check_limits(adapter, sized, ep.workgroup_size, case.grid, case.name, entry=ep)


def limit_refusal(case: Case, adapter: AdapterInfo) -> LimitError | None:
    """The limit `case` would exceed on `adapter`, said before anything is allocated."""
    try:
        check_case_limits(case, adapter)
    except LimitError as exc:
        return exc
    return None


def _spec_case(
    k: Kernel,
    ep: EntryPoint,
    adapter: AdapterInfo,
    spec: KernelSpec,
    dims: Mapping[str, int],
    sizes: Mapping[str, int],
    seed: int,
    given_grid: tuple[int, int, int] | None = None,
) -> Case:
    if sizes:
        raise UserError(
            f"{k.name} has a spec: binding sizes follow its dims ({', '.join(d.name for d in spec.dims)}); "
            "change the dims, or run it ad hoc to size bindings yourself",
            advice=Advice.RUN_ADHOC,
        )
    d = spec.resolve_dims(dims)
    buffers: dict[str, Buffer] = spec.buffers(d)
    uniforms = spec.uniforms(d)
    # A shipped spec names bindings as its shipped kernel does; a described one as the kernel does.
    spec_names: dict[tuple[int, int], str] = {}
    if not spec.described:
        shipped = next(s for s in shipped_corpus().kernels if s.name == spec.name)
        shipped_ep = shipped.entry_point
        if shipped_ep is None:
            raise RuntimeError(f"the shipped kernel {spec.name} has no entry point")
        spec_names = {(b.group, b.binding): b.name for b in shipped_ep.bindings}
    # The seed grid, divided by the kernel's ELEMENTS_PER_INVOCATION where it declares one.
    grid = spec.launch_grid(d, k.module.consts if k.module else {})
    sized = []
    for b in ep.bindings:
        if b.space == "uniform":
            sized.append((b, b.type.size(True)))
        else:
            buf = buffers[spec_names.get((b.group, b.binding), b.name)]
            sized.append((b, buf.count * np.dtype(buf.dtype).itemsize))
    notes = []
    if given_grid is not None:
        grid = _given_grid(k, ep, adapter, sized, given_grid)
        notes.append("the grid is given, not the spec's: outputs it leaves unwritten are reported")
    else:
        check_limits(adapter, sized, ep.workgroup_size, grid, k.name, entry=ep)
    gen: dict[str, np.ndarray] | None = None
    plans, arrays = [], {}
    for b in ep.bindings:
        name = spec_names.get((b.group, b.binding), b.name)
        if b.space == "uniform":
            plans.append(BindingPlan(b, name, "uniform", (), (), "", b.type.size(True), "spec"))
            continue
        buf = buffers[name]
        if name in spec.outputs:
            role = "output" if name in spec.zeroed else "inout"
        else:
            role = "scratch" if name in spec.zeroed else "input"
        nbytes = buf.count * np.dtype(buf.dtype).itemsize
        source = "zeros"
        if role in ("input", "inout"):
            if gen is None:
                gen = spec.inputs(d, seed)
            if name in gen:
                arr = np.asarray(gen[name], dtype=buf.dtype).reshape(buf.shape)
                arrays[name] = np.ascontiguousarray(arr)
                source = f"spec generator (seed {seed})"
            elif role == "input":
                raise RuntimeError(f"spec {spec.name}: inputs() gave no {name!r}")
            else:
                role = "output"  # an output the spec neither zeroes nor fills: zeros
        plans.append(
            BindingPlan(
                b,
                name,
                role,
                buf.shape,
                tuple(a for a, _ in buf.axes),
                buf.dtype,
                nbytes,
                source,
            )
        )
    return Case(k, spec, d, seed, plans, arrays, dict(uniforms), grid, notes)


def _adhoc_case(
    k: Kernel,
    ep: EntryPoint,
    adapter: AdapterInfo,
    dims: Mapping[str, int],
    sizes: Mapping[str, int],
    seed: int,
    given_grid: tuple[int, int, int] | None = None,
) -> Case:
    unknown = sorted(set(dims) - {"n"})
    if unknown:
        raise UserError(
            f"{k.name} has no spec, so its only dim is n (the element count); got {', '.join(unknown)}"
        )
    n = int(dims.get("n", ADHOC_N))
    if n < 0:
        raise UserError(f"n must be >= 0, got {n}")
    names = {b.name for b in ep.bindings}
    uniform_sized = sorted(b.name for b in ep.bindings if b.space == "uniform" and b.name in sizes)
    if uniform_sized:
        raise UserError(
            f"{uniform_sized[0]}: a uniform has a fixed size; set its fields instead",
            advice=Advice.SET_UNIFORM,
        )
    bad = sorted(set(sizes) - names)
    if bad:
        raise UserError(
            f"{k.name} has no binding {', '.join(bad)}; bindings: {', '.join(sorted(names))}"
        )
    plans, arrays, uniforms, recipes = [], {}, {}, []
    for idx, b in enumerate(ep.bindings):
        if b.space == "uniform":
            uniforms[b.name] = _adhoc_uniform(b.type, b.name, n)
            plans.append(BindingPlan(b, b.name, "uniform", (), (), "", b.type.size(True), "ad hoc"))
            continue
        count = int(sizes.get(b.name, n)) if b.runtime_sized else (b.type.count or 1)
        if b.runtime_sized and count < 0:
            raise UserError(f"size {b.name}={count}: sizes must be >= 0")
        if not b.runtime_sized and b.name in sizes:
            raise UserError(f"{b.name} is a fixed-size {b.type.text}; it cannot be resized")
        dtype, inner = _host_view(b.element)
        if b.name in ep.f32_bits:
            dtype = "float32"  # an array<atomic<u32>> the kernel reads as f32 bits (CAS adds)
        shape = (count, *inner) if b.type.kind == "array" else inner or (1,)
        # A lone vec3 (12 bytes) is shown with its padding lane, like vec3 array elements.
        nbytes = (
            count * b.element_stride
            if b.type.kind == "array"
            else round_up(b.type.align(), b.type.size())
        )
        role = "input" if b.access == "read" else "output"
        source = "zeros"
        if role == "input":
            recipe = _adhoc_recipe(dtype, n)
            if np.dtype(dtype).names is None:
                recipes.append((b.name, recipe, shape, dtype, seed + idx))
                source = f"{recipe} (seed {seed + idx})"
        plans.append(BindingPlan(b, b.name, role, shape, (), dtype, nbytes, source))
    wg = ep.workgroup_size[0]
    grid = (math.ceil(n / wg), 1, 1)
    sized = [(p.binding, p.nbytes) for p in plans]
    if given_grid is not None:
        grid = _given_grid(k, ep, adapter, sized, given_grid)
    else:
        check_limits(adapter, sized, ep.workgroup_size, grid, k.name, entry=ep)
    for name, recipe, shape, dtype, bseed in recipes:
        arrays[name] = make_input(recipe, shape, dtype, bseed, name)
    notes = _small_bindings(plans, n, grid, ep)
    return Case(k, None, {"n": n}, seed, plans, arrays, uniforms, grid, notes)


def _small_bindings(
    plans: list[BindingPlan], n: int, grid: tuple[int, int, int], ep: EntryPoint
) -> list[str]:
    """Warnings for runtime-sized bindings smaller than what the kernel will index: fewer than
    n elements, or (a kernel indexing by global id) fewer than all but the last workgroup's
    invocations along x."""
    threads = (grid[0] - 1) * ep.workgroup_size[0] + 1 if ep.indexes_by_global_id else 0
    out = []
    for p in plans:
        if p.role == "uniform" or not p.binding.runtime_sized:
            continue
        count = p.shape[0] if p.shape else 0
        if count < n:
            out.append(
                f"warning: {p.name} holds {count:,} elements, fewer than n = {n:,}: the kernel "
                "may index past its end (reads give 0 or another element, writes are dropped)"
            )
        elif count < threads:
            out.append(
                f"warning: {p.name} holds {count:,} elements, fewer than the grid's {threads:,} "
                "invocations along x: the kernel may index past its end"
            )
    return out


def _give_input(case: Case, name: str, value: np.ndarray | str) -> None:
    try:
        plan = case.plan(name)
    except StopIteration:
        names = ", ".join(p.name for p in case.bindings if p.role != "uniform")
        raise UserError(f"{case.name} has no storage binding {name!r}; bindings: {names}") from None
    if plan.role == "uniform":
        raise UserError(f"{name} is a uniform; set its fields instead", advice=Advice.SET_UNIFORM)
    idx = case.bindings.index(plan)
    if isinstance(value, str):
        arr = make_input(value, plan.shape, plan.dtype, case.seed + idx, name, case.notes)
        # The seed a random recipe drew from is shown, as for the recipes planned here.
        source = f"{value} (seed {case.seed + idx})" if takes_run_seed(value) else value
    else:
        arr = np.asarray(value)
        if arr.size != int(np.prod(plan.shape, dtype=np.int64)):
            raise UserError(
                f"{name}: {arr.size} elements given, the binding holds {int(np.prod(plan.shape))} "
                f"{plan.shape}"
            )
        arr = arr.reshape(plan.shape).astype(plan.dtype)
        source = "array"
    case.inputs[name] = np.ascontiguousarray(arr)
    role = plan.role
    if role == "output":
        role = "inout" if case.spec is None else "output"
    case.bindings[idx] = BindingPlan(
        plan.binding, plan.name, role, plan.shape, plan.axes, plan.dtype, plan.nbytes, source
    )


def _set_uniform(case: Case, key: str, value: float) -> None:
    head, *path = key.split(".")
    plan = next((p for p in case.bindings if p.name == head and p.role == "uniform"), None)
    if plan is None:
        names = ", ".join(p.name for p in case.bindings if p.role == "uniform") or "none"
        raise UserError(f"{case.name} has no uniform {head!r}; uniforms: {names}")
    t = plan.binding.type
    current = case.uniforms.get(head, default_value(t))
    case.uniforms[head] = set_field(t, current, path, value, head)
    if case.spec is not None:
        case.notes.append(
            f"uniform {key}={value} overrides the spec's value; the reference does not see it"
        )


def _adhoc_uniform(t: WType, name: str, n: int) -> Any:
    if t.kind == "scalar" and name in ADHOC_SIZE_NAMES:
        return n
    value = default_value(t)
    if t.kind == "struct":
        for m in t.members:
            if m.name in ADHOC_SIZE_NAMES and m.type.kind == "scalar":
                value[m.name] = n
    return value


def _adhoc_recipe(dtype: HostDtype, n: int) -> str:
    if np.dtype(dtype).kind == "f":
        return "randn"
    return f"randint:0:{max(n, 1)}"


def _host_view(el: WType) -> tuple[HostDtype, tuple[int, ...]]:
    """Host dtype and trailing shape for one array element."""
    if el.kind in ("scalar", "atomic"):
        return NUMPY_DTYPE.get(el.scalar or "u32", "uint32"), ()
    if el.kind == "vector":
        # vec3 elements are padded to 16 bytes in arrays: show the padding lane too.
        lanes = 4 if el.count == 3 else (el.count or 4)
        return NUMPY_DTYPE.get(el.scalar or "f32", "float32"), (lanes,)
    if el.kind == "matrix":
        col = 4 if el.rows == 3 else el.rows
        return NUMPY_DTYPE.get(el.scalar or "f32", "float32"), (el.count or 4, col)
    if el.kind == "struct":
        names, formats, offsets = [], [], []
        for m in el.members:
            dt, inner = _host_view(m.type)
            names.append(m.name)
            formats.append((dt, inner) if inner else dt)
            offsets.append(m.offset)
        fields = {"names": names, "formats": formats, "offsets": offsets, "itemsize": el.size()}
        return np.dtype(fields), ()  # type: ignore[call-overload]
    return "uint32", ()
