"""Uniform packing against byte layouts written out by hand, named edits (`dims.x=512`,
`params.scale=0.5`), and a kernel on the real adapter that echoes every uniform field back, so the
host's layout is checked against the one the shader compiler actually uses."""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest

from workbench.errors import UserError
from workbench.gpu.uniforms import default_value, pack_uniform, set_field
from workbench.wgsl.reflect import reflect

DECLS = """
struct P { a: u32, b: vec3<f32>, c: f32, d: vec2<u32> }
struct Inner { k: f32 }
struct Padded { a: f32, @align(16) @size(16) inner: Inner, @size(12) b: f32, c: u32 }
struct Params { scale: f32, n: u32, offset: i32 }
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@group(0) @binding(1) var<uniform> p: P;
@group(0) @binding(2) var<uniform> dims: vec4<u32>;
@group(0) @binding(3) var<uniform> scale: f32;
@group(0) @binding(4) var<uniform> padded: Padded;
@group(0) @binding(5) var<uniform> params: Params;
"""

ECHO = (
    DECLS
    + """
@compute @workgroup_size(1)
fn echo() {
    out[0] = p.a;
    out[1] = bitcast<u32>(p.b.x);
    out[2] = bitcast<u32>(p.b.y);
    out[3] = bitcast<u32>(p.b.z);
    out[4] = bitcast<u32>(p.c);
    out[5] = p.d.x;
    out[6] = p.d.y;
    out[7] = dims.x;
    out[8] = dims.y;
    out[9] = dims.z;
    out[10] = dims.w;
    out[11] = bitcast<u32>(scale);
    out[12] = bitcast<u32>(padded.a);
    out[13] = bitcast<u32>(padded.inner.k);
    out[14] = bitcast<u32>(padded.b);
    out[15] = padded.c;
    out[16] = bitcast<u32>(params.scale);
    out[17] = params.n;
    out[18] = bitcast<u32>(params.offset);
}
"""
)


def types():
    m = reflect(ECHO)
    return {name: b.type for name, b in m.bindings.items()}


def test_a_struct_of_u32_vec3_f32_vec2_packs_as_written_out_by_hand():
    t = types()["p"]
    value = {"a": 7, "b": [1.5, -2.25, 3.0], "c": 0.5, "d": [11, 12]}
    # a @0, 12 bytes of padding, b @16 (three f32), c @28, d @32, 8 bytes of tail padding: 48.
    want = struct.pack("<I12x3ff2I8x", 7, 1.5, -2.25, 3.0, 0.5, 11, 12)
    assert len(want) == 48
    assert pack_uniform(t, value) == want
    # Missing fields and components are zero.
    assert pack_uniform(t, {"b": [0, 1.0]}) == struct.pack("<16x4xf24x", 1.0)


def test_vec4_scalar_and_attribute_padded_structs_pack_as_written_out_by_hand():
    t = types()
    assert pack_uniform(t["dims"], [512, 0, 3, 9]) == struct.pack("<4I", 512, 0, 3, 9)
    assert pack_uniform(t["dims"], [512]) == struct.pack("<4I", 512, 0, 0, 0)
    assert pack_uniform(t["scale"], 0.25) == struct.pack("<f", 0.25)
    padded = {"a": 1.0, "inner": {"k": 2.0}, "b": 3.0, "c": 4}
    # a @0, inner @16 (@align(16)), b @32 (inner has @size(16)), c @44 (b has @size(12)).
    assert pack_uniform(t["padded"], padded) == struct.pack("<f12xf12xf8xI", 1.0, 2.0, 3.0, 4)
    assert pack_uniform(t["params"], {"scale": 0.5, "n": 3, "offset": -3}) == struct.pack(
        "<fIi4x", 0.5, 3, -3
    )
    u32 = reflect("@group(0) @binding(0) var<uniform> n: u32;").bindings["n"].type
    assert pack_uniform(u32, 4096) == struct.pack("<I", 4096)
    assert pack_uniform(u32, 4096.0) == struct.pack("<I", 4096)


