"""Small WGSL modules written for the differential suite, legal and illegal, covering the grammar's
productions: module-scope declarations in any order, every statement, every expression form,
literals, template lists, attributes and directives, and the constructs issue 25 names.

`LEGAL` modules compile with wgpu (the suite checks it); `ILLEGAL` ones do not. Bodies are
wrapped in an entry point after `PRELUDE`, modules (`mod:`) stand alone.
"""

from __future__ import annotations

PRELUDE = """
struct S { a: f32, b: vec3<f32>, c: array<u32, 4> }
@group(0) @binding(0) var<storage, read_write> buf: array<f32>;
@group(0) @binding(1) var<storage, read_write> counter: atomic<u32>;
@group(0) @binding(2) var<uniform> u: vec4<u32>;
@group(0) @binding(3) var<storage, read_write> ints: array<atomic<i32>>;
var<private> private_value: f32;
var<workgroup> shared_data: array<f32, 64>;
fn helper(x: f32) -> f32 { return x * 2.0; }
fn bump(p: ptr<function, f32>) { *p += 1.0; }
"""


def body(text: str) -> str:
    return (
        PRELUDE
        + "@compute @workgroup_size(1)\n"
        + "fn main(@builtin(global_invocation_id) gid: vec3<u32>) {\n"
        + text
        + "\n}\n"
    )


ENTRY = "@compute @workgroup_size(1) fn main() {}\n"

