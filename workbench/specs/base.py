"""The vocabulary of kernel specs: what a kernel *means*, independent of wgpu.

A `KernelSpec` names a kernel's dimensions, the shape and host dtype of every storage binding,
how inputs are generated (seeded), the values of its uniforms, its dispatch grid, which bindings
are outputs, a float64 reference, tolerances per output (with the reason; static, or a function of
the dims where the error grows with them) and a cost model. Everything the checks need to know
about one kernel is declared on its spec too, in one place: its `gradient` (a `GradLink` tying a
backward kernel to its forward), its `small_dims` (quick checks, and checks that run it many
times), the special-value rule for its inputs, which inputs are saved forward results, and when
its atomic outputs are promised reproducible. `workbench.specs.registry` validates all of it once.

The binding *signature* (order, address space, access, element type) is not written here: the
registry reflects it from the shipped WGSL, so a spec and its shipped kernel can never disagree.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace

import numpy as np

Dims = Mapping[str, int]
Arrays = Mapping[str, np.ndarray]
Uniforms = Callable[[Dims], dict[str, object]]
Reference = Callable[[Dims, Arrays], dict[str, np.ndarray]]

# The module-scope constant by which a kernel says how many elements of a per-element grid each
# of its invocations takes. A spec's grid is the seed's, one element per invocation, so a kernel
# written to the seed ABI runs under it unchanged; a kernel declaring this constant (the shipped
# elementwise kernels declare 4 or 8) gets ceil(grid_x / value) workgroups along x.
PER_INVOCATION = "ELEMENTS_PER_INVOCATION"


@dataclass(frozen=True)
class Dim:
    """A named dimension with its default (from the seeds) and its allowed range."""

    name: str
    default: int
    lo: int = 0
    hi: int = 1 << 24
    doc: str = ""


@dataclass(frozen=True)
class Tol:
    """Closeness for one output: `|got - ref| <= atol + rtol * |ref|`, with the reason."""

    rtol: float
    atol: float
    why: str


@dataclass(frozen=True)
class Buffer:
    """One storage binding as the host sees it: named axes (outermost first) and a dtype.

    `dtype` is the host view: an `array<atomic<u32>>` that holds f32 bits is viewed as float32.
    """

    axes: tuple[tuple[str, int], ...]
    dtype: str = "float32"

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(size for _, size in self.axes)

    @property
    def count(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))


@dataclass(frozen=True)
class Cost:
    """What one dispatch moves and computes, for GB/s and GFLOP/s figures."""

    bytes: int
    flops: int


@dataclass(frozen=True)
class GradLink:
    """How a backward kernel relates to its forward, for gradient checks.

    The scalar loss is `L = sum_k <arrays[upstream[k]], forward_ref(dims, arrays)[k]>`: `arrays`
    holds the backward kernel's inputs plus `primals` (forward inputs the backward does not bind,
    e.g. the table for an embedding gradient), and each forward output k is paired with the
    backward input that carries dL/d(that output). `wrt` maps each gradient output of the
    backward kernel to the array it differentiates, so that output must equal dL/d(that array).

    `saved` recomputes, from the other arrays, backward inputs that are results of the forward
    (attention's LSE, the P/dS scratch), so they stay consistent with the primals whatever inputs
    the case was given. `forward_kernel` names the GPU forward kernel for a second, f32 check;
    its outputs carry the names of `forward_ref`'s, and `forward_inputs` maps its input bindings
    to array names where they differ (gelu_inplace's `x` is the backward's `pre_gelu`).
    `grad_dims` are small dims the check uses when the case itself is too big to differentiate
    numerically (each sample costs two forward evaluations).
    """

    forward_ref: Callable[[Dims, Arrays], dict[str, np.ndarray]]
    upstream: Mapping[str, str]
    wrt: Mapping[str, str]
    primals: Callable[[Dims, int], dict[str, np.ndarray]] | None = None
    saved: Callable[[Dims, Arrays], dict[str, np.ndarray]] | None = None
    forward_kernel: str | None = None
    forward_inputs: Mapping[str, str] = field(default_factory=dict)
    grad_dims: Mapping[str, int] = field(default_factory=dict)
    doc: str = ""


def primal_rng(seed: int) -> np.random.Generator:
    """A stream apart from the spec's own (seeded by `seed` alone), so a gradient check's primal
    never repeats the backward's inputs, e.g. RoPE's Q would otherwise equal the upstream dQ."""
    return np.random.default_rng([seed, 7919])


@dataclass(frozen=True)
class KernelSpec:
    """The meaning of one kernel. Every callable takes the resolved dims (defaults filled in).

    Tolerances: `tolerances` holds the static ones; a kernel whose error grows with a dim (RoPE's
    f32 angle with the position) gives `tolerances_for(dims)` as well, whose entries take
    precedence. Read them through `tolerance(name, dims)`, never from the fields directly.
    """

    name: str
    file: str
    dims: tuple[Dim, ...]
    buffers: Callable[[Dims], dict[str, Buffer]]
    inputs: Callable[[Dims, int], dict[str, np.ndarray]]
    uniforms: Uniforms
    grid: Callable[[Dims], tuple[int, int, int]]
    outputs: tuple[str, ...]
    reference: Reference
    tolerances: Mapping[str, Tol]
    cost: Callable[[Dims], Cost]
    zeroed: tuple[str, ...] = ()
    special: Mapping[str, str] = field(default_factory=dict)
    doc: str = ""
    tolerances_for: Callable[[Dims], Mapping[str, Tol]] | None = None
    # Described kernels (workbench.toml): the file they come from, and what shipped specs leave
    # at these defaults.
    described: str = ""
    has_reference: bool = True
    special_policy: str = "ieee"  # ieee | finite | skip: what the special-value check demands
    overrides: Mapping[str, float] = field(default_factory=dict)
    gradient: GradLink | None = None
    gradient_problem: str = ""  # why a described gradient check cannot run
    # What the checks need to know (declared here, validated once by the registry):
    # dims each still crossing a workgroup boundary, for `check --quick` and for checks that run
    # the kernel many times (special values, determinism) when the case is over their budget.
    small_dims: Mapping[str, int] = field(default_factory=dict)
    # (input binding, injected value) -> "match", "contained" or "pattern" (checks.special).
    special_rule: Callable[[str, float], str] | None = None
    # Inputs that are results of the forward (attention's LSE): not injected by default.
    saved: tuple[str, ...] = ()
    # Of those, the ones `gradient.saved` recomputes after a value is injected elsewhere.
    resaved: tuple[str, ...] = ()
    # dims -> True when every output must be bitwise reproducible, float atomics or not.
    deterministic_when: Callable[[Dims], bool] | None = None
    # The grid's x counts elements (one per invocation) or rows (one per workgroup): a kernel
    # declaring the constant `grid_divisor` (PER_INVOCATION unless the spec names another)
    # divides it (see launch_grid).
    per_element_grid: bool = False
    grid_divisor: str = PER_INVOCATION
    # Outputs held as packed words (a described kernel's quantized blocks): (dims, name, words)
    # -> the float64 values they hold, which are what the reference gives and what is compared.
    decode_output: Callable[[Dims, str, np.ndarray], np.ndarray] | None = None
    packed_outputs: tuple[str, ...] = ()
    # Uniform fields that hold values of their own rather than dims (a described kernel's `eps`),
    # by path (`params.eps`, `dims.w`): a case may set them (`--set`, the UI form's fields) and
    # the reference sees what was set (`with_values`, through `values_for`, which gives the
    # uniforms and reference for those values over the spec's own).
    settable: tuple[str, ...] = ()
    values_for: Callable[[Mapping[str, float]], tuple[Uniforms, Reference]] | None = None

    def with_values(self, values: Mapping[str, float]) -> KernelSpec:
        """This spec with the `settable` uniform fields in `values` set, in the values the kernel
        is given and in those its reference takes by name; the same spec without any."""
        if self.values_for is None or not values:
            return self
        uniforms, reference = self.values_for(values)
        return replace(self, uniforms=uniforms, reference=reference)

    def launch_grid(self, dims: Dims, consts: Mapping[str, float | int]) -> tuple[int, int, int]:
        """The grid for a kernel whose module-scope constants are `consts`: `grid(dims)`, with x
        divided (rounding up) by the kernel's `grid_divisor` constant when this spec's grid
        counts elements or rows."""
        from workbench.errors import UserError

        x, y, z = (int(v) for v in self.grid(dims))
        name = self.grid_divisor
        if not self.per_element_grid or name not in consts:
            return (x, y, z)
        per = consts[name]
        if not float(per).is_integer() or per < 1:
            raise UserError(
                f"{self.name}: const {name} = {per} must be a whole number >= 1 "
                "(what each invocation or workgroup takes along x; the grid is divided by it)"
            )
        return (-(-x // int(per)), y, z)

    def observed(self, dims: Dims, name: str, raw: np.ndarray) -> np.ndarray:
        """Output `name` as it is compared with the reference: its contents, or for a packed
        output the values its words hold."""
        if self.decode_output is None or name not in self.packed_outputs:
            return raw
        return self.decode_output(dims, name, raw)

    def tolerance(self, name: str, dims: Dims) -> Tol | None:
        """The tolerance of output `name` at the resolved `dims`, or None when the spec gives none
        (callers then use the dtype's defaults)."""
        if self.tolerances_for is not None:
            tol = self.tolerances_for(dims).get(name)
            if tol is not None:
                return tol
        return self.tolerances.get(name)

    def resolve_dims(self, given: Mapping[str, int] | None = None) -> dict[str, int]:
        """Defaults overlaid with `given`; unknown names and out-of-range values are refused."""
        from workbench.errors import UserError

        given = dict(given or {})
        known = {d.name: d for d in self.dims}
        unknown = sorted(set(given) - set(known))
        if unknown:
            names = ", ".join(known) or "none"
            raise UserError(
                f"{self.name}: unknown dim {', '.join(unknown)}; this kernel's dims are {names}"
            )
        out: dict[str, int] = {}
        for d in self.dims:
            value = int(given.get(d.name, d.default))
            if not d.lo <= value <= d.hi:
                raise UserError(
                    f"{self.name}: dim {d.name}={value} is outside [{d.lo}, {d.hi}]"
                    + (f" ({d.doc})" if d.doc else "")
                )
            out[d.name] = value
        return out
