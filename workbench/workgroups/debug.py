"""Debug runs: one invocation's execution, step by step, with the values the real GPU computed.

The case is dispatched once with its kernel instrumented by `workbench.wgsl.trace` (the user's
file is never changed) and once plain; the chosen invocation's records come back as a `Trace` of
typed `Step`s at the user's file, line and column. The two runs' outputs are compared bit for bit
and any difference is reported, never hidden. Records past the capacity are counted, and the
trace says where it stopped.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from workbench.errors import UserError
from workbench.session import Case, Session
from workbench.wgsl.trace import (
    DEFAULT_CAPACITY,
    HEADER_WORDS,
    LOCATION_MASK,
    MEMORY,
    MODE_RANGE,
    MODE_SCAN,
    MODE_TRACE,
    MODE_WATCH,
    RECORD_WORDS,
    TRACE_NAME,
    TracePlan,
    instrument_trace,
)
from workbench.workgroups.guarded import with_instrumentation, writable

MAX_CAPACITY = 1 << 24
# A scalar, a vector (a list), a matrix (a list of its columns) or a struct (member -> value).
Value = float | int | bool | list[Any] | dict[str, Any]


@dataclass(frozen=True)
class Step:
    """One record of a trace: `step` is its place in the invocation's execution."""

    step: int
    file: str
    line: int
    col: int
    kind: str
    name: str
    type: str
    value: Value | None
    index: int | None
    depth: int
    operands: tuple[str, ...] = ()  # names and loads the value was made from (not in JSON)
    function: str = ""  # the function it is in (not in JSON)

    def to_json(self) -> dict[str, Any]:
        return {
            "step": self.step,
            "file": self.file,
            "line": self.line,
            "col": self.col,
            "kind": self.kind,
            "name": self.name,
            "type": self.type,
            "value": json_value(self.value),
            "index": self.index,
            "depth": self.depth,
        }


@dataclass
class MemoryView:
    """A workgroup array as the traced invocation saw it right after the barrier at `step`."""

    step: int
    name: str
    type: str
    values: list[Value]

    def to_json(self) -> dict[str, Any]:
        return {
            "step": self.step,
            "name": self.name,
            "type": self.type,
            "values": [json_value(v) for v in self.values],
        }


@dataclass
class Trace:
    kernel: str
    invocation: tuple[int, int, int]
    workgroup: tuple[int, int, int]
    local: tuple[int, int, int]
    steps: list[Step]
    outputs_identical: bool
    differing: list[str] = field(default_factory=list)  # outputs the instrumentation changed
    # Of `differing`, the outputs that two plain runs give differently too (float atomics adding
    # in any order): there the instrumentation is not what changed them.
    unsteady: list[str] = field(default_factory=list)
    truncated: bool = False
    attempted: int = 0  # records the invocation made, kept or not
    capacity: int = DEFAULT_CAPACITY
    end: str = ""  # where and why a truncated trace stopped
    memory: list[MemoryView] = field(default_factory=list)  # with `memory`: after each barrier

    @property
    def instrumentation_changed(self) -> list[str]:
        """The outputs that differ with instrumentation and agree between two plain runs."""
        return [name for name in self.differing if name not in self.unsteady]

    def outputs_line(self) -> str:
        """Whether the instrumentation changed the outputs, in words."""
        if self.outputs_identical:
            return "outputs identical with and without instrumentation"
        if self.instrumentation_changed:
            return f"OUTPUTS DIFFER with instrumentation: {', '.join(self.instrumentation_changed)}"
        return (
            f"outputs {', '.join(self.unsteady)} differ with instrumentation as two plain runs "
            "do (the kernel is not deterministic on this adapter)"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "kernel": self.kernel,
            "invocation": list(self.invocation),
            "workgroup": list(self.workgroup),
            "local": list(self.local),
            "outputs_identical": self.outputs_identical,
            "truncated": self.truncated,
            "steps": [st.to_json() for st in self.steps],
        } | ({"nondeterministic": self.unsteady} if self.unsteady else {})


def json_value(v: Value | None) -> Any:
    """A value as JSON: floats exact (their shortest repr round-trips the f32/f16 value), NaN and
    the infinities as the strings "NaN", "Inf", "-Inf", vectors as lists."""
    if isinstance(v, list):
        return [json_value(x) for x in v]
    if isinstance(v, dict):
        return {k: json_value(x) for k, x in v.items()}
    if isinstance(v, float) and not math.isfinite(v):
        return "NaN" if math.isnan(v) else ("Inf" if v > 0 else "-Inf")
    return v


