"""Who wrote what: the owner workgroup of every element of every writable binding, races and holes.

Writes are seen against a fill: each writable non-atomic binding starts filled with a sentinel bit
pattern no arithmetic produces (a signalling NaN: `SENTINELS`), and a binding the kernel also reads
(in place) is run a second time over its own input, its changed elements counting too; an element
is written by a set of workgroups when it ends up different from its fill.

Workgroups are stepped in bit slices instead of one by one: for each bit k of the linear workgroup id
the dispatch is run twice, once on the workgroups with bit k set and once on those without. An
element written by one workgroup is written in exactly one half of every pair, and the halves it was
written in spell its owner's id; an element written in both halves of some pair has two writers that
differ in bit k: a race. So 2·⌈log2 N⌉ dispatches give every element's owner, every race and every
hole exactly, as long as what a workgroup writes does not depend on which other workgroups ran (the
assumption of any workgroup stepping). The writers of the first racing elements are then named by
bisecting the range of workgroups, skipping ranges the bit slices rule out.

Up to `max_workgroups` the whole grid is stepped so. Above it, a seeded sample is: runs of
`SAMPLE_RUN` consecutive workgroups, one run in every 2^j (j the fewest bits that bring the grid
under the limit, the run picked by the seed), which is a fixed pattern of j bits of the workgroup
id; the other bits are sliced as above, so the sample costs 2·⌈log2 max_workgroups⌉ dispatches and
races between sampled workgroups anywhere in it are found. One full dispatch then finds the holes;
the report says it sampled and how many, and elements written only by workgroups outside the sample
are `UNSTEPPED`.
Atomic bindings (`array<atomic<...>>`) are shared by design: several writers there are not a race.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from workbench.checks.result import callbacks
from workbench.closeness import name_index
from workbench.errors import UserError, WorkbenchError
from workbench.recipes import DEFAULT_SEED
from workbench.session import BindingPlan, Case, Session
from workbench.units import fmt_count, fmt_int
from workbench.workgroups.guarded import GuardedRunner, Selection, writable

SENTINELS = {2: 0x7DA5, 4: 0x7FA5A5A5, 8: 0x7FF5A5A5A5A5A5A5}
SENTINEL_BYTE = 0xA5  # other element sizes (structs) are filled byte by byte
HOLE, RACE, UNSTEPPED = -1, -2, -3
DEFAULT_MAX_WORKGROUPS = 16384
SAMPLE_RUN = 64  # consecutive workgroups kept together in a sample, so neighbours meet
EXAMPLES = 8


@dataclass
class OutputFootprint:
    """One writable binding: owner per element (a workgroup id, `HOLE`, `RACE` or `UNSTEPPED`)."""

    name: str
    axes: tuple[str, ...]
    atomic: bool
    owner: np.ndarray
    race_writers: dict[int, list[int]] = field(default_factory=dict)  # flat index -> workgroups

    @property
    def elements(self) -> int:
        return int(self.owner.size)

    @property
    def holes(self) -> int:
        return int((self.owner == HOLE).sum())

    @property
    def multiple(self) -> int:
        """Elements written by more than one workgroup."""
        return int((self.owner == RACE).sum())

    @property
    def races(self) -> int:
        """Multiple writers of a non-atomic element; atomics are shared by design."""
        return 0 if self.atomic else self.multiple

    @property
    def written(self) -> int:
        return self.elements - self.holes

    @property
    def ok(self) -> bool:
        return self.atomic or (self.holes == 0 and self.races == 0)

    def verdict(self) -> str:
        """`no races, no holes`, `2 races, 1 hole`, or what an atomic binding's sharing is."""
        if self.atomic:
            several = fmt_count(self.multiple, "element")
            return f"atomic: shared by design ({several} with several writers)"
        if self.ok:
            return "no races, no holes"
        return f"{fmt_count(self.races, 'race')}, {fmt_count(self.holes, 'hole')}"

    def named(self, flat: int) -> str:
        return name_index([int(i) for i in np.unravel_index(flat, self.owner.shape)], self.axes)

    def hole_ranges(self, limit: int = EXAMPLES) -> list[tuple[int, int]]:
        """The first `limit` runs of consecutive holes, as (first, last) flat indices."""
        flat = np.flatnonzero(self.owner.reshape(-1) == HOLE)
        if not flat.size:
            return []
        breaks = np.flatnonzero(np.diff(flat) != 1)
        starts = np.concatenate(([flat[0]], flat[breaks + 1]))[:limit]
        ends = np.concatenate((flat[breaks], [flat[-1]]))[:limit]
        return [(int(a), int(b)) for a, b in zip(starts, ends, strict=True)]

    def first_races(self, limit: int = EXAMPLES) -> list[int]:
        return [int(i) for i in np.flatnonzero(self.owner.reshape(-1) == RACE)[:limit]]

    def problem_lines(self) -> list[str]:
        """The first races and holes, a line each, as the command line and the Footprint tab
        list them: `race at rows=0 cols=255: workgroups 0, 1 (a race)`, `hole i=3 .. i=5 (3
        elements)`; none for an atomic binding (shared by design)."""
        if self.atomic:
            return []
        lines = [f"race at {self.named(i)}: {self.writers(i)}" for i in self.first_races()]
        for a, b in self.hole_ranges():
            span = self.named(a) if a == b else f"{self.named(a)} .. {self.named(b)}"
            lines.append(f"hole {span} ({fmt_count(b - a + 1, 'element')})")
        return lines

    def writers(self, flat: int) -> str:
        """Who wrote one element, in words (for a picture's selection)."""
        owner = int(self.owner.reshape(-1)[flat])
        if owner >= 0:
            return f"workgroup {owner}"
        if owner == HOLE:
            return "no workgroup (a hole)"
        if owner == UNSTEPPED:
            return "a workgroup outside the stepped sample"
        named = self.race_writers.get(flat)
        kind = "shared (atomic)" if self.atomic else "a race"
        if named:
            return f"workgroups {', '.join(map(str, named))} ({kind})"
        return f"more than one workgroup ({kind})"

    def to_json(self) -> dict[str, Any]:
        return {
            "elements": self.elements,
            "written": self.written,
            "holes": self.holes,
            "races": self.races,
            "shared": self.multiple if self.atomic else 0,
            "atomic": self.atomic,
            "hole_examples": [
                {
                    "first": self.named(a),
                    "last": self.named(b),
                    "count": b - a + 1,
                    "flat": [a, b],
                }
                for a, b in self.hole_ranges()
            ],
            "race_examples": []
            if self.atomic
            else [
                {"index": self.named(i), "flat": i, "workgroups": self.race_writers.get(i, [])}
                for i in self.first_races()
            ],
        }


