"""The session on the real adapter: 2-D grid folding, compile errors mapped to files and preambles,
limits refused before allocation, missing features, ad-hoc kernels with every input recipe, every
binding form end to end, spec matching by name and signature, and timing."""

from __future__ import annotations

import math
import shutil
import tracemalloc

import numpy as np
import pytest

from workbench.cli.advice import cli_message
from workbench.errors import (
    Advice,
    CompileError,
    GpuError,
    LimitError,
    MissingFeatureError,
    SpecMismatchError,
)
from workbench.recipes import RECIPES
from workbench.session import ADHOC_N, Session, StatusKind
from workbench.specs.registry import spec_for

from .conftest import SHARED_PREAMBLE, gl_session

SHIPPED_CONFIG = '[preamble]\nfiles = ["00_shared.wgsl"]\nauto_inject_into = ["*.wgsl"]\n'

IDS = """
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@group(0) @binding(1) var<uniform> n: u32;
@compute @workgroup_size(256)
fn ids(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    if (i < n) { out[i] = i; }
}
"""


@pytest.fixture
def ids_session(tmp_path, on_corpus) -> Session:
    """A corpus with the shipped shared preamble (flat_id) and a kernel writing each index."""
    shutil.copy(SHARED_PREAMBLE, tmp_path / "00_shared.wgsl")
    (tmp_path / "wgslconfig.toml").write_text(SHIPPED_CONFIG)
    (tmp_path / "ids.wgsl").write_text(IDS)
    return on_corpus(tmp_path)


def test_a_grid_over_65535_workgroups_is_folded_and_every_element_computed(ids_session):
    per_dim = ids_session.adapter.limits["max-compute-workgroups-per-dimension"]
    n = 65536 * 256 + 1000
    run = ids_session.run("ids", dims={"n": n})
    assert run.case.grid == (math.ceil(n / 256), 1, 1)
    if math.ceil(n / 256) > per_dim:
        assert run.grid == (per_dim, math.ceil(math.ceil(n / 256) / per_dim), 1)
    out = run.outputs["out"]
    assert out.shape == (n,)
    # Every element, not a sample: a folding bug leaves whole rows of workgroups unwritten.
    assert np.array_equal(out, np.arange(n, dtype=np.uint32))


def test_small_and_empty_grids_are_not_folded(ids_session):
    run = ids_session.run("ids", dims={"n": 1000})
    assert run.grid == (4, 1, 1)
    assert np.array_equal(run.outputs["out"], np.arange(1000))
    run = ids_session.run("ids", dims={"n": 0})
    assert run.grid == (0, 1, 1) and run.outputs["out"].shape == (0,)


def test_inputs_of_every_shape_upload_including_empty_ones(make_corpus, on_corpus):
    root = make_corpus(
        {
            "v4.wgsl": """
            struct Pair { a: f32, v: vec3<f32> }
            @group(0) @binding(0) var<storage, read> vecs: array<vec4<f32>>;
            @group(0) @binding(1) var<storage, read> pairs: array<Pair>;
            @group(0) @binding(2) var<storage, read_write> out: array<f32>;
            @compute @workgroup_size(64)
            fn v4(@builtin(global_invocation_id) gid: vec3<u32>) {
                let i = gid.x;
                if (i < arrayLength(&out)) { out[i] = vecs[i].w + pairs[i].v.z; }
            }
            """
        }
    )
    sess = on_corpus(root)
    case = sess.case("v4", dims={"n": 50})
    pairs = np.zeros(50, dtype=case.plan("pairs").dtype)
    pairs["v"][:, 2] = np.arange(50)
    run = sess.run("v4", dims={"n": 50}, inputs={"pairs": pairs})
    # One f32 addition, correctly rounded on both sides.
    want = run.inputs["vecs"][:, 3] + np.arange(50, dtype=np.float32)
    np.testing.assert_array_equal(run.outputs["out"], want)
    # Zero elements, in a 2-D host shape: nothing to upload, nothing to compute.
    run = sess.run("v4", dims={"n": 0})
    assert run.inputs["vecs"].shape == (0, 4) and run.outputs["out"].shape == (0,)


