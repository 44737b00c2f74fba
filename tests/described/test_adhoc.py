"""Ad-hoc kernels (no description): a shipped name with another ABI, --grid, the 2-D fold refused
for kernels that do not read num_workgroups, default-less overrides sizing the workgroup and a
workgroup array, atomics holding f32 bits, and bindings smaller than the kernel indexes."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from workbench.session import Session

from .corpora import MATMUL, write

OTHER_ABI = """
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read_write> b: array<f32>;
@compute @workgroup_size(64)
fn swiglu_combine(@builtin(global_invocation_id) g: vec3<u32>) {
    if (g.x < arrayLength(&b)) { b[g.x] = 2.0 * a[g.x]; }
}
"""

BY_GLOBAL_ID = """
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read_write> b: array<f32>;
@compute @workgroup_size(64)
fn twice(@builtin(global_invocation_id) g: vec3<u32>) {
    if (g.x < arrayLength(&b)) { b[g.x] = 2.0 * a[g.x]; }
}
"""

BY_NUM_WORKGROUPS = """
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read_write> b: array<f32>;
@compute @workgroup_size(64)
fn twice_folded(@builtin(workgroup_id) w: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                @builtin(local_invocation_index) l: u32) {
    let i = (w.y * nwg.x + w.x) * 64u + l;
    if (i < arrayLength(&b)) { b[i] = 2.0 * a[i]; }
}
"""

BLOCK_SUM = """
override wg_size: u32;
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> sums: array<f32>;
var<workgroup> s: array<f32, wg_size>;