LEGAL_BODIES = {
    # declarations
    "let": "let x = 1.0; buf[0] = x;",
    "let-typed": "let x: f32 = 1.0; buf[0] = x;",
    "var": "var x = 1.0; x = 2.0; buf[0] = x;",
    "var-typed-no-init": "var x: f32; x = 2.0; buf[0] = x;",
    "var-function-space": "var<function> x: i32 = 3; buf[0] = f32(x);",
    "const-local": "const k = 4; buf[0] = f32(k);",
    "const-assert-local": "const_assert 2 > 1;",
    # assignments
    "assign-index": "buf[gid.x] = 1.0;",
    "assign-member": "var s: S; s.a = 1.0; buf[0] = s.a;",
    "assign-swizzle-component": "var v = vec3f(); v.x = 1.0; buf[0] = v.x;",
    "compound-assign": "var x = 1.0; x += 2.0; x -= 1.0; x *= 3.0; x /= 2.0; buf[0] = x;",
    "compound-int": "var i = 7; i %= 3; i &= 3; i |= 4; i ^= 1; i <<= 1u; i >>= 1u; buf[0] = f32(i);",
    "increment": "var i = 0; i++; i--; buf[0] = f32(i);",
    "phony": "_ = buf[0];",
    "phony-call": "_ = helper(1.0);",
    "call-statement": "workgroupBarrier();",
    "storage-barrier": "storageBarrier();",
    # control flow
    "if": "if gid.x == 0u { buf[0] = 1.0; }",
    "if-parens": "if (gid.x == 0u) { buf[0] = 1.0; }",
    "if-else": "if gid.x == 0u { buf[0] = 1.0; } else { buf[0] = 2.0; }",
    "else-if-chain": "if gid.x == 0u { buf[0] = 1.0; } else if gid.x == 1u { buf[0] = 2.0; } "
    "else if gid.x == 2u { buf[0] = 3.0; } else { buf[0] = 4.0; }",
    "switch": "switch gid.x { case 0u: { buf[0] = 1.0; } case 1u, 2u: { buf[0] = 2.0; } "
    "default: { } }",
    "switch-no-colon": "switch i32(gid.x) { case 0 { } case 1, 2, { } default { } }",
    "switch-default-in-case": "switch gid.x { case 0u, default: { buf[0] = 1.0; } }",
    "switch-parens": "switch (gid.x) { default: {} }",
    "loop-break": "var i = 0; loop { if i > 3 { break; } i++; }",
    "loop-continuing": "var i = 0; loop { i++; continuing { break if i > 3; } }",
    "loop-continuing-body": "var i = 0; var j = 0; loop { if i > 3 { break; } continuing { i++; j += i; } }",
    "for": "for (var i = 0u; i < 4u; i++) { buf[i] = 0.0; }",
    "for-empty-parts": "var i = 0; for (;;) { if i > 2 { break; } i++; }",
    "for-assign-update": "for (var i = 0; i < 8; i += 2) { buf[u32(i)] = 1.0; }",
    "for-let-init": "for (let n = 4u; n < 4u; ) { }",
    "for-call-update": "var x = 0.0; for (var i = 0; i < 2; x = helper(x)) { i++; }",
    "while": "var i = 0; while i < 3 { i++; }",
    "while-parens": "var i = 0; while (i < 3) { i = i + 1; }",
    "continue": "for (var i = 0; i < 4; i++) { if i == 2 { continue; } buf[0] = f32(i); }",
    "nested-blocks": "{ let a = 1; { let b = a; { _ = b; } } }",
    "return-early": "if gid.x > 10u { return; } buf[0] = 1.0;",
    "empty-statements": ";;",
    "shadowing": "let x = 1; { let x = 2.0; buf[0] = x; } buf[1] = f32(x);",
    # expressions
    "arith": "let a = 1 + 2 * 3 - 4 / 2 % 3; buf[0] = f32(a);",
    "unary": "let a = -1; let b = !true; let c = ~0u; buf[0] = f32(a) + select(0.0, 1.0, b) + f32(c);",
    "double-negation": "let a = - -1; buf[0] = f32(a);",
    "comparison": "let a = 1 < 2; let b = 2 >= 1; let c = 1 != 2; buf[0] = select(0.0, 1.0, a && b && c);",
    "logic": "let a = true || false; let b = true && !false; buf[0] = select(0.0, 1.0, a && b);",
    "bitwise": "let a = (1u & 3u) | (4u ^ 5u); buf[0] = f32(a);",
    "shifts": "let a = 1u << 3u; let b = 256u >> 2u; buf[0] = f32(a + b);",
    "shift-vs-template": "let a = array<u32, 2>(1u, 2u)[0] >> 1u; buf[0] = f32(a);",
    "compare-vs-template": "let a = vec2<f32>(1.0)[0] > 0.5; buf[0] = select(0.0, 1.0, a);",
    "less-than-names": "let a = 1; let b = 2; let c = a < b; let d = a > b; buf[0] = select(0.0, 1.0, c || d);",
    "parens": "let a = ((1 + 2) * (3 + 4)); buf[0] = f32(a);",
    "index-chain": "var m: array<array<f32, 2>, 2>; m[1][0] = 1.0; buf[0] = m[1][0];",
    "member-chain": "var s: S; s.b.y = 1.0; s.c[1] = 2u; buf[0] = s.b.y + f32(s.c[1]);",
    "swizzles": "let v = vec4f(1.0, 2.0, 3.0, 4.0); let w = v.wzyx.xy; let r = v.rgb; buf[0] = w.x + r.z;",
    "swizzle-chain": "let v = vec4f(1.0); let w = v" + ".yzwx" * 40 + "; buf[0] = w.x;",
    "pointer-function": "var x = 1.0; let p = &x; *p = 2.0; buf[0] = *p;",
    "pointer-param": "var x = 1.0; bump(&x); buf[0] = x;",
    "pointer-composite-access": "var s: S; let p = &s; p.a = 3.0; buf[0] = (*p).a + p.a;",
    "address-of-index": "let p = &buf[0]; *p = 5.0;",
    "atomic-ops": "atomicAdd(&counter, 1u); let o = atomicLoad(&counter); atomicStore(&counter, o); "
    "_ = atomicMax(&counter, 2u); _ = atomicExchange(&counter, 0u);",
    "atomic-cas": "let r = atomicCompareExchangeWeak(&counter, 0u, 1u); buf[0] = f32(r.old_value);",
    "atomic-i32": "atomicSub(&ints[0], 1); atomicMin(&ints[0], -3); atomicAnd(&ints[0], 7);",
    "array-length": "buf[0] = f32(arrayLength(&buf));",
    "bitcast": "let a = bitcast<u32>(1.0); let b = bitcast<f32>(a); let c = bitcast<vec2<i32>>(vec2<f32>(1.0)); "
    "buf[0] = b + f32(c.x);",
    "workgroup-var": "shared_data[0] = 1.0; workgroupBarrier(); buf[0] = shared_data[0];",
    "private-var": "private_value = 2.0; buf[0] = private_value;",
    "uniform-read": "buf[0] = f32(u.x + u.w);",
    "workgroup-uniform-load": "let x = workgroupUniformLoad(&shared_data[0]); buf[0] = x;",
    # literals
    "int-literals": "let a = 0; let b = 123; let c = 0x1F; let d = 4u; let e = 5i; let f = 0xffu; "
    "buf[0] = f32(a + b + c + e) + f32(d + f);",
    "float-literals": "let a = 1.0; let b = .5; let c = 1.; let d = 1e3; let e = 1.5e-2f; let f = 2f; "
    "let g = 0f; buf[0] = a + b + c + d + e + f + g;",
    "hex-floats": "let a = 0x1p4; let b = 0x1.8p1f; let c = 0xa.bp-2; buf[0] = a + b + c;",
    "bool-literals": "let t = true; let f = false; buf[0] = select(0.0, 1.0, t != f);",
    # constructors and conversions
    "vec-constructors": "let a = vec2<f32>(1.0, 2.0); let b = vec3(a, 3.0); let c = vec4f(b, 4.0); "
    "let d = vec2i(); let e = vec4u(1u); buf[0] = c.w + f32(d.x) + f32(e.z);",
    "mat-constructors": "let m = mat2x2<f32>(1.0, 2.0, 3.0, 4.0); let n = mat2x2f(vec2f(1.0), vec2f(2.0)); "
    "let v = m * n * vec2f(1.0); buf[0] = v.x + m[1][0];",
    "mat3-inferred": "let m = mat3x3(vec3f(1.0), vec3f(2.0), vec3f(3.0)); buf[0] = m[2].z;",
    "array-constructors": "let a = array<f32, 3>(1.0, 2.0, 3.0); let b = array(1, 2, 3); "
    "buf[0] = a[1] + f32(b[2]);",
    "struct-constructor": "let s = S(1.0, vec3f(2.0), array<u32, 4>(1u, 2u, 3u, 4u)); buf[0] = s.b.z;",
    "zero-values": "let a = f32(); let b = S(); let c = array<i32, 2>(); buf[0] = a + b.a + f32(c[0]);",
    "conversions": "let a = f32(1u); let b = u32(2.9); let c = i32(-1.5); let d = bool(1); "
    "buf[0] = a + f32(b) + f32(c) + select(0.0, 1.0, d);",
    # builtin functions
    "numeric-builtins": "let x = 0.5; buf[0] = abs(-x) + min(x, 1.0) + max(x, 0.0) + clamp(x, 0.0, 1.0) "
    "+ sqrt(x) + exp(x) + log(x + 1.0) + sin(x) + cos(x) + tanh(x) + floor(x) + ceil(x) + fract(x);",
    "more-builtins": "let v = vec3f(1.0, 2.0, 3.0); buf[0] = dot(v, v) + length(v) + distance(v, v) "
    "+ cross(v, v).x + normalize(v).y + mix(0.0f, 1.0f, 0.5f) + step(0.5f, 1.0f) "
    "+ smoothstep(0.0f, 1.0f, 0.5f) + fma(1.0f, 2.0f, 3.0f) + pow(2.0f, 3.0f) + sign(-2.0f) "
    "+ saturate(2.0f) + inverseSqrt(4.0f);",
    # naga accepts these, so the front end must too
    "const-u32-overflow-naga-wraps": "const k = 4294967295u + 1u;",
    "bitcast-vec2-from-f32-unused": "let a = bitcast<vec2<u32>>(1.0);",
    "int-builtins": "let a = 12u; buf[0] = f32(countOneBits(a) + reverseBits(a) + firstLeadingBit(a) "
    "+ firstTrailingBit(a) + extractBits(a, 1u, 2u) + insertBits(a, 1u, 0u, 1u));",
    "select-vector": "let v = select(vec2f(0.0), vec2f(1.0), vec2<bool>(true, false)); buf[0] = v.x;",
    "all-any": "let b = vec3<bool>(true, false, true); buf[0] = select(0.0, 1.0, all(b) || any(b));",
    "pack-unpack": "let p = pack4x8unorm(vec4f(0.5)); let v = unpack4x8unorm(p); "
    "let q = pack2x16float(vec2f(1.0)); buf[0] = v.x + unpack2x16float(q).y;",
    "transpose-determinant": "let m = mat2x2f(1.0, 2.0, 3.0, 4.0); buf[0] = determinant(m) + transpose(m)[0][1];",
    "user-function-call": "buf[0] = helper(helper(1.0));",
    # comments and spacing
    "comments": "/* block /* nested */ */ let a = 1; // line\n buf[0] = f32(a); /**/",
    "tabs-and-crlf": "let a = 1;\r\n\tlet b = a;\r\n\tbuf[0] = f32(b);",
    "cr-only": "let a = 1;\rbuf[0] = f32(a);",
    "unicode-ident": "let données = 1.0; buf[0] = données;",
    "subgroups": "let s = subgroupAdd(1.0); buf[0] = s;",
}