def show(v: Value | None, type_text: str) -> str:
    """A value as the shortest text that reads back as the same f32/f16 value ("-": none)."""
    if v is None:
        return "-"
    if isinstance(v, list):
        return "(" + ", ".join(show(x, type_text) for x in v) + ")"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {show(x, type_text)}" for k, x in v.items()) + "}"
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, float):
        return str(np.float16(v) if "f16" in type_text else np.float32(v))
    return str(v)


def decode(type_text: str, words: np.ndarray) -> Value:
    """A recorded value of WGSL type `type_text` from its four words."""
    if type_text.startswith("vec"):
        n, scalar = int(type_text[3]), type_text[5:-1]
        return [_scalar(scalar, words[k : k + 1]) for k in range(n)]
    return _scalar(type_text, words[:1])


def _scalar(scalar: str, word: np.ndarray) -> float | int | bool:
    w = word.astype(np.uint32)
    if scalar == "f32":
        return float(w.view(np.float32)[0])
    if scalar == "f16":
        return float((w & 0xFFFF).astype(np.uint16).view(np.float16)[0])
    if scalar == "i32":
        return int(w.view(np.int32)[0])
    if scalar == "bool":
        return bool(w[0])
    return int(w[0])


def invocation_of(
    case: Case,
    invocation: tuple[int, int, int] | None = None,
    workgroup: tuple[int, int, int] | None = None,
    local: tuple[int, int, int] | None = None,
) -> tuple[int, int, int]:
    """The global invocation id named by `invocation`, or by `workgroup` and `local`; a clear
    error when it lies outside the dispatch."""
    size = _size(case)
    if invocation is None:
        if workgroup is None or local is None:
            raise UserError("give --invocation X,Y,Z, or --workgroup X,Y,Z with --local X,Y,Z")
        if any(not 0 <= v < n for v, n in zip(local, size, strict=True)):
            raise UserError(
                f"--local {_xyz(local)} is outside the workgroup size {'x'.join(map(str, size))}"
            )
        invocation = _xyz3([w * n + v for w, n, v in zip(workgroup, size, local, strict=True)])
    extent = tuple(g * n for g, n in zip(case.grid, size, strict=True))
    if any(not 0 <= v < e for v, e in zip(invocation, extent, strict=True)):
        raise UserError(
            f"invocation {_xyz(invocation)} is outside the dispatch of "
            f"{'x'.join(map(str, extent))} invocations (grid {'x'.join(map(str, case.grid))} "
            f"of workgroups of {'x'.join(map(str, size))})"
        )
    return invocation


def _size(case: Case) -> tuple[int, int, int]:
    ep = case.kernel.entry_point
    if ep is None:
        raise UserError(f"{case.name}: no entry point to debug ({case.kernel.problem})")
    return _xyz3(list(ep.workgroup_size))


def _xyz3(v: list[int]) -> tuple[int, int, int]:
    return v[0], v[1], v[2]


def _xyz(v: tuple[int, ...]) -> str:
    return ",".join(map(str, v))


def traced_case(
    case: Case,
    plan: TracePlan,
    capacity: int,
    mode: int,
    chosen: tuple[int, int, int] = (0, 0, 0),
    watch: int = 0,
) -> Case:
    """`case` on the instrumented kernel, its trace buffer's header set for `mode`."""
    size = _size(case)
    log = np.zeros(HEADER_WORDS + RECORD_WORDS * capacity, np.uint32)
    log[1] = capacity
    log[2:4] = [g * n for g, n in zip(case.grid[:2], size[:2], strict=True)]
    log[4:7] = chosen
    log[7] = mode
    log[9] = 0xFFFFFFFF  # no invocation yet for atomicMin
    log[10] = watch
    return with_instrumentation(
        case, plan.kernel_for(mode), {}, {TRACE_NAME: (log, f"trace ({capacity:,})")}
    )


