"""Engine overhead: what `Session.run` costs per dispatch beyond the wgpu calls it makes, how long
`workbench list` takes to start, and how fast the WGSL front end reads.

Three ways to do the same dispatch of one small kernel (y = 2x over n floats) on the same device:

- session:  `session.run(case, reps=0, reference=False)`, the path the CLI and the UI take
            (limit checks, uniform packing, buffers, bind groups, dispatch, read-back, output arrays);
- raw:      the same wgpu work written by hand: new buffers and a bind group per call, upload,
            dispatch, copy into a reused MAP_READ buffer, map and read;
- dispatch: the floor, buffers and bind group made once; per call only encode, submit and wait.

Each is timed call by call after a warm-up; medians are printed in µs with the adapter named, with
session/raw and session/dispatch ratios. Then `workbench list` runs as a subprocess a few times
(the median wall time), beside a bare wgpu import and adapter enumeration for scale.

The reader (issue 25): parse + type check of a 48 KB kernel file, a 50-file corpus of distinct
files loaded (every kernel split, reflected and assembled) and listed with `workbench list` (with
the compiles remembered from an earlier listing, and with none), in wall and CPU seconds beside
the floor (importing wgpu and enumerating adapters; `bench_listing`), and a `requires` line
followed by 10,000 spaces; the reader of an older commit (`--old-ref`, the last one with the token
scanner) is timed in the same run from `git archive` of that commit, in a subprocess, as a ratio.

    python benchmarks/bench_engine.py [--adapter SEL] [--n 256,1048576] [--seconds 2] [--json]
                                      [--old-ref a32d659 | --old-tree DIR] [--only reader]

It needs no GPU (the CPU adapter works) and runs unchanged on a GPU machine.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("XDG_RUNTIME_DIR", f"/tmp/workbench-xdg-{os.getuid()}")
os.makedirs(os.environ["XDG_RUNTIME_DIR"], mode=0o700, exist_ok=True)

from workbench.gpu.adapters import choose_adapter  # noqa: E402
from workbench.gpu.device import GpuContext  # noqa: E402
from workbench.session import Case, Session  # noqa: E402
from workbench.wgsl import reflected  # noqa: E402
from workbench.wgsl.checker import check  # noqa: E402
from workbench.wgsl.corpus import SHIPPED, load_corpus  # noqa: E402
from workbench.wgsl.parser import clear_cache, parse  # noqa: E402

OLD_REF = "a32d659"  # the last commit whose reader was the token scanner
# Times the old reader in a subprocess whose path starts at that commit's tree: argv[1] is the
# tree, argv[2] what to time, argv[3] the file or folder, argv[4] repetitions; prints ms medians.
OLD_TIMER = """
import json, statistics, sys, time
sys.path.insert(0, sys.argv[1])
from workbench.wgsl.corpus import load_corpus
from workbench.wgsl.reflect import reflect
what, path, reps = sys.argv[2], sys.argv[3], int(sys.argv[4])
text = open(path, encoding="utf-8").read() if what == "reflect" else ""
times = []
for _ in range(reps):
    t0 = time.perf_counter()
    if what == "reflect":
        try:
            reflect(text, path)
        except Exception:
            pass
    else:
        corpus = load_corpus(path)
        for k in corpus.kernels:
            k.module
    times.append((time.perf_counter() - t0) * 1e3)