def _caret_column(message: str) -> tuple[int, str]:
    """(column the caret points at, the source text from there) of a rendered diagnostic."""
    _head, src, caret = message.splitlines()[:3]
    gutter = src.index("| ") + 2
    return caret.index("^") - gutter + 1, src[caret.index("^") :]


def test_compile_errors_name_the_file_line_and_column_with_a_caret(make_corpus, on_corpus):
    root = make_corpus(
        {
            "wgslconfig.toml": '[preamble]\nfiles = ["pre.wgsl"]\n',
            "pre.wgsl": "// shared helpers\nfn one() -> f32 { return 1.0; }\n",
            "bad.wgsl": """
            // local preamble
            // --- KERNEL: fine ---
            @group(0) @binding(0) var<storage, read_write> out: array<u32>;
            @compute @workgroup_size(64)
            fn fine(@builtin(global_invocation_id) gid: vec3<u32>) { out[gid.x] = 1u; }
            // --- KERNEL: parse ---
            @group(0) @binding(0) var<storage, read_write> out: array<u32>;
            @compute @workgroup_size(64)
            fn parse(@builtin(global_invocation_id) gid: vec3<u32>) {
                out[gid.x] = 1u +;
            }
            // --- KERNEL: typed ---
            @group(0) @binding(0) var<storage, read_write> out: array<u32>;
            @compute @workgroup_size(64)
            fn typed(@builtin(global_invocation_id) gid: vec3<u32>) {
            \tlet v: u32 = one();
                out[gid.x] = v;
            }
            // --- KERNEL: halves ---
            @group(0) @binding(0) var<storage, read_write> out: array<f16>;
            @compute @workgroup_size(64)
            fn halves(@builtin(global_invocation_id) gid: vec3<u32>) {
                out[gid.x] = f16(missing_name);
            }
            """,
        }
    )
    sess = on_corpus(root)
    assert sess.status(sess.kernel("fine")).text == "ok"

    with pytest.raises(CompileError) as err:
        sess.run("parse", dims={"n": 8})
    msg = str(err.value)
    assert msg.startswith("bad.wgsl:10:22: expected expression")
    assert msg.splitlines()[1] == "10 |     out[gid.x] = 1u +;"
    assert _caret_column(msg) == (22, ";")
    assert err.value.location == ("bad.wgsl", 10, 22)
    assert err.value.headline.startswith("expected expression")
    status = sess.status(sess.kernel("parse"))
    assert status.kind is StatusKind.COMPILE_ERROR and status.error is not None
    assert status.error.location == ("bad.wgsl", 10, 22)
    assert status.text == f"compile error: {msg}"

    # A tab before the error: the caret keeps it so it lines up in a terminal.
    msg = sess.status(sess.kernel("typed")).text.removeprefix("compile error: ")
    assert msg.startswith("bad.wgsl:16:6: ")
    assert _caret_column(msg) == (6, "v: u32 = one();")
    assert msg.splitlines()[2].endswith("\t    ^")

    # The host's `enable f16;` line in front of the module must not shift the line.
    if "shader-f16" in sess.adapter.features:
        msg = sess.status(sess.kernel("halves")).text.removeprefix("compile error: ")
        assert msg.startswith("bad.wgsl:23:22: ")
        assert "missing_name" in msg
        assert _caret_column(msg) == (22, "missing_name);")


def test_a_compile_error_inside_a_preamble_names_the_preamble(make_corpus, on_corpus):
    root = make_corpus(
        {
            "wgslconfig.toml": '[preamble]\nfiles = ["lib/pre.wgsl"]\n',
            "lib/pre.wgsl": """
            // preamble line 1
            fn helper(x: u32) -> u32 {
                return x + undefined_thing;
            }
            """,
            "k.wgsl": """
            @group(0) @binding(0) var<storage, read_write> out: array<u32>;
            @compute @workgroup_size(64)
            fn k(@builtin(global_invocation_id) gid: vec3<u32>) { out[gid.x] = helper(gid.x); }
            """,
        }
    )
    sess = on_corpus(root)
    with pytest.raises(CompileError) as err:
        sess.run("k")
    msg = str(err.value)
    assert msg.startswith("lib/pre.wgsl:3:16: ")
    assert "undefined_thing" in msg.splitlines()[0]
    assert msg.splitlines()[1] == "3 |     return x + undefined_thing;"
    assert _caret_column(msg) == (16, "undefined_thing;")


