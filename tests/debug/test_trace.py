"""Traces of one invocation on the real adapter, against NumPy replays of the same invocation
written from the kernels' math (f32/f16 arithmetic step by step), and outputs bit-identical with
and without the instrumentation."""

from __future__ import annotations

import json

import numpy as np
import pytest

from workbench.errors import UserError
from workbench.session import Session
from workbench.workgroups.breaks import break_at
from workbench.workgroups.debug import Step, invocation_of, trace

f32 = np.float32


def _seen(steps: list[Step]) -> list[tuple[str, str, object]]:
    return [(st.kind, st.name, st.value) for st in steps]


def test_loop_with_early_break_replays_step_by_step(debug_session: Session):
    x = np.random.default_rng(1).uniform(0.5, 1.5, 1024).astype(np.float32)
    case = debug_session.case("early_break", inputs={"x": x})
    t = trace(debug_session, case, (5, 0, 0))
    i, n = 5, 1024
    want: list[tuple[str, str, object]] = [("assign", "i", i), ("assign", "n", n)]
    want.append(("assign", "acc", 0.0))
    acc, k = f32(0), 0
    for k in range(16):
        want.append(("loop", "k", k))
        v = x[(i + k) % n]
        want += [("load", "x[(i + k) % n]", float(v)), ("assign", "v", float(v))]
        if f32(acc + v) > 4.0:
            want.append(("branch", "if", 0))
            break
        want.append(("branch", "if", 1))
        acc = f32(acc + f32(v * f32(0.5)))
        want.append(("assign", "acc", float(acc)))
    want += [("loop", "end", k + 1), ("store", "y[i]", float(acc))]
    assert 0 < k < 15, "the inputs must make the loop break early"
    assert _seen(t.steps) == want
    assert [st.index for st in t.steps if st.kind == "loop" and st.name == "k"] == list(
        range(k + 1)
    )
    assert t.steps[-1].index == i and (t.steps[-1].line, t.steps[-1].col) == (16, 5)
    assert t.outputs_identical and not t.truncated
    assert [st.step for st in t.steps] == list(range(len(want)))


def test_helper_called_twice_has_params_returns_and_depth(debug_session: Session):
    x = np.linspace(-2, 2, 1024, dtype=np.float32)
    case = debug_session.case("helper", inputs={"x": x})
    t = trace(debug_session, case, (9, 0, 0))

    def scale(v: np.float32, k: np.float32) -> tuple[np.float32, np.float32]:
        s = f32(f32(v * k) + f32(1))
        return s, f32(s * s)

    v0 = x[9]
    s1, a = scale(v0, f32(0.5))
    s2, b = scale(a, f32(-0.25))
    want = [
        ("load", "x[gid.x]", float(v0), 0),
        ("param", "v", float(v0), 1),
        ("param", "k", 0.5, 1),
        ("assign", "s", float(s1), 1),
        ("return", "return", float(a), 1),
        ("assign", "a", float(a), 0),
        ("param", "v", float(a), 1),
        ("param", "k", -0.25, 1),
        ("assign", "s", float(s2), 1),
        ("return", "return", float(b), 1),
        ("assign", "b", float(b), 0),
        ("store", "y[gid.x]", float(f32(a - b)), 0),
    ]
    assert [(st.kind, st.name, st.value, st.depth) for st in t.steps] == want
    assert [st.line for st in t.steps if st.kind == "param"] == [4, 4, 4, 4]
    assert t.outputs_identical


