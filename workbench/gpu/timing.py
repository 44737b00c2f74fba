"""Timing compute passes the way `triton.testing.do_bench` does: repetitions chosen by a time budget.

A pass is anything that can encode itself into a command encoder (a bound kernel, a roofline copy).
`time_passes` warms up for a given time by the host clock, keeping the adapter busy, then estimates
one round from a few back-to-back passes and measures for a given time: per pass with GPU timestamp
queries where the adapter has them, otherwise with the host clock around batches of passes in one
submission, and says which. Several passes are interleaved (A B A B …) so drift hits each alike. An
optional flush writes a buffer larger than the last-level cache before each timed pass.
`time_back_to_back` times a batch of dispatches in one compute pass between two timestamps (mean
per dispatch), where neighbouring dispatches overlap their ramp-up and tail as a stream of CUDA
launches does. `clock_check` compares the timestamp clock with the host clock over the same
passes, which catches a misread timestamp period or hidden per-pass overhead.

Why the warm-up is long: a GPU left idle for about two seconds (while a kernel's reference runs on
the CPU, say) drops its clocks, and raises them again only after 0.2–0.8 s of sustained work (an
H100 went from 345 to 1980 MHz; docs/benchmarks.md). Passes timed before that ran 2–3× slow with no
sign of it in their spread, so every timing warms up for a second of real work by default
(DEFAULT_WARMUP_MS: `workbench bench`, `workbench run --reps`, the UI's bench), and `Timing.drift`
says when the passes still sped up while they were measured. The warm-up checks `cancelled` after
every submission (each lasts about _WARMUP_SUBMIT_MS), so a cancel never waits for it to end.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from workbench.units import fmt_count, fmt_ms, fmt_ratio

if TYPE_CHECKING:
    from workbench.gpu.adapters import AdapterInfo
    from workbench.gpu.device import GpuContext

# Encodes one pass into a command encoder; the dict, when given, holds the pass's timestamp_writes.
EncodePass = Callable[[Any, "dict[str, Any] | None"], None]

# Encodes one compute pass dispatching a program the given number of times, back to back; the dict,
# when given, holds the pass's timestamp_writes.
EncodeBatch = Callable[[Any, int, "dict[str, Any] | None"], None]

# Passes in one submission while timing: a submission is the unit of progress and of cancelling,
# so it holds at most 256 passes and about a quarter second of work.
_PASSES_PER_SUBMIT = 256
_SECONDS_PER_SUBMIT = 0.25
_ESTIMATE_MS = 5.0  # back-to-back rounds lasting this long set the repetitions
MIN_ROUNDS = 5  # so p10 and p90 are always drawn from several samples
MAX_ROUNDS = 100_000
# A wall-clock sample is a batch of passes in one submission lasting about this long, so the cost of
# a submission and of waiting for it is spread over many passes.
_WALL_BATCH_MS = 10.0
_WALL_BATCH_MAX = 256
# The clock cross-check: batches of back-to-back passes lasting about this long, this many times.
_CHECK_BATCH_MS = 20.0
_CHECK_BATCHES = 5
CLOCK_AGREEMENT = (
    0.25  # the two clocks agree when the wall-clock per pass is within 25% of the timestamps
)
DEFAULT_FLUSH_BYTES = 256 << 20  # when the adapter's last-level cache size is not known
# Long enough for an idle GPU's clocks to rise (measured on an H100: 0.2–0.8 s of work).
DEFAULT_WARMUP_MS = 1000.0
# Warm-up submissions grow until one lasts this long, so the adapter stays busy between them.
_WARMUP_SUBMIT_MS = 50.0
# Passes that sped up by more than this between the first and the last tenth of a measurement are
# reported: the adapter was still warming up.
DRIFT_LIMIT = 1.15
_DRIFT_MIN_SAMPLES = 50


@dataclass(frozen=True)
class Budget:
    """How long to warm up and to measure, in milliseconds, and whether to flush the cache."""

    ms: float = 100.0
    warmup_ms: float = DEFAULT_WARMUP_MS
    flush: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"ms": self.ms, "warmup_ms": self.warmup_ms, "flush": self.flush}


@dataclass(frozen=True)
class Timing:
    """Per-pass times of the timed repetitions, in milliseconds, and how they were taken.

    With timestamps each sample is one pass; with the wall clock each sample is the mean pass of a
    batch of `passes_per_sample` passes submitted together.
    """

    # "timestamp" (GPU timestamp queries per pass), "wall" (host clock around submissions), or
    # "back-to-back" / "back-to-back wall" (a batch of dispatches in one pass, by timestamps or
    # by the host clock; time_back_to_back)
    method: str
    samples_ms: tuple[float, ...]
    warmup: int
    passes_per_sample: int = 1
    flushed: bool = False

    @property
    def reps(self) -> int:
        return len(self.samples_ms) * self.passes_per_sample

    @property
    def detail(self) -> str:
        """The method in words, as the output states it."""
        how = {
            "timestamp": "GPU timestamps per pass",
            "back-to-back": f"GPU timestamps around {self.passes_per_sample} back-to-back "
            "dispatches in one pass, mean per dispatch",
            "back-to-back wall": f"wall clock around {self.passes_per_sample} back-to-back "
            "dispatches in one pass, mean per dispatch",
        }.get(
            self.method,
            f"wall clock over batches of {self.passes_per_sample} passes in one submission",
        )
        return how + (", cache flushed before each pass" if self.flushed else "")

    def _pct(self, q: float) -> float:
        return float(np.percentile(self.samples_ms, q)) if self.samples_ms else math.nan

    @property
    def median_ms(self) -> float:
        return self._pct(50)

    @property
    def p10_ms(self) -> float:
        return self._pct(10)

    @property
    def p90_ms(self) -> float:
        return self._pct(90)

    @property
    def min_ms(self) -> float:
        return float(min(self.samples_ms)) if self.samples_ms else math.nan

    @property
    def mean_ms(self) -> float:
        return float(np.mean(self.samples_ms)) if self.samples_ms else math.nan

    @property
    def std_ms(self) -> float:
        return float(np.std(self.samples_ms, ddof=1)) if len(self.samples_ms) > 1 else math.nan

    @property
    def drift(self) -> float:
        """Median of the first tenth of the samples over that of the last tenth, in the order they
        were taken (NaN with fewer than 50 samples): above 1, the passes sped up while measured."""
        n = len(self.samples_ms)
        if n < _DRIFT_MIN_SAMPLES:
            return math.nan
        tenth = n // 10
        last = float(np.median(self.samples_ms[-tenth:]))
        return float(np.median(self.samples_ms[:tenth])) / last if last > 0 else math.nan

    @property
    def drifted(self) -> bool:
        return self.drift > DRIFT_LIMIT

    def to_json(self) -> dict[str, Any]:
        return {
            "median_ms": self.median_ms,
            "p10_ms": self.p10_ms,
            "p90_ms": self.p90_ms,
            "min_ms": self.min_ms,
            "mean_ms": self.mean_ms,
            "std_ms": self.std_ms,
            "reps": self.reps,
            "samples": len(self.samples_ms),
            "warmup": self.warmup,
            "drift": self.drift,
            "method": self.method,
            "detail": self.detail,
        }


@dataclass(frozen=True)
class ClockCheck:
    """Timestamp median against the host clock over back-to-back passes in one submission."""

    timestamp_ms: float
    wall_ms: float  # median over batches of (batch wall time / passes in the batch)
    batch: int
    batches: int
    tolerance: float = CLOCK_AGREEMENT

    @property
    def ratio(self) -> float:
        return self.wall_ms / self.timestamp_ms if self.timestamp_ms > 0 else math.inf

    @property
    def agree(self) -> bool:
        return abs(self.ratio - 1.0) <= self.tolerance

    def summary(self) -> str:
        head = (
            f"timestamps {fmt_ms(self.timestamp_ms)} per pass, wall clock {fmt_ms(self.wall_ms)} per "
            f"pass over {fmt_count(self.batches, 'batch')} of {fmt_count(self.batch, 'back-to-back pass')}"
        )
        if self.agree:
            return f"{head}: agree within {self.tolerance:.0%} ({fmt_ratio(self.ratio)})"
        return (
            f"{head}: they do NOT agree within {self.tolerance:.0%} ({fmt_ratio(self.ratio)}); "
            + (
                "time between passes the timestamps do not see (launch overhead) dominates"
                if self.ratio > 1
                else "the timestamp clock runs fast: distrust the timestamps"
            )
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "timestamp_ms": self.timestamp_ms,
            "wall_ms": self.wall_ms,
            "ratio": self.ratio,
            "tolerance": self.tolerance,
            "agree": self.agree,
            "batch": self.batch,
            "batches": self.batches,
        }


def rounds_for(budget_ms: float, estimate_ms: float) -> int:
    """Timed rounds for a budget, given one round's estimated time (monotone in the budget)."""
    if budget_ms <= 0:
        return 0
    if not estimate_ms > 0:
        return MAX_ROUNDS
    return max(MIN_ROUNDS, min(MAX_ROUNDS, math.ceil(budget_ms / estimate_ms)))