def _tracemalloc_peak(fn) -> int:
    tracemalloc.start()
    try:
        fn()
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return peak


def test_an_oversized_binding_is_refused_before_anything_is_allocated(make_corpus, on_corpus):
    root = make_corpus(
        {
            "big.wgsl": """
            @group(0) @binding(0) var<storage, read> big_input: array<f32>;
            @group(0) @binding(1) var<storage, read_write> out: array<f32>;
            @compute @workgroup_size(256)
            fn big(@builtin(global_invocation_id) gid: vec3<u32>) { out[0] = big_input[gid.x]; }
            """
        }
    )
    sess = on_corpus(root)
    cap = sess.adapter.limits["max-storage-buffer-binding-size"]
    n = cap // 4 + 1

    def attempt() -> None:
        with pytest.raises(LimitError) as err:
            sess.run("big", dims={"n": n}, sizes={"out": 1})
        msg = str(err.value)
        assert "max-storage-buffer-binding-size" in msg
        assert "'big_input'" in msg and f"{n * 4:,} bytes" in msg and f"{cap:,} bytes" in msg

    # The random input alone would take 4n bytes (and twice that while being drawn).
    assert _tracemalloc_peak(attempt) < 16 << 20


def test_a_spec_kernel_with_dims_over_the_limit_is_refused_before_its_inputs_are_made(session):
    spec = spec_for("gelu_inplace")
    if spec is None:
        pytest.skip("no gelu_inplace spec")
    cap = session.adapter.limits["max-storage-buffer-binding-size"]
    d_ff = 65535
    seq = cap // 4 // d_ff + 1
    hi = {d.name: d.hi for d in spec.dims}
    if seq > hi["seq"] or d_ff > hi["d_ff"]:
        pytest.skip("the spec's dims cannot reach this adapter's limit")

    def attempt() -> None:
        with pytest.raises(LimitError, match="max-storage-buffer-binding-size"):
            session.case("gelu_inplace", dims={"seq": seq, "d_ff": d_ff})

    assert _tracemalloc_peak(attempt) < 16 << 20


def test_grids_and_workgroups_over_the_limits_are_refused(make_corpus, on_corpus):
    root = make_corpus(
        {
            "one.wgsl": """
            @group(0) @binding(0) var<storage, read_write> flags: array<u32, 4>;
            @compute @workgroup_size(1)
            fn one() { flags[0] = 1u; }
            """,
            "wide.wgsl": """
            @group(0) @binding(0) var<storage, read_write> out: array<u32>;
            @compute @workgroup_size(2048)
            fn wide(@builtin(global_invocation_id) gid: vec3<u32>) { out[gid.x] = 1u; }
            """,
        }
    )
    sess = on_corpus(root)
    per_dim = sess.adapter.limits["max-compute-workgroups-per-dimension"]
    # `one` does not read num_workgroups: folding its grid would leave work undone.
    with pytest.raises(LimitError, match="does not read @builtin\\(num_workgroups\\)"):
        sess.case("one", dims={"n": per_dim * per_dim + 1})
    with pytest.raises(LimitError, match="@workgroup_size x=2048"):
        sess.case("wide", dims={"n": 10})


def test_too_many_storage_buffers_is_a_limit_error(make_corpus, on_corpus, session):
    cap = session.adapter.limits["max-storage-buffers-per-shader-stage"]
    if cap > 64:
        pytest.skip("this adapter allows more storage buffers than the test declares")
    decls = "\n".join(
        f"@group(0) @binding({i}) var<storage, read_write> b{i}: array<u32>;"
        for i in range(cap + 1)
    )
    uses = " ".join(f"b{i}[0] = 1u;" for i in range(cap + 1))
    root = make_corpus(
        {"many.wgsl": f"{decls}\n@compute @workgroup_size(1)\nfn many() {{ {uses} }}\n"}
    )
    with pytest.raises(LimitError, match=f"{cap + 1} storage buffers, over the limit of {cap}"):
        on_corpus(root).case("many", dims={"n": 4})


