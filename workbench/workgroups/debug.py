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
    RECORD_WORDS,
    TRACE_NAME,
    TracePlan,
    instrument_trace,
)
from workbench.workgroups.guarded import with_instrumentation, writable

MAX_CAPACITY = 1 << 24
Value = float | int | bool | list[float] | list[int] | list[bool]


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
class Trace:
    kernel: str
    invocation: tuple[int, int, int]
    workgroup: tuple[int, int, int]
    local: tuple[int, int, int]
    steps: list[Step]
    outputs_identical: bool
    differing: list[str] = field(default_factory=list)  # outputs the instrumentation changed
    truncated: bool = False
    attempted: int = 0  # records the invocation made, kept or not
    capacity: int = DEFAULT_CAPACITY
    end: str = ""  # where and why a truncated trace stopped

    def to_json(self) -> dict[str, Any]:
        return {
            "kernel": self.kernel,
            "invocation": list(self.invocation),
            "workgroup": list(self.workgroup),
            "local": list(self.local),
            "outputs_identical": self.outputs_identical,
            "truncated": self.truncated,
            "steps": [st.to_json() for st in self.steps],
        }


def json_value(v: Value | None) -> Any:
    """A value as JSON: floats exact (their shortest repr round-trips the f32/f16 value), NaN and
    the infinities as the strings "NaN", "Inf", "-Inf", vectors as lists."""
    if isinstance(v, list):
        return [json_value(x) for x in v]
    if isinstance(v, float) and not math.isfinite(v):
        return "NaN" if math.isnan(v) else ("Inf" if v > 0 else "-Inf")
    return v


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


def trace(
    session: Session,
    case: Case,
    invocation: tuple[int, int, int],
    capacity: int = DEFAULT_CAPACITY,
    plan: TracePlan | None = None,
) -> Trace:
    """Trace `invocation` (a global invocation id) of `case`."""
    if not 1 <= capacity <= MAX_CAPACITY:
        raise UserError(f"--capacity must be between 1 and {MAX_CAPACITY:,}, got {capacity}")
    invocation = invocation_of(case, invocation)
    plan = plan or instrument_trace(case.kernel)
    log = np.zeros(HEADER_WORDS + RECORD_WORDS * capacity, np.uint32)
    log[1] = capacity
    log[4:7] = invocation
    traced = with_instrumentation(
        case, plan.kernel, {}, {TRACE_NAME: (log, f"trace ({capacity:,})")}
    )
    run = session.run(traced, reference=False)
    plain = session.run(case, reference=False)
    differing = [
        p.name
        for p in writable(case)
        if run.outputs[p.name].tobytes() != plain.outputs[p.name].tobytes()
    ]
    out = run.outputs[TRACE_NAME].reshape(-1)
    attempted = int(out[0])
    kept = min(attempted, capacity)
    rows = out[HEADER_WORDS : HEADER_WORDS + RECORD_WORDS * kept].reshape(kept, RECORD_WORDS)
    steps = [_step(case, plan, k, row) for k, row in enumerate(rows)]
    size = _size(case)
    result = Trace(
        case.name,
        invocation,
        _xyz3([v // n for v, n in zip(invocation, size, strict=True)]),
        _xyz3([v % n for v, n in zip(invocation, size, strict=True)]),
        steps,
        not differing,
        differing,
        attempted > capacity,
        attempted,
        capacity,
    )
    if result.truncated:
        result.end = _end_message(result)
    return result


def _step(case: Case, plan: TracePlan, k: int, row: np.ndarray) -> Step:
    loc = plan.locations[int(row[0])]
    file, line, col = case.kernel.position(loc.offset)
    value = decode(loc.type, row[4:8]) if loc.type else None
    index: int | None = int(row[1])
    if loc.kind in ("assign", "param", "return", "branch", "barrier"):
        index = None
    return Step(k, file, line, col, loc.kind, loc.name, loc.type, value, index, int(row[2]))


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
