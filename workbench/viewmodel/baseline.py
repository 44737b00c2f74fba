"""The last runs of each kernel for the session, the one pinned as a baseline, and how a run
differs from it: "did I change the numbers? is it faster?" after every edit.

Textual-free. The main screen keeps one `RunHistory`, adds every finished run to it, and shows the
`BaselineDiff` of the run on screen against the pinned one. Comparing outputs of millions of elements
takes seconds, so the screen asks for a diff without waiting (`pending` until `baseline_diff` has
run in a worker and the result is remembered); everything else here is cheap. Outputs are compared by
`workbench.closeness` (the one definition of close) at the tolerance the run's own comparison used,
else its dtype's default; timings by their medians, with a bootstrap interval to say whether the
difference is beyond noise (`workbench.bench.noise`) when both runs were benched. Runs on two
adapters are said to be so first (`BaselineDiff.across`), and their times are never a speedup: a
ratio of an OpenGL time to a Vulkan one measures the adapters, not the edit.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from workbench.bench.noise import MIN_EFFECT, MIN_SAMPLES, unpaired_ratio
from workbench.closeness import compare, name_index, resolve_tolerance, same_nonfinite
from workbench.closeness import tolerance_ratio as ratio_to_tolerance
from workbench.units import fmt_ms
from workbench.viewmodel.keys import key

if TYPE_CHECKING:
    from workbench.session import Run, Timing

KEEP = 8  # runs kept per kernel (the pinned one is kept besides, however old)
RATIO_MASK = "#.##×"  # a timing ratio in snapshot mode, where timings are masked


def case_text(run: Run) -> str:
    """`seq=4 d_ff=64 seed 0`: what the run was a run of."""
    dims = " ".join(f"{k}={v}" for k, v in run.case.dims.items())
    return f"{dims} seed {run.case.seed}" if dims else f"seed {run.case.seed}"


@dataclass(frozen=True, eq=False)
class RunEntry:
    """One run of a kernel, numbered from 1 in the order the session made them."""

    number: int
    run: Run

    def label(self, snapshot: bool = False) -> str:
        """`#3 seq=4 d_ff=64 seed 0 · pass · 71.0 µs`."""
        ok = self.run.ok
        verdict = "ran" if ok is None else ("pass" if ok else self.run.verdict.word)
        parts = [f"#{self.number}", case_text(self.run), verdict]
        timing = self.run.timing
        if timing is not None and timing.samples_ms:
            parts.append("#.### ms" if snapshot else fmt_ms(timing.median_ms))
        return " · ".join([f"{parts[0]} {parts[1]}", *parts[2:]])


@dataclass(frozen=True)
class OutputDiff:
    """One output of a run against the same output of the pinned run."""

    name: str
    total: int = 0
    changed: int = 0  # elements whose value differs (NaN where NaN was is unchanged)
    beyond: int = 0  # of those, how many are outside the output's tolerance
    max_abs: float = 0.0  # largest |Δ| over elements finite on both sides
    worst: str = ""  # named index of the element furthest from its pinned value, in tolerances
    note: str = ""  # why there are no figures: another shape, not in one of the runs

    @property
    def identical(self) -> bool:
        return not self.note and self.changed == 0

    def text(self) -> str:
        if self.note:
            return self.note
        if self.identical:
            return f"identical ({self.total:,} elements)"
        return (
            f"{self.changed:,}/{self.total:,} changed, {self.beyond:,} beyond tol · "
            f"max |Δ| {self.max_abs:.3g} · worst {self.worst}"
        )


@dataclass(frozen=True)
class TimingDiff:
    """This run's median time over the pinned run's, and whether that is beyond noise."""

    ratio: float | None = None  # None: no ratio (a run was not benched)
    low: float | None = None  # bootstrap 95% interval of the ratio, when samples allow
    high: float | None = None
    why: str = ""  # why there is no ratio, or no interval

    @property
    def beyond_noise(self) -> bool | None:
        """True/False when the interval allows a verdict, None when it cannot be told."""
        if self.low is None or self.high is None:
            return None
        return self.low > 1 + MIN_EFFECT or self.high < 1 - MIN_EFFECT

    def text(self, snapshot: bool = False) -> str:
        if self.ratio is None:
            return self.why
        shown = RATIO_MASK if snapshot else f"{self.ratio:.3f}×"
        head = f"{shown} the pinned run's median"
        if self.beyond_noise is None:
            return f"{head} ({self.why})"
        if snapshot:
            return f"{head} (95% interval masked)"
        interval = f"95% interval {self.low:.3f}–{self.high:.3f}×"
        if not self.beyond_noise:
            return f"{head}: within noise ({interval})"
        faster = "faster" if self.ratio < 1 else "slower"
        return f"{head}: {faster}, beyond noise ({interval})"


@dataclass(frozen=True, eq=False)
class BaselineDiff:
    """A run against the pinned one: each output, the timing, and what else differs."""

    pinned: RunEntry
    number: int | None  # the run's number in the history (None: not one of the kept runs)
    outputs: tuple[OutputDiff, ...]
    timing: TimingDiff
    notes: tuple[str, ...]  # the source was edited, the dims differ
    pending: bool = False  # the outputs are still being compared (`outputs` is empty until then)
    adapter: str = ""  # the label of the adapter the run was made on ("": the pinned run's)

    @property
    def is_pinned_run(self) -> bool:
        return self.number == self.pinned.number

    @property
    def across(self) -> str:
        """The pinned run's adapter when this run was made on another one, else ""."""
        was = self.pinned.run.adapter.label
        return "" if self.adapter == was else was