def test_tiled_matmul_with_barriers_replays_the_tiles(debug_session: Session):
    rng = np.random.default_rng(2)
    a = rng.standard_normal(1024).astype(np.float32)
    b = rng.standard_normal(1024).astype(np.float32)
    case = debug_session.case("matmul", inputs={"a": a, "b": b}, grid=(4, 4, 1))
    col, row = 11, 6
    t = trace(debug_session, case, (col, row, 0))
    lx, ly = col % 8, row % 8
    want: list[tuple[str, str, object, int | None]] = [
        ("assign", "row", row, None),
        ("assign", "col", col, None),
        ("assign", "acc", 0.0, None),
    ]
    acc = f32(0)
    for tile in range(4):
        av, bv = a[row * 32 + tile * 8 + lx], b[(tile * 8 + ly) * 32 + col]
        want += [
            ("loop", "t", tile, tile),
            ("load", "a[row * N + t * T + lid.x]", float(av), row * 32 + tile * 8 + lx),
            ("store", "ta[lid.y * T + lid.x]", float(av), ly * 8 + lx),
            ("load", "b[(t * T + lid.y) * N + col]", float(bv), (tile * 8 + ly) * 32 + col),
            ("store", "tb[lid.y * T + lid.x]", float(bv), ly * 8 + lx),
            ("barrier", "workgroupBarrier", None, None),
        ]
        for k in range(8):
            ta = a[row * 32 + tile * 8 + k]
            tb = b[(tile * 8 + k) * 32 + col]
            acc = f32(acc + f32(ta * tb))
            want += [
                ("loop", "k", k, k),
                ("load", "ta[lid.y * T + k]", float(ta), ly * 8 + k),
                ("load", "tb[k * T + lid.x]", float(tb), k * 8 + lx),
                ("assign", "acc", float(acc), None),
            ]
        want += [("loop", "end", 8, 8), ("barrier", "workgroupBarrier", None, None)]
    want += [("loop", "end", 4, 4), ("store", "c[row * N + col]", float(acc), row * 32 + col)]
    assert [(st.kind, st.name, st.value, st.index) for st in t.steps] == want
    out = debug_session.run(case, reference=False).outputs["c"]
    assert out[row * 32 + col] == acc
    assert t.outputs_identical
    assert (t.workgroup, t.local) == ((1, 0, 0), (3, 6, 0))


def test_tree_reduction_in_workgroup_memory(debug_session: Session):
    x = np.random.default_rng(3).standard_normal(1024).astype(np.float32)
    case = debug_session.case("reduce", inputs={"x": x})
    lid, wg = 3, 1
    t = trace(debug_session, case, (wg * 64 + lid, 0, 0))
    part = x[64:128].copy()
    want: list[tuple[str, str, object, int | None]] = [
        ("load", "x[gid.x]", float(x[67]), 67),
        ("store", "part[lid]", float(x[67]), lid),
        ("barrier", "workgroupBarrier", None, None),
        ("assign", "stride", 32, None),
    ]
    stride, it = 32, 0
    while stride > 0:
        want.append(("loop", "iteration", it, it))
        nxt = part.copy()
        nxt[:stride] = part[:stride] + part[stride : 2 * stride]
        if lid < stride:
            want += [
                ("branch", "if", 0, None),
                ("load", "part[lid]", float(part[lid]), lid),
                ("load", "part[lid + stride]", float(part[lid + stride]), lid + stride),
                ("store", "part[lid]", float(nxt[lid]), lid),
            ]
        else:
            want.append(("branch", "if", 1, None))
        part = nxt
        stride //= 2
        it += 1
        want += [("barrier", "workgroupBarrier", None, None), ("assign", "stride", stride, None)]
    want += [("loop", "end", 6, 6), ("branch", "if", 1, None)]
    assert [(st.kind, st.name, st.value, st.index) for st in t.steps] == want
    sums = debug_session.run(case, reference=False).outputs["sums"]
    assert sums[1] == part[0]
    assert t.outputs_identical


def test_f16_values_come_back_exactly(debug_session: Session):
    if "shader-f16" not in debug_session.adapter.features:
        pytest.skip("the adapter has no shader-f16")
    x = np.linspace(-3, 3, 1024).astype(np.float16)
    case = debug_session.case("half", inputs={"x": x})
    t = trace(debug_session, case, (700, 0, 0))
    h = np.float16
    v = x[700]
    p = np.array([v, h(v * h(2))], np.float16)
    q = (p * h(0.75)).astype(np.float16) + np.array([1, -1], np.float16)
    want = [
        ("load", "x[gid.x]", float(v)),
        ("assign", "v", float(v)),
        ("assign", "p", [float(c) for c in p]),
        ("assign", "p", [float(c) for c in q]),
        ("store", "y[gid.x]", float(h(q[0] * q[1]))),
    ]
    assert _seen(t.steps) == want
    assert [st.type for st in t.steps] == ["f16", "f16", "vec2<f16>", "vec2<f16>", "f16"]
    assert t.outputs_identical


def test_atomic_histogram_records_the_value_returned(debug_session: Session):
    x = np.random.default_rng(4).integers(0, 1000, 1024).astype(np.uint32)
    case = debug_session.case("histogram", inputs={"x": x})
    t = trace(debug_session, case, (40, 0, 0))
    b = int(x[40] % 8)
    load, bin_, atomic, before = t.steps
    assert (load.kind, load.value, load.index) == ("load", int(x[40]), 40)
    assert (bin_.name, bin_.value) == ("bin", b)
    assert (atomic.kind, atomic.name, atomic.index) == ("atomic", "atomicAdd(bins[bin])", b)
    # Other invocations' adds race with this one: the old value is one of the bin's counts.
    assert 0 <= atomic.value < int(np.sum(x % 8 == b)) and before.value == atomic.value
    bins = debug_session.run(case, reference=False).outputs["bins"]
    assert np.array_equal(bins, np.bincount(x % 8, minlength=8))
    assert t.outputs_identical


