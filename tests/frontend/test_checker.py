"""The resolver, type checker and const-expression evaluator without a GPU: values worked out by hand
from the WGSL spec's rules (integer division truncates, i32 to u32 keeps the bits, abstract
numerics convert to what they meet), the types of expressions, and names resolved to their
declarations whatever the order of declarations."""

from __future__ import annotations

import pytest

from workbench.wgsl import syntax as s
from workbench.wgsl.checker import check
from workbench.wgsl.parser import parse


@pytest.mark.parametrize(
    ("expr", "type_text", "value"),
    [
        ("64 * max(64, 64)", "abstract-int", 4096),
        ("vec3(1, 2, 3) * 2", "vec3<abstract-int>", (2, 4, 6)),
        ("vec4(1.0, 2.0, 3.0, 4.0).wzx", "vec3<abstract-float>", (4.0, 3.0, 1.0)),
        ("select(1, 2, true)", "abstract-int", 2),
        ("select(1u, 2u, 3 < 2)", "u32", 1),
        ("clamp(300, 1, 256)", "abstract-int", 256),
        ("min(3u, 2u) + abs(-4i)", "?", None),  # u32 + i32: no such operator
        ("abs(-4i) - 5", "i32", -1),
        ("u32(-1i)", "u32", 4294967295),
        ("i32(4294967295u)", "i32", -1),
        ("u32(2.9)", "u32", 2),
        ("i32(-1.5)", "i32", -1),
        ("7 / -2", "abstract-int", -3),
        ("7 % -2", "abstract-int", 1),
        ("-7 % 2", "abstract-int", -1),
        ("1.5 + 1", "abstract-float", 2.5),
        ("0x1p4", "abstract-float", 16.0),
        ("0x1Fu", "u32", 31),
        ("~0u >> 28u", "u32", 15),
        ("(1u << 5u) | 3u", "u32", 35),
        ("array(1, 2, 4, 8)[3]", "abstract-int", 8),
        ("2.0f * 3", "f32", 6.0),
        ("1.0h + 1", "f16", 2.0),
        ("f32(1u) / 4.0", "f32", 0.25),
        ("1 / 0", "abstract-int", None),  # the compiler's error to give, not a value
        ("4294967295u + 1u", "u32", None),
        ("dot(vec2(1, 2), vec2(3, 4))", "abstract-int", 11),
        ("all(vec2(true, false))", "bool", False),
        ("!(1 < 2) || 2 >= 2", "bool", True),
        ("sqrt(16.0)", "abstract-float", 4.0),
        ("vec2<f32>()", "vec2<f32>", (0.0, 0.0)),
        ("vec3u(7u)", "vec3<u32>", (7, 7, 7)),
        ("mat2x2f(1.0, 2.0, 3.0, 4.0)[1]", "vec2<f32>", (3.0, 4.0)),
        ("mat2x2(vec2(1.0, 2.0), vec2(3.0, 4.0))[0].y", "abstract-float", 2.0),
    ],
)
def test_const_expressions(expr, type_text, value):
    tree = parse(f"const X = {expr};\n")
    result = check(tree).global_value("X")
    assert result.type.text == type_text
    assert result.value == value


def test_declared_types_convert_abstract_values():
    checker = check(parse("const A: u32 = 3;\nconst B: f32 = A2 * 2;\nconst A2 = 0.5;\n"))
    assert checker.global_value("A").type.text == "u32" and checker.global_value("A").value == 3
    assert checker.global_value("B").value == 1.0


def test_expression_types_inside_functions_and_names_resolved_in_any_order():
    tree = parse(
        """
        fn f(p: ptr<function, S>) -> f32 { return (*p).v.y + p.w; }
        @compute @workgroup_size(1) fn main() {
            var s: S;
            let a = f(&s);
            let b = s.v.xz;
            let c = m * s.v;
            let d = atomicLoad(&counter);
            let e = s.arr[1];
            let g = bitcast<u32>(a);
            let h = arrayLength(&data);
        }
        var<private> m: mat3x3<f32>;
        struct S { v: vec3<f32>, w: f32, arr: array<i32, 4> }
        var<workgroup> counter: atomic<u32>;
        @group(0) @binding(0) var<storage> data: array<f32>;
        """
    )
    checker = check(tree)
    main = next(f for f in tree.functions() if f.name == "main")
    lets = {st.name: st for st in main.body.body if isinstance(st, s.VarDecl) and st.kind == "let"}
    types = {name: checker.types[id(st.init)].text for name, st in lets.items()}
    assert types == {
        "a": "f32",
        "b": "vec2<f32>",
        "c": "vec3<f32>",
        "d": "u32",
        "e": "i32",
        "g": "u32",
        "h": "u32",
    }
    # `s` in `s.v.xz` resolves to the local `var s`, `m` to the module-scope matrix declared later.
    b_init = lets["b"].init
    assert isinstance(b_init, s.Member) and isinstance(b_init.base, s.Member)
    s_ident = b_init.base.base
    assert checker.resolved[id(s_ident)] is main.body.body[0]
    c_init = lets["c"].init
    assert isinstance(c_init, s.Binary) and isinstance(c_init.lhs, s.Ident)
    m_decl = next(d for d in tree.decls if isinstance(d, s.VarDecl) and d.name == "m")
    assert checker.resolved[id(c_init.lhs)] is m_decl
    assert not checker.unknowns


