"""`workbench bench` on the real CPU adapter (lavapipe), with no timed assertions: only orderings
with generous margins, the fields of the JSON, and verdicts."""

from __future__ import annotations

import json
import re
from dataclasses import replace

import numpy as np

from benchmarks.bench_kernels import BEGIN, END, SECTION, write_docs
from tests.engine.conftest import run_main, write_corpus
from workbench.bench.ab import ab
from workbench.bench.report import CPU_TIMES
from workbench.bench.sweep import replan, sweep
from workbench.gpu.adapters import list_adapters
from workbench.gpu.device import GpuContext
from workbench.gpu.roofline import cached, roofline
from workbench.gpu.timing import Budget, time_back_to_back
from workbench.session import Session
from workbench.wgsl.corpus import SHIPPED, load_corpus

# A dependent chain of `steps` multiply-adds per element: four times the steps, about four times
# the time, whatever the adapter.
LOOP = """
override steps: u32 = 256u;
@group(0) @binding(0) var<storage, read_write> out: array<f32>;
@group(0) @binding(1) var<uniform> n: u32;
@compute @workgroup_size(64)
fn chain(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i >= n) { return; }
    var x = f32(i) * 1e-6;
    for (var k = 0u; k < steps; k++) { x = x * 0.999 + 0.001; }
    out[i] = x;
}
"""

# gelu_inplace with the shipped binding signature, so the shipped spec checks it; `part` = 2 skips
# every other element: less work (faster) and wrong.
GELU = """
const WG: u32 = 256u;
override part: u32 = 1u;
@group(0) @binding(0) var<storage, read_write> x: array<f32>;
@group(0) @binding(1) var<uniform> n: u32;
fn gelu(v: f32) -> f32 {
    let vc = clamp(v, -100.0, 100.0);
    let t = tanh(0.7978845608 * (vc + 0.044715 * vc * vc * vc));
    return select(0.5 * v * (1.0 + t), 0.0, v < -100.0);
}
@compute @workgroup_size(WG, 1, 1)
fn gelu_inplace(@builtin(global_invocation_id) gid: vec3<u32>,
                @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.y * nwg.x * WG + gid.x;
    if (i >= n || i % part != 0u) { return; }
    x[i] = gelu(x[i]);
}
"""

SMALL = {"seq": 64, "d_ff": 512}


def test_four_times_the_loop_takes_longer(session: Session, tmp_path) -> None:
    own = Session(load_corpus(write_corpus(tmp_path, {"loop.wgsl": LOOP})), session.gpu)
    base = own.case("chain", dims={"n": 4096})
    quick = replace(base, overrides={"steps": 500})
    slow = replace(base, overrides={"steps": 2000})
    t1, t4 = own.time_cases([quick, slow], Budget(ms=150, warmup_ms=20))
    assert t1.reps >= 5 and t4.reps >= 5
    # Minima, not medians: on a shared machine another process can pause any pass (lavapipe's
    # timestamps count the pause), but nothing makes a pass faster than its work allows.
    assert t4.min_ms > 1.8 * t1.min_ms, (t1.samples_ms, t4.samples_ms)
    assert t1.method == ("timestamp" if session.gpu.has_timestamps else "wall")
    for t in (t1, t4):
        assert t.min_ms <= t.p10_ms <= t.median_ms <= t.p90_ms
        assert t.std_ms >= 0 and t.min_ms <= t.mean_ms


def test_the_warm_up_is_timed_and_the_staging_buffer_freed(session: Session) -> None:
    case = session.case("gelu_inplace", dims=SMALL)
    run = session.run(case)  # reads the output back through the staging buffer
    assert session.gpu.staging_bytes >= run.outputs["x"].nbytes
    cold = session.time_cases([case], Budget(ms=5, warmup_ms=0))[0]
    warm = session.time_cases([case], Budget(ms=5, warmup_ms=200))[0]
    assert cold.warmup == 1  # the compile pass alone
    assert warm.warmup > cold.warmup  # at least one submission of warm-up rounds besides
    # A large read-back buffer left alive makes every submission slow on some drivers (35 ms on
    # the H100 for 128 MiB): timing frees it, and only the timestamps' small one comes back.
    assert session.gpu.staging_bytes < run.outputs["x"].nbytes


def test_a_bigger_budget_gives_more_reps(session: Session) -> None:
    case = session.case("gelu_inplace", dims=SMALL)
    # Far apart: on a shared machine the estimate of one pass moves with the load, so budgets
    # close together may not give ordered repetitions, but a hundredfold budget does.
    reps = [session.time_cases([case], Budget(ms=ms, warmup_ms=0))[0].reps for ms in (5, 500)]
    assert reps[1] > reps[0], reps


