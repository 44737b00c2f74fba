"""Reflection without a GPU: every binding form, struct layouts checked against offsets worked out by
hand from the WGSL spec's memory-layout rules, overrides, @workgroup_size forms, entry-point
reachability, feature detection, and comments that must not confuse any of it."""

from __future__ import annotations

import textwrap

import pytest

from workbench.errors import ReflectionError
from workbench.wgsl.lexer import tokenize
from workbench.wgsl.reflect import reflect


def mod(src: str):
    return reflect(textwrap.dedent(src), "m.wgsl")


EVERY_FORM = """
struct Pair { a: f32, v: vec3<f32> }
alias Row = array<f32, 4>;
@group(0) @binding(0) var<storage, read> f: array<f32>;
@group(0) @binding(1) var<storage, read_write> u: array<u32>;
@group(0) @binding(2) var<storage> i: array<i32>;
@group(0) @binding(3) var<storage, read_write> h: array<f16>;
@group(0) @binding(4) var<storage, read_write> au: array<atomic<u32>>;
@group(0) @binding(5) var<storage, read_write> ai: array<atomic<i32>>;
@group(0) @binding(6) var<storage, read> v2: array<vec2<f32>>;
@group(0) @binding(7) var<storage, read> v3: array<vec3<f32>>;
@group(0) @binding(8) var<storage, read> v4: array<vec4<u32>>;
@group(0) @binding(9) var<storage, read> v3h: array<vec3h>;
@group(1) @binding(0) var<storage, read_write> pairs: array<Pair>;
@group(1) @binding(1) var<storage, read_write> fixed: array<u32, 16>;
@group(1) @binding(2) var<storage, read_write> counter: atomic<u32>;
@group(1) @binding(3) var<storage, read> rows: array<Row>;
@group(1) @binding(4) var<storage, read> m3: array<mat3x3<f32>>;
@group(2) @binding(0) var<uniform> s: f32;
@group(2) @binding(1) var<uniform> dims: vec4<u32>;
@compute @workgroup_size(64)
fn main() {
    _ = f[0]; _ = u[0]; _ = i[0]; _ = h[0]; _ = atomicLoad(&au[0]); _ = atomicLoad(&ai[0]);
    _ = v2[0]; _ = v3[0]; _ = v4[0]; _ = v3h[0]; _ = pairs[0]; _ = fixed[0];
    _ = atomicLoad(&counter); _ = rows[0]; _ = m3[0]; _ = s; _ = dims;
}
"""

# name: (group, binding, space, access, type text, runtime sized, element stride, fixed bytes)
EXPECTED_FORMS = {
    "f": (0, 0, "storage", "read", "array<f32>", True, 4, None),
    "u": (0, 1, "storage", "read_write", "array<u32>", True, 4, None),
    # `var<storage>` defaults to read access.
    "i": (0, 2, "storage", "read", "array<i32>", True, 4, None),
    "h": (0, 3, "storage", "read_write", "array<f16>", True, 2, None),
    "au": (0, 4, "storage", "read_write", "array<atomic<u32>>", True, 4, None),
    "ai": (0, 5, "storage", "read_write", "array<atomic<i32>>", True, 4, None),
    "v2": (0, 6, "storage", "read", "array<vec2<f32>>", True, 8, None),
    # vec3 has size 12 but align 16: the array stride is 16.
    "v3": (0, 7, "storage", "read", "array<vec3<f32>>", True, 16, None),
    "v4": (0, 8, "storage", "read", "array<vec4<u32>>", True, 16, None),
    # vec3<f16>: size 6, align 8, stride 8.
    "v3h": (0, 9, "storage", "read", "array<vec3<f16>>", True, 8, None),
    # Pair: a at 0, v at 16 (align 16), size roundUp(16, 28) = 32.
    "pairs": (1, 0, "storage", "read_write", "array<Pair>", True, 32, None),
    "fixed": (1, 1, "storage", "read_write", "array<u32, 16>", False, 4, 64),
    "counter": (1, 2, "storage", "read_write", "atomic<u32>", False, 4, 4),
    "rows": (1, 3, "storage", "read", "array<array<f32, 4>>", True, 16, None),
    # mat3x3<f32>: three vec3 columns of stride 16 = 48 bytes, align 16.
    "m3": (1, 4, "storage", "read", "array<mat3x3<f32>>", True, 48, None),
    "s": (2, 0, "uniform", "", "f32", False, 4, 4),
    "dims": (2, 1, "uniform", "", "vec4<u32>", False, 16, 16),
}