def test_an_f16_kernel_on_the_gl_adapter_is_a_missing_feature_error(make_corpus):
    root = make_corpus(
        {
            "half.wgsl": """
            @group(0) @binding(0) var<storage, read_write> out: array<f16>;
            @compute @workgroup_size(64)
            fn half(@builtin(global_invocation_id) gid: vec3<u32>) { out[gid.x] = 1.0h; }
            """
        }
    )
    gl = gl_session(root)
    assert "shader-f16" not in gl.adapter.features
    with pytest.raises(MissingFeatureError) as err:
        gl.run("half")
    # The engine names no flag; the command line words the remedy.
    assert "shader-f16" in str(err.value) and "--" not in str(err.value)
    assert err.value.advice is Advice.OTHER_ADAPTER and "--adapter" in cli_message(err.value)
    status = gl.status(gl.kernel("half"))
    assert status.kind is StatusKind.NEEDS and status.missing == ("shader-f16",)
    assert status.text == "needs shader-f16"


F32_ATOMIC_SUMS = """
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> sums: array<atomic<f32>>;
@compute @workgroup_size(64)
fn sums4(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x < arrayLength(&x)) { atomicAdd(&sums[gid.x % 4u], x[gid.x]); }
}
"""


def test_an_f32_atomic_kernel_on_the_gl_adapter_needs_its_feature(make_corpus):
    gl = gl_session(make_corpus({"sums.wgsl": F32_ATOMIC_SUMS}))
    assert "shader-float32-atomic" not in gl.adapter.features
    with pytest.raises(MissingFeatureError, match="shader-float32-atomic"):
        gl.run("sums4")
    status = gl.status(gl.kernel("sums4"))
    assert status.kind is StatusKind.NEEDS and status.missing == ("shader-float32-atomic",)
    assert status.text == "needs shader-float32-atomic"


def test_f32_atomic_adds_sum_as_float64_does(make_corpus, on_corpus, session):
    if "shader-float32-atomic" not in session.adapter.features:
        pytest.skip("no shader-float32-atomic")
    sess = on_corpus(make_corpus({"sums.wgsl": F32_ATOMIC_SUMS}))
    assert sess.status(sess.kernel("sums4")).ok
    n = 4099  # not a multiple of the workgroup: the last one is partly idle
    x = np.random.default_rng(7).uniform(-1, 1, n).astype(np.float32)
    run = sess.run("sums4", dims={"n": n}, inputs={"x": x, "sums": np.zeros(n, np.float32)})
    got = run.outputs["sums"]
    assert got.dtype == np.float32
    for k in range(4):
        part = x[k::4].astype(np.float64)
        # Any order of these float32 adds: each rounding errs by at most half an ulp of a running
        # sum, which is at most the sum of the magnitudes.
        bound = len(part) * np.finfo(np.float32).eps / 2 * np.abs(part).sum()
        assert abs(float(got[k]) - math.fsum(part)) <= bound, k
    np.testing.assert_array_equal(got[4:], 0)


ADHOC = """
struct Params { n: u32, scale: f32 }
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read> idx: array<u32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
@group(0) @binding(4) var<uniform> params: Params;
@compute @workgroup_size(64)
fn axpb(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i < params.n) {
        out[i] = a[i] * params.scale + b[i % arrayLength(&b)] + f32(idx[i]) + f32(arrayLength(&b));
    }
}
"""


def _expected(inputs: dict[str, np.ndarray], scale: float) -> np.ndarray:
    a, b, idx = (inputs[k].astype(np.float64) for k in ("a", "b", "idx"))
    i = np.arange(a.size)
    return a * scale + b[i % b.size] + idx + b.size