LEGAL_MODULES = {
    "struct-after-use": "@group(0) @binding(0) var<uniform> params: Params;\n"
    "@group(0) @binding(1) var<storage, read_write> out: array<f32>;\n"
    "struct Params { n: u32, scale: f32 }\n"
    "@compute @workgroup_size(64) fn main() { out[0] = params.scale * f32(params.n); }\n",
    "const-max-array-size": "const kv_shmem_size = 64 * max(64, 64);\n"
    "var<workgroup> kv: array<f32, kv_shmem_size>;\n"
    "@group(0) @binding(0) var<storage, read_write> out: array<f32>;\n"
    "@compute @workgroup_size(64) fn main() { kv[0] = 1.0; out[0] = kv[0]; }\n",
    "const-clamp-select": "const A = clamp(300, 1, 256);\nconst B = select(8, 16, A > 128);\n"
    "@compute @workgroup_size(A, B / 8) fn main() {}\n",
    "alias": "alias Row = array<f32, 4>;\nalias F = f32;\nvar<private> r: Row;\nvar<private> f: F;\n"
    + ENTRY,
    "alias-before-struct": "alias P = Pair;\nstruct Pair { a: f32, b: f32 }\nvar<private> p: P;\n"
    + ENTRY,
    "const-any-order": "const B = A * 2;\nconst A = 4;\nvar<private> arr: array<f32, B>;\n" + ENTRY,
    "override-default": "override BLOCK: u32 = 64u;\n@compute @workgroup_size(BLOCK) fn main() {}\n",
    "override-id": "@id(3) override SCALE: f32 = 1.0;\n"
    "@group(0) @binding(0) var<storage, read_write> out: array<f32>;\n"
    "@compute @workgroup_size(1) fn main() { out[0] = SCALE; }\n",
    "override-expression": "override A = 4u;\noverride B = A * 2u;\n@compute @workgroup_size(B) fn main() {}\n",
    "override-sized-workgroup": "override N = 16u;\nvar<workgroup> w: array<f32, N>;\n"
    "@compute @workgroup_size(1) fn main() { w[0] = 1.0; }\n",
    "const-assert": "const_assert 1 + 1 == 2;\nconst X = 3;\nconst_assert X > 2;\n" + ENTRY,
    "const-assert-before-const": "const_assert Y < 10;\nconst Y = 2;\n" + ENTRY,
    "diagnostic-directive": "diagnostic(off, derivative_uniformity);\n" + ENTRY,
    "requires": "requires readonly_and_readwrite_storage_textures;\n" + ENTRY,
    "requires-spaces": "requires" + " " * 200 + "pointer_composite_access;\n" + ENTRY,
    "enable-f16": "enable f16;\nvar<private> h: f16 = 1.0h;\nconst H = vec2h(1.0h, 2.0h);\n"
    + ENTRY,
    "enable-list": "enable f16, f16;\n" + ENTRY,
    "struct-attributes": "struct T { @align(16) a: f32, @size(32) b: vec2<f32>, c: u32, }\n"
    "@group(0) @binding(0) var<storage, read_write> t: T;\n"
    "@compute @workgroup_size(1) fn main() { t.c = 1u; }\n",
    "nested-templates": "var<private> a: array<array<vec4<f32>, 2>, 3>;\n"
    "var<private> b: array<vec2<u32>,2>;\n" + ENTRY,
    "template-trailing-comma": "var<private> a: array<f32, 4,>;\nvar<private> v: vec2<f32,>;\n"
    + ENTRY,
    "ptr-types": "fn f(p: ptr<function, f32>) -> f32 { return *p; }\n"
    "fn g(p: ptr<private, array<f32, 4>>) { (*p)[0] = 1.0; }\n"
    "@group(0) @binding(0) var<storage, read_write> out: array<f32>;\n"
    "@compute @workgroup_size(1) fn main() { var x = 1.0; out[0] = f(&x); }\n",
    "multiple-entry-points": "@compute @workgroup_size(8) fn a() {}\n@compute @workgroup_size(4, 4) fn b() {}\n"
    "@compute @workgroup_size(2, 2, 2) fn c() {}\n",
    "workgroup-size-trailing-comma": "@compute @workgroup_size(8, 2,) fn main() {}\n",
    "workgroup-size-const-expr": "const W = 8u;\n@compute @workgroup_size(W * 2u, W / 4u) fn main() {}\n",
    "workgroup-size-max": "@compute @workgroup_size(16384) fn main() {}\n",
    "builtins-struct-param": "struct In { @builtin(global_invocation_id) gid: vec3<u32>, "
    "@builtin(local_invocation_index) li: u32 }\n"
    "@compute @workgroup_size(1) fn main(inp: In) { _ = inp.gid.x + inp.li; }\n",
    "many-builtins": "@compute @workgroup_size(1) fn main(@builtin(local_invocation_id) lid: vec3<u32>, "
    "@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) "
    "{ _ = lid.x + wid.y + nwg.z; }\n",
    "fn-attributes-on-lines": "@compute\n@workgroup_size(\n  4,\n  1\n)\nfn main(\n) {\n}\n",
    "must-use": "@must_use fn f() -> i32 { return 1; }\n@compute @workgroup_size(1) fn main() { _ = f(); }\n",
    "texture-sampler-decls": "@group(0) @binding(0) var tex: texture_2d<f32>;\n"
    "@group(0) @binding(1) var samp: sampler;\n"
    "@group(0) @binding(2) var st: texture_storage_2d<rgba8unorm, write>;\n"
    "@group(0) @binding(3) var<storage, read_write> out: array<f32>;\n"
    "@compute @workgroup_size(1) fn main() { out[0] = textureLoad(tex, vec2i(0), 0).x; "
    "textureStore(st, vec2i(0), vec4f(1.0)); _ = samp; }\n",
    "runtime-array-struct": "struct Buf { n: u32, data: array<f32> }\n"
    "@group(0) @binding(0) var<storage, read_write> b: Buf;\n"
    "@compute @workgroup_size(1) fn main() { b.data[0] = f32(b.n); }\n",
    "fn-any-order": "@compute @workgroup_size(1) fn main() { later(); }\nfn later() {}\n",
    "recursion-free-chain": "fn a() -> f32 { return b() + 1.0; }\nfn b() -> f32 { return c(); }\n"
    "fn c() -> f32 { return 1.0; }\n@compute @workgroup_size(1) fn main() { _ = a(); }\n",
    "semicolons-at-module-scope": ";\nconst A = 1;;\n" + ENTRY,
    "struct-trailing-semicolon": "struct P { a: f32 };\n" + ENTRY,
    "global-const-vector": "const V = vec3(1, 2, 3) * 2;\nconst W = V.zy;\n"
    "@compute @workgroup_size(W.x) fn main() {}\n",
    "abstract-float-const": "const PI = 3.14159;\nconst HALF = PI / 2.0;\nvar<private> x: f32 = HALF;\n"
    + ENTRY,
    "const-array-index": "const T = array(1, 2, 4, 8);\n@compute @workgroup_size(T[3]) fn main() {}\n",
    "const-struct-member": "struct C { n: u32 }\nconst K = C(32u);\n@compute @workgroup_size(K.n) fn main() {}\n",
    "const-shifts-bits": "const A = (1u << 5u) | 3u;\nconst B = ~0u >> 28u;\n@compute @workgroup_size(A, B) fn main() {}\n",
    "unterminated-comment-runs-to-the-end": ENTRY + "/* never closed\nfn f() {}\n",
    "bom-free-unicode-comment": "// café ünïcödé\n" + ENTRY,
    "line-comment-cr": "// a comment\rconst A = 1;\r" + ENTRY,
    "vertex-and-fragment": "@vertex fn vs() -> @builtin(position) vec4f { return vec4f(0.0); }\n"
    "@fragment fn fs() -> @location(0) vec4f { return vec4f(1.0); }\n" + ENTRY,
    "interpolate-attrs": "struct V { @builtin(position) p: vec4f, @location(0) @interpolate(flat) i: u32 }\n"
    "@vertex fn vs() -> V { return V(vec4f(0.0), 0u); }\n" + ENTRY,
    "subgroup-builtins-param": "@compute @workgroup_size(32) fn main(@builtin(subgroup_size) sg: u32, "
    "@builtin(subgroup_invocation_id) sid: u32) { _ = subgroupBroadcastFirst(sg + sid); }\n",
}

