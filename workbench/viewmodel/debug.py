"""The Debug screen's state: one invocation's trace, stepped forward and back with no GPU work.

`TraceView` holds a `Trace` (from a `DebugJob`) and a position in it: the step just executed,
whose line is the current line. Moves go by statement (next, back, first, last), over a call
(the next step at the same call depth or shallower), out of a function (the next shallower step),
to the next iteration of the enclosing loop, to a line, and to a breakpoint: a line, or a
condition that becomes true (it did not hold at the step before). Each move returns one line
saying what it did, or why it could not move. At each step it gives the locals of the current
function (values recorded in its frame, those set by this step marked), the watch expressions'
values, the call stack and the last loads and stores. Conditions and watches are WGSL read by
`workgroups.breaks`; `show` writes values as the command line does.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from workbench.errors import UserError
from workbench.units import fmt_count
from workbench.wgsl.corpus import Kernel
from workbench.workgroups.breaks import Condition, names_a_value, recorded, see
from workbench.workgroups.debug import MemoryView, NonFinite, Step, Trace, show

# Kinds whose value belongs to a variable of the frame (the locals pane).
_LOCAL = ("assign", "param", "loop")
_MEMORY = ("load", "store", "atomic")


@dataclass(frozen=True)
class Pick:
    """What the invocation picker names: a global invocation id, or an element whose last
    writer is traced (`BINDING[i]`, `BINDING[axis=i ...]`)."""

    invocation: tuple[int, int, int] | None = None
    element: str = ""

    def __str__(self) -> str:
        return self.element or ",".join(map(str, self.invocation or (0, 0, 0)))


def parse_pick(text: str) -> Pick:
    """`X`, `X,Y,Z` (an invocation) or `NAME[...]` (an element); a clear error otherwise."""
    text = text.strip()
    if "[" in text:
        return Pick(element=text)
    parts = text.replace(" ", ",").replace(":", ",").split(",")
    try:
        v = [int(p) for p in parts if p]
    except ValueError:
        v = []
    if len(v) not in (1, 3) or any(x < 0 for x in v):
        raise UserError(
            f"invocation {text!r}: expected X,Y,Z (or X), whole numbers >= 0, or an element "
            "such as y[36] or y[row=2 col=5]"
        )
    v += [0] * (3 - len(v))
    return Pick(invocation=(v[0], v[1], v[2]))


@dataclass(frozen=True)
class Debugged:
    """A `DebugJob`'s result: the trace, how it was found, and the non-finite value a search
    found (its step is where the screen opens)."""

    trace: Trace
    found: str = ""  # one line: "y[36] was last written by invocation 36,0,0 at w.wgsl:20"
    nonfinite: NonFinite | None = None


@dataclass(frozen=True)
class Local:
    """A variable of the current frame at the current step."""

    name: str
    type: str
    value: str
    changed: bool  # set by the current step


@dataclass(frozen=True)
class Frame:
    """A function on the call stack, at the line it last ran (the innermost: the current)."""

    function: str
    file: str
    line: int
    depth: int


def source_lines(kernel: Kernel, file: str) -> list[tuple[int, str]]:
    """The lines of `file` that went into the kernel's module, as (line number, text), in order
    (a kernel-split file: its preamble and this kernel's own lines)."""
    out: dict[int, str] = {}
    for piece in kernel.pieces:
        if piece.file == file:
            for k, text in enumerate(piece.text.splitlines()):
                out[piece.first_line + k] = text
    return sorted(out.items())


@dataclass(frozen=True)
class _Index:
    """Lookups over a trace built in one pass, so that drawing a step walks nothing."""

    start: list[int]  # per step: the first step of the call (frame) it is in
    up: list[int]  # per step: the caller's last step before it (-1: none recorded)
    frames: dict[int, dict[str, list[int]]]  # frame start -> its variables -> their steps
    names: dict[str, list[int]]  # every name a condition can use -> the steps giving it a value
    memory: list[int]  # the loads, stores and atomics


def _indexed(steps: list[Step]) -> _Index:
    start: list[int] = []
    up: list[int] = []
    open_at: list[int] = []  # the start of the call open at each depth
    last: list[int] = []  # the last step seen at each depth
    frames: dict[int, dict[str, list[int]]] = {}
    names: dict[str, list[int]] = {}
    memory: list[int] = []
    for k, x in enumerate(steps):
        d = x.depth
        prev = steps[k - 1] if k else None
        # A deeper step opens a call; so does one after a return at its own depth (`f(f(x))`).
        fresh = prev is None or prev.depth < d or (prev.depth == d and prev.kind == "return")
        del open_at[d + 1 :]
        del last[d + 1 :]
        while len(open_at) <= d:
            open_at.append(k)
            last.append(-1)
        if fresh:
            open_at[d] = k
        start.append(open_at[d])
        up.append(last[d - 1] if d else -1)
        last[d] = k
        if x.kind in _LOCAL and x.name != "end":
            frames.setdefault(open_at[d], {}).setdefault(x.name, []).append(k)
        if names_a_value(x):
            names.setdefault(x.name, []).append(k)
        if x.kind in _MEMORY:
            memory.append(k)
    return _Index(start, up, frames, names, memory)


@dataclass
class TraceView:
    """A trace and where the user is in it."""

    trace: Trace
    at: int = 0
    breakpoints: set[tuple[str, int]] = field(default_factory=set)
    condition: Condition | None = None
    watches: list[Condition] = field(default_factory=list)
    nonfinite: int | None = None  # the step of the first non-finite value, when searched
    _hits_of: tuple[object, list[tuple[int, str]]] | None = field(default=None, repr=False)

    @cached_property
    def _index(self) -> _Index:
        return _indexed(self.trace.steps)

    def environment(self, at: int) -> dict[str, Any]:
        """Each name's value as last recorded at or before step `at`."""
        steps = self.steps
        env: dict[str, Any] = {}
        for name, where in self._index.names.items():
            k = bisect_right(where, at) - 1
            if k >= 0:
                env[name] = steps[where[k]].value
        return env

    @property
    def steps(self) -> list[Step]:
        return self.trace.steps

    @property
    def step(self) -> Step | None:
        return self.steps[self.at] if self.steps else None

    def where(self) -> str:
        """`step 17 (last 37) · window.wgsl:12:9 in standardize`."""
        st = self.step
        if st is None:
            return "no steps: the invocation recorded nothing"
        return f"step {self.at:,} (last {len(self.steps) - 1:,}) · {st.file}:{st.line}:{st.col}" + (
            f" in {st.function}" if st.function else ""
        )

    # -- moves: each returns what it did, or why it did not move -------------------------------
    def _go(self, to: int | None, what: str, none: str) -> str:
        if to is None or not self.steps:
            return none
        self.at = to
        return what

    def _ahead(self, pred: Any) -> int | None:
        return next((k for k in range(self.at + 1, len(self.steps)) if pred(self.steps[k])), None)

    def next(self) -> str:
        return self._go(
            self.at + 1 if self.at + 1 < len(self.steps) else None, "next step", "at the last step"
        )

    def back(self) -> str:
        return self._go(self.at - 1 if self.at > 0 else None, "one step back", "at the first step")

    def first(self) -> str:
        return self._go(0, "the first step", "")

    def last(self) -> str:
        last = len(self.steps) - 1
        why = f" ({self.trace.end})" if self.trace.truncated else ""
        return self._go(max(last, 0), f"the last step{why}", "")

    def over(self) -> str:
        """The next step at this call depth or shallower: a call is run through."""
        st = self.step
        if st is None:
            return "no steps"
        return self._go(
            self._ahead(lambda x: x.depth <= st.depth), "stepped over", "no later step here"
        )

    def out(self) -> str:
        """The next step in the caller."""
        st = self.step
        if st is None or st.depth == 0:
            return "in the entry point: nothing to step out to"
        return self._go(
            self._ahead(lambda x: x.depth < st.depth),
            f"out of {st.function or 'the function'}",
            "the trace ends in this function",
        )

    def next_iteration(self) -> str:
        """The next record of the innermost loop still running at this step (its next iteration,
        or its end)."""
        loop = self._loop()
        if loop is None:
            return "not inside a loop"
        same = (loop.file, loop.line, loop.col)
        to = self._ahead(lambda x: x.kind == "loop" and (x.file, x.line, x.col) == same)
        if to is None:
            return "the trace ends in this iteration"
        return self._go(
            to,
            "the loop ended" if self.steps[to].name == "end" else "next iteration",
            "",
        )

    def _loop(self) -> Step | None:
        st = self.step
        if st is None:
            return None
        ended: set[tuple[str, int, int]] = set()
        for x in reversed(self.steps[: self.at + 1]):
            if x.depth < st.depth:
                return None
            if x.kind != "loop" or x.depth != st.depth:
                continue
            where = (x.file, x.line, x.col)
            if x.name == "end":
                ended.add(where)
            elif where not in ended:
                return x
        return None

    def to_line(self, file: str, line: int) -> str:
        return self._go(
            self._ahead(lambda x: (x.file, x.line) == (file, line)),
            f"ran to line {line}",
            f"line {line} does not run again after this step",
        )

    def to_break(self, forward: bool = True) -> str:
        """The next (or previous) step at a line breakpoint, or where the condition becomes
        true (it did not hold at the step before)."""
        if not self.breakpoints and self.condition is None:
            return "no breakpoints: set one on a line, or a condition"
        hits = self._hits(len(self.steps) if forward else self.at)
        found = (
            next(((k, why) for k, why in hits if k > self.at), None)
            if forward
            else (hits[-1] if hits else None)
        )
        if found is None:
            return "no breakpoint " + ("ahead" if forward else "behind")
        return self._go(found[0], found[1], "")

    def _hits(self, before: int) -> list[tuple[int, str]]:
        """The steps before `before` where a breakpoint stops, with why (one pass over the
        trace, kept until the breakpoints or the condition change)."""
        key = (frozenset(self.breakpoints), self.condition)
        if self._hits_of is None or self._hits_of[0] != key:
            self._hits_of = (key, self._all_hits())
        return [h for h in self._hits_of[1] if h[0] < before]

    def _all_hits(self) -> list[tuple[int, str]]:
        out: list[tuple[int, str]] = []
        env: dict[str, Any] = {}
        held = False
        for st in self.steps:
            see(env, st)
            if (st.file, st.line) in self.breakpoints:
                out.append((st.step, f"breakpoint at line {st.line}"))
                continue
            if self.condition is not None:
                now = bool(self.condition.value(env))
                if now and not held:
                    out.append((st.step, f"{self.condition.text} holds"))
                held = now
        return out

    def to_nonfinite(self) -> str:
        if self.nonfinite is None:
            return "no non-finite value found in this trace"
        return self._go(self.nonfinite, "the first non-finite value", "")

    # -- breakpoints and watches ---------------------------------------------------------------
    def toggle_breakpoint(self, file: str, line: int) -> str:
        if (file, line) in self.breakpoints:
            self.breakpoints.discard((file, line))
            return f"breakpoint at line {line} removed"
        self.breakpoints.add((file, line))
        return f"breakpoint at line {line}"

    def set_condition(self, text: str) -> str:
        """Break where `text` becomes true; empty text removes the condition."""
        if not text.strip():
            self.condition = None
            return "condition removed"
        self.condition = Condition(text.strip(), recorded(self.trace), "break when")
        return f"break when {self.condition.text}"

    def add_watch(self, text: str) -> str:
        """Watch `text`; empty text clears the watches."""
        if not text.strip():
            self.watches.clear()
            return "watches cleared"
        self.watches.append(Condition(text.strip(), recorded(self.trace), "watch"))
        return f"watching {text.strip()}"

    # -- what the panes show -------------------------------------------------------------------
    def locals(self) -> list[Local]:
        """The current frame's variables, in the order first recorded, at their latest value."""
        st = self.step
        if st is None:
            return []
        steps, at = self.steps, self.at
        variables = self._index.frames.get(self._index.start[at], {})
        latest: list[Step] = []
        for where in variables.values():
            k = bisect_right(where, at) - 1
            if k >= 0:
                latest.append(steps[where[k]])
        # In the order first recorded in the frame.
        ordered = sorted(latest, key=lambda x: variables[x.name][0])
        return [Local(x.name, x.type, show(x.value, x.type), x.step == self.at) for x in ordered]

    def watch_values(self) -> list[tuple[str, str]]:
        env = self.environment(self.at)
        return [(w.text, _text(w.value(env))) for w in self.watches]

    def stack(self) -> list[Frame]:
        """The call stack at the current step, innermost first."""
        frames: list[Frame] = []
        k = self.at if self.steps else -1
        while k >= 0:
            x = self.steps[k]
            frames.append(Frame(x.function, x.file, x.line, x.depth))
            k = self._index.up[self._index.start[k]]
        while frames and frames[-1].depth > 0:  # a caller that recorded nothing yet
            inner = frames[-1]
            frames.append(Frame("?", inner.file, 0, inner.depth - 1))
        return frames

    def memory(self, count: int) -> list[Step]:
        """The last `count` loads, stores and atomics up to the current step, latest last."""
        where = self._index.memory
        end = bisect_right(where, self.at)
        return [self.steps[k] for k in where[max(end - count, 0) : end]]

    def workgroup_memory(self) -> list[MemoryView]:
        """Each `var<workgroup>` array as the invocation saw it after the last barrier it
        reached at or before this step."""
        latest: dict[str, MemoryView] = {}
        for view in self.trace.memory:
            if view.step <= self.at:
                latest[view.name] = view
        return list(latest.values())

    def summary(self) -> str:
        """The trace in a line: invocation, workgroup, local, steps, whether outputs matched."""
        t = self.trace
        ids = ",".join
        return (
            f"invocation {ids(map(str, t.invocation))} (workgroup {ids(map(str, t.workgroup))} "
            f"local {ids(map(str, t.local))}) · {fmt_count(len(t.steps), 'step')}"
            + (" (stopped: capacity)" if t.truncated else "")
            + f" · {t.outputs_line()}"
        )


def _text(v: Any) -> str:
    """A watch's value: floats exact, as far as f32 holds them, else in full (float64)."""
    if v is None:
        return "-"
    if isinstance(v, float) and math.isfinite(v) and float(np.float32(v)) != v:
        return repr(v)
    return show(v, "f32" if isinstance(v, float) else "")