def test_every_binding_form_is_reflected_with_its_layout():
    m = reflect(EVERY_FORM)
    assert list(m.bindings) == list(EXPECTED_FORMS)
    for name, want in EXPECTED_FORMS.items():
        b = m.bindings[name]
        got = (
            b.group,
            b.binding,
            b.space,
            b.access,
            b.type.text,
            b.runtime_sized,
            b.element_stride,
            b.fixed_size,
        )
        assert got == want, name
    assert m.bindings["au"].element.kind == "atomic"
    assert m.bindings["au"].element.scalar == "u32"
    assert m.bindings["ai"].element.scalar == "i32"
    assert m.bindings["fixed"].type.count == 16
    assert m.bindings["v3"].element.count == 3
    ep = m.entry_points["main"]
    assert [(b.group, b.binding) for b in ep.bindings] == sorted(
        (g, b) for g, b, *_ in EXPECTED_FORMS.values()
    )
    assert m.features == ("shader-f16",)


def test_struct_layouts_match_offsets_worked_out_by_hand():
    m = mod(
        """
        struct P { a: u32, b: vec3<f32>, c: f32, d: vec2<u32> }
        struct H { x: f16, y: vec3<f32>, z: vec2<f16>, w: f16 }
        struct Inner { k: f32 }
        struct Outer { a: f32, inner: Inner, b: f32 }
        struct Padded { a: f32, @align(16) @size(16) inner: Inner, @size(12) b: f32, c: u32 }
        struct Mixed { a: f32, arr: array<f32, 3>, v: vec2<f32>, m: mat2x2<f32> }
        @group(0) @binding(0) var<uniform> p: P;
        @group(0) @binding(1) var<storage, read> hs: array<H>;
        @group(0) @binding(2) var<uniform> padded: Padded;
        @group(0) @binding(3) var<storage, read> outer_s: Outer;
        @group(0) @binding(4) var<storage, read> mixed: Mixed;
        @compute @workgroup_size(1) fn main() {}
        """
    )

    def layout(t):
        return [(x.name, x.offset) for x in t.members]

    # P: u32 @0; vec3<f32> aligns to 16 -> @16 (12 bytes); f32 fits right after -> @28;
    # vec2<u32> aligns to 8 -> @32; 40 bytes rounded to the struct's align 16 -> 48.
    p = m.bindings["p"]
    assert layout(p.type) == [("a", 0), ("b", 16), ("c", 28), ("d", 32)]
    assert p.type.size(uniform=True) == 48 and p.fixed_size == 48
    # H: f16 @0; vec3<f32> @16; vec2<f16> (align 4) @28; f16 @32; 34 -> 48 (align 16).
    h = m.bindings["hs"].element
    assert layout(h) == [("x", 0), ("y", 16), ("z", 28), ("w", 32)]
    assert m.bindings["hs"].element_stride == 48
    # A uniform struct member needs @align(16) and @size(16) (WGSL's uniform constraints): inner
    # @16 (16 bytes), b @32 padded to 12 bytes, c @44; 48 bytes, already a multiple of 16.
    padded = m.bindings["padded"].type
    assert layout(padded) == [("a", 0), ("inner", 16), ("b", 32), ("c", 44)]
    assert [(x.align_attr, x.size_attr) for x in padded.members] == [
        (None, None),
        (16, 16),
        (None, 12),
        (None, None),
    ]
    assert m.bindings["padded"].fixed_size == 48
    # Without attributes a nested struct packs tightly (storage): inner @4, b @8, 12 bytes.
    assert layout(m.bindings["outer_s"].type) == [("a", 0), ("inner", 4), ("b", 8)]
    assert m.bindings["outer_s"].fixed_size == 12
    # Mixed (storage): arr @4 (stride 4, 12 bytes); vec2 @16; mat2x2 (align 8, 16 bytes) @24.
    assert layout(m.bindings["mixed"].type) == [("a", 0), ("arr", 4), ("v", 16), ("m", 24)]
    assert m.bindings["mixed"].fixed_size == 40