def flush_size(adapter: AdapterInfo) -> tuple[int, str]:
    """Bytes of the cache-flush buffer for an adapter, and why that size.

    A CPU adapter's last-level cache is the host's, which the OS reports; GPUs do not report theirs
    through WebGPU, so the default is larger than any current GPU's L2 (H100: 50 MiB).
    """
    cap = adapter.limits.get("max-buffer-size", DEFAULT_FLUSH_BYTES)
    if adapter.is_cpu:
        llc = _host_llc_bytes()
        if llc:
            size = min(cap, max(2 * llc, 8 << 20))
            return size, f"2× the host's {llc >> 20} MiB last-level cache (CPU adapter)"
    size = min(cap, DEFAULT_FLUSH_BYTES)
    return size, f"{size >> 20} MiB default (WebGPU does not report the adapter's cache size)"


def _host_llc_bytes() -> int:
    for name in ("SC_LEVEL3_CACHE_SIZE", "SC_LEVEL2_CACHE_SIZE"):
        try:
            value = os.sysconf(name)
        except (ValueError, OSError):
            continue
        if value > 0:
            return int(value)
    try:
        text = Path("/sys/devices/system/cpu/cpu0/cache/index3/size").read_text().strip()
    except OSError:
        return 0
    return int(text[:-1]) << 10 if text.endswith("K") else 0