// One sum per block of wg_size elements, reduced in workgroup memory.
@compute @workgroup_size(wg_size)
fn block_sum(@builtin(workgroup_id) w: vec3<u32>, @builtin(local_invocation_id) l: vec3<u32>) {
    s[l.x] = x[w.x * wg_size + l.x];
    workgroupBarrier();
    for (var half = wg_size / 2u; half > 0u; half /= 2u) {
        if (l.x < half) { s[l.x] += s[l.x + half]; }
        workgroupBarrier();
    }
    if (l.x == 0u) { sums[w.x] = s[0]; }
}
"""

CAS_ADD = """
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> total: array<atomic<u32>>;
@compute @workgroup_size(64)
fn cas_sum(@builtin(global_invocation_id) g: vec3<u32>) {
    if (g.x >= arrayLength(&x)) { return; }
    var old = atomicLoad(&total[0]);
    loop {
        let res = atomicCompareExchangeWeak(&total[0], old, bitcast<u32>(bitcast<f32>(old) + x[g.x]));
        if (res.exchanged) { break; }
        old = res.old_value;
    }
}
"""


def test_shipped_name_with_other_abi_runs_ad_hoc_with_a_note(tmp_path: Path, cli) -> None:
    root = write(tmp_path, {"mine.wgsl": OTHER_ABI})
    res = cli("run", "swiglu_combine", "--corpus", str(root), "--reps", "0", "--json")
    assert res.rc == 0, res.err
    run = res.json()
    assert run["spec"] is False
    (note,) = [n for n in run["notes"] if "shipped kernel" in n]
    assert "runs ad hoc" in note and "binding signature" in note
    res = cli("check", "--all", "--corpus", str(root), "--what", "compare,evidence,determinism")
    # Ad hoc: nothing compared with a reference, so not a pass (exit 1), and said so.
    assert res.rc == 1, res.out + res.err
    assert res.out.strip().splitlines()[-1].startswith("0 pass · 1 ran")


def test_grid_sets_the_workgroup_counts(tmp_path: Path, cli) -> None:
    root = write(tmp_path, {"matmul.wgsl": MATMUL})
    m, n, k = 40, 48, 24
    session = Session.open(corpus=root)
    args = {
        "sizes": {"A": m * k, "B": k * n, "C": m * n},
        "sets": {"dims.x": m, "dims.y": n, "dims.z": k},
    }
    case = session.case("matmul", grid=(3, 3, 1), **args)
    assert case.grid == (3, 3, 1)
    run = session.run(case)
    a = case.inputs["A"].astype(np.float64).reshape(m, k)
    b = case.inputs["B"].astype(np.float64).reshape(k, n)
    np.testing.assert_allclose(run.outputs["C"].reshape(m, n), a @ b, rtol=1e-5, atol=1e-5)
    flags = [f"--size=A={m * k}", f"--size=B={k * n}", f"--size=C={m * n}"]
    flags += [f"--set=dims.x={m}", f"--set=dims.y={n}", f"--set=dims.z={k}"]
    res = cli("check", "matmul", "--corpus", str(root), *flags, "--grid", "3,3,1", "--json")
    assert res.rc == 1 and res.json()["ok"] is False, res.err  # ran: nothing compared
    (evidence,) = [r for r in res.json()["results"] if r["kind"] == "evidence"]
    assert evidence["details"]["unwritten"] == 0 and res.json()["verdict"] == "ran"
    # The default 1-D grid covers one row of tiles only: the rest is reported unwritten.
    res = cli("check", "matmul", "--corpus", str(root), *flags, "--what", "evidence", "--json")
    (evidence,) = [r for r in res.json()["results"] if r["kind"] == "evidence"]
    assert evidence["details"]["warning"] and evidence["details"]["unwritten"] > 0
    # 1 to 3 counts, as workbench.toml takes them (missing ones are 1), hex accepted.
    for same in ("3,3", "0x3,3", "3,0x3,1"):
        res = cli("run", "matmul", "--corpus", str(root), f"--grid={same}", "--reps", "0", "--json")
        assert res.rc in (0, 1) and res.json()["grid"] == [3, 3, 1], res.err
    for bad in ("3,x,1", "-1,1,1", "1,2,3,4", "1.5", "3,,1"):
        res = cli("run", "matmul", "--corpus", str(root), f"--grid={bad}")
        assert res.rc == 2 and "--grid" in res.err and len(res.err.splitlines()) == 1


def test_2d_fold_only_for_kernels_reading_num_workgroups(tmp_path: Path, cli) -> None:
    root = write(tmp_path, {"g.wgsl": BY_GLOBAL_ID, "w.wgsl": BY_NUM_WORKGROUPS})
    n = 70_000 * 64
    res = cli("run", "twice", "--corpus", str(root), "--dim", f"n={n}", "--reps", "0")
    assert res.rc == 2 and len(res.err.splitlines()) == 1
    assert "does not read @builtin(num_workgroups)" in res.err and "--grid" in res.err
    session = Session.open(corpus=root)
    case = session.case("twice_folded", dims={"n": n})
    assert session.limit_refusal(case) is None
    run = session.run(case)
    assert run.grid == (65535, 2, 1)
    np.testing.assert_array_equal(run.outputs["b"], 2 * case.inputs["a"])


def test_default_less_override_sizes_workgroup_and_array(tmp_path: Path, cli) -> None:
    root = write(tmp_path, {"sum.wgsl": BLOCK_SUM})
    res = cli("run", "block_sum", "--corpus", str(root), "--reps", "0")
    assert res.rc == 2 and len(res.err.splitlines()) == 1 and "wg_size" in res.err
    res = cli("list", str(root), "--json")
    assert "array length" not in res.out
    session = Session.open(corpus=root)
    case = session.case("block_sum", dims={"n": 1024}, overrides={"wg_size": 128})
    assert case.grid == (8, 1, 1)
    run = session.run(case)
    x = case.inputs["x"].astype(np.float64).reshape(8, 128)
    np.testing.assert_allclose(run.outputs["sums"][:8], x.sum(axis=1), rtol=1e-5, atol=1e-5)
    res = cli(
        "run",
        "block_sum",
        "--corpus",
        str(root),
        "--override",
        "wg_size=64",
        "--reps",
        "0",
        "--json",
    )
    assert res.rc == 0, res.err
    assert res.json()["grid"] == [16, 1, 1] and res.json()["workgroup_size"] == [64, 1, 1]
    res = cli("run", "block_sum", "--corpus", str(root), "--override", "nope=3")
    assert res.rc == 2 and "no override nope" in res.err


def test_atomics_holding_f32_bits_are_shown_as_f32(tmp_path: Path) -> None:
    root = write(tmp_path, {"cas.wgsl": CAS_ADD})
    session = Session.open(corpus=root)
    case = session.case("cas_sum", dims={"n": 256}, sizes={"total": 1})
    assert case.plan("total").dtype == "float32"
    run = session.run(case)
    expected = case.inputs["x"].astype(np.float64).sum()
    np.testing.assert_allclose(run.outputs["total"][0], expected, rtol=1e-4, atol=1e-4)


def test_binding_smaller_than_indexed_is_a_warning(tmp_path: Path, cli) -> None:
    root = write(tmp_path, {"g.wgsl": BY_GLOBAL_ID})
    res = cli("run", "twice", "--corpus", str(root), "--size", "a=100", "--reps", "0", "--json")
    assert res.rc == 0
    (note,) = [n for n in res.json()["notes"] if "a holds 100" in n]
    assert "n = 1,024" in note