def test_runtime_sized_versus_fixed_arrays_and_const_lengths():
    m = mod(
        """
        const N = 4u;
        const M: u32 = N * 3u + 1u;
        @group(0) @binding(0) var<storage, read> rt: array<f32>;
        @group(0) @binding(1) var<storage, read> fx: array<f32, M>;
        @group(0) @binding(2) var<storage, read> nested: array<array<u32, N>, 2>;
        @group(0) @binding(3) var<uniform> ua: array<vec4<f32>, 3>;
        @compute @workgroup_size(1) fn main() { _ = rt[0]; _ = fx[0]; _ = nested[0]; _ = ua[0]; }
        """
    )
    b = m.bindings
    assert b["rt"].runtime_sized and b["rt"].fixed_size is None
    assert not b["fx"].runtime_sized and b["fx"].type.count == 13 and b["fx"].fixed_size == 52
    assert b["nested"].type.count == 2 and b["nested"].element.count == 4
    assert b["nested"].fixed_size == 32
    assert b["ua"].fixed_size == 48 and b["ua"].element_stride == 16
    assert m.consts["N"] == 4 and m.consts["M"] == 13


def test_overrides_are_reflected_and_usable_in_workgroup_size():
    m = mod(
        """
        override BLOCK: u32 = 32u;
        override SCALE = 0.5;
        @id(7) override DEPTH: i32;
        @id(2) override ROWS: u32 = 2u;
        @compute @workgroup_size(BLOCK, ROWS)
        fn main() {}
        """
    )
    o = m.overrides
    assert (o["BLOCK"].type, o["BLOCK"].default, o["BLOCK"].id) == ("u32", 32, None)
    assert (o["SCALE"].type, o["SCALE"].default) == ("", 0.5)
    assert (o["DEPTH"].type, o["DEPTH"].default, o["DEPTH"].id) == ("i32", None, 7)
    assert (o["ROWS"].default, o["ROWS"].id) == (2, 2)
    assert m.entry_points["main"].workgroup_size == (32, 2, 1)


@pytest.mark.parametrize(
    ("decl", "size"),
    [
        ("@workgroup_size(256)", (256, 1, 1)),
        ("@workgroup_size(8, 8)", (8, 8, 1)),
        ("@workgroup_size(4, 4, 4)", (4, 4, 4)),
        ("@workgroup_size(64u, 2i, 1)", (64, 2, 1)),
        ("@workgroup_size(WG, 2)", (64, 2, 1)),
        ("@workgroup_size(WG * 2u, WG / 32u)", (128, 2, 1)),
        ("@workgroup_size((WG + 1u) >> 1u,)", (32, 1, 1)),
        ("@workgroup_size(u32(16.0))", (16, 1, 1)),
        ("@workgroup_size(0x40)", (64, 1, 1)),
    ],
)
def test_workgroup_size_with_literals_and_module_scope_consts(decl, size):
    m = reflect(f"const WG = 64u;\n@compute {decl}\nfn main() {{}}\n")
    assert m.entry_points["main"].workgroup_size == size


@pytest.mark.parametrize(
    "decl",
    [
        "@workgroup_size(n_threads)",
        "@workgroup_size(0)",
        "@workgroup_size(-4)",
        "@workgroup_size(1.5)",
    ],
)
def test_a_workgroup_size_that_cannot_be_evaluated_is_that_entry_points_problem(decl):
    m = reflect(f"// x\n@compute {decl}\nfn main() {{}}\n", "m.wgsl")
    line, why = m.entry_problems["main"]
    assert line == 3 and "main" not in m.entry_points
    if decl in ("@workgroup_size(0)", "@workgroup_size(-4)"):
        assert "every size must be at least 1" in why
    else:
        assert why.startswith("cannot evaluate @workgroup_size")