def test_overrides_take_the_values_a_case_gives():
    tree = parse("override N: u32 = 4u;\noverride M: u32;\nconst_assert true;\n")
    assert check(tree).global_value("N").value == 4
    given = check(tree, overrides={"N": 16, "M": 3})
    assert given.global_value("N").value == 16 and given.global_value("M").value == 3
    waiting = check(tree)
    assert waiting.global_value("M").value is None and "M" in waiting.pending


def test_what_it_cannot_work_out_is_unknown_not_an_error():
    checker = check(parse("fn f() { let x = mystery(1) + thing; }\n"))
    assert {why for _, why in checker.unknowns} == {
        "no rule for the builtin 'mystery'",
        "'thing' is not declared",
    }


def _let_types(source: str) -> tuple[dict[str, str], list[str]]:
    """The type of every `let` in the module's functions, and what the checker could not work out."""
    tree = parse(source)
    checker = check(tree)
    lets = {
        st.name: checker.types[id(st.init)].text
        for f in tree.functions()
        for st in s.walk(f.body)
        if isinstance(st, s.VarDecl) and st.kind == "let" and st.init is not None
    }
    return lets, [why for _, why in checker.unknowns]


def test_textures_and_samplers_have_their_wgsl_types_and_their_builtins_results():
    types, unknowns = _let_types(
        """
        @group(0) @binding(0) var img: texture_2d<f32>;
        @group(0) @binding(1) var ids: texture_2d_array<u32>;
        @group(0) @binding(2) var vol: texture_3d<i32>;
        @group(0) @binding(3) var dep: texture_depth_2d;
        @group(0) @binding(4) var st: texture_storage_2d<r32sint, write>;
        @group(0) @binding(5) var line: texture_1d<f32>;
        @group(0) @binding(6) var samp: sampler;
        @group(0) @binding(7) var cmp: sampler_comparison;
        @compute @workgroup_size(8, 8)
        fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
            let t = img;
            let sm = samp;
            let dims = textureDimensions(img, 0);
            let vdims = textureDimensions(vol);
            let ldims = textureDimensions(line);
            let layers = textureNumLayers(ids);
            let texel = textureLoad(img, vec2<i32>(gid.xy), 0);
            let id = textureLoad(ids, vec2<i32>(gid.xy), 1, 0).x;
            let voxel = textureLoad(vol, vec3<i32>(gid), 0);
            let depth = textureLoad(dep, vec2<i32>(gid.xy), 0);
            let sampled = textureSampleLevel(img, samp, vec2<f32>(0.5), 0.0);
            let gathered = textureGather(1, img, samp, vec2<f32>(0.5));
            let shadow = textureSampleCompareLevel(dep, cmp, vec2<f32>(0.5), 0.5);
            let sdims = textureDimensions(st);
            textureStore(st, vec2<i32>(gid.xy), vec4<i32>(voxel.x));
            let sum = texel.x + sampled.y + depth + shadow + f32(dims.x + layers + id);
        }
        """
    )
    assert unknowns == []
    assert types == {
        "t": "texture_2d<f32>",
        "sm": "sampler",
        "dims": "vec2<u32>",
        "vdims": "vec3<u32>",
        "ldims": "u32",
        "layers": "u32",
        "texel": "vec4<f32>",
        "id": "u32",
        "voxel": "vec4<i32>",
        "depth": "f32",
        "sampled": "vec4<f32>",
        "gathered": "vec4<f32>",
        "shadow": "f32",
        "sdims": "vec2<u32>",
        "sum": "f32",
    }


def test_a_storage_texture_reads_as_its_formats_channel_type():
    types, unknowns = _let_types(
        """
        @group(0) @binding(0) var a: texture_storage_2d<rgba32uint, read>;
        @group(0) @binding(1) var b: texture_storage_3d<rgba16float, read_write>;
        fn f() {
            let x = textureLoad(a, vec2<i32>(0));
            let y = textureLoad(b, vec3<i32>(0));
        }
        """
    )
    assert unknowns == []
    assert types == {"x": "vec4<u32>", "y": "vec4<f32>"}
