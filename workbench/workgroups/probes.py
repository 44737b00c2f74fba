"""Probe runs: the records a kernel's `wb_probe` calls leave, printf for WGSL.

The kernel is dispatched once, instrumented with recorders and a log buffer (`workbench.wgsl.probes`
describes its layout). A filter chosen before the run keeps every invocation's records, one
workgroup's, or one invocation's; the last comes back as that invocation's trace in program order.
Records past the log's capacity are counted, not kept, and the count is reported as dropped.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from workbench.errors import UserError
from workbench.session import Case, Session
from workbench.wgsl.instrument import instrument, probe_calls
from workbench.wgsl.probes import (
    FILTER_ALL,
    FILTER_INVOCATION,
    FILTER_WORKGROUP,
    HEADER_WORDS,
    KINDS,
    LOG_NAME,
    RECORD_WORDS,
)
from workbench.workgroups.guarded import linear_to_xyz, with_instrumentation

DEFAULT_CAPACITY = 4096
MAX_CAPACITY = 1 << 20


@dataclass(frozen=True)
class ProbeFilter:
    """All invocations (workgroup None), one workgroup, or one invocation (local given)."""

    workgroup: int | None = None  # linear workgroup id
    local: tuple[int, int, int] | None = None

    @property
    def mode(self) -> int:
        if self.workgroup is None:
            return FILTER_ALL
        return FILTER_WORKGROUP if self.local is None else FILTER_INVOCATION

    def describe(self) -> str:
        if self.workgroup is None:
            return "all invocations"
        if self.local is None:
            return f"workgroup {self.workgroup}"
        return f"workgroup {self.workgroup}, local {','.join(map(str, self.local))}"


@dataclass(frozen=True)
class ProbeRecord:
    workgroup: tuple[int, int, int]
    local: tuple[int, int, int]
    tag: int
    kind: str  # f32, u32, i32 or vec4<f32>
    value: float | int | tuple[float, ...]
    order: int  # the record's place among all records of the run

    def to_json(self) -> dict[str, Any]:
        value = list(self.value) if isinstance(self.value, tuple) else self.value
        return {
            "workgroup": list(self.workgroup),
            "local": list(self.local),
            "tag": self.tag,
            "kind": self.kind,
            "value": value,
            "order": self.order,
        }


@dataclass(frozen=True)
class ProbeRun:
    kernel: str
    records: tuple[ProbeRecord, ...]
    dropped: int
    capacity: int
    filter: ProbeFilter
    grid: tuple[int, int, int] = (1, 1, 1)  # as dispatched

    def to_json(self) -> dict[str, Any]:
        return {
            "kernel": self.kernel,
            "filter": self.filter.describe(),
            "records": [r.to_json() for r in self.records],
            "dropped": self.dropped,
            "capacity": self.capacity,
        }


def run_probes(
    session: Session,
    case: Case,
    capacity: int = DEFAULT_CAPACITY,
    where: ProbeFilter | None = None,
) -> ProbeRun:
    """Dispatch `case` once with its probe calls recording; records sorted by order."""
    where = where or ProbeFilter()
    if not 1 <= capacity <= MAX_CAPACITY:
        raise UserError(f"--capacity must be between 1 and {MAX_CAPACITY:,}, got {capacity}")
    if not probe_calls(case.kernel):
        raise UserError(
            f"{case.name} calls no probe: add calls such as wb_probe(1u, x) to the kernel "
            "(README, Probes: the two no-op lines to keep in your preamble)"
        )
    _check_filter(case, where)
    kernel = instrument(case.kernel, probes=True)
    if LOG_NAME not in {b.name for b in kernel.runnable_entry_point().bindings}:
        # The file calls probes, but not from this entry point or anything it calls.
        raise UserError(
            f"entry point {case.name} calls no probe (other functions of {case.kernel.file} do): add calls "
            "such as wb_probe(1u, x) to this entry point or a function it calls"
        )
    log = np.zeros(HEADER_WORDS + RECORD_WORDS * capacity, np.uint32)
    log[1] = where.mode
    log[2] = where.workgroup or 0
    log[4:7] = where.local or (0, 0, 0)
    probed = with_instrumentation(case, kernel, {}, {LOG_NAME: (log, f"probe log ({capacity:,})")})
    run = session.run(probed, reference=False, evidence=False)
    out = run.outputs[LOG_NAME].reshape(-1)
    attempted = int(out[0])
    kept = min(attempted, capacity)
    rows = out[HEADER_WORDS : HEADER_WORDS + RECORD_WORDS * kept].reshape(kept, RECORD_WORDS)
    records = sorted((_record(r) for r in rows), key=lambda r: r.order)
    return ProbeRun(case.name, tuple(records), attempted - kept, capacity, where, run.grid)


def _check_filter(case: Case, where: ProbeFilter) -> None:
    total = case.workgroups
    if where.workgroup is not None and not 0 <= where.workgroup < total:
        raise UserError(
            f"--invocation: workgroup {where.workgroup} is not in the grid of {total:,} workgroups "
            f"({'x'.join(map(str, case.grid))})"
        )
    if where.local is not None:
        size = case.kernel.runnable_entry_point().workgroup_size
        if any(not 0 <= v < s for v, s in zip(where.local, size, strict=True)):
            raise UserError(
                f"--invocation: local id {','.join(map(str, where.local))} is outside the "
                f"workgroup size {'x'.join(map(str, size))}"
            )


def parse_invocation(text: str, case: Case) -> ProbeFilter:
    """`WG` or `WG,LID`: WG a linear workgroup id or x:y:z, LID a local index or x:y:z."""
    head, _, tail = text.partition(",")
    size = case.kernel.runnable_entry_point().workgroup_size
    try:
        wg = _linear(_parse_id(head), case.grid)
        local = linear_to_xyz(_linear(_parse_id(tail), size), size) if tail else None
    except ValueError:
        raise UserError(
            f"--invocation {text!r}: expected WG or WG,LID, each an index or x:y:z (e.g. 3 or 3,17)"
        ) from None
    return ProbeFilter(wg, local)


def _parse_id(text: str) -> tuple[int, ...]:
    parts = tuple(int(p) for p in text.strip().split(":"))
    if len(parts) not in (1, 3) or any(p < 0 for p in parts):
        raise ValueError(text)
    return parts


def _linear(parts: tuple[int, ...], extent: tuple[int, int, int]) -> int:
    """A linear index from (n,) or (x, y, z) in a grid of `extent`."""
    if len(parts) == 1:
        return parts[0]
    x, y, z = parts
    if x >= extent[0] or y >= extent[1] or z >= extent[2]:
        raise ValueError(parts)
    return x + extent[0] * (y + extent[1] * z)


def _record(row: np.ndarray) -> ProbeRecord:
    kind = KINDS[min(int(row[9]), len(KINDS) - 1)]
    bits = row[12:16].copy()
    if kind == "f32":
        value: float | int | tuple[float, ...] = float(bits[:1].view(np.float32)[0])
    elif kind == "u32":
        value = int(bits[0])
    elif kind == "i32":
        value = int(bits[:1].view(np.int32)[0])
    else:
        value = tuple(float(v) for v in bits.view(np.float32))
    return ProbeRecord(
        (int(row[0]), int(row[1]), int(row[2])),
        (int(row[4]), int(row[5]), int(row[6])),
        int(row[8]),
        kind,
        value,
        int(row[10]),
    )