def test_compute_without_workgroup_size_is_that_entry_points_problem():
    m = reflect("@compute fn main() {}\n@compute @workgroup_size(1) fn other() {}")
    assert "has no @workgroup_size" in m.entry_problems["main"][1]
    assert list(m.entry_points) == ["other"]


def test_comments_never_confuse_reflection():
    m = mod(
        """
        /* outer /* nested @group(0) @binding(9) var<storage> fake: array<f32>; */
           still a comment: @compute @workgroup_size(1) fn ghost() {} */
        // @group(0) @binding(8) var<uniform> commented: u32;
        const WG = /* not 3 */ 16u; // @workgroup_size(3)
        @group(/* g */ 0) @binding(/* b */ 1) var<storage, /* rw */ read_write> real: array</* t */ u32>;
        /**/ @group(0) @binding(2) var<uniform> n: u32; /* trailing */
        @compute /* attr */ @workgroup_size(WG /* , 9 */, 2)
        fn main() {
            // real[0] = fake[0]; commented: n;
            /* fake[1] = ghost(); */
            real[0] = n;
        }
        /* /* deeply /* nested */ */ @compute @workgroup_size(7) fn ghost2() {} */
        """
    )
    assert list(m.bindings) == ["real", "n"]
    assert (m.bindings["real"].group, m.bindings["real"].binding) == (0, 1)
    assert m.bindings["real"].access == "read_write"
    assert m.bindings["real"].line == 6
    assert list(m.entry_points) == ["main"]
    assert m.entry_points["main"].workgroup_size == (16, 2, 1)
    assert [b.name for b in m.entry_points["main"].bindings] == ["real", "n"]


def test_an_unterminated_block_comment_runs_to_the_end_as_the_compiler_reads_it():
    # naga accepts a block comment that is never closed (the rest of the module is comment), so
    # the front end reads it the same way instead of refusing a module wgpu compiles.
    m = reflect("const A = 1;\n/* /* */ never closed\n@compute @workgroup_size(1) fn f() {}\n")
    assert m.consts == {"A": 1} and not m.entry_points and not m.functions


def test_entry_points_bind_what_they_reach_through_called_functions():
    m = mod(
        """
        @group(0) @binding(0) var<storage, read> a: array<f32>;
        @group(0) @binding(1) var<storage, read_write> b: array<f32>;
        @group(0) @binding(2) var<storage, read_write> unused: array<f32>;
        @group(1) @binding(0) var<uniform> n: u32;
        fn load(i: u32) -> f32 { return a[i]; }
        fn store(i: u32, v: f32) { if (i < n) { b[i] = v; } }
        fn through(i: u32) { store(i, load(i)); }
        @compute @workgroup_size(64)
        fn copy(@builtin(global_invocation_id) gid: vec3<u32>) { through(gid.x); }
        @compute @workgroup_size(64)
        fn touch(@builtin(global_invocation_id) gid: vec3<u32>) { unused[gid.x] = 0.0; }
        """
    )
    assert [b.name for b in m.entry_points["copy"].bindings] == ["a", "b", "n"]
    assert [b.name for b in m.entry_points["touch"].bindings] == ["unused"]


F32_ATOMIC_SRC = "@group(0) @binding(0) var<storage, read_write> acc: array<{t}>;\n"


def test_an_f32_atomic_is_a_need_of_every_entry_point_of_its_module():
    # The compiler validates every type of a module: an entry point that never touches `acc`
    # still needs the feature on its device.
    m = reflect(
        F32_ATOMIC_SRC.format(t="atomic<f32>")
        + "@group(0) @binding(1) var<storage, read_write> out: array<f32>;\n"
        "@compute @workgroup_size(64) fn add() { atomicAdd(&acc[0], 1.5); }\n"
        "@compute @workgroup_size(64) fn fill() { out[0] = 1.0; }\n"
    )
    assert m.uses_f32_atomics
    assert m.entry_points["add"].features == ("shader-float32-atomic",)
    assert m.entry_points["fill"].features == ("shader-float32-atomic",)
    assert m.bindings["acc"].element.text == "atomic<f32>"