@dataclass
class Footprint:
    """The footprint of one dispatch of a case."""

    kernel: str
    grid: tuple[int, int, int]
    workgroups: int
    stepped: int
    sampled: bool
    seed: int
    dispatches: int
    outputs: dict[str, OutputFootprint]
    wall_s: float
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(o.ok for o in self.outputs.values())

    @property
    def sentinel(self) -> str:
        return (
            "0x7FA5A5A5 per 32-bit element, 0x7DA5 per 16-bit, 0x7FF5A5A5A5A5A5A5 per 64-bit "
            "(signalling NaNs, which no arithmetic produces), 0xA5 per byte of a struct"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "kernel": self.kernel,
            "grid": list(self.grid),
            "workgroups": self.workgroups,
            "stepped": self.stepped,
            "sampled": self.sampled,
            "seed": self.seed,
            "dispatches": self.dispatches,
            "sentinel": self.sentinel,
            "outputs": {name: o.to_json() for name, o in self.outputs.items()},
            "notes": self.notes,
            "wall_s": self.wall_s,
            "ok": self.ok,
        }


class FootprintCancelled(WorkbenchError):
    """The footprint was cancelled between two dispatches."""


def footprint(
    session: Session,
    case: Case,
    max_workgroups: int = DEFAULT_MAX_WORKGROUPS,
    seed: int = DEFAULT_SEED,
    examples: int = EXAMPLES,
    say: Callable[[str, float], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> Footprint:
    """Step the case's dispatch in bit slices and report, per writable binding, who wrote what.

    `say(message, fraction)` hears of each dispatch; `cancelled()` is asked before each one, and
    a True answer raises FootprintCancelled."""
    if max_workgroups < 1:
        raise UserError(f"--max-workgroups must be >= 1, got {max_workgroups}")
    t0 = time.perf_counter()
    plans = writable(case)
    if not plans:
        raise UserError(
            f"{case.name} has no read_write storage binding, so no workgroup writes anything"
        )
    runner = GuardedRunner(session, case)
    total = runner.total
    probe = _Writes(runner, case, plans, *callbacks(say, cancelled))
    owners = {p.name: np.full(_element_shape(p), HOLE, np.int64) for p in plans}
    fixed: dict[str, np.ndarray] = {}
    sampled = total > max_workgroups
    nbits = max(total - 1, 0).bit_length()
    mask, want = _sample_pattern(total, max_workgroups, seed) if sampled else (0, 0)
    free = [k for k in range(nbits) if not mask >> k & 1]
    stepped = int(np.count_nonzero((np.arange(total) & mask) == want)) if sampled else total
    probe.planned = 2 * max(len(free), 1) + sampled
    if total:
        _slice(probe, total, mask, want, free, owners, fixed)
    notes = []
    if sampled:
        full = probe.written(Selection(0, total))
        for name, owner in owners.items():
            owner[(owner == HOLE) & full[name]] = UNSTEPPED
        notes.append(
            f"sampled: {fmt_int(stepped)} of {fmt_count(total, 'workgroup')} stepped (runs of "
            f"consecutive workgroups, one run in every {1 << bin(mask).count('1')}, seed {seed}); "
            "one full dispatch found the holes; raise --max-workgroups to step all"
        )
    outputs = {
        p.name: OutputFootprint(p.name, p.axes[: owners[p.name].ndim], _atomic(p), owners[p.name])
        for p in plans
    }
    racing = {
        name: o.first_races(examples) for name, o in outputs.items() if not o.atomic and o.races
    }
    if racing:
        named = _name_writers(probe, total, racing, fixed)
        for name, found in named.items():
            outputs[name].race_writers = found
    if probe.in_place:
        notes.append(
            f"in place ({', '.join(probe.in_place)}): also run over its own input, so a write "
            "of the sentinel itself is not missed"
        )
    return Footprint(
        case.name,
        case.grid,
        total,
        stepped,
        sampled,
        seed,
        runner.dispatches,
        outputs,
        time.perf_counter() - t0,
        notes,
    )


class _Writes:
    """Which elements a selection of workgroups writes, seen against the fills."""

    def __init__(
        self,
        runner: GuardedRunner,
        case: Case,
        plans: list[BindingPlan],
        say: Callable[[str, float], None],
        stop: Callable[[], bool],
    ) -> None:
        self.runner = runner
        self.plans = plans
        self.say, self.stop = say, stop
        self.planned = 1  # selections the caller expects to ask about (for progress)
        self.asked = 0
        self.sentinel = {p.name: sentinel_like(p) for p in plans if not _atomic(p)}
        self.own = {p.name: case.inputs[p.name] for p in plans if p.name in case.inputs}
        self.in_place = [n for n in self.own if n in self.sentinel]
        self.zeros = {p.name: np.zeros(p.shape, p.dtype) for p in plans if p.name not in self.own}

    def written(self, selection: Selection) -> dict[str, np.ndarray]:
        if self.stop():
            raise FootprintCancelled("footprint cancelled")
        self.say(
            f"footprint: workgroups {selection.lo:,}..{selection.hi - 1:,}, selection "
            f"{self.asked + 1} of about {self.planned}",
            min(self.asked / self.planned, 0.99),
        )
        self.asked += 1
        out = self.runner.run(selection, self.sentinel)
        seen = {}
        for p in self.plans:
            fill = self.sentinel.get(p.name)
            if fill is None:
                # Every binding starts as its own input or as zeros.
                fill = self.own[p.name] if p.name in self.own else self.zeros[p.name]
            seen[p.name] = _differs(out[p.name], fill, p)
        if self.in_place:
            again = self.runner.run(selection)
            for name in self.in_place:
                plan = next(p for p in self.plans if p.name == name)
                seen[name] |= _differs(again[name], self.own[name], plan)
        return seen


def _slice(
    probe: _Writes,
    total: int,
    mask: int,
    want: int,
    free: list[int],
    owners: dict[str, np.ndarray],
    fixed: dict[str, np.ndarray],
) -> None:
    """Bit-slice the workgroups whose id has `(id & mask) == want`, over the `free` bits.

    Records in `fixed`, per element, the bits every writer agrees on (the mask in the high 32
    bits, their values in the low 32), which the naming of a race's writers uses to skip ranges.
    """
    shape = {n: o.shape for n, o in owners.items()}
    if not free:
        seen = probe.written(Selection(0, total, mask, want))
        for name, w in seen.items():
            _claim(owners[name], w, np.full(w.shape, want, np.int64), np.zeros(w.shape, bool))
        return
    ids = {n: np.full(sh, want, np.int64) for n, sh in shape.items()}
    any_ = {n: np.zeros(sh, bool) for n, sh in shape.items()}
    race = {n: np.zeros(sh, bool) for n, sh in shape.items()}
    agreed = {n: np.full(sh, mask, np.int64) for n, sh in shape.items()}
    for k in free:
        bit = 1 << k
        ones = probe.written(Selection(0, total, mask | bit, want | bit))
        zeros = probe.written(Selection(0, total, mask | bit, want))
        for name in owners:
            w1, w0 = ones[name], zeros[name]
            ids[name][w1] |= bit
            any_[name] |= w1 | w0
            race[name] |= w1 & w0
            agreed[name][w1 != w0] |= bit
    high = ~((1 << (max(free) + 1)) - 1) & 0xFFFFFFFF  # bits above the grid's: 0 for every id
    for name, owner in owners.items():
        _claim(owner, any_[name], ids[name], race[name])
        agreed_mask = (agreed[name] | high).astype(np.uint64)
        fixed[name] = (agreed_mask << np.uint64(32)) | (ids[name].astype(np.uint64) & agreed_mask)


def _sample_pattern(total: int, budget: int, seed: int) -> tuple[int, int]:
    """(mask, want) of a seeded sample: runs of SAMPLE_RUN workgroups, one run in every 2^j."""
    nbits = max(total - 1, 0).bit_length()
    j = 1
    while (total + (1 << j) - 1) >> j > budget:
        j += 1
    low = min(SAMPLE_RUN.bit_length() - 1, max(nbits - j, 0))
    mask = ((1 << j) - 1) << low
    want = int(np.random.default_rng(seed).integers(0, 1 << j)) << low
    return mask, want


def _claim(owner: np.ndarray, written: np.ndarray, ids: np.ndarray, race: np.ndarray) -> None:
    owner[written] = np.where(race[written], RACE, ids[written])


def _name_writers(
    probe: _Writes,
    total: int,
    racing: dict[str, list[int]],
    fixed: dict[str, np.ndarray],
) -> dict[str, dict[int, list[int]]]:
    """Find the workgroups that write each racing element by bisecting [0, total); a range where
    no id agrees with the bits the slices fixed for an element is not dispatched for it."""
    found: dict[str, dict[int, list[int]]] = {
        name: {i: [] for i in idx} for name, idx in racing.items()
    }
    agreed: dict[tuple[str, int], tuple[int, int]] = {}
    for name, idx in racing.items():
        flat = fixed[name].reshape(-1) if name in fixed else None
        for i in idx:
            word = int(flat[i]) if flat is not None else 0
            agreed[(name, i)] = (word >> 32, word & 0xFFFFFFFF)
    stack: list[tuple[int, int, list[tuple[str, int]]]] = [(0, total, list(agreed))]
    while stack:
        lo, hi, alive = stack.pop()
        if hi - lo == 1:
            for name, i in alive:
                found[name][i].append(lo)
            continue
        mid = (lo + hi) // 2
        for a, b in ((mid, hi), (lo, mid)):
            maybe = [e for e in alive if _next_match(a, *agreed[e]) < b]
            if not maybe:
                continue
            seen = probe.written(Selection(a, b))
            hit = [(name, i) for name, i in maybe if seen[name].reshape(-1)[i]]
            if hit:
                stack.append((a, b, hit))
    for per in found.values():
        for writers in per.values():
            writers.sort()
    return found


def _next_match(a: int, mask: int, value: int) -> int:
    """The smallest w >= a with (w & mask) == value."""
    if a & mask == value:
        return a
    for i in range(64):
        bit = 1 << i
        above = ~((bit << 1) - 1)
        if a & bit or (mask & bit and not value & bit):
            continue
        if (a & above & mask) != (value & above):
            continue
        return (a & above) | bit | (value & (bit - 1))
    return 1 << 64


def sentinel_like(plan: BindingPlan) -> np.ndarray:
    """An array shaped like the binding whose every element holds the sentinel pattern."""
    arr = np.empty(plan.shape, plan.dtype)
    size = arr.dtype.itemsize
    if arr.dtype.names is None and size in SENTINELS:
        arr.reshape(-1).view(f"<u{size}")[:] = SENTINELS[size]
    else:
        arr.reshape(-1).view(np.uint8)[:] = SENTINEL_BYTE
    return arr


def _atomic(plan: BindingPlan) -> bool:
    el = plan.binding.element
    return el.kind == "atomic" or any(m.type.kind == "atomic" for m in el.members)


def _inner_ndim(plan: BindingPlan) -> int:
    """Trailing axes of the host array inside one array element (vector lanes, matrix cells)."""
    kind = plan.binding.element.kind
    return {"vector": 1, "matrix": 2}.get(kind, 0) if plan.binding.type.kind == "array" else 0


def _element_shape(plan: BindingPlan) -> tuple[int, ...]:
    inner = _inner_ndim(plan)
    return tuple(plan.shape[: len(plan.shape) - inner]) if inner else tuple(plan.shape)


def _differs(got: np.ndarray, fill: np.ndarray, plan: BindingPlan) -> np.ndarray:
    """Per array element: whether any of its bytes differ from the fill."""
    shape = _element_shape(plan)
    size = got.dtype.itemsize
    if got.dtype.names is None and size in (1, 2, 4, 8):
        # Whole scalars compared as unsigned integers: bits, so NaNs compare by payload.
        word = f"<u{size}"
        diff: np.ndarray = np.ascontiguousarray(got).view(word) != np.ascontiguousarray(fill).view(
            word
        )
        return np.asarray(diff.reshape(*shape, -1).any(axis=-1)) if diff.ndim > len(shape) else diff
    a = np.ascontiguousarray(got).view(np.uint8).reshape(*shape, -1)
    b = np.ascontiguousarray(fill).view(np.uint8).reshape(*shape, -1)
    differs: np.ndarray = (a != b).any(axis=-1)
    return differs