def test_a_planted_nan_is_seen_with_its_operands(debug_session: Session):
    num = np.ones(1024, np.float32)
    den = np.ones(1024, np.float32)
    den[77] = 0
    case = debug_session.case("planted_nan", inputs={"num": num, "den": den})
    t = trace(debug_session, case, (77, 0, 0))
    q = next(st for st in t.steps if st.name == "q")
    assert q.line == 9 and np.isnan(q.value)
    assert [(st.name, st.value) for st in t.steps if st.step < q.step and st.kind != "load"] == [
        ("i", 77),
        ("top", 0.0),
    ]
    assert json.loads(json.dumps(t.to_json()))["steps"][q.step]["value"] == "NaN"


def test_matrices_and_structs_are_values(debug_session: Session):
    x = np.linspace(-1, 1, 1024, dtype=np.float32)
    case = debug_session.case("composite", inputs={"x": x})
    t = trace(debug_session, case, (7, 0, 0))
    assert t.outputs_identical
    v = x[7]
    m = [[float(v), 2.0], [3.0, 7.0]]  # its columns
    body = {"pos": [float(v), 1.0], "mass": float(f32(v * f32(2))), "rot": m}
    # q.pos = rot * pos * 0.5, in f32: column-major rot times pos, then each component halved.
    rot = np.array(m, np.float32).T
    pos = np.array([v, 1.0], np.float32)
    moved = [float(f32(f32(rot[r, 0] * pos[0] + rot[r, 1] * pos[1]) * f32(0.5))) for r in (0, 1)]
    got = [(st.kind, st.name, st.type, st.value, st.depth) for st in t.steps]
    assert [g[:2] for g in got] == [
        ("assign", "i"),
        ("load", "x[i]"),
        ("assign", "v"),
        ("assign", "m"),
        ("assign", "b"),
        ("param", "b"),
        ("param", "t"),
        ("assign", "q"),
        ("assign", "q.pos"),
        ("return", "return"),
        ("assign", "q"),
        ("store", "y[i]"),
    ]
    assert got[3] == ("assign", "m", "mat2x2<f32>", m, 0)
    assert got[4] == ("assign", "b", "Body", body, 0)
    assert got[5] == ("param", "b", "Body", body, 1)
    assert got[7] == ("assign", "q", "Body", body, 1)
    # (approx: the GPU may fuse the matrix product's multiply-adds)
    assert got[8][2] == "vec2<f32>" and got[8][3] == pytest.approx(moved, rel=1e-6)
    assert got[9][2:] == ("Body", {**body, "pos": got[8][3]}, 1)
    assert got[10][3] == got[9][3] and got[10][4] == 0
    js = t.to_json()["steps"]
    assert js[4]["value"] == body and js[3]["value"] == m


def test_a_full_trace_says_where_it_stopped(debug_session: Session):
    x = np.full(1024, 0.01, np.float32)
    case = debug_session.case("early_break", inputs={"x": x})
    t = trace(debug_session, case, (0, 0, 0), capacity=20)
    assert t.truncated and len(t.steps) == 20 and t.attempted > 20
    assert t.end == "trace stopped at step 20: the loop at early_break.wgsl:9 had run 4 times"
    assert t.outputs_identical


def test_json_floats_round_trip_exactly(debug_session: Session):
    x = np.random.default_rng(5).standard_normal(1024).astype(np.float32)
    case = debug_session.case("helper", inputs={"x": x})
    t = trace(debug_session, case, (3, 0, 0))
    back = json.loads(json.dumps(t.to_json()))
    assert set(back) == {
        "kernel",
        "invocation",
        "workgroup",
        "local",
        "outputs_identical",
        "truncated",
        "steps",
    }
    for st, js in zip(t.steps, back["steps"], strict=True):
        assert np.float32(js["value"]).tobytes() == np.float32(st.value).tobytes()