def time_passes(
    ctx: GpuContext,
    passes: Sequence[EncodePass],
    budget: Budget,
    progress: Callable[[int, int], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
    warming: Callable[[float], None] | None = None,
) -> list[Timing]:
    """One Timing per pass, measured interleaved (A B A B …) within the budget.

    The warm-up runs for `budget.warmup_ms` by the host clock (`warming` hears the fraction of it
    done after each submission), and the repetitions are estimated after it: an estimate taken
    before, on an adapter still at idle clocks, would be too long and leave too few repetitions.
    Cancelled during the warm-up, every Timing comes back with no samples.
    """
    ctx.release_staging()
    flush = ctx.encode_flush if budget.flush else None
    t0 = time.perf_counter()
    _submit(ctx, passes, flush, 1)  # the real compile happens at the first dispatch
    warmup = 1 + _warm_up_for(ctx, passes, flush, budget.warmup_ms, t0, cancelled, warming)
    if cancelled is not None and cancelled():
        method = "timestamp" if ctx.has_timestamps else "wall"
        return [Timing(method, (), warmup, flushed=flush is not None) for _ in passes]
    round_ms = _estimate(ctx, passes, flush)
    rounds = rounds_for(budget.ms, round_ms)
    return _measure(ctx, passes, flush, rounds, round_ms, warmup, progress, cancelled)


def _since_ms(t0: float) -> float:
    return (time.perf_counter() - t0) * 1e3


def _warm_up_for(
    ctx: GpuContext,
    passes: Sequence[EncodePass],
    flush: EncodePass | None,
    ms: float,
    t0: float,
    cancelled: Callable[[], bool] | None = None,
    warming: Callable[[float], None] | None = None,
) -> int:
    """Submit rounds back to back until `ms` milliseconds have passed since `t0` (at least one
    submission when `ms` > 0) or `cancelled()` holds; the rounds submitted.

    Submissions double in size until one lasts _WARMUP_SUBMIT_MS (or holds as many passes as one
    may), so the adapter is kept busy (its clocks rise only under sustained load) even where each
    submission carries a fixed cost much larger than a round; that also bounds how long a cancel
    waits. `warming` hears the fraction of `ms` gone after each submission.
    """
    done, per_submit = 0, 1
    while ms > 0 and (done == 0 or _since_ms(t0) < ms):
        if cancelled is not None and cancelled():
            break
        took = _submit(ctx, passes, flush, per_submit)
        done += per_submit
        if warming is not None:
            warming(min(1.0, _since_ms(t0) / ms))
        if took < _WARMUP_SUBMIT_MS:
            cap = _rounds_per_submit(took / per_submit, len(passes))
            per_submit = max(1, min(2 * per_submit, cap))
    return done


def _estimate(ctx: GpuContext, passes: Sequence[EncodePass], flush: EncodePass | None) -> float:
    """Milliseconds per round, encoding included (so the budget holds for the host too).

    Batches grow until one lasts a few milliseconds, and the fastest of three such batches counts:
    on a shared machine a batch can be paused by another process, never sped up.
    """
    rounds, best = 1, math.inf
    for _ in range(8):
        ms = _submit(ctx, passes, flush, rounds, with_encoding=True)
        best = min(best, ms / rounds)
        if ms >= _ESTIMATE_MS:
            for _ in range(2):
                best = min(best, _submit(ctx, passes, flush, rounds, with_encoding=True) / rounds)
            return best
        rounds = min(rounds * 4, max(rounds, math.ceil(_ESTIMATE_MS / max(best, 1e-6))) * 2)
    return best


def time_back_to_back(
    ctx: GpuContext,
    encode_batch: EncodeBatch,
    batch: int,
    samples: int = 1,
    warmup: int = 1,
    before_batch: Callable[[], None] | None = None,
) -> Timing:
    """Milliseconds per dispatch as the mean over `batch` dispatches back to back in one compute
    pass, one sample per batch: the dispatches' ramp-up and tail overlap their neighbours' launch,
    which per-pass timestamps cannot show (the way CUDA events around a stream of calls time
    torch). GPU timestamps at the pass's beginning and end where the adapter has them, otherwise
    the host clock around the batch's submission. `warmup` untimed batches go first;
    `before_batch` runs before every batch (restoring inputs, say), outside the timed span."""
    ctx.release_staging()
    batch = max(1, batch)
    for _ in range(warmup):
        if before_batch is not None:
            before_batch()
        _submit_batch(ctx, encode_batch, batch)
    stamped = ctx.has_timestamps
    out: list[float] = []
    for _ in range(samples):
        if before_batch is not None:
            before_batch()
        if stamped:
            out.append(_timestamped_batch(ctx, encode_batch, batch) / batch)
        else:
            ctx.wait()  # the restore's uploads finish before the clock starts
            out.append(_submit_batch(ctx, encode_batch, batch) / batch)
    method = "back-to-back" if stamped else "back-to-back wall"
    return Timing(method, tuple(out), warmup * batch, passes_per_sample=batch)


def _submit_batch(ctx: GpuContext, encode_batch: EncodeBatch, batch: int) -> float:
    """One compute pass of `batch` dispatches in one submission, waited for: host milliseconds."""
    dev = ctx.device
    enc = dev.create_command_encoder()
    encode_batch(enc, batch, None)
    buf = enc.finish()
    t0 = time.perf_counter()
    dev.queue.submit([buf])
    ctx.wait()
    return (time.perf_counter() - t0) * 1e3


def _timestamped_batch(ctx: GpuContext, encode_batch: EncodeBatch, batch: int) -> float:
    """GPU milliseconds between the beginning and the end of one pass of `batch` dispatches."""
    import wgpu

    dev = ctx.device
    qs = dev.create_query_set(type=wgpu.QueryType.timestamp, count=2)
    resolve = dev.create_buffer(
        size=16, usage=wgpu.BufferUsage.QUERY_RESOLVE | wgpu.BufferUsage.COPY_SRC
    )
    enc = dev.create_command_encoder()
    encode_batch(
        enc,
        batch,
        {"query_set": qs, "beginning_of_pass_write_index": 0, "end_of_pass_write_index": 1},
    )
    enc.resolve_query_set(qs, 0, 2, resolve, 0)
    dev.queue.submit([enc.finish()])
    ticks = np.frombuffer(ctx.read_back({"t": (resolve, 16)})["t"], np.uint64)
    resolve.destroy()
    qs.destroy()
    return float(int(ticks[1]) - int(ticks[0])) * ctx.timestamp_period_ns / 1e6


def time_reps(
    ctx: GpuContext,
    passes: Sequence[EncodePass],
    reps: int,
    warmup_ms: float,
    progress: Callable[[int, int], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> list[Timing]:
    """One Timing per pass: exactly `reps` timed rounds (fewer if cancelled) after a warm-up of
    `warmup_ms` by the host clock, as `time_passes` warms up."""
    ctx.release_staging()
    t0 = time.perf_counter()
    warmup = _warm_up_for(ctx, passes, None, warmup_ms, t0, cancelled)
    round_ms = _since_ms(t0) / warmup if warmup else 0.0
    return _measure(ctx, passes, None, reps, round_ms, warmup, progress, cancelled)


def _submit(
    ctx: GpuContext,
    passes: Sequence[EncodePass],
    flush: EncodePass | None,
    rounds: int,
    with_encoding: bool = False,
) -> float:
    """Encode `rounds` rounds in one submission and wait: milliseconds taken (from the submit, or
    from the start of encoding with `with_encoding`)."""
    dev = ctx.device
    t0 = time.perf_counter()
    enc = dev.create_command_encoder()
    for _ in range(rounds):
        for p in passes:
            if flush is not None:
                flush(enc, None)
            p(enc, None)
    buf = enc.finish()
    if not with_encoding:
        t0 = time.perf_counter()
    dev.queue.submit([buf])
    ctx.wait()
    return (time.perf_counter() - t0) * 1e3


def _measure(
    ctx: GpuContext,
    passes: Sequence[EncodePass],
    flush: EncodePass | None,
    rounds: int,
    round_ms: float,
    warmup: int,
    progress: Callable[[int, int], None] | None,
    cancelled: Callable[[], bool] | None,
) -> list[Timing]:
    if ctx.has_timestamps:
        per_submit = _rounds_per_submit(round_ms, len(passes))
        return _time_with_timestamps(
            ctx, passes, flush, rounds, per_submit, warmup, progress, cancelled
        )
    return _time_with_wall_clock(ctx, passes, flush, rounds, round_ms, warmup, progress, cancelled)


def _rounds_per_submit(round_ms: float, n_passes: int) -> int:
    by_count = max(1, _PASSES_PER_SUBMIT // max(1, n_passes))
    if round_ms <= 0:
        return by_count
    return max(1, min(by_count, int(_SECONDS_PER_SUBMIT * 1e3 / round_ms)))


def _time_with_timestamps(
    ctx: GpuContext,
    passes: Sequence[EncodePass],
    flush: EncodePass | None,
    rounds: int,
    per_submit: int,
    warmup: int,
    progress: Callable[[int, int], None] | None,
    cancelled: Callable[[], bool] | None,
) -> list[Timing]:
    samples: list[list[float]] = [[] for _ in passes]
    done = submits = 0
    while done < rounds and not (cancelled is not None and cancelled()):
        chunk = min(per_submit, rounds - done)
        order = _rotated(len(passes), submits)
        timed = _timestamped_rounds(ctx, [passes[i] for i in order], flush, chunk)
        for i, ms in zip(order, timed, strict=True):
            samples[i].extend(ms)
        done += chunk
        submits += 1
        if progress is not None:
            progress(done, rounds)
    return [Timing("timestamp", tuple(s), warmup, flushed=flush is not None) for s in samples]


def _rotated(n: int, k: int) -> list[int]:
    """Pass indices starting at k mod n: which pass leads alternates from one submission to the
    next, so none of them is always the first after a submission starts."""
    return [(k + i) % n for i in range(n)]


def _timestamped_rounds(
    ctx: GpuContext, passes: Sequence[EncodePass], flush: EncodePass | None, rounds: int
) -> list[list[float]]:
    """`rounds` rounds in one submission, each pass timestamped: ms per pass, per pass index."""
    import wgpu

    dev = ctx.device
    n = rounds * len(passes)
    qs = dev.create_query_set(type=wgpu.QueryType.timestamp, count=2 * n)
    resolve = dev.create_buffer(
        size=16 * n, usage=wgpu.BufferUsage.QUERY_RESOLVE | wgpu.BufferUsage.COPY_SRC
    )
    enc = dev.create_command_encoder()
    k = 0
    for _ in range(rounds):
        for p in passes:
            if flush is not None:
                flush(enc, None)
            p(
                enc,
                {
                    "query_set": qs,
                    "beginning_of_pass_write_index": 2 * k,
                    "end_of_pass_write_index": 2 * k + 1,
                },
            )
            k += 1
    enc.resolve_query_set(qs, 0, 2 * n, resolve, 0)
    dev.queue.submit([enc.finish()])
    ticks = np.frombuffer(ctx.read_back({"t": (resolve, 16 * n)})["t"], np.uint64)
    resolve.destroy()
    qs.destroy()
    ms = (ticks[1::2].astype(np.int64) - ticks[0::2].astype(np.int64)) * (
        ctx.timestamp_period_ns / 1e6
    )
    return [[float(v) for v in ms[i :: len(passes)]] for i in range(len(passes))]


def _time_with_wall_clock(
    ctx: GpuContext,
    passes: Sequence[EncodePass],
    flush: EncodePass | None,
    rounds: int,
    round_ms: float,
    warmup: int,
    progress: Callable[[int, int], None] | None,
    cancelled: Callable[[], bool] | None,
) -> list[Timing]:
    """Each sample: one pass's batch in one submission, host-timed; a flush's own time subtracted."""
    pass_ms = round_ms / max(1, len(passes))
    batch = max(1, min(_WALL_BATCH_MAX, math.ceil(_WALL_BATCH_MS / pass_ms) if pass_ms > 0 else 1))
    batch = min(batch, rounds)
    flush_ms = 0.0
    if flush is not None:
        flush_ms = float(np.median([_wall_batch(ctx, flush, None, batch) for _ in range(3)]))
    samples: list[list[float]] = [[] for _ in passes]
    done = 0
    while done < rounds and not (cancelled is not None and cancelled()):
        for i in _rotated(len(passes), done // batch):
            samples[i].append(max(0.0, _wall_batch(ctx, passes[i], flush, batch) - flush_ms))
        done += batch
        if progress is not None:
            progress(min(done, rounds), rounds)
    return [
        Timing("wall", tuple(s), warmup, passes_per_sample=batch, flushed=flush is not None)
        for s in samples
    ]


def _wall_batch(ctx: GpuContext, p: EncodePass, flush: EncodePass | None, batch: int) -> float:
    """Milliseconds per pass of `batch` passes (each after a flush, if any) in one submission."""
    return _submit(ctx, [p], flush, batch) / batch


def clock_check(ctx: GpuContext, p: EncodePass, pass_ms: float) -> ClockCheck | None:
    """Timestamps against the host clock over the same back-to-back passes (None: no timestamps).

    Each batch is submitted twice, once timestamped per pass and once bare and timed by the host
    clock, so both clocks see the same work with the same caches.
    """
    if not ctx.has_timestamps:
        return None
    ctx.release_staging()
    batch = 4
    if pass_ms > 0:
        batch = max(4, min(_PASSES_PER_SUBMIT, math.ceil(_CHECK_BATCH_MS / pass_ms)))
    stamps: list[float] = []
    walls: list[float] = []
    for _ in range(_CHECK_BATCHES):
        stamps.extend(_timestamped_rounds(ctx, [p], None, batch)[0])
        walls.append(_wall_batch(ctx, p, None, batch))
    return ClockCheck(float(np.median(stamps)), float(np.median(walls)), batch, _CHECK_BATCHES)