def baseline_diff(
    pinned: RunEntry, number: int | None, run: Run, outputs: bool = True
) -> BaselineDiff:
    """`run` (the history's run `number`) against `pinned`. Its outputs are compared element by
    element unless `outputs` is False (a pending diff) or `run` is the pinned run itself; only
    `workbench.viewmodel` state is read, so a worker thread may call it."""
    if run is pinned.run:
        return BaselineDiff(pinned, pinned.number, (), TimingDiff(), (), adapter=run.adapter.label)
    names = list(run.outputs) + [n for n in pinned.run.outputs if n not in run.outputs]
    same_adapter = run.adapter.label == pinned.run.adapter.label
    return BaselineDiff(
        pinned,
        number,
        tuple(output_diff(n, run, pinned.run) for n in names) if outputs else (),
        timing_diff(run.timing, pinned.run.timing, same_adapter),
        diff_notes(run, pinned.run),
        pending=not outputs,
        adapter=run.adapter.label,
    )


def output_diff(name: str, run: Run, pinned: Run) -> OutputDiff:
    """`run`'s output `name` against `pinned`'s, at the tolerance `run` was judged by."""
    got = run.outputs.get(name)
    was = pinned.outputs.get(name)
    if got is None or was is None:
        return OutputDiff(name, note="not in the pinned run" if was is None else "not in this run")
    if got.shape != was.shape:
        shapes = f"{'×'.join(map(str, was.shape))} → {'×'.join(map(str, got.shape))}"
        return OutputDiff(name, got.size, note=f"shape {shapes}: not comparable")
    axes = run.case.plan(name).axes
    if got.dtype.names or was.dtype.names:
        return _records_diff(name, got, was, axes)
    own = run.compare.get(name)
    tol = own.tolerance if own is not None else resolve_tolerance(got.dtype)
    c = compare(name, got, was, axes=axes, tol=tol, worst=0)
    g = np.asarray(got, dtype=np.float64)
    w = np.asarray(was, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        differs = ~((g == w) | same_nonfinite(g, w))
    changed = int(differs.sum())
    worst = ""
    if changed:
        ratio = np.where(differs, ratio_to_tolerance(g, w, tol.rtol, tol.atol), -1.0)
        at = np.unravel_index(int(np.argmax(ratio)), got.shape)
        worst = name_index(tuple(int(i) for i in at), axes)
    return OutputDiff(name, got.size, changed, c.n_bad, c.max_abs, worst)


def _records_diff(name: str, got: np.ndarray, was: np.ndarray, axes: tuple[str, ...]) -> OutputDiff:
    """Structs have no |Δ|: count the records that differ, and name the first."""
    if got.dtype != was.dtype:
        return OutputDiff(name, got.size, note=f"struct layout {was.dtype} → {got.dtype}")
    if got.size == 0:
        return OutputDiff(name, 0)
    got_bytes = np.frombuffer(np.ascontiguousarray(got).tobytes(), np.uint8)
    was_bytes = np.frombuffer(np.ascontiguousarray(was).tobytes(), np.uint8)
    differs = got_bytes.reshape(got.size, -1) != was_bytes.reshape(was.size, -1)
    changed = np.flatnonzero(differs.any(axis=-1))
    if not changed.size:
        return OutputDiff(name, got.size)
    first = name_index(tuple(int(i) for i in np.unravel_index(int(changed[0]), got.shape)), axes)
    note = f"{changed.size:,}/{got.size:,} structs changed (no |Δ| for structs) · first {first}"
    return OutputDiff(name, got.size, int(changed.size), int(changed.size), worst=first, note=note)


def timing_diff(
    timing: Timing | None, pinned: Timing | None, same_adapter: bool = True
) -> TimingDiff:
    """The ratio of medians, and a noise verdict when both have enough samples; no ratio between
    two adapters (`same_adapter` False), whose times measure the adapters, not the kernel."""
    bench = f"{key('bench')} benches"
    if not same_adapter:
        return TimingDiff(why="not compared: the two runs were timed on different adapters")
    if pinned is None or not pinned.samples_ms:
        if timing is None or not timing.samples_ms:
            return TimingDiff(why=f"neither run was timed ({bench})")
        return TimingDiff(why="the pinned run was not timed: bench it, then pin it")
    if timing is None or not timing.samples_ms:
        return TimingDiff(why=f"this run was not timed ({bench})")
    if min(len(timing.samples_ms), len(pinned.samples_ms)) < MIN_SAMPLES:
        ratio = timing.median_ms / pinned.median_ms
        return TimingDiff(ratio, why=f"under {MIN_SAMPLES} samples: noise cannot be told")
    if timing.method != pinned.method:
        ratio = timing.median_ms / pinned.median_ms
        return TimingDiff(ratio, why=f"timed by {timing.method}, pinned by {pinned.method}")
    ratio, low, high = unpaired_ratio(pinned.samples_ms, timing.samples_ms)
    return TimingDiff(ratio, low, high)


def diff_notes(run: Run, pinned: Run) -> tuple[str, ...]:
    """What differs between the two runs besides their numbers."""
    notes = []
    if run.case.kernel.text != pinned.case.kernel.text:
        notes.append("source edited since the pin")
    if case_text(run) != case_text(pinned):
        notes.append(f"case differs: pinned {case_text(pinned)}")
    return tuple(notes)


class RunHistory:
    """The last `keep` runs of each kernel (by kernel key) and the pinned one of each."""

    def __init__(self, keep: int = KEEP) -> None:
        self.keep = keep
        self._runs: dict[str, deque[RunEntry]] = {}
        self._count: dict[str, int] = {}
        self._pinned: dict[str, RunEntry] = {}
        # The last diff and the two runs it is of: the screen shows one run at a time.
        self._last: tuple[RunEntry, Run, BaselineDiff] | None = None

    def add(self, key: str, run: Run) -> RunEntry:
        """Keep `run` as the newest of `key`'s runs; the oldest beyond `keep` is dropped."""
        self._count[key] = self._count.get(key, 0) + 1
        entry = RunEntry(self._count[key], run)
        self._runs.setdefault(key, deque(maxlen=self.keep)).append(entry)
        return entry

    def runs(self, key: str) -> tuple[RunEntry, ...]:
        """`key`'s kept runs, newest first."""
        return tuple(reversed(self._runs.get(key, ())))

    def entry(self, key: str, run: Run) -> RunEntry | None:
        """The kept entry holding `run` (the pinned one included)."""
        pinned = self._pinned.get(key)
        if pinned is not None and pinned.run is run:
            return pinned
        return next((e for e in self._runs.get(key, ()) if e.run is run), None)

    def pin(self, key: str, entry: RunEntry) -> None:
        self._pinned[key] = entry

    def unpin(self, key: str) -> RunEntry | None:
        """Forget `key`'s baseline; the entry that was pinned, if any."""
        return self._pinned.pop(key, None)

    def pinned(self, key: str) -> RunEntry | None:
        return self._pinned.get(key)

    def diff(self, key: str, run: Run | None, wait: bool = True) -> BaselineDiff | None:
        """`run` against `key`'s pinned run (None when nothing is pinned or there is no run),
        computed once per pair of runs. Without `wait`, a diff not yet computed comes back
        `pending`: compute it with `baseline_diff` elsewhere and hand it to `remember`."""
        pinned = self._pinned.get(key)
        if pinned is None or run is None:
            return None
        last = self._last
        if (
            last is not None
            and last[0] is pinned
            and last[1] is run
            and not (wait and last[2].pending)
        ):
            return last[2]
        entry = self.entry(key, run)
        found = baseline_diff(pinned, entry.number if entry is not None else None, run, wait)
        # A pending diff is kept too: the screen refreshes often while the worker compares, and
        # its timing figures (a bootstrap) need not be drawn again each time.
        self._last = (pinned, run, found)
        return found

    def remember(self, key: str, run: Run, diff: BaselineDiff) -> None:
        """Keep a diff computed elsewhere, unless another run was pinned meanwhile."""
        if self._pinned.get(key) is diff.pinned:
            self._last = (diff.pinned, run, diff)