ILLEGAL_BODIES = {
    "missing-expression": "let x = ;",
    "missing-semicolon": "let x = 1 let y = 2;",
    "unknown-identifier": "buf[0] = nope;",
    "type-mismatch": "let x: u32 = 1.5;",
    "mixed-int-types": "let a = 1u + 1i;",
    "assign-to-let": "let x = 1; x = 2;",
    "break-outside-loop": "break;",
    "continue-outside-loop": "continue;",
    "call-unknown-function": "nope();",
    "wrong-arg-count": "_ = helper(1.0, 2.0);",
    "bad-swizzle": "let v = vec2f(); let w = v.xyzq;",
    "index-scalar": "let a = 1.0; let b = a[0];",
    "unclosed-paren": "let x = (1 + 2;",
    "const-from-runtime": "const k = gid.x;",
    "division-by-zero-const": "const k = 1 / 0;",
    # naga does not implement these yet: the front end reads them and leaves the verdict to it
    "diagnostic-on-loop": "var i = 0; @diagnostic(off, derivative_uniformity) loop { i++; if i > 1 { break; } }",
    "diagnostic-on-if": "@diagnostic(off, derivative_uniformity) if true { }",
    "redeclared-local": "let x = 1; let x = 2;",
    "return-value-from-entry": "return 1;",
    "bool-arith": "let a = true + 1;",
    "break-if-outside-continuing": "loop { break if true; }",
    "else-without-if": "else { }",
    "bad-compound-op": "var x = 1; x **= 2;",
    "deref-non-pointer": "let x = 1.0; let y = *x;",
    "store-to-uniform": "u.x = 1u;",
    "bitcast-result-mismatch": "let a: f32 = bitcast<u32>(1.0);",
}