def test_a_wrong_variant_fails_and_is_never_best(session: Session, tmp_path) -> None:
    own = Session(load_corpus(write_corpus(tmp_path, {"gelu.wgsl": GELU})), session.gpu)
    base = own.case("gelu_inplace", dims=SMALL)
    assert base.spec is not None  # checked against the shipped float64 reference
    res = sweep(
        own,
        lambda ov: replan(own, base, ov),
        "part",
        [2, 1],
        Budget(ms=20, warmup_ms=5),
        None,
    )
    by_label = {r.label: r for r in res.results}
    wrong, right = by_label["part=2"], by_label["part=1"]
    assert wrong.verdict == "fail" and "FAIL" in wrong.problem
    assert wrong.timing is None and not wrong.usable
    assert right.verdict == "pass" and right.usable
    assert res.best is right and res.results[0] is right and res.results[-1] is wrong
    assert res.to_json()["best"] == "part=1"


def test_identical_implementations_show_no_difference(session: Session) -> None:
    other = Session(load_corpus(SHIPPED), session.gpu)
    a = session.case("gelu_inplace", dims=SMALL)
    b = other.case("gelu_inplace", dims=SMALL)
    res = ab(session, ("A", a), ("B", b), Budget(ms=300, warmup_ms=20), None)
    assert res.a.verdict == res.b.verdict == "pass"
    assert res.stats is not None and res.stats.pairs >= 5
    assert not res.stats.beyond_noise, res.stats.summary()
    assert "no difference beyond noise" in res.stats.summary()


def test_a_real_difference_is_beyond_noise(session: Session, tmp_path) -> None:
    own = Session(load_corpus(write_corpus(tmp_path, {"loop.wgsl": LOOP})), session.gpu)
    base = own.case("chain", dims={"n": 4096})
    # A budget for dozens of pairs: a pair is only spoilt when a pause longer than three quick
    # passes lands on its quick pass, and the verdict needs most pairs unspoilt, not all.
    res = ab(
        own,
        ("A", replace(base, overrides={"steps": 500})),
        ("B", replace(base, overrides={"steps": 2000})),
        Budget(ms=600, warmup_ms=20),
        None,
    )
    assert res.a.verdict == res.b.verdict == "ran", (res.a.problem, res.b.problem)  # ad hoc
    assert res.stats is not None and res.stats.pairs >= 5
    assert res.stats.beyond_noise and res.stats.verdict() == "B is slower", res.stats.summary()


def test_the_roofline_is_measured_once_per_adapter(session: Session) -> None:
    roof = roofline(session.gpu, Budget(ms=10, warmup_ms=0), copy_bytes=8 << 20)
    again = roofline(GpuContext(session.adapter))  # another context, same adapter: the cache
    assert again is roof and cached(session.gpu) is roof
    assert roof.bandwidth_gb_s > 0 and roof.peak_gflop_s > 0 and roof.ridge > 0
    assert {p.kernel for p in roof.copies} == {"copy_f32", "copy_vec4", "copy_vec4_x4"}
    assert roof.bandwidth_probe.rate == max(p.rate for p in roof.copies)
    assert "MiB read" in roof.bandwidth_probe.size and "threads" in roof.fma.size
    others = [a for a in list_adapters() if a.index != session.adapter.index]
    for a in others:  # measuring one adapter fills no other adapter's entry
        assert cached(GpuContext(a)) is None