@pytest.mark.parametrize(
    ("src", "features"),
    [
        ("fn f(x: f32) -> f32 { return x; }", ()),
        ("fn f() -> f16 { return 1.0h; }", ("shader-f16",)),
        ("fn f() { let x = 1.5h; }", ("shader-f16",)),
        ("fn f() { let v: vec4h = vec4h(); }", ("shader-f16",)),
        ("fn f() { let x = 0x1fu; }", ()),
        ("fn f() -> u32 { return subgroupAdd(1u); }", ("subgroup",)),
        ("fn f(@builtin(subgroup_size) s: u32) {}", ("subgroup",)),
        ("// subgroupAdd(f16)\nfn f() {}", ()),
        (F32_ATOMIC_SRC.format(t="atomic<f32>"), ("shader-float32-atomic",)),
        ("alias F = f32;\n" + F32_ATOMIC_SRC.format(t="atomic<F>"), ("shader-float32-atomic",)),
        (F32_ATOMIC_SRC.format(t="atomic<u32>") + "fn f(x: f32) -> f32 { return x; }", ()),
        # One f16 word and one f32 atomic: both, whatever reaches them.
        (
            F32_ATOMIC_SRC.format(t="atomic<f32>") + "fn f() -> f16 { return 1.0h; }",
            ("shader-f16", "shader-float32-atomic"),
        ),
    ],
)
def test_features_are_detected_from_the_source(src, features):
    assert reflect(src).features == features


def test_unicode_identifiers_are_identifiers():
    m = reflect(
        "@group(0) @binding(0) var<storage, read_write> données: array<f32>;\n"
        "@compute @workgroup_size(1) fn main() { données[0] = 1.0; }\n"
    )
    assert list(m.bindings) == ["données"]
    assert [t.text for t in tokenize("let café = 1.5e3f;")] == [
        "let",
        "café",
        "=",
        "1.5e3f",
        ";",
        "",
    ]


@pytest.mark.parametrize(
    ("src", "why"),
    [
        ("@group(0) var<storage> a: array<f32>;", "needs @group and @binding"),
        ("@group(0) @binding(-1) var<storage> a: array<f32>;", "@binding needs"),
        ("@group(0) @binding(4294967296) var<storage> a: array<f32>;", "fits in u32"),
        ("@group(0) @binding(0) var<storage> a: array<f32, 0>;", "positive constant"),
        ("@group(0) @binding(0) var<storage> a: array<f32, 1e999>;", "positive constant"),
        ("@group(0) @binding(0) var<storage> a: vec3<Thing>;", "unknown type 'Thing'"),
        ("struct S { a: f32 }\n@group(0) @binding(0) var<storage> a: vec3<S>;", "scalar type"),
        ("@group(0) @binding(0) var<storage> a: atomic<vec2<u32>>;", "scalar type"),
        ("@group(0) @binding(0) var<storage> a: mat9x9<f32>;", "unknown type"),
        pytest.param(
            "const X = " + "(" * 3000 + "1" + ")" * 3000 + ";",
            "nested too deeply",
            id="deep-parens",
        ),
        pytest.param(
            "alias A = " + "array<" * 3000 + "f32" + ">" * 3000 + ";",
            "nested too deeply",
            id="deep-arrays",
        ),
        ("struct S { @align(3.5) a: f32 }", "@align on a struct member"),
        ("struct S { @size(0) a: f32 }", "@size on a struct member"),
        ("let x = 1;", "unexpected 'let' at module scope"),
        ("fn f() { $ }", "unexpected character"),
        ("struct S { a: f32", "unexpected end of source"),
    ],
)
def test_bad_declarations_are_reflection_errors(src, why):
    with pytest.raises(ReflectionError, match=why):
        reflect(src)


def test_shipped_kernels_reflect_with_one_entry_point_each(session):
    for k in session.corpus.kernels:
        ep = k.entry_point
        assert ep is not None and ep.name == k.name, k.name
        assert ep.workgroup_size[0] >= 1
        assert [(b.group, b.binding) for b in ep.bindings] == sorted(
            (b.group, b.binding) for b in ep.bindings
        )