def _dispatch(
    session: Session,
    case: Case,
    plan: TracePlan,
    capacity: int,
    mode: int,
    chosen: tuple[int, int, int] = (0, 0, 0),
    watch: int = 0,
) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """One dispatch of the instrumented case: its outputs and the trace buffer's words."""
    traced = traced_case(case, plan, capacity, mode, chosen, watch)
    run = session.run(traced, reference=False)
    return run.outputs, run.outputs[TRACE_NAME].reshape(-1)


def _rows(words: np.ndarray, capacity: int) -> np.ndarray:
    kept = min(int(words[0]), capacity)
    return words[HEADER_WORDS : HEADER_WORDS + RECORD_WORDS * kept].reshape(kept, RECORD_WORDS)


def trace(
    session: Session,
    case: Case,
    invocation: tuple[int, int, int],
    capacity: int = DEFAULT_CAPACITY,
    plan: TracePlan | None = None,
    memory: bool = False,
) -> Trace:
    """Trace `invocation` (a global invocation id) of `case`; with `memory`, each workgroup
    array as it saw it after each workgroupBarrier."""
    if not 1 <= capacity <= MAX_CAPACITY:
        raise UserError(f"--capacity must be between 1 and {MAX_CAPACITY:,}, got {capacity}")
    invocation = invocation_of(case, invocation)
    plan = plan or instrument_trace(case.kernel, memory=memory)
    outputs, words = _dispatch(session, case, plan, capacity, MODE_TRACE, invocation)
    plain = session.run(case, reference=False)
    differing = [
        p.name
        for p in writable(case)
        if outputs[p.name].tobytes() != plain.outputs[p.name].tobytes()
    ]
    unsteady: list[str] = []
    if differing:
        again = session.run(case, reference=False)
        unsteady = [
            n for n in differing if again.outputs[n].tobytes() != plain.outputs[n].tobytes()
        ]
    attempted = int(words[0])
    steps, views = _steps(case, plan, _rows(words, capacity))
    size = _size(case)
    result = Trace(
        case.name,
        invocation,
        _xyz3([v // n for v, n in zip(invocation, size, strict=True)]),
        _xyz3([v % n for v, n in zip(invocation, size, strict=True)]),
        steps,
        not differing,
        differing,
        unsteady,
        attempted > capacity,
        attempted,
        capacity,
    )
    result.memory = views
    if result.truncated:
        result.end = _end_message(result)
    return result


def extent(case: Case) -> tuple[int, int, int]:
    """The dispatch's size in invocations along x, y and z."""
    return _xyz3([g * n for g, n in zip(case.grid, _size(case), strict=True)])


def invocation_at(case: Case, linear: int) -> tuple[int, int, int]:
    """The global invocation id of a linear id (x fastest)."""
    ex, ey, _ = extent(case)
    return linear % ex, (linear // ex) % ey, linear // (ex * ey)


def traces_in_range(
    session: Session, case: Case, plan: TracePlan, capacity: int, lo: int, hi: int
) -> tuple[dict[int, list[Step]], int]:
    """One dispatch recording every invocation whose linear id is in [lo, hi): each one's
    steps by linear id, and the records attempted (more than `capacity`: some were lost)."""
    _, words = _dispatch(session, case, plan, capacity, MODE_RANGE, (lo, hi, 0))
    rows = _rows(words, capacity)
    ids = rows[:, 3].astype(np.int64)
    # Each invocation's records are in its own order; the invocations' interleave.
    out = {int(i): _steps(case, plan, rows[ids == i])[0] for i in np.unique(ids)}
    return out, int(words[0])


def _steps(case: Case, plan: TracePlan, rows: np.ndarray) -> tuple[list[Step], list[MemoryView]]:
    """One invocation's records as steps (a matrix or struct's parts joined into one value),
    and its views of workgroup memory."""
    steps: list[Step] = []
    views: dict[tuple[int, str], MemoryView] = {}
    k = 0
    while k < len(rows):
        row = rows[k]
        loc = plan.location(int(row[0]))
        if loc.kind == MEMORY:
            key = (len(steps) - 1, loc.name)
            view = views.setdefault(key, MemoryView(key[0], loc.name, loc.type, []))
            view.values.append(decode(loc.type, row[4:8]))
            k += 1
            continue
        group = rows[k : k + max(loc.parts, 1)]
        first = int(row[0]) & LOCATION_MASK
        whole = len(group) == max(loc.parts, 1) and all(
            int(g[0]) & LOCATION_MASK == first + j for j, g in enumerate(group)
        )
        if whole:  # else a value cut by the capacity: left out
            steps.append(_step(case, plan, len(steps), group))
        k += len(group) if whole else 1
    return steps, list(views.values())


@dataclass(frozen=True)
class NonFinite:
    """The first non-finite value made from finite operands, in the invocation with the smallest
    linear id that made one; `invocations` counts every invocation that made one."""

    invocation: tuple[int, int, int]
    step: Step
    operands: dict[str, Value | None]
    invocations: int

    def to_json(self) -> dict[str, Any]:
        return {
            "invocation": list(self.invocation),
            "file": self.step.file,
            "line": self.step.line,
            "col": self.step.col,
            "name": self.step.name,
            "value": json_value(self.step.value),
            "operands": {k: json_value(v) for k, v in self.operands.items()},
            "invocations": self.invocations,
        }


def first_nonfinite(
    session: Session, case: Case, capacity: int = DEFAULT_CAPACITY
) -> tuple[NonFinite, Trace] | None:
    """Scan every invocation of one dispatch for a NaN or infinity made from finite operands
    (a non-finite value loaded from memory is not made there); trace the first such invocation.
    None when no invocation made one."""
    plan = instrument_trace(case.kernel)
    _, words = _dispatch(session, case, plan, 1, MODE_SCAN)
    hits, first = int(words[8]), int(words[9])
    if not hits:
        return None
    gid = invocation_at(case, first)
    t = trace(session, case, gid, capacity, plan)
    for st in t.steps:
        if st.kind == "load" and _nonfinite(st.value):
            break
        if _nonfinite(st.value):
            return NonFinite(gid, st, _operands(t, st), hits), t
    return None


def _operands(t: Trace, st: Step) -> dict[str, Value | None]:
    """Each operand's value as last recorded before `st`."""
    out: dict[str, Value | None] = {}
    for name in st.operands:
        before = [x for x in t.steps[: st.step] if x.name == name]
        out[name] = before[-1].value if before else None
    return out


def _nonfinite(v: Value | None) -> bool:
    if isinstance(v, dict):
        return any(_nonfinite(x) for x in v.values())
    if isinstance(v, list):
        return any(_nonfinite(x) for x in v)
    return isinstance(v, float) and not math.isfinite(v)


@dataclass(frozen=True)
class Difference:
    """The first step where two traces differ in control flow or in a value."""

    step: int
    file: str
    line: int
    name: str
    a: Value | None
    b: Value | None
    why: str  # "value" or "control flow"

    def to_json(self) -> dict[str, Any]:
        return {
            "step": self.step,
            "file": self.file,
            "line": self.line,
            "name": self.name,
            "a": json_value(self.a),
            "b": json_value(self.b),
        }


def first_difference(a: Trace, b: Trace) -> Difference | None:
    """Where trace `b` first leaves trace `a`: another statement (control flow) or the same
    statement with another value; None when they are the same."""
    for x, y in zip(a.steps, b.steps, strict=False):
        if (x.file, x.line, x.col, x.kind, x.name) != (y.file, y.line, y.col, y.kind, y.name):
            return Difference(x.step, x.file, x.line, x.name, x.value, y.value, "control flow")
        if json_value(x.value) != json_value(y.value):
            why = "control flow" if x.kind == "branch" else "value"
            return Difference(x.step, x.file, x.line, x.name, x.value, y.value, why)
    if len(a.steps) != len(b.steps):
        longer = a if len(a.steps) > len(b.steps) else b
        n = min(len(a.steps), len(b.steps))
        st = longer.steps[n]
        return Difference(n, st.file, st.line, st.name, None, None, "control flow")
    return None


@dataclass(frozen=True)
class Writer:
    """An invocation that stored to the watched element, and where."""

    invocation: tuple[int, int, int]
    file: str
    line: int
    order: int  # its place among the element's stores in the dispatch


def writers(session: Session, case: Case, binding: str, flat: int) -> list[Writer]:
    """Every store to `binding[flat]` in one dispatch, in the order the stores were counted; the
    last is the element's last writer (the kernel's stores to it race when there are several)."""
    if binding not in {p.name for p in writable(case)}:
        names = ", ".join(p.name for p in writable(case)) or "none"
        raise UserError(f"--element: '{binding}' is not a binding the kernel writes ({names})")
    plan = instrument_trace(case.kernel, watch=binding)
    capacity = 4096
    _, words = _dispatch(session, case, plan, capacity, MODE_WATCH, watch=flat)
    out = []
    stores = [r for r in _rows(words, capacity) if plan.location(int(r[0])).part == 0]
    for k, row in enumerate(stores):  # a matrix or struct's store: its first part
        loc = plan.location(int(row[0]))
        file, line, _ = case.kernel.position(loc.offset)
        out.append(Writer(_xyz3([int(v) for v in row[4:7]]), file, line, k))
    return out


def parse_element(text: str, case: Case) -> tuple[str, int]:
    """`NAME[i]` (a flat index) or `NAME[axis=i axis=j ...]` (the named index the Diff tab
    shows): the binding and the flat index."""
    name, _, rest = text.partition("[")
    if not rest.endswith("]") or not name:
        raise UserError(f"--element {text!r}: expected BINDING[i] or BINDING[axis=i ...]")
    plan = next((p for p in case.bindings if p.name == name.strip()), None)
    if plan is None:
        raise UserError(
            f"--element: no binding '{name}' ({', '.join(p.name for p in case.bindings)})"
        )
    inner = rest[:-1].replace(",", " ").split()
    try:
        if len(inner) == 1 and "=" not in inner[0]:
            flat = int(inner[0])
        else:
            given = dict(part.split("=", 1) for part in inner)
            if set(given) != set(plan.axes):
                raise UserError(
                    f"--element {text!r}: name every axis of {name}: {' '.join(plan.axes)}"
                )
            flat = int(np.ravel_multi_index([int(given[a]) for a in plan.axes], plan.shape))
    except ValueError:
        raise UserError(
            f"--element {text!r}: indices must be whole numbers inside {name}'s shape "
            f"{'x'.join(map(str, plan.shape))}"
        ) from None
    total = math.prod(plan.shape)
    if not 0 <= flat < total:
        raise UserError(f"--element {text!r}: index {flat} is outside {name} ({total:,} elements)")
    return name.strip(), flat


def _step(case: Case, plan: TracePlan, k: int, group: np.ndarray) -> Step:
    """Step `k` from its records: one, or a matrix or struct's parts."""
    row = group[0]
    loc = plan.location(int(row[0]))
    file, line, col = case.kernel.position(loc.offset)
    value: Value | None = decode(loc.type, row[4:8]) if loc.type else None
    if loc.parts:
        parts = [(plan.location(int(r[0])), r) for r in group]
        value = _nest([(p.path, decode(p.type, r[4:8])) for p, r in parts])
    index: int | None = int(row[1])
    if loc.kind in ("assign", "param", "return", "branch", "barrier"):
        index = None
    depth = int(row[2])
    return Step(
        k,
        file,
        line,
        col,
        loc.kind,
        loc.name,
        loc.whole or loc.type,
        value,
        index,
        depth,
        loc.operands,
        loc.function,
    )


def _nest(parts: list[tuple[str, Value]]) -> Value:
    """A matrix (a list of columns) or struct (member -> value) from its parts' paths: `[1]`,
    `.pos`, `.rot[0]`."""
    root: dict[str, Any] = {}
    for path, v in parts:
        keys = path.replace("[", ".[").strip(".").split(".")
        node = root
        for key in keys[:-1]:
            node = node.setdefault(key, {})
        node[keys[-1]] = v
    nested: Value = _lists(root)
    return nested


def _lists(node: Any) -> Any:
    """Columns keyed `[0]`, `[1]` ... become a list."""
    if not isinstance(node, dict):
        return node
    if all(k.startswith("[") for k in node):
        return [_lists(node[k]) for k in sorted(node, key=lambda k: int(k[1:-1]))]
    return {k: _lists(v) for k, v in node.items()}


def _end_message(t: Trace) -> str:
    """Where a truncated trace stopped, named by the loop that was running."""
    n = len(t.steps)
    last_loop = next(
        (st for st in reversed(t.steps) if st.kind == "loop" and st.name != "end"), None
    )
    where = f"trace stopped at step {n:,} (capacity {t.capacity:,}; {t.attempted:,} records made)"
    if last_loop is not None and last_loop.index is not None:
        where = (
            f"trace stopped at step {n:,}: the loop at {last_loop.file}:{last_loop.line} had run "
            f"{last_loop.index + 1:,} times"
        )
    return where