def test_an_adhoc_kernel_defaults_to_n_1024_with_generated_inputs(make_corpus, on_corpus):
    sess = on_corpus(make_corpus({"axpb.wgsl": ADHOC}))
    case = sess.case("axpb")
    assert case.spec is None and case.dims == {"n": ADHOC_N} == {"n": 1024}
    assert case.grid == (16, 1, 1)
    assert case.uniforms["params"] == {"n": 1024, "scale": 0}
    roles = {p.name: (p.role, p.shape, str(p.dtype), p.source) for p in case.bindings}
    assert roles["a"] == ("input", (1024,), "float32", "randn (seed 0)")
    assert roles["b"] == ("input", (1024,), "float32", "randn (seed 1)")
    assert roles["idx"] == ("input", (1024,), "uint32", "randint:0:1024 (seed 2)")
    assert roles["out"] == ("output", (1024,), "float32", "zeros")
    np.testing.assert_array_equal(
        case.inputs["a"], np.random.default_rng(0).standard_normal(1024).astype(np.float32)
    )
    assert case.inputs["idx"].min() >= 0 and case.inputs["idx"].max() < 1024
    run = sess.run(case)
    assert run.ok is None and run.reference is None and not run.compare
    np.testing.assert_allclose(run.outputs["out"], _expected(run.inputs, 0.0), rtol=1e-6, atol=1e-6)


def test_adhoc_sizes_sets_and_every_input_recipe_give_correct_results(
    make_corpus, on_corpus, tmp_path
):
    sess = on_corpus(make_corpus({"axpb.wgsl": ADHOC}))
    n = 300
    saved = np.linspace(-3, 3, n, dtype=np.float32)
    np.save(tmp_path / "a.npy", saved)
    shape = (n,)
    cases = {
        "zeros": ("a", np.zeros(shape)),
        "ones": ("a", np.ones(shape)),
        "const:2.5": ("a", np.full(shape, 2.5)),
        "arange": ("a", np.arange(n)),
        "randn": ("a", np.random.default_rng(0).standard_normal(shape).astype(np.float32)),
        "randn:7": ("a", np.random.default_rng(7).standard_normal(shape).astype(np.float32)),
        "uniform:0:5:3": ("a", np.random.default_rng(3).uniform(0, 5, shape).astype(np.float32)),
        "randint:5:9:4": ("idx", np.random.default_rng(4).integers(5, 9, shape)),
        f"npy:{tmp_path / 'a.npy'}": ("a", saved),
    }
    assert {r.split(":")[0].split("[")[0] for r in RECIPES} == {r.split(":")[0] for r in cases}
    for recipe, (binding, want) in cases.items():
        run = sess.run(
            "axpb",
            dims={"n": n},
            sizes={"b": 10},
            sets={"params.scale": 0.5},
            inputs={binding: recipe},
        )
        np.testing.assert_array_equal(run.inputs[binding], want.astype(run.inputs[binding].dtype))
        seeded = f"{recipe} (seed {run.case.bindings.index(run.case.plan(binding))})"
        assert run.case.plan(binding).source == (seeded if recipe == "randn" else recipe)
        assert run.inputs["b"].shape == (10,) and run.outputs["out"].shape == (n,)
        np.testing.assert_allclose(
            run.outputs["out"], _expected(run.inputs, 0.5), rtol=1e-6, atol=1e-6, err_msg=recipe
        )
    # Unseeded random recipes take the run's seed plus the binding's index, and stay in range.
    run = sess.run(
        "axpb", dims={"n": n}, seed=5, inputs={"a": "uniform:-1:1", "idx": "randint:0:3"}
    )
    assert run.inputs["a"].min() >= -1 and run.inputs["a"].max() < 1
    np.testing.assert_array_equal(
        run.inputs["a"], np.random.default_rng(5).uniform(-1, 1, shape).astype(np.float32)
    )
    assert set(np.unique(run.inputs["idx"])) <= {0, 1, 2}
    np.testing.assert_allclose(run.outputs["out"], _expected(run.inputs, 0.0), rtol=1e-6, atol=1e-6)