print(json.dumps(statistics.median(times)))
"""

KERNEL = """
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> n: u32;
@compute @workgroup_size(256)
fn double(@builtin(global_invocation_id) gid: vec3<u32>,
          @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.y * nwg.x * 256u + gid.x;
    if (i < n) { y[i] = 2.0 * x[i]; }
}
"""


def time_calls(fn: Callable[[], Any], seconds: float, min_calls: int = 20) -> list[float]:
    """Per-call wall times in µs, after a warm-up, for about `seconds` (at least `min_calls`)."""
    for _ in range(5):
        fn()
    samples: list[float] = []
    end = time.perf_counter() + seconds
    while len(samples) < min_calls or time.perf_counter() < end:
        t0 = time.perf_counter_ns()
        fn()
        samples.append((time.perf_counter_ns() - t0) / 1e3)
    return samples


class RawDouble:
    """The same dispatch as the session's, written directly against wgpu on the same device."""

    def __init__(self, ctx: GpuContext, x: np.ndarray) -> None:
        import wgpu

        self.wgpu = wgpu
        self.dev = ctx.device
        self.x = x
        self.n = x.size
        module = self.dev.create_shader_module(code=KERNEL)
        storage = wgpu.BufferBindingType.storage
        kinds = (wgpu.BufferBindingType.read_only_storage, storage, wgpu.BufferBindingType.uniform)
        self.layout = self.dev.create_bind_group_layout(
            entries=[
                {"binding": i, "visibility": wgpu.ShaderStage.COMPUTE, "buffer": {"type": k}}
                for i, k in enumerate(kinds)
            ]
        )
        self.pipeline = self.dev.create_compute_pipeline(
            layout=self.dev.create_pipeline_layout(bind_group_layouts=[self.layout]),
            compute={"module": module, "entry_point": "double"},
        )
        wg = -(-self.n // 256)
        per_dim = ctx.adapter.limits.get("max-compute-workgroups-per-dimension", 65535)
        self.grid = (wg, 1, 1) if wg <= per_dim else (per_dim, -(-wg // per_dim), 1)
        self.nbytes = 4 * self.n
        self.staging = self.dev.create_buffer(
            size=max(self.nbytes, 16),
            usage=wgpu.BufferUsage.MAP_READ | wgpu.BufferUsage.COPY_DST,
        )
        self.fixed = self._buffers()
        self.fixed_group = self._group(self.fixed)
        self.sync_buf = self.dev.create_buffer(
            size=4, usage=wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST
        )

    def _buffers(self) -> list[Any]:
        bu = self.wgpu.BufferUsage
        size = max(16, self.nbytes)
        xb = self.dev.create_buffer(size=size, usage=bu.STORAGE | bu.COPY_DST | bu.COPY_SRC)
        yb = self.dev.create_buffer(size=size, usage=bu.STORAGE | bu.COPY_DST | bu.COPY_SRC)
        nb = self.dev.create_buffer(size=16, usage=bu.UNIFORM | bu.COPY_DST)
        self.dev.queue.write_buffer(xb, 0, self.x)  # straight from the array, no host copy
        self.dev.queue.write_buffer(nb, 0, np.array([self.n, 0, 0, 0], np.uint32).tobytes())
        return [xb, yb, nb]

    def _group(self, bufs: list[Any]) -> Any:
        return self.dev.create_bind_group(
            layout=self.layout,
            entries=[{"binding": i, "resource": {"buffer": b}} for i, b in enumerate(bufs)],
        )

    def _dispatch(self, group: Any) -> Any:
        enc = self.dev.create_command_encoder()
        cp = enc.begin_compute_pass()
        cp.set_pipeline(self.pipeline)
        cp.set_bind_group(0, group)
        cp.dispatch_workgroups(*self.grid)
        cp.end()
        return enc

    def run(self) -> np.ndarray:
        """New buffers, upload, dispatch, read back, free: what one session run does on wgpu."""
        bufs = self._buffers()
        self.dev.queue.submit([self._dispatch(self._group(bufs)).finish()])
        enc = self.dev.create_command_encoder()
        enc.copy_buffer_to_buffer(bufs[1], 0, self.staging, 0, self.nbytes)
        self.dev.queue.submit([enc.finish()])
        self.staging.map_sync(self.wgpu.MapMode.READ, 0, self.nbytes)
        try:
            out = np.frombuffer(self.staging.read_mapped(0, self.nbytes, copy=True), np.float32)
        finally:
            self.staging.unmap()
        for b in bufs:
            b.destroy()
        return out

    def dispatch_only(self) -> None:
        """Encode, submit and wait for one dispatch over buffers made once."""
        self.dev.queue.submit([self._dispatch(self.fixed_group).finish()])
        self.dev.queue.read_buffer(self.sync_buf)


def bench_dispatch(session: Session, n: int, seconds: float) -> dict[str, Any]:
    case: Case = session.case("double", dims={"n": n}, seed=0)
    raw = RawDouble(session.gpu, case.inputs["x"])
    ran = session.run(case, reps=0, reference=False).outputs["y"]
    want = 2 * case.inputs["x"]
    # Both paths must compute the same thing, or the comparison means nothing.
    assert np.array_equal(ran, want) and np.array_equal(raw.run(), want)
    t_session = time_calls(lambda: session.run(case, reps=0, reference=False), seconds)
    t_raw = time_calls(raw.run, seconds)
    t_dispatch = time_calls(raw.dispatch_only, seconds)
    med = {
        k: statistics.median(v)
        for k, v in (("session", t_session), ("raw", t_raw), ("dispatch", t_dispatch))
    }
    return {
        "n": n,
        "calls": {"session": len(t_session), "raw": len(t_raw), "dispatch": len(t_dispatch)},
        "median_us": med,
        "p90_us": {
            k: float(np.percentile(v, 90))
            for k, v in (("session", t_session), ("raw", t_raw), ("dispatch", t_dispatch))
        },
        "session_over_raw": med["session"] / med["raw"],
        "session_over_dispatch": med["session"] / med["dispatch"],
        "session_minus_raw_us": med["session"] - med["raw"],
    }


def run_times(
    argv: list[str], reps: int, one_cpu: bool = False, **extra_env: str
) -> tuple[list[float], list[float]]:
    """Wall times and CPU times (user + system of the process and its threads) in seconds of
    `reps` runs of a subprocess (its environment with `extra_env`; with `one_cpu`, bound to one
    CPU), failing loudly on error."""
    walls, cpus = [], []
    env = {**os.environ, **extra_env}
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    cpu = min(os.sched_getaffinity(0))

    def bind() -> None:
        os.sched_setaffinity(0, {cpu})

    for _ in range(reps):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        proc = subprocess.run(
            argv, capture_output=True, text=True, env=env, cwd=REPO,
            preexec_fn=bind if one_cpu else None,
        )  # fmt: skip
        walls.append(time.perf_counter() - t0)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
        if proc.returncode != 0:
            raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode}):\n{proc.stderr}")
    return walls, cpus


def wall_times(argv: list[str], reps: int, **extra_env: str) -> list[float]:
    """Wall times in seconds of `reps` runs of a subprocess (`run_times`)."""
    return run_times(argv, reps, **extra_env)[0]


def bench_startup(adapter: str | None, reps: int) -> dict[str, float]:
    listing = [sys.executable, "-m", "workbench", "list"]
    if adapter:
        listing += ["--adapter", adapter]
    # The floor any wgpu program pays: import, load the native library, enumerate adapters.
    floor = "import wgpu; wgpu.gpu.enumerate_adapters_sync()"
    listing_s = wall_times(listing, reps)
    floor_s = wall_times([sys.executable, "-c", floor], reps)
    return {
        "workbench_list_s": statistics.median(listing_s),
        "workbench_list_min_s": min(listing_s),
        "wgpu_enumerate_s": statistics.median(floor_s),
        "reps": reps,
    }


def kernel_file(min_bytes: int = 48 * 1024) -> str:
    """Shipped kernel files, whole, one after another until `min_bytes` (the preamble first)."""
    files = sorted(
        SHIPPED.glob("*.wgsl"), key=lambda p: (p.name != "00_shared.wgsl", -p.stat().st_size)
    )
    text = ""
    while len(text.encode()) < min_bytes:
        for p in files:
            text += p.read_text(encoding="utf-8") + "\n"
            if len(text.encode()) >= min_bytes:
                break
    return text


def fifty_files(root: Path) -> Path:
    """A corpus of 50 files: the shipped preamble and config, and the shipped kernel files copied
    under new names (kernel names repeat across copies, which a corpus allows). Each copy starts
    with a comment naming it, so no two files have the same text, as in a real corpus: nothing
    read or compiled for one copy can be reused for another."""
    root.mkdir(parents=True, exist_ok=True)
    for p in SHIPPED.iterdir():
        if p.name in ("00_shared.wgsl", "wgslconfig.toml"):
            (root / p.name).write_bytes(p.read_bytes())
    kernels = sorted(p for p in SHIPPED.glob("*.wgsl") if p.name != "00_shared.wgsl")
    for k in range(49):
        src = kernels[k % len(kernels)]
        name = f"{k:02d}_{src.name}"
        (root / name).write_bytes(f"// {name}\n".encode() + src.read_bytes())
    return root


def median_ms(fn: Callable[[], Any], reps: int, remembered: bool = False) -> float:
    """Median ms of `reps` cold runs: the reader's caches emptied before each, and the
    reflections remembered on disk too unless `remembered`."""
    times = []
    for _ in range(reps):
        clear_cache()
        if not remembered:
            shutil.rmtree(reflected.folder(), ignore_errors=True)
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def with_path(tree: Path) -> str:
    """PYTHONPATH with `tree` first: its `workbench` wins, the rest (wgpu where it was installed
    aside, as on the GPU machine) is still found."""
    return os.pathsep.join(p for p in (str(tree), os.environ.get("PYTHONPATH")) if p)


def old_ms(tree: Path, what: str, path: Path, reps: int, timeout_s: float) -> float | None:
    """The old reader's median ms, or None when one run of it did not end within `timeout_s`."""
    try:
        proc = subprocess.run(
            [sys.executable, "-c", OLD_TIMER, str(tree), what, str(path), str(reps)],
            capture_output=True, text=True, timeout=timeout_s,
            env={**os.environ, "PYTHONPATH": with_path(tree)},
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        return None
    if proc.returncode != 0:
        raise SystemExit(f"the old reader failed:\n{proc.stderr}")
    return float(json.loads(proc.stdout))


def load_all(path: Path) -> None:
    for k in load_corpus(path).kernels:
        _ = k.module


def bench_reader(
    old_ref: str, reps: int, adapter: str | None, old_tree_given: Path | None = None
) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        # This process's remembered reflections go to a folder of the run's own.
        os.environ["XDG_CACHE_HOME"] = str(Path(tmp, "cache"))
        old_tree = old_tree_given or Path(tmp, "old")
        if old_tree_given is None:
            old_tree.mkdir()
            archive = subprocess.run(
                ["git", "archive", old_ref, "workbench"], cwd=REPO, capture_output=True, check=True
            ).stdout
            subprocess.run(["tar", "-x", "-C", str(old_tree)], input=archive, check=True)
        big = Path(tmp, "big.wgsl")
        text = kernel_file()
        big.write_text(text, encoding="utf-8")
        new_parse = median_ms(lambda: check(parse(text, "big.wgsl"), "big.wgsl"), reps)
        old_parse = old_ms(old_tree, "reflect", big, reps, 600)
        corpus = fifty_files(Path(tmp, "fifty"))
        new_load = median_ms(lambda: load_all(corpus), max(reps // 4, 3))
        new_load_warm = median_ms(lambda: load_all(corpus), max(reps // 4, 3), remembered=True)
        old_load = old_ms(old_tree, "load", corpus, max(reps // 4, 3), 600)
        spaces = Path(tmp, "spaces")
        spaces.mkdir()
        Path(spaces, "k.wgsl").write_text("requires" + " " * 10_000 + "\n", encoding="utf-8")
        new_spaces = median_ms(lambda: load_all(spaces), 3)
        old_spaces = old_ms(old_tree, "load", spaces, 1, 60)
        listing = [sys.executable, "-m", "workbench", "list", str(corpus)]
        if adapter:
            listing += ["--adapter", adapter]
        listed = bench_listing(listing, Path(tmp))
        cache = Path(tmp, "cache")
        old_env = {**os.environ, "PYTHONPATH": with_path(old_tree), "XDG_CACHE_HOME": str(cache)}
        t_old = []
        for _ in range(3):
            t0 = time.perf_counter()
            subprocess.run(listing, capture_output=True, env=old_env, cwd=old_tree, check=False)
            t_old.append(time.perf_counter() - t0)
    return {
        "old_ref": old_ref,
        "file_bytes": len(text.encode()),
        "parse_type_ms": new_parse,
        "old_reflect_ms": old_parse,
        "corpus_files": 50,
        "load_ms": new_load,
        "load_remembered_ms": new_load_warm,
        "old_load_ms": old_load,
        "requires_spaces_ms": new_spaces,
        "old_requires_spaces_ms": old_spaces,
        **listed,
        "old_list_s": statistics.median(t_old),
    }


# The floor any wgpu program pays: import, load the native library, enumerate adapters.
FLOOR = "import wgpu; wgpu.gpu.enumerate_adapters_sync()"


def bench_listing(listing: list[str], tmp: Path) -> dict[str, Any]:
    """`workbench list` of the corpus against the floor, medians of wall and CPU seconds: with
    every compile and reflection remembered, with none (on all the CPUs, and bound to one, which
    shows what compiling on several threads gains), each beside the floor measured the same way.

    The remembered listing and the floor are measured twice: with Python's bytecode as this
    environment has it, and with bytecode for every module (a cache folder of the run's own,
    `PYTHONPYCACHEPREFIX`, filled by an untimed run), as an installed package has it; where the
    environment keeps none for its libraries (numpy, tomlkit), compiling their sources at every
    start is counted in the first but in neither of an installed tool's runs."""
    # The listings share a cache folder of their own: the adapter's canaries are measured once
    # (by the first, untimed run); the remembered compiles and reflections (workbench.gpu.compiled,
    # workbench.wgsl.reflected) are removed before each cold run and kept for the warm ones.
    cache = tmp / "cache"
    run_times(listing, 1, XDG_CACHE_HOME=str(cache))
    cold: dict[bool, tuple[list[float], list[float]]] = {False: ([], []), True: ([], [])}
    for _ in range(3):
        for one_cpu in (False, True):
            (cache / "workbench" / "compiled.json").unlink(missing_ok=True)
            shutil.rmtree(cache / "workbench" / "reflected", ignore_errors=True)
            wall, cpu = run_times(listing, 1, one_cpu, XDG_CACHE_HOME=str(cache))
            cold[one_cpu][0].extend(wall)
            cold[one_cpu][1].extend(cpu)
    floor = [sys.executable, "-c", FLOOR]
    env = {"XDG_CACHE_HOME": str(cache)}
    bytecode = {
        **env,
        "PYTHONPYCACHEPREFIX": str(tmp / "pycache"),
        "PYTHONDONTWRITEBYTECODE": "",  # empty: bytecode is written
    }
    run_times(floor, 1, **bytecode)
    run_times(listing, 1, **bytecode)
    out: dict[str, Any] = {
        "cpus": len(os.sched_getaffinity(0)),
        "load_average": os.getloadavg()[0],
        "dont_write_bytecode": bool(os.environ.get("PYTHONDONTWRITEBYTECODE")),
    }
    runs = {
        "list": (listing, env),
        "adapter_start": (floor, env),
        "list_bytecode": (listing, bytecode),
        "adapter_start_bytecode": (floor, bytecode),
    }
    times: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in runs}
    for _ in range(5):  # in turn, so a change in the machine's load meets each alike
        for name, (argv, extra) in runs.items():
            wall, cpu = run_times(argv, 1, **extra)
            times[name][0].extend(wall)
            times[name][1].extend(cpu)
    for name, (wall, cpu) in times.items():
        out[f"{name}_s"] = statistics.median(wall)
        out[f"{name}_cpu_s"] = statistics.median(cpu)
    for one_cpu, name in ((False, "list_cold"), (True, "list_cold_one_cpu")):
        out[f"{name}_s"] = statistics.median(cold[one_cpu][0])
        out[f"{name}_cpu_s"] = statistics.median(cold[one_cpu][1])
    out["load_average_end"] = os.getloadavg()[0]
    return out


def print_reader(r: dict[str, Any]) -> None:
    def ratio(new: float, old: float | None) -> str:
        return "old did not finish" if old is None else f"new/old {new / old:.2f}x"

    old_spaces = r["old_requires_spaces_ms"]
    print(f"reader (old: {r['old_ref']}, token scanner, module-scope declarations only):")
    print(
        f"  parse + type {r['file_bytes'] / 1024:.0f} KB: {r['parse_type_ms']:.1f} ms "
        f"(old reflect {r['old_reflect_ms']:.1f} ms; {ratio(r['parse_type_ms'], r['old_reflect_ms'])})"
    )
    print(
        f"  load a {r['corpus_files']}-file corpus (split, reflect every kernel): "
        f"{r['load_ms']:.0f} ms (old {r['old_load_ms']:.0f} ms; {ratio(r['load_ms'], r['old_load_ms'])}); "
        f"{r['load_remembered_ms']:.0f} ms with the reflections remembered"
    )
    print(
        f"  `requires` + 10,000 spaces: {r['requires_spaces_ms']:.1f} ms "
        f"(old: {'> 60 s, stopped' if old_spaces is None else f'{old_spaces:.0f} ms'})"
    )
    print(
        f"  `workbench list` of the {r['corpus_files']} files, compiles and reflections remembered: "
        f"{r['list_s']:.2f} s (old {r['old_list_s']:.2f} s)"
    )
    print(
        f"  `workbench list` against the floor (importing wgpu, enumerating adapters), medians, "
        f"{r['cpus']} CPUs, load average {r['load_average']:.1f} to {r['load_average_end']:.1f}:"
    )
    print(f"    {'':44} {'wall':>7} {'over':>7}   {'CPU':>7} {'over':>7}")

    def row(what: str, key: str, floor: str) -> None:
        wall, cpu = r[f"{key}_s"], r[f"{key}_cpu_s"]
        fw, fc = r[f"{floor}_s"], r[f"{floor}_cpu_s"]
        print(f"    {what:44} {wall:6.2f}s {wall - fw:+6.2f}s   {cpu:6.2f}s {cpu - fc:+6.2f}s")

    row("floor", "adapter_start", "adapter_start")
    row("remembered", "list", "adapter_start")
    row("nothing remembered", "list_cold", "adapter_start")
    row("nothing remembered, bound to one CPU", "list_cold_one_cpu", "adapter_start")
    bytecode = "the environment's own bytecode"
    if r["dont_write_bytecode"]:
        bytecode += " (PYTHONDONTWRITEBYTECODE is set: none written for a library without it)"
    print(f"    above: {bytecode}; below: bytecode for every module (as installed)")
    row("floor", "adapter_start_bytecode", "adapter_start_bytecode")
    row("remembered", "list_bytecode", "adapter_start_bytecode")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--adapter", help="adapter selector, as for `workbench --adapter`")
    parser.add_argument("--n", default="256,1048576", help="element counts, comma-separated")
    parser.add_argument("--seconds", type=float, default=2.0, help="timing budget per measurement")
    parser.add_argument("--startup-reps", type=int, default=5, help="runs of `workbench list`")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--old-ref", default=OLD_REF, help="commit whose reader is compared")
    parser.add_argument(
        "--old-tree",
        type=Path,
        help="a folder holding the old commit's `workbench` package (where git is not available)",
    )
    parser.add_argument("--reader-reps", type=int, default=20, help="repetitions of a read")
    parser.add_argument("--only", choices=["reader"], help="run only the reader's part")
    args = parser.parse_args()

    if args.only == "reader":
        reader = bench_reader(args.old_ref, args.reader_reps, args.adapter, args.old_tree)
        if args.json:
            print(json.dumps({"reader": reader}, indent=2))
        else:
            print_reader(reader)
        return
    adapter = choose_adapter(args.adapter)
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "double.wgsl").write_text(KERNEL)
        session = Session(load_corpus(tmp), GpuContext(adapter))
        rows = [bench_dispatch(session, int(n), args.seconds) for n in args.n.split(",")]
    startup = bench_startup(args.adapter, args.startup_reps)
    reader = bench_reader(args.old_ref, args.reader_reps, args.adapter, args.old_tree)
    result = {
        "adapter": adapter.label,
        "type": adapter.type,
        "dispatch": rows,
        "startup": startup,
        "reader": reader,
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"adapter: {adapter.label} [{adapter.type}]")
    print("per-dispatch wall time, median µs (p90) of back-to-back calls:")
    print(
        f"{'n':>10} {'session':>16} {'raw wgpu':>16} {'dispatch only':>16} {'sess/raw':>9} {'sess/disp':>9}"
    )
    for r in rows:
        m, p = r["median_us"], r["p90_us"]
        cells = [f"{m[k]:8.1f} ({p[k]:5.0f})" for k in ("session", "raw", "dispatch")]
        print(
            f"{r['n']:>10} {cells[0]:>16} {cells[1]:>16} {cells[2]:>16} "
            f"{r['session_over_raw']:>8.2f}x {r['session_over_dispatch']:>8.2f}x"
        )
    print(
        f"startup: `workbench list` {startup['workbench_list_s'] * 1e3:.0f} ms median of "
        f"{startup['reps']}, min {startup['workbench_list_min_s'] * 1e3:.0f} ms (importing wgpu "
        f"and enumerating adapters alone: {startup['wgpu_enumerate_s'] * 1e3:.0f} ms)"
    )
    print_reader(reader)


if __name__ == "__main__":
    main()