def test_bench_json_has_every_field() -> None:
    proc = run_main(
        "bench", "gelu_inplace", "--dim", "seq=64", "--dim", "d_ff=512", "--ms", "20",
        "--warmup-ms", "5", "--json",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert set(out) >= {"adapter", "budget", "flush_bytes", "roofline", "results", "clock_check"}
    (r,) = out["results"]
    assert r["verdict"] == "pass" and r["kernel"] == "gelu_inplace"
    assert set(r["timing"]) >= {
        "median_ms", "p10_ms", "p90_ms", "min_ms", "mean_ms", "std_ms", "reps", "warmup", "drift",
        "method", "detail",
    }  # fmt: skip
    assert set(r["figures"]) >= {
        "gb_per_s", "gflop_per_s", "intensity_flop_per_byte", "frac_bandwidth", "frac_compute",
        "binds", "bandwidth_ceiling_gb_s", "compute_ceiling_gflop_s",
    }  # fmt: skip
    assert r["figures"]["binds"] in ("memory", "compute")
    assert any(n.startswith("fits in cache") for n in r["notes"])
    assert set(out["roofline"]) >= {"bandwidth_gb_s", "peak_gflop_s", "copies", "fma", "method"}
    check = out["clock_check"]
    assert check is not None and set(check) >= {"timestamp_ms", "wall_ms", "agree", "tolerance"}


def test_bench_text_marks_cpu_adapter_times() -> None:
    """On a CPU adapter the bench says its times are the CPU's; rates carry their own prefix."""
    on_cpu = Session.open().on_cpu
    proc = run_main(
        "bench", "gelu_inplace", "--dim", "seq=2", "--dim", "d_ff=64", "--ms", "5",
        "--warmup-ms", "1",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    head = proc.stdout.splitlines()[0]
    assert (CPU_TIMES in head) is on_cpu
    rate = next(line for line in proc.stdout.splitlines() if line.strip().startswith("rate"))
    # No rate may read as zero ("0.0 B/s"); "30.0 MB/s" is a rate like any other.
    zero = re.search(r"(?<![\d.])0(\.0+)? [kMGT]?(B|FLOP)/s", rate)
    assert zero is None and re.search(r"\d [kMGT]?B/s", rate), rate


def test_bench_refuses_bad_arguments() -> None:
    for args, needle in (
        (["--ms", "0"], "--ms must be > 0"),
        (["--sweep", "nope=1,2"], "no override constant 'nope'"),
        (["--sweep", "wg"], "--sweep expects NAME=V1,V2"),
        (["--vs", "/no/such/folder"], "does not exist"),
    ):
        proc = run_main("bench", "gelu_inplace", *args)
        assert proc.returncode == 2, (args, proc.stderr)
        assert needle in proc.stderr and len(proc.stderr.strip().splitlines()) <= 2, proc.stderr


class _NoTimestamps(GpuContext):
    """The same adapter, timed as one without timestamp queries is (the host clock)."""

    @property
    def has_timestamps(self) -> bool:
        return False


def test_without_timestamps_the_wall_clock_times_batches(session: Session, tmp_path) -> None:
    gpu = _NoTimestamps(session.adapter)
    own = Session(load_corpus(write_corpus(tmp_path, {"loop.wgsl": LOOP})), gpu)
    base = own.case("chain", dims={"n": 4096})
    # Longer passes than with timestamps: the host clock also sees each submission's overhead.
    quick = replace(base, overrides={"steps": 2000})
    slow = replace(base, overrides={"steps": 8000})
    t1, t4 = own.time_cases([quick, slow], Budget(ms=150, warmup_ms=20))
    assert t1.method == t4.method == "wall"
    assert "wall clock over batches of" in t1.detail
    assert t1.reps == len(t1.samples_ms) * t1.passes_per_sample >= 5
    assert t4.min_ms > 1.8 * t1.min_ms, (t1.samples_ms, t4.samples_ms)  # minima: see above
    # With a flush, its own time (measured alone) is taken out of each batch.
    (flushed,) = own.time_cases([quick], Budget(ms=20, warmup_ms=0, flush=True))
    assert flushed.method == "wall" and "cache flushed before each pass" in flushed.detail
    assert all(s >= 0 for s in flushed.samples_ms)
    assert own.clock_check(quick, t1.median_ms) is None  # nothing to cross-check against


def test_sweep_on_the_command_line_marks_the_best_and_the_failing(tmp_path) -> None:
    corpus = write_corpus(tmp_path, {"gelu.wgsl": GELU})
    proc = run_main(
        "bench", "gelu_inplace", "--corpus", str(corpus), "--dim", "seq=64", "--dim", "d_ff=512",
        "--sweep", "part=2,1", "--ms", "20", "--warmup-ms", "5",
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr  # a variant failed its check
    lines = proc.stdout.splitlines()
    best = next(ln for ln in lines if "★" in ln)
    assert "part=1" in best and "PASS" in best
    wrong = next(ln for ln in lines if "part=2" in ln)
    assert "FAIL" in wrong and "not timed" in wrong and "★" not in wrong
    assert lines.index(best) < lines.index(wrong)
    assert any(ln.startswith("clock check: ") for ln in lines)


# The workgroup size is an override: an ad-hoc grid is ceil(n / workgroup size), so it must follow.
FILL = """
override wg: u32 = 64u;
@group(0) @binding(0) var<storage, read_write> out: array<f32>;
@group(0) @binding(1) var<uniform> n: u32;
@compute @workgroup_size(wg)
fn fill(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x < n) { out[gid.x] = f32(gid.x) + 0.5; }
}
"""


def test_a_sweep_of_the_workgroup_size_replans_the_grid(session: Session, tmp_path) -> None:
    own = Session(load_corpus(write_corpus(tmp_path, {"fill.wgsl": FILL})), session.gpu)
    base = own.case("fill", dims={"n": 4096})
    assert base.grid == (64, 1, 1)
    res = sweep(
        own,
        lambda ov: replan(own, base, ov),
        "wg",
        [32, 128, 256],
        Budget(ms=10, warmup_ms=0),
        None,
    )
    grids = {r.label: r.case.grid for r in res.results}
    assert grids == {"wg=32": (128, 1, 1), "wg=128": (32, 1, 1), "wg=256": (16, 1, 1)}
    want = np.arange(4096, dtype=np.float64) + 0.5
    for r in res.results:
        assert r.verdict == "ran" and r.usable
        out = own.run(r.case).outputs["out"]
        np.testing.assert_array_equal(out.astype(np.float64), want)  # every element written


# Adds one to each element in place: after k dispatches in order from zeros, every element is k.
INCREMENT = """
@group(0) @binding(0) var<storage, read_write> x: array<f32>;
@group(0) @binding(1) var<uniform> n: u32;
@compute @workgroup_size(64)
fn increment(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x < n) { x[gid.x] = x[gid.x] + 1.0; }
}
"""


def test_back_to_back_dispatches_each_batch_in_order_from_restored_inputs(
    session: Session, tmp_path
) -> None:
    own = Session(load_corpus(write_corpus(tmp_path, {"inc.wgsl": INCREMENT})), session.gpu)
    case = own.case("increment", dims={"n": 1000}, inputs={"x": "zeros"})
    bound = own.bind(case)
    buf = bound.buffers["x"][0]
    restores = []

    def restore() -> None:
        restores.append(1)
        own.gpu.device.queue.write_buffer(buf, 0, np.zeros(1000, np.float32).tobytes())

    try:
        t = time_back_to_back(
            own.gpu, bound.encode_batch, 7, samples=3, warmup=2, before_batch=restore
        )
        x = np.frombuffer(own.gpu.read_back({"x": (buf, 4000)})["x"], np.float32)
    finally:
        bound.release()
    # Seven dispatches after the last restore, each seeing the one before: no more, no fewer.
    assert np.array_equal(x, np.full(1000, 7.0, np.float32)), np.unique(x)
    assert len(restores) == 2 + 3  # before every batch, warm-up batches included
    assert t.method == ("back-to-back" if session.gpu.has_timestamps else "back-to-back wall")
    assert t.passes_per_sample == 7 and len(t.samples_ms) == 3 and t.reps == 21
    assert t.warmup == 14 and "7 back-to-back dispatches in one pass" in t.detail
    assert all(s >= 0 for s in t.samples_ms)


def test_back_to_back_four_times_the_loop_takes_longer(session: Session, tmp_path) -> None:
    own = Session(load_corpus(write_corpus(tmp_path, {"loop.wgsl": LOOP})), session.gpu)
    base = own.case("chain", dims={"n": 4096})
    quick = own.time_back_to_back(replace(base, overrides={"steps": 500}), 8, samples=3)
    slow = own.time_back_to_back(replace(base, overrides={"steps": 2000}), 8, samples=3)
    assert slow.min_ms > 1.8 * quick.min_ms, (
        quick.samples_ms,
        slow.samples_ms,
    )  # minima: see above
    gpu = _NoTimestamps(session.adapter)
    walled = Session(own.corpus, gpu).time_back_to_back(base, 4, samples=2)
    assert walled.method == "back-to-back wall" and walled.reps == 8
    assert "wall clock around 4 back-to-back dispatches" in walled.detail


def test_write_docs_fills_only_its_own_section(tmp_path) -> None:
    """Two generated sections in one file: writing one keeps the other's generated part and the
    prose of both; a missing section is added at the end."""
    doc = tmp_path / "b.md"
    doc.write_text(
        f"# B\n\n{SECTION}\n\n{BEGIN}\nold kernels\n{END}\n\nkernel prose\n\n"
        f"## Attention\n\n{BEGIN}\nold attention\n{END}\n\nattention prose\n"
    )
    write_docs(doc, f"{BEGIN}\nnew attention\n{END}", "## Attention")
    text = doc.read_text()
    assert "old kernels" in text and "new attention" in text and "old attention" not in text
    assert "kernel prose" in text and "attention prose" in text
    write_docs(doc, f"{BEGIN}\nnew kernels\n{END}")
    text = doc.read_text()
    assert "new kernels" in text and "old kernels" not in text and "new attention" in text
    write_docs(doc, f"{BEGIN}\nthird\n{END}", "## Third")
    assert doc.read_text().rstrip().endswith(f"## Third\n\n{BEGIN}\nthird\n{END}")
