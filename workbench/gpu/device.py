"""One adapter's device: compile, check limits, allocate, dispatch, time and read back.

The device is requested with the adapter's own limits (not wgpu's defaults) and the features a
kernel may need that the adapter has. Limits are checked before anything is allocated, so an
oversized dimension is refused with the limit and the binding named. Workgroup memory is checked
against max-compute-workgroup-storage-size before a pipeline is made: WebGPU requires that check, but
some drivers (lavapipe) skip it and run an oversized `var<workgroup>` anyway. A program is bound to
its buffers once (`bind`) and then encoded as often as timing needs; how passes are timed (timestamp
queries when the adapter has them, period read from the queue, the wall clock otherwise, labelled as
such) lives in `workbench.gpu.timing`. An adapter that lists but cannot run compute shaders (an OpenGL 3.3 driver) is
found by a cheap probe whose answer `choose_adapter` remembers.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial, wraps
from typing import Any, Concatenate, ParamSpec, TypeVar

import numpy as np

from workbench.errors import (
    Advice,
    CompileError,
    DeviceLostError,
    DispatchTimeout,
    GpuError,
    MissingFeatureError,
    ReflectionError,
)
from workbench.gpu import compiled
from workbench.gpu.adapters import (
    COMPUTE_PROBES,
    USEFUL_FEATURES,
    AdapterInfo,
    list_adapters,
    quiet_mesa,
    raw_adapter,
)
from workbench.gpu.limits import check_limits, check_workgroup_storage
from workbench.gpu.timing import (
    DEFAULT_WARMUP_MS,
    Budget,
    ClockCheck,
    Timing,
    clock_check,
    flush_size,
    time_back_to_back,
    time_passes,
)
from workbench.gpu.timing import time_reps as _time_reps
from workbench.interrupts import raise_if_pressed
from workbench.wgsl.diagnostics import map_compile_error
from workbench.wgsl.parser import TooDeepError
from workbench.wgsl.reflect import Binding, EntryPoint, reflect
from workbench.wgsl.sourcemap import SourceMap

_SUBGROUP_PROBE = """
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(subgroup_size) sg: u32, @builtin(local_invocation_index) i: u32) {
    if (i == 0u) { out[0] = sg; }
}
"""
_COMPUTE_PROBE = "@compute @workgroup_size(1)\nfn main() {}\n"
# The watchdog: how long GPU work may go without finishing a wait before the command gives up
# (`--timeout`). Generous: the slowest shipped case on the CPU adapter takes a few seconds.
DEFAULT_TIMEOUT_S = 600.0
# Helper threads left waiting inside wgpu by Ctrl-C or the watchdog (see GpuContext._blocking).
_abandoned: list[threading.Thread] = []
_helper = threading.local()
P = ParamSpec("P")
R = TypeVar("R")


def abandoned_waits() -> bool:
    """Whether a wait for the GPU was given up and may still be blocked in native code: then the
    process should end with os._exit, since finalizing wgpu objects could wait on it forever."""
    return any(t.is_alive() for t in _abandoned)


def _watched(
    method: Callable[Concatenate[GpuContext, P], R],
) -> Callable[Concatenate[GpuContext, P], R]:
    """A GpuContext method that waits for the GPU, run under the watchdog (see `_blocking`)."""

    @wraps(method)
    def run(self: GpuContext, /, *args: P.args, **kwargs: P.kwargs) -> R:
        if getattr(_helper, "active", False):
            return method(self, *args, **kwargs)
        result: R = self._blocking(partial(method, self, *args, **kwargs))
        return result

    return run


@dataclass(frozen=True)
class BufferPlan:
    """What to bind at one binding: its size, what to upload (None: zero-filled), read back?"""

    binding: Binding
    nbytes: int
    data: bytes | memoryview | None = None
    read: bool = False


@dataclass
class Program:
    """A compiled kernel: pipeline, bind group layouts and the bindings it uses."""

    pipeline: Any
    layouts: list[Any]
    bindings: tuple[Binding, ...]
    entry: str


@dataclass(frozen=True)
class DeviceBuffer:
    """A storage buffer that stays on the device between dispatches (a pipeline's buffers)."""

    handle: Any
    nbytes: int


@dataclass
class DispatchResult:
    outputs: dict[str, memoryview]  # each a private copy, writable
    timing: Timing | None
    grid: tuple[int, int, int]


@dataclass
class GpuContext:
    """A device on one adapter, with a pipeline cache and a reused staging buffer."""

    adapter: AdapterInfo
    _device: Any = None
    _programs: dict[tuple[object, ...], Program] = field(default_factory=dict)
    _staging: Any = None
    _subgroup_size: int | None = None
    _period: float | None = None
    _device_error: str | None = None  # why the device could not be created (not retried)
    _flush: Any = None  # the cache-flush buffer, made on first use
    _compiled: bool = False  # a pipeline compiled on this adapter (or one was remembered)
    timeout_s: float = DEFAULT_TIMEOUT_S
    _timed_out: str | None = None  # the watchdog fired: the device may still be busy with it
    _beat: float = 0.0  # when GPU work last finished a wait (the watchdog counts from there)
    # Held while the device is made: compiles on several threads (`Session.statuses`) share one.
    _device_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    # -- device ------------------------------------------------------------------------------
    @property
    def device(self) -> Any:
        if self._device is None:
            with self._device_lock:
                self._make_device()
        return self._device

    def _make_device(self) -> None:
        if self._device is None:
            if self._device_error is None:
                quiet_mesa()
                feats = [f for f in USEFUL_FEATURES if f in self.adapter.features]
                try:
                    self._device = raw_adapter(self.adapter.index).request_device_sync(
                        required_features=feats, required_limits=dict(self.adapter.limits)
                    )
                except Exception as exc:
                    self._device_error = _first_cause(str(exc)) or type(exc).__name__
            if self._device is None:
                raise GpuError(
                    f"{self.adapter.label}: could not create a device ({self._device_error}), so "
                    f"this adapter cannot run compute shaders; {_other_adapter_hint(self.adapter)}",
                    advice=Advice.OTHER_ADAPTER,
                )

    def probe_compute(self) -> str | None:
        """Why this adapter cannot run compute shaders, or None when it can.

        Creates the device and a trivial compute pipeline (cheap: nothing is dispatched), unless
        a pipeline was already made on the adapter (or remembered, `check_compiles`). The
        answer is kept per adapter, so each is probed once and the default adapter choice skips
        one known to fail.
        """
        if self.adapter.index in COMPUTE_PROBES:
            return COMPUTE_PROBES[self.adapter.index] or None
        if self._compiled:
            # A pipeline was made on this adapter (here, or by this driver and wgpu before).
            COMPUTE_PROBES[self.adapter.index] = ""
            return None
        problem = ""
        try:
            import wgpu

            dev = self.device
            try:
                module = dev.create_shader_module(code=_COMPUTE_PROBE)
                dev.create_compute_pipeline(
                    layout="auto", compute={"module": module, "entry_point": "main"}
                )
            except wgpu.GPUError as exc:
                problem = f"no compute pipeline: {_first_cause(str(exc))}"
        except GpuError:
            problem = f"could not create a device ({self._device_error})"
        COMPUTE_PROBES[self.adapter.index] = problem
        return problem or None

    @property
    def has_timestamps(self) -> bool:
        return "timestamp-query" in self.adapter.features

    @property
    def timestamp_period_ns(self) -> float:
        """Nanoseconds per timestamp tick, read from the queue."""
        if self._period is None:
            from wgpu.backends.wgpu_native import _ffi

            self._period = float(_ffi.lib.wgpuQueueGetTimestampPeriod(self.device.queue._internal))
        return self._period

    @property
    def subgroup_size(self) -> int | None:
        """Measured with `@builtin(subgroup_size)`; None when the adapter has no subgroups."""
        if self._subgroup_size is None and "subgroup" in self.adapter.features:
            import wgpu

            dev = self.device
            module = dev.create_shader_module(code=_SUBGROUP_PROBE)
            pipe = dev.create_compute_pipeline(
                layout="auto", compute={"module": module, "entry_point": "main"}
            )
            buf = dev.create_buffer(
                size=16, usage=wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC
            )
            bg = dev.create_bind_group(
                layout=pipe.get_bind_group_layout(0),
                entries=[{"binding": 0, "resource": {"buffer": buf}}],
            )
            enc = dev.create_command_encoder()
            cp = enc.begin_compute_pass()
            cp.set_pipeline(pipe)
            cp.set_bind_group(0, bg)
            cp.dispatch_workgroups(1)
            cp.end()
            dev.queue.submit([enc.finish()])
            self._subgroup_size = int(np.frombuffer(dev.queue.read_buffer(buf), np.uint32)[0])
        return self._subgroup_size

    # -- checks ------------------------------------------------------------------------------
    def missing_features(self, needed: Sequence[str]) -> list[str]:
        return [f for f in needed if f not in self.adapter.features]

    def require_features(self, needed: Sequence[str], kernel: str) -> None:
        missing = self.missing_features(needed)
        if missing:
            raise MissingFeatureError(
                f"{kernel} needs the {', '.join(missing)} feature, which {self.adapter.label} "
                "does not have",
                advice=Advice.OTHER_ADAPTER,
            )

    def check_workgroup_storage(self, entry: EntryPoint, kernel: str) -> None:
        check_workgroup_storage(self.adapter, entry, kernel)

    def check_limits(
        self,
        plans: Sequence[BufferPlan],
        workgroup_size: Sequence[int],
        grid: Sequence[int],
        kernel: str,
        entry: EntryPoint | None = None,
    ) -> tuple[int, int, int]:
        """`workbench.gpu.limits.check_limits` for these buffer plans; returns the folded grid."""
        sized = [(p.binding, p.nbytes) for p in plans]
        return check_limits(self.adapter, sized, workgroup_size, grid, kernel, entry)

    # -- compile -----------------------------------------------------------------------------
    def check_compiles(
        self,
        module_text: str,
        smap: SourceMap,
        entry: str,
        bindings: tuple[Binding, ...],
        file: str,
        constants: dict[str, float] | None = None,
        reflected: EntryPoint | None = None,
    ) -> None:
        """Whether the module compiles into a pipeline (a CompileError says why not), as
        `compile`; a success remembered for this adapter, driver and wgpu (`compiled`) is not
        compiled again, and then no device is made."""
        if self.remembered_compiling(module_text, entry, bindings, constants):
            return
        self.compile(module_text, smap, entry, bindings, file, constants, reflected)
        layout = tuple(b.signature for b in bindings)
        compiled.remember(compiled.compile_key(self.adapter, module_text, entry, layout, constants))

    def remembered_compiling(
        self,
        module_text: str,
        entry: str,
        bindings: tuple[Binding, ...],
        constants: dict[str, float] | None = None,
    ) -> bool:
        """Whether this compile was remembered succeeding on this adapter, driver and wgpu
        (`compiled`); nothing is compiled."""
        layout = tuple(b.signature for b in bindings)
        if not compiled.known(
            compiled.compile_key(self.adapter, module_text, entry, layout, constants)
        ):
            return False
        self._compiled = True
        return True

    def compile(
        self,
        module_text: str,
        smap: SourceMap,
        entry: str,
        bindings: tuple[Binding, ...],
        file: str,
        constants: dict[str, float] | None = None,
        reflected: EntryPoint | None = None,
    ) -> Program:
        """The pipeline of `entry` in `module_text`, made once per context. `reflected` is the
        entry point as the caller already reflected it from the same text (with the same
        constants), which spares reading the module again for the workgroup memory check."""
        import wgpu

        key = (
            hash(module_text),
            entry,
            tuple(b.signature for b in bindings),
            tuple(sorted((constants or {}).items())),
        )
        if key in self._programs:
            return self._programs[key]
        if self._timed_out:
            raise DispatchTimeout(f"{self._timed_out}; the device may still be busy with it")
        if reflected is not None:
            self.check_workgroup_storage(reflected, f"{file}:{entry}")
        else:
            self._check_module_workgroup_storage(module_text, entry, file, constants)
        dev = self.device
        try:
            module = dev.create_shader_module(code=module_text)
        except wgpu.GPUError as exc:
            diag = map_compile_error(str(exc), module_text, smap, file)
            raise CompileError(
                diag.render(),
                file=diag.file,
                line=diag.line,
                column=diag.column,
                headline=diag.message,
            ) from None
        groups = max((b.group for b in bindings), default=-1) + 1
        layouts = []
        for g in range(groups):
            entries = []
            for b in bindings:
                if b.group != g:
                    continue
                if b.space == "uniform":
                    kind = wgpu.BufferBindingType.uniform
                elif b.access == "read":
                    kind = wgpu.BufferBindingType.read_only_storage
                else:
                    kind = wgpu.BufferBindingType.storage
                entries.append(
                    {
                        "binding": b.binding,
                        "visibility": wgpu.ShaderStage.COMPUTE,
                        "buffer": {"type": kind},
                    }
                )
            try:
                layouts.append(dev.create_bind_group_layout(entries=entries))
            except wgpu.GPUError as exc:
                # e.g. a binding index over the adapter's max-bindings-per-bind-group.
                raise CompileError(
                    f"{file}: bind group {g} of '{entry}' rejected: {_first_cause(str(exc))}",
                    file=file,
                ) from None
        compute: dict[str, Any] = {"module": module, "entry_point": entry}
        if constants:
            compute["constants"] = constants
        try:
            pipeline = dev.create_compute_pipeline(
                layout=dev.create_pipeline_layout(bind_group_layouts=layouts), compute=compute
            )
        except wgpu.GPUError as exc:
            raise CompileError(
                f"{file}: pipeline for '{entry}' rejected: {_first_cause(str(exc))}", file=file
            ) from None
        program = Program(pipeline, layouts, bindings, entry)
        self._programs[key] = program
        self._compiled = True
        return program

    def _check_module_workgroup_storage(
        self, module_text: str, entry: str, file: str, constants: dict[str, float] | None
    ) -> None:
        """The workgroup memory check on the module about to be compiled, so every path to a
        pipeline (status, run, the UI) is refused the same way whatever its caller passed."""
        try:
            ep = reflect(module_text, file, constants).entry_points.get(entry)
        except TooDeepError as exc:
            # Never handed to the compiler, which would crash the process on it.
            raise CompileError(str(exc)) from None
        except ReflectionError:
            return  # the compiler reports what reflection cannot read
        if ep is not None:
            self.check_workgroup_storage(ep, f"{file}:{entry}")

    # -- dispatch ----------------------------------------------------------------------------
    def bind(
        self, program: Program, plans: Sequence[BufferPlan], grid: tuple[int, int, int]
    ) -> Bound:
        """Create and upload the buffers `plans` describe and the bind groups `program` needs."""
        import wgpu

        dev = self.device
        with self._gpu_errors():
            buffers: dict[str, tuple[Any, int, bool]] = {}
            for p in plans:
                usage = wgpu.BufferUsage.COPY_DST | wgpu.BufferUsage.COPY_SRC
                usage |= (
                    wgpu.BufferUsage.UNIFORM
                    if p.binding.space == "uniform"
                    else wgpu.BufferUsage.STORAGE
                )
                size = max(16, (p.nbytes + 3) // 4 * 4)
                buf = dev.create_buffer(size=size, usage=usage)
                _upload(dev, buf, p.data)
                buffers[p.binding.name] = (buf, p.nbytes, p.read)
            groups = []
            for g, layout in enumerate(program.layouts):
                entries = [
                    {
                        "binding": p.binding.binding,
                        "resource": {"buffer": buffers[p.binding.name][0]},
                    }
                    for p in plans
                    if p.binding.group == g
                ]
                groups.append(dev.create_bind_group(layout=layout, entries=entries))
        return Bound(program, grid, buffers, groups)

    @_watched
    def dispatch(
        self,
        program: Program,
        plans: Sequence[BufferPlan],
        grid: tuple[int, int, int],
        reps: int = 0,
        warmup_ms: float = DEFAULT_WARMUP_MS,
        progress: Callable[[int, int], None] | None = None,
        cancelled: Callable[[], bool] | None = None,
    ) -> DispatchResult:
        """Upload, dispatch once, read back what `plans` mark, then time `reps` more dispatches
        after warming up for `warmup_ms` by the host clock.

        Outputs are read after the first dispatch, before any timing repetition can change them
        (in-place kernels and atomics would otherwise accumulate).
        """
        bound = self.bind(program, plans, grid)
        try:
            with self._gpu_errors():
                enc = self.device.create_command_encoder()
                bound.encode(enc)
                self.device.queue.submit([enc.finish()])
                outputs = self.read_back(
                    {name: (buf, n) for name, (buf, n, read) in bound.buffers.items() if read}
                )
                timing = None
                if reps > 0:
                    passes = [bound.encode]
                    timing = _time_reps(self, passes, reps, warmup_ms, progress, cancelled)[0]
        finally:
            bound.release()
        return DispatchResult(outputs, timing, grid)

    @_watched
    def time_back_to_back(
        self,
        program: Program,
        plans: Sequence[BufferPlan],
        grid: tuple[int, int, int],
        batch: int,
        samples: int = 1,
        warmup: int = 1,
    ) -> Timing:
        """Time `batch` dispatches back to back in one compute pass (see
        timing.time_back_to_back); every batch, the warm-up ones included, starts from the
        buffers as `plans` describe them (inputs uploaded again, the rest cleared), so an
        in-place or accumulating kernel never works on more than `batch` of its own results."""
        bound = self.bind(program, plans, grid)
        try:
            with self._gpu_errors():

                def restore() -> None:
                    enc = self.device.create_command_encoder()
                    for p in plans:
                        buf = bound.buffers[p.binding.name][0]
                        if p.data:
                            _upload(self.device, buf, p.data)
                        else:
                            enc.clear_buffer(buf)
                    self.device.queue.submit([enc.finish()])

                return time_back_to_back(
                    self, bound.encode_batch, batch, samples, warmup, before_batch=restore
                )
        finally:
            bound.release()

    @_watched
    def time(
        self,
        bounds: Sequence[Bound],
        budget: Budget,
        progress: Callable[[int, int], None] | None = None,
        cancelled: Callable[[], bool] | None = None,
        warming: Callable[[float], None] | None = None,
    ) -> list[Timing]:
        """Time bound programs interleaved (A B A B …) within a budget; one Timing each."""
        encodes = [b.encode for b in bounds]
        with self._gpu_errors():
            return time_passes(self, encodes, budget, progress, cancelled, warming)

    @_watched
    def clock_check(self, bound: Bound, pass_ms: float) -> ClockCheck | None:
        """Timestamps against the host clock for one bound program (None: no timestamps)."""
        with self._gpu_errors():
            return clock_check(self, bound.encode, pass_ms)

    @property
    def flush_bytes(self) -> tuple[int, str]:
        """Size of the buffer written to flush the last-level cache, and why that size."""
        return flush_size(self.adapter)

    def encode_flush(self, enc: Any, ts: dict[str, Any] | None = None) -> None:
        """Overwrite the whole flush buffer, evicting what a timed pass left in the cache."""
        if self._flush is None:
            import wgpu

            self._flush = self.device.create_buffer(
                size=self.flush_bytes[0], usage=wgpu.BufferUsage.COPY_DST
            )
        enc.clear_buffer(self._flush)

    # -- buffers that stay on the device ------------------------------------------------------
    def new_buffer(self, nbytes: int) -> DeviceBuffer:
        """A zero-filled storage buffer that can be written, bound and read back."""
        import wgpu

        usage = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_DST | wgpu.BufferUsage.COPY_SRC
        with self._gpu_errors():
            handle = self.device.create_buffer(size=max(16, (nbytes + 3) // 4 * 4), usage=usage)
        return DeviceBuffer(handle, nbytes)

    @_watched
    def write(self, buf: DeviceBuffer, data: bytes | memoryview | None) -> None:
        """Replace the buffer's contents (None: zeros)."""
        with self._gpu_errors():
            if data is None:
                enc = self.device.create_command_encoder()
                enc.clear_buffer(buf.handle)
                self.device.queue.submit([enc.finish()])
                return
            pad = (-len(data)) % 4
            self.device.queue.write_buffer(
                buf.handle, 0, bytes(data) + b"\0" * pad if pad else data
            )

    @_watched
    def read(self, bufs: dict[str, DeviceBuffer]) -> dict[str, memoryview]:
        """Each buffer's contents (private writable copies), through the staging buffer."""
        with self._gpu_errors():
            return self.read_back({name: (b.handle, b.nbytes) for name, b in bufs.items()})

    @_watched
    def dispatch_on(
        self,
        program: Program,
        uniforms: Sequence[BufferPlan],
        storage: dict[str, DeviceBuffer],
        grid: tuple[int, int, int],
    ) -> tuple[float, str]:
        """One dispatch over buffers that stay on the device (`storage`, by binding name) and
        fresh uniform buffers; returns its time in ms and how it was taken ("timestamp" or
        "wall")."""
        import wgpu

        dev = self.device
        with self._gpu_errors():
            bound = {name: b.handle for name, b in storage.items()}
            for p in uniforms:
                usage = wgpu.BufferUsage.UNIFORM | wgpu.BufferUsage.COPY_DST
                ubuf = dev.create_buffer(size=max(16, (p.nbytes + 3) // 4 * 4), usage=usage)
                if p.data:
                    dev.queue.write_buffer(ubuf, 0, p.data)
                bound[p.binding.name] = ubuf
            groups = [
                dev.create_bind_group(
                    layout=layout,
                    entries=[
                        {"binding": b.binding, "resource": {"buffer": bound[b.name]}}
                        for b in program.bindings
                        if b.group == g
                    ],
                )
                for g, layout in enumerate(program.layouts)
            ]
            enc = dev.create_command_encoder()
            ts = None
            if self.has_timestamps:
                qs = dev.create_query_set(type=wgpu.QueryType.timestamp, count=2)
                resolve = dev.create_buffer(
                    size=16, usage=wgpu.BufferUsage.QUERY_RESOLVE | wgpu.BufferUsage.COPY_SRC
                )
                ts = {
                    "query_set": qs,
                    "beginning_of_pass_write_index": 0,
                    "end_of_pass_write_index": 1,
                }
            cp = enc.begin_compute_pass(timestamp_writes=ts) if ts else enc.begin_compute_pass()
            cp.set_pipeline(program.pipeline)
            for g, bg in enumerate(groups):
                cp.set_bind_group(g, bg)
            if all(v > 0 for v in grid):
                cp.dispatch_workgroups(*grid)
            cp.end()
            t0 = time.perf_counter()
            if ts is None:
                dev.queue.submit([enc.finish()])
                self.wait()
                return (time.perf_counter() - t0) * 1e3, "wall"
            enc.resolve_query_set(qs, 0, 2, resolve, 0)
            dev.queue.submit([enc.finish()])
            ticks = np.frombuffer(self.read_back({"t": (resolve, 16)})["t"], np.uint64)
            resolve.destroy()
            qs.destroy()
            ms = float(int(ticks[1]) - int(ticks[0])) * self.timestamp_period_ns / 1e6
            return ms, "timestamp"

    @contextmanager
    def _gpu_errors(self) -> Iterator[None]:
        """wgpu's errors as the tool's: a lost device, or one line from the validation error."""
        import wgpu

        try:
            yield
        except wgpu.GPUError as exc:
            text = str(exc)
            if "lost" in text.lower():
                raise DeviceLostError(
                    f"{self.adapter.label}: device lost: {_first_cause(text)}"
                ) from None
            raise GpuError(f"{self.adapter.label}: {_first_cause(text)}") from None

    def read_back(self, wanted: dict[str, tuple[Any, int]]) -> dict[str, memoryview]:
        """Copy each wanted buffer through one reused MAP_READ staging buffer."""
        import wgpu

        out: dict[str, memoryview] = {}
        dev = self.device
        for name, (buf, nbytes) in wanted.items():
            if nbytes == 0:
                out[name] = memoryview(bytearray())
                continue
            size = (nbytes + 3) // 4 * 4
            if self._staging is None or self._staging.size < size:
                if self._staging is not None:
                    self._staging.destroy()
                self._staging = dev.create_buffer(
                    size=max(size, 1 << 16),
                    usage=wgpu.BufferUsage.MAP_READ | wgpu.BufferUsage.COPY_DST,
                )
            enc = dev.create_command_encoder()
            enc.copy_buffer_to_buffer(buf, 0, self._staging, 0, size)
            dev.queue.submit([enc.finish()])
            self._staging.map_sync(wgpu.MapMode.READ, 0, size)
            self._beat = time.monotonic()
            try:
                # read_mapped(copy=True) already copies into a new bytearray: no second copy.
                out[name] = self._staging.read_mapped(0, size, copy=True)[:nbytes]
            finally:
                self._staging.unmap()
        return out

    @property
    def staging_bytes(self) -> int:
        """The size of the read-back staging buffer kept alive between runs (0: none)."""
        return int(self._staging.size) if self._staging is not None else 0

    def release_staging(self) -> None:
        """Free the read-back staging buffer before timing.

        While a large MAP_READ buffer is alive, every submission waits far longer (on the H100, a
        128 MiB one made each submit-and-wait take 35 ms instead of 0.4 ms): the per-pass host
        overhead a clock check sees, and a pass estimate long enough to leave a budget 5 passes.
        """
        if self._staging is not None:
            self._staging.destroy()
            self._staging = None

    def close(self) -> None:
        """Give the device back now, with what it holds (pipelines, staging and flush buffers).

        wgpu frees a device only when Python collects it, and its poll thread (a running thread,
        so a garbage-collection root) keeps whatever `sys.stderr` was when the device was made:
        inside the terminal UI that is the app itself, so a replaced or finished app's device,
        and the app, would live as long as the process. A closed context makes no new device.
        """
        if self._device is None:
            self._device_error = self._device_error or "the session was closed"
            return
        for buf in (self._staging, self._flush):
            if buf is not None:
                buf.destroy()
        self._staging = self._flush = None
        self._programs.clear()
        self._device.destroy()
        self._device = None
        self._device_error = "the session was closed"

    def wait(self) -> None:
        """Block until submitted work is done (on_submitted_work_done_sync is broken in 0.32)."""
        import wgpu

        dev = self.device
        buf = dev.create_buffer(size=4, usage=wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST)
        dev.queue.read_buffer(buf)
        self._beat = time.monotonic()
        buf.destroy()

    def _blocking(self, call: Callable[[], Any]) -> Any:
        """`call()`, GPU work that may block in native code, made in a helper thread while this
        one watches.

        Python handles Ctrl-C only between bytecodes, never inside wgpu (lavapipe even blocks in
        `queue.submit` while an earlier dispatch runs), so the work happens elsewhere and this
        thread stays interruptible; and work that finishes no wait for `timeout_s` ends at the
        watchdog with DispatchTimeout instead of hanging.
        """
        if self._timed_out:
            raise DispatchTimeout(f"{self._timed_out}; the device may still be busy with it")
        box: dict[str, Any] = {}
        done = threading.Event()

        def work() -> None:
            _helper.active = True
            try:
                box["value"] = call()
            except BaseException as exc:
                box["error"] = exc
            finally:
                done.set()

        helper = threading.Thread(target=work, name="workbench-gpu-wait", daemon=True)
        start = time.monotonic()
        helper.start()
        try:
            while not done.wait(0.05):
                raise_if_pressed()
                if time.monotonic() - max(start, self._beat) > self.timeout_s:
                    self._timed_out = (
                        f"{self.adapter.label}: a dispatch did not finish within "
                        f"{self.timeout_s:g} s (the dispatch watchdog): the kernel may loop "
                        "forever or be far too large for this adapter"
                    )
                    raise DispatchTimeout(self._timed_out, advice=Advice.LONGER_TIMEOUT)
        except BaseException:
            _abandoned.append(helper)
            raise
        if "error" in box:
            raise box["error"]
        return box.get("value")


@dataclass
class Bound:
    """A program with its buffers uploaded and its bind groups made: ready to encode passes."""

    program: Program
    grid: tuple[int, int, int]
    buffers: dict[str, tuple[Any, int, bool]]  # binding name -> (buffer, bytes, read back?)
    groups: list[Any]

    def encode(self, enc: Any, ts: dict[str, Any] | None = None) -> None:
        """One compute pass dispatching the program, timestamped when `ts` is given."""
        cp = enc.begin_compute_pass(timestamp_writes=ts) if ts else enc.begin_compute_pass()
        cp.set_pipeline(self.program.pipeline)
        for g, bg in enumerate(self.groups):
            cp.set_bind_group(g, bg)
        if all(v > 0 for v in self.grid):
            cp.dispatch_workgroups(*self.grid)
        cp.end()

    def encode_batch(self, enc: Any, count: int, ts: dict[str, Any] | None = None) -> None:
        """One compute pass dispatching the program `count` times back to back (wgpu orders
        the dispatches: each sees the previous one's writes); timestamped at the pass's
        beginning and end when `ts` is given."""
        cp = enc.begin_compute_pass(timestamp_writes=ts) if ts else enc.begin_compute_pass()
        cp.set_pipeline(self.program.pipeline)
        for g, bg in enumerate(self.groups):
            cp.set_bind_group(g, bg)
        if all(v > 0 for v in self.grid):
            for _ in range(count):
                cp.dispatch_workgroups(*self.grid)
        cp.end()

    def release(self) -> None:
        for buf, _, _ in self.buffers.values():
            buf.destroy()


def _upload(dev: Any, buf: Any, data: bytes | memoryview | None) -> None:
    """Write `data` (None: nothing) to the start of `buf`: straight from the caller's memory, only
    an odd size copied (writes must be a multiple of 4 bytes)."""
    if data:
        pad = (-len(data)) % 4
        dev.queue.write_buffer(buf, 0, bytes(data) + b"\0" * pad if pad else data)


def _other_adapter_hint(adapter: AdapterInfo) -> str:
    """Which adapter to try instead of one that cannot run compute shaders."""
    others = [a for a in list_adapters() if a.index != adapter.index]
    if any(a.backend == "Vulkan" for a in others):
        return "try the Vulkan adapter"
    if others:
        return "choose another adapter"
    return "install a Vulkan driver (Mesa's lavapipe runs on the CPU: mesa-vulkan-drivers)"


def _first_cause(text: str) -> str:
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    skip = ("Validation Error", "Caused by", "In wgpu")
    useful = [ln for ln in lines if not ln.startswith(skip)]
    return " ".join(useful[:3]) if useful else text.strip()