def test_named_edits_set_one_field_and_keep_the_rest():
    t = types()
    dims = set_field(t["dims"], default_value(t["dims"]), ["x"], 512.0, "dims")
    assert dims == [512.0, 0, 0, 0]
    assert pack_uniform(t["dims"], dims) == struct.pack("<4I", 512, 0, 0, 0)
    dims = set_field(t["dims"], dims, ["3"], 9, "dims")
    assert pack_uniform(t["dims"], dims) == struct.pack("<4I", 512, 0, 0, 9)

    params = set_field(t["params"], {"n": 1024}, ["scale"], 0.5, "params")
    assert params == {"n": 1024, "scale": 0.5}
    assert pack_uniform(t["params"], params) == struct.pack("<fIi4x", 0.5, 1024, 0)

    p = set_field(t["p"], default_value(t["p"]), ["b", "y"], -2.0, "p")
    assert p["b"] == [0, -2.0, 0]
    k = set_field(t["padded"], default_value(t["padded"]), ["inner", "k"], 6.0, "padded")
    assert k["inner"] == {"k": 6.0}


@pytest.mark.parametrize(
    ("name", "path", "value", "why"),
    [
        ("params", ["nope"], 1, "no field 'nope'"),
        ("dims", ["q"], 1, "no component 'q'"),
        ("dims", ["4"], 1, "no component '4'"),
        ("dims", [], 1, "set one field"),
        ("scale", ["x"], 1, "is a scalar"),
        ("p", ["a", "x"], 1, "is a scalar"),
    ],
)
def test_bad_named_edits_are_user_errors(name, path, value, why):
    t = types()[name]
    with pytest.raises(UserError, match=why):
        set_field(t, default_value(t), path, value, name)


@pytest.mark.parametrize(
    ("name", "value", "why"),
    [
        ("params", {"n": 1.5}, "not an integer"),
        ("params", {"n": -1}, "does not fit in u32"),
        ("params", {"n": 2**32}, "does not fit in u32"),
        ("params", {"n": math.nan}, "not an integer"),
        ("params", {"offset": math.inf}, "not an integer"),
        ("params", {"scale": 1e300}, "does not fit in f32"),
        ("params", {"scale": "abc"}, "not a number"),
        ("params", {"bogus": 1}, "no field bogus"),
        ("params", [1, 2], "needs named fields"),
        ("dims", [1, 2, 3, 4, 5], "5 values given"),
        ("dims", "abc", "expected up to 4 numbers"),
    ],
)
def test_values_that_do_not_fit_are_user_errors(name, value, why):
    with pytest.raises(UserError, match=why):
        pack_uniform(types()[name], value, name)


def _words(*fmt_values: tuple[str, float]) -> list[int]:
    """u32 words of each value packed with its struct format (what bitcast<u32> gives)."""
    return [struct.unpack("<I", struct.pack(f"<{f}", v))[0] for f, v in fmt_values]


def test_the_gpu_reads_every_uniform_field_where_the_host_packed_it(make_corpus, on_corpus):
    sess = on_corpus(make_corpus({"echo.wgsl": ECHO}))
    sets = {
        "p.a": 7,
        "p.b.x": 1.5,
        "p.b.y": -2.25,
        "p.b.z": 3.0,
        "p.c": 0.5,
        "p.d.x": 11,
        "p.d.y": 12,
        "dims.x": 512,
        "dims.w": 9,
        "scale": 0.25,
        "padded.a": -1.0,
        "padded.inner.k": 6.5,
        "padded.b": 7.75,
        "padded.c": 8,
        "params.scale": 0.5,
        "params.offset": -3,
    }
    case = sess.case("echo", dims={"n": 19}, sets=sets)
    # Ad hoc: a struct member named n is the element count unless set.
    assert case.uniforms["params"]["n"] == 19
    out = sess.run(case).outputs["out"]
    want = _words(
        ("I", 7),
        ("f", 1.5),
        ("f", -2.25),
        ("f", 3.0),
        ("f", 0.5),
        ("I", 11),
        ("I", 12),
        ("I", 512),
        ("I", 0),
        ("I", 0),
        ("I", 9),
        ("f", 0.25),
        ("f", -1.0),
        ("f", 6.5),
        ("f", 7.75),
        ("I", 8),
        ("f", 0.5),
        ("I", 19),
        ("i", -3),
    )
    np.testing.assert_array_equal(out, np.array(want, dtype=np.uint32))