FORMS = """
struct Pair { a: f32, v: vec3<f32> }
struct P { a: u32, b: vec3<f32>, c: f32, d: vec2<u32> }
@group(0) @binding(0) var<storage, read> src: array<f32>;
@group(0) @binding(1) var<storage, read_write> fixed: array<u32, 16>;
@group(0) @binding(2) var<storage, read_write> cnt: atomic<u32>;
@group(0) @binding(3) var<storage, read_write> icnt: array<atomic<i32>>;
@group(0) @binding(4) var<storage, read_write> v3: vec3<f32>;
@group(0) @binding(5) var<storage, read_write> pairs: array<Pair>;
@group(0) @binding(6) var<storage, read_write> ints: array<i32>;
@group(1) @binding(0) var<uniform> p: P;
@compute @workgroup_size(64)
fn forms(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    atomicAdd(&cnt, 1u);
    if (i < 16u) { fixed[i] = i * 3u + p.a; }
    if (i < arrayLength(&icnt)) { atomicSub(&icnt[i], i32(i)); }
    if (i == 0u) { v3 = p.b; }
    if (i < arrayLength(&pairs)) {
        pairs[i].a = src[i];
        pairs[i].v = vec3<f32>(f32(i), p.c, f32(p.d.y));
    }
    if (i < arrayLength(&ints)) { ints[i] = -i32(i); }
}
"""


def test_every_binding_form_round_trips_through_the_gpu(make_corpus, on_corpus):
    sess = on_corpus(make_corpus({"forms.wgsl": FORMS}))
    case = sess.case(
        "forms", dims={"n": 100}, sets={"p.a": 7, "p.b.y": 0.5, "p.c": 2.5, "p.d.y": 9}
    )
    plans = {p.name: p for p in case.bindings}
    assert plans["fixed"].shape == (16,) and plans["cnt"].shape == (1,)
    assert plans["v3"].shape == (4,) and plans["v3"].nbytes == 16
    assert plans["pairs"].nbytes == 100 * 32
    out = sess.run(case).outputs
    i = np.arange(100)
    np.testing.assert_array_equal(out["fixed"], np.arange(16) * 3 + 7)
    assert out["cnt"].tolist() == [case.workgroups * 64]
    np.testing.assert_array_equal(out["icnt"], -i)
    np.testing.assert_array_equal(out["v3"], [0, 0.5, 0, 0])
    np.testing.assert_array_equal(out["pairs"]["a"], case.inputs["src"])
    np.testing.assert_array_equal(
        out["pairs"]["v"][:, :3], np.stack([i, i * 0 + 2.5, i * 0 + 9], 1)
    )
    np.testing.assert_array_equal(out["ints"], -i)
    assert out["ints"].dtype == np.int32


def test_f16_and_atomic_bindings_of_the_host_view(make_corpus, on_corpus, session):
    if "shader-f16" not in session.adapter.features:
        pytest.skip("no shader-f16")
    root = make_corpus(
        {
            "h.wgsl": """
            @group(0) @binding(0) var<storage, read> x: array<f16>;
            @group(0) @binding(1) var<storage, read_write> y: array<vec2<f16>>;
            @compute @workgroup_size(64)
            fn h(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&y)) { y[gid.x] = vec2<f16>(x[gid.x], -x[gid.x] * 2.0h); }
            }
            """
        }
    )
    sess = on_corpus(root)
    x = np.linspace(-2, 2, 77).astype(np.float16)
    run = sess.run("h", dims={"n": 77}, inputs={"x": x})
    assert run.outputs["y"].dtype == np.float16 and run.outputs["y"].shape == (77, 2)
    np.testing.assert_array_equal(run.outputs["y"][:, 0], x)
    np.testing.assert_array_equal(run.outputs["y"][:, 1], -x * np.float16(2))


SWIGLU = """
@group(0) @binding(0) var<storage, read> gate: array<f32>;
@group(0) @binding(1) var<storage, read> up: array<f32>;
@group(0) @binding(2) var<storage, read_write> hidden: array<{hidden}>;
@group(0) @binding(3) var<uniform> n: u32;
@compute @workgroup_size(256)
fn swiglu_combine(@builtin(global_invocation_id) gid: vec3<u32>,
                  @builtin(num_workgroups) nwg: vec3<u32>) {{
    let i = gid.y * nwg.x * 256u + gid.x;
    if (i >= n) {{ return; }}
    let g = gate[i];
    hidden[i] = {expr};
}}
"""
SILU_UP = "g / (1.0 + exp(-g)) * up[i]"


@pytest.fixture
def swiglu_spec():
    spec = spec_for("swiglu_combine")
    if spec is None:
        pytest.skip("no swiglu_combine spec")
    return spec