@pytest.mark.parametrize(
    ("kwargs", "why"),
    [
        ({"invocation": (5000, 0, 0)}, "outside the dispatch"),
        ({"workgroup": (0, 0, 0), "local": (64, 0, 0)}, "outside the workgroup size"),
        ({}, "give --invocation"),
    ],
)
def test_bad_invocations_are_one_clear_error(debug_session: Session, kwargs, why):
    case = debug_session.case("helper")
    with pytest.raises(UserError, match=why):
        invocation_of(case, **kwargs)


def test_workgroup_memory_after_each_barrier_is_the_tree_so_far(debug_session: Session):
    x = np.random.default_rng(6).standard_normal(1024).astype(np.float32)
    case = debug_session.case("reduce", inputs={"x": x})
    t = trace(debug_session, case, (64 + 5, 0, 0), memory=True)
    barriers = [st.step for st in t.steps if st.kind == "barrier"]
    assert [v.step for v in t.memory] == barriers and {v.name for v in t.memory} == {"part"}
    part = x[64:128].copy()
    want = [part.copy()]
    stride = 32
    while stride > 0:
        part[:stride] = part[:stride] + part[stride : 2 * stride]
        want.append(part.copy())
        stride //= 2
    assert len(t.memory) == len(want) == 7
    for view, expected in zip(t.memory, want, strict=True):
        assert np.array_equal(np.array(view.values, np.float32), expected)
    assert t.outputs_identical
    assert [st.kind for st in t.steps] == [
        st.kind for st in trace(debug_session, case, (69, 0, 0)).steps
    ]


def test_switch_and_loop_with_continuing_without_a_global_id_parameter(debug_session: Session):
    case = debug_session.case("switched", grid=(4, 1, 1))
    i = 6
    t = trace(debug_session, case, (i, 0, 0))
    want: list[tuple[str, str, object]] = [("assign", "i", i), ("assign", "total", 0)]
    want.append(("assign", "k", 0))
    total = 0
    for k in range(3):
        want.append(("loop", "iteration", k))
        clause = {0: 0, 1: 1, 2: 1}[(k + i) % 3]
        want.append(("branch", "switch", clause))
        total = total + 5 if clause == 0 else total - k
        want += [("assign", "total", total), ("assign", "k", k + 1)]
    want += [("loop", "end", 3), ("store", "y[i]", total)]
    assert _seen(t.steps) == want
    out = debug_session.run(case, reference=False).outputs["y"]
    assert out[i] == total and t.outputs_identical


def test_arrays_inside_storage_structs(debug_session: Session):
    case = debug_session.case("members")
    t = trace(debug_session, case, (10, 0, 0))
    loaded = t.steps[0]
    assert (loaded.kind, loaded.name, loaded.index) == ("load", "src.values[gid.x]", 10)
    v = f32(loaded.value) * f32(2)
    assert _seen(t.steps[1:]) == [
        ("assign", "v", float(v)),
        ("store", "dst.values[gid.x]", float(v)),
    ]
    assert t.steps[2].index == 10 and t.outputs_identical


def test_two_index_workgroup_tile_has_flat_indices(debug_session: Session):
    x = np.arange(64, dtype=np.float32) * f32(0.5)
    sizes = {"x": 64, "y": 64}
    case = debug_session.case("transpose", inputs={"x": x}, sizes=sizes, grid=(1, 1, 1))
    t = trace(debug_session, case, (3, 5, 0))
    assert [(st.kind, st.name, st.value, st.index) for st in t.steps] == [
        ("load", "x[gid.y * 8u + gid.x]", float(x[43]), 43),
        ("store", "tile[lid.y][lid.x]", float(x[43]), 5 * 8 + 3),
        ("barrier", "workgroupBarrier", None, None),
        ("load", "tile[lid.x][lid.y]", float(x[3 * 8 + 5]), 3 * 8 + 5),
        ("store", "y[gid.y * 8u + gid.x]", float(x[29]), 43),
    ]
    assert t.outputs_identical


def test_conditions_reach_into_members_columns_and_components(debug_session: Session):
    x = np.linspace(-1, 1, 1024, dtype=np.float32)
    case = debug_session.case("composite", inputs={"x": x})
    t = trace(debug_session, case, (7, 0, 0))
    names = [st.name for st in t.steps]
    assert break_at(t, "b.mass < 0.0") == names.index("b")  # x[7] < 0: mass = 2 x[7]
    assert break_at(t, "m[1].y == 7.0") == names.index("m")  # column 1, row 1: f32(i)
    assert break_at(t, "b.rot[0].x == v") == names.index("b")
    assert break_at(t, "q.pos.y > 100.0") is None