ILLEGAL_MODULES = {
    "unknown-type": "var<private> x: Thing;\n" + ENTRY,
    "unterminated-struct": "struct S { a: f32\n" + ENTRY,
    "storage-pointer-param": "fn h(p: ptr<storage, array<f32>, read_write>) { (*p)[0] = 1.0; }\n"
    + ENTRY,
    "let-at-module-scope": "let x = 1;\n" + ENTRY,
    "bom": "\ufeff" + ENTRY,
    "unknown-enable": "enable chromium_experimental_subgroup_matrix;\n" + ENTRY,
    "unknown-requires": "requires no_such_extension;\n" + ENTRY,
    "enable-after-decl": "const A = 1;\nenable f16;\n" + ENTRY,
    "workgroup-size-zero": "@compute @workgroup_size(0) fn main() {}\n",
    "workgroup-size-too-big": "@compute @workgroup_size(4294967295) fn main() {}\n",
    "workgroup-size-over-16384": "@compute @workgroup_size(16385) fn main() {}\n",
    "workgroup-size-negative": "@compute @workgroup_size(-4) fn main() {}\n",
    "no-workgroup-size": "@compute fn main() {}\n",
    "unknown-function-attribute": "@compute @workgroup_size(1) @fast fn main() {}\n",
    "misspelt-workgroup-size": "@compute @workgroupsize(1) fn main() {}\n",
    "array-size-zero": "@group(0) @binding(0) var<storage> a: array<f32, 0>;\n" + ENTRY,
    "binding-without-group": "@binding(0) var<storage> a: array<f32>;\n" + ENTRY,
    "const-assert-false": "const_assert 1 > 2;\n" + ENTRY,
    "vec-of-struct": "struct S { a: f32 }\nvar<private> v: vec3<S>;\n" + ENTRY,
    "atomic-of-vec": "var<workgroup> a: atomic<vec2<u32>>;\n" + ENTRY,
    "unknown-matrix": "var<private> m: mat9x9<f32>;\n" + ENTRY,
    "duplicate-function": "fn f() {}\nfn f() {}\n" + ENTRY,
    "duplicate-struct": "struct A { x: f32 }\nstruct A { y: f32 }\n" + ENTRY,
    "cyclic-const": "const A = B;\nconst B = A;\n" + ENTRY,
    "recursion": "fn f() { f(); }\n" + ENTRY,
    "bad-align": "struct S { @align(3) a: f32 }\n" + ENTRY,
    "stray-character": "const A = 1 $ 2;\n" + ENTRY,
    "missing-fn-body": "fn f()\n" + ENTRY,
    "garbage-after-module": ENTRY + "}}}\n",
}


def all_cases() -> list[tuple[str, str, bool]]:
    """(id, module text, legal) for every case."""
    out = [(f"body:{k}", body(v), True) for k, v in LEGAL_BODIES.items()]
    out += [(f"mod:{k}", v, True) for k, v in LEGAL_MODULES.items()]
    out += [(f"bad-body:{k}", body(v), False) for k, v in ILLEGAL_BODIES.items()]
    out += [(f"bad-mod:{k}", v, False) for k, v in ILLEGAL_MODULES.items()]
    return out