def test_a_user_kernel_with_a_shipped_name_and_abi_is_checked_against_its_reference(
    swiglu_spec, session, make_corpus, on_corpus
):
    shipped = session.kernel("swiglu_combine").entry_point.bindings
    right = SWIGLU.format(hidden="f32", expr=SILU_UP)
    wrong = SWIGLU.format(hidden="f32", expr="g * up[i]")
    sess = on_corpus(make_corpus({"right.wgsl": right, "sub/wrong.wgsl": wrong}))
    mine = sess.kernel("right.wgsl:swiglu_combine").entry_point.bindings
    assert [b.signature for b in mine] == [b.signature for b in shipped], "the seed ABI changed"

    dims = {"seq": 4, "d_ff": 96}
    good = sess.run("right.wgsl:swiglu_combine", dims=dims)
    assert good.case.spec is swiglu_spec and good.ok is True
    assert set(good.compare) == {"hidden"} and good.compare["hidden"].max_abs < 1e-5
    bad = sess.run("sub/wrong.wgsl:swiglu_combine", dims=dims)
    assert bad.ok is False and bad.compare["hidden"].n_bad > 0
    worst = bad.compare["hidden"].worst[0]
    assert worst.named.startswith("seq=") and "d_ff=" in worst.named
    # Ad hoc, the same kernel is only run: no reference, no verdict.
    adhoc = sess.run("sub/wrong.wgsl:swiglu_combine", dims={"n": 384}, adhoc=True)
    assert adhoc.ok is None and adhoc.case.spec is None


def test_a_shipped_name_with_another_abi_runs_ad_hoc_with_a_note(
    swiglu_spec, make_corpus, on_corpus
):
    sess = on_corpus(make_corpus({"k.wgsl": SWIGLU.format(hidden="u32", expr="u32(g)")}))
    with pytest.raises(SpecMismatchError):
        sess.spec(sess.kernel("swiglu_combine"))
    case = sess.case("swiglu_combine")
    assert case.spec is None
    (note,) = [n for n in case.notes if "runs ad hoc" in n]
    assert "expected @group(0) @binding(2) storage, read_write array<f32>" in note
    assert "found @group(0) @binding(2) storage, read_write array<u32>" in note
    assert sess.case("swiglu_combine", adhoc=True).spec is None


def test_outputs_are_read_before_timing_and_timing_is_reported(make_corpus, on_corpus):
    root = make_corpus(
        {
            "inc.wgsl": """
            @group(0) @binding(0) var<storage, read_write> x: array<f32>;
            @compute @workgroup_size(64)
            fn inc(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&x)) { x[gid.x] = x[gid.x] + 1.0; }
            }
            """
        }
    )
    sess = on_corpus(root)
    x = np.arange(500, dtype=np.float32)
    steps = []
    run = sess.run(
        "inc",
        dims={"n": 500},
        inputs={"x": x},
        reps=7,
        warmup_ms=5,
        progress=lambda msg, frac: steps.append(frac),
    )
    # In place, warmed up and timed 7 more times: the output is still the first dispatch's.
    np.testing.assert_array_equal(run.outputs["x"], x + 1)
    assert run.case.plan("x").role == "inout"
    t = run.timing
    assert t.reps == 7 and t.warmup >= 1  # a warm-up by time submits one round at least
    assert t.method == ("timestamp" if "timestamp-query" in sess.adapter.features else "wall")
    assert all(s >= 0 for s in t.samples_ms) and t.p10_ms <= t.median_ms <= t.p90_ms
    assert steps == sorted(steps) and steps[-1] == 1.0
    # A cancelled timing loop stops early and says how many reps it took.
    run = sess.run("inc", dims={"n": 500}, reps=100, cancelled=lambda: True)
    assert run.timing.reps == 0 and run.throughput() is None


def test_a_closed_session_gives_its_device_back_and_a_shared_device_stays(session):
    own = session.with_adapter(session.adapter)
    own.open_device()
    own.close()
    with pytest.raises(GpuError, match="the session was closed"):
        own.open_device()
    shared = session.with_adapter(session.adapter, shared=True)
    shared.open_device()
    shared.close()
    shared.open_device()  # the device shared per adapter serves the others still
