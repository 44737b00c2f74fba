"""What reflection now records per entry point: default-less overrides it needs (resolved when
values are given), whether it reads num_workgroups, the features of what it reaches, atomics
holding f32 bits, and swizzles that are not binding uses."""

from __future__ import annotations

import pytest

from workbench.errors import ReflectionError
from workbench.wgsl.reflect import reflect

SOURCE = """
override wg_size: u32;
override scale: f32 = 2.0;
@group(0) @binding(0) var<storage, read_write> acc: array<atomic<u32>>;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<uniform> dims: vec4<u32>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;
var<workgroup> tile: array<f32, wg_size>;

fn unused_helper() -> f32 { return subgroupAdd(1.0); }

fn add_f32(i: u32, v: f32) {
    var old = atomicLoad(&acc[i]);
    loop {
        let res = atomicCompareExchangeWeak(&acc[i], old, bitcast<u32>(bitcast<f32>(old) + v));
        if (res.exchanged) { break; }
        old = res.old_value;
    }
}

@compute @workgroup_size(wg_size)
fn reduce(@builtin(local_invocation_id) l: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    tile[l.x] = x[l.x] * scale;
    add_f32(l.x, tile[l.x]);
}

@compute @workgroup_size(64)
fn fill(@builtin(global_invocation_id) g: vec3<u32>) {
    if (g.x < dims.y) { x_out(g.x); }
}
fn x_out(i: u32) { y[i] = 1.0; }
"""


def test_default_less_override_is_needed_then_resolved() -> None:
    ep = reflect(SOURCE).entry_points["reduce"]
    assert ep.needs == ("wg_size",) and ep.workgroup_size == (1, 1, 1)
    resolved = reflect(SOURCE, overrides={"wg_size": 128}).entry_points["reduce"]
    assert resolved.needs == () and resolved.workgroup_size == (128, 1, 1)
    assert resolved.workgroup_bytes == 512 and resolved.workgroup_vars[0].type.count == 128


def test_num_workgroups_features_and_f32_bits_per_entry_point() -> None:
    info = reflect(SOURCE)
    reduce, fill = info.entry_points["reduce"], info.entry_points["fill"]
    assert reduce.reads_num_workgroups and not fill.reads_num_workgroups
    assert info.uses_subgroups and reduce.features == () and fill.features == ()
    assert reduce.f32_bits == ("acc",) and fill.f32_bits == ()
    # `dims.y` is a swizzle, not the binding `y`; fill reaches y through x_out.
    assert [b.name for b in fill.bindings] == ["dims", "y"]
    calls = SOURCE.replace("tile[l.x] = x[l.x] * scale;", "tile[l.x] = unused_helper();")
    assert reflect(calls).entry_points["reduce"].features == ("subgroup",)


def test_override_sizing_a_binding_needs_a_default() -> None:
    text = "override n: u32;\n@group(0) @binding(0) var<storage> a: array<f32, n>;\n"
    with pytest.raises(ReflectionError, match="sized by override n, which has no default"):
        reflect(text)


def test_unreached_subgroup_helper_does_not_refuse_a_fill(tmp_path) -> None:
    """Without the subgroup feature the compiler rejects a module in which any function calls a
    subgroup builtin; the fill's module leaves the unreached helper out (lines kept)."""
    import wgpu

    from workbench.wgsl.corpus import load_corpus

    (tmp_path / "k.wgsl").write_text(
        "@group(0) @binding(0) var<storage, read_write> out: array<f32>;\n"
        "@must_use\nfn helper(v: f32) -> f32 { return subgroupAdd(v); }\n"
        "@compute @workgroup_size(64)\n"
        "fn fill(@builtin(global_invocation_id) g: vec3<u32>) { out[g.x] = 1.0; }\n"
        "@compute @workgroup_size(64)\n"
        "fn reduce(@builtin(global_invocation_id) g: vec3<u32>) { out[g.x] = helper(1.0); }\n"
    )
    kernels = {k.name: k for k in load_corpus(tmp_path).kernels}
    fill, reduce = kernels["fill"], kernels["reduce"]
    assert fill.features == () and reduce.features == ("subgroup",)
    text, _ = fill.assemble(frozenset())
    assert "subgroupAdd" not in text and text.count("\n") == fill.text.count("\n")
    assert "subgroupAdd" in fill.assemble(frozenset({"subgroup"}))[0]
    adapter = next(
        a for a in wgpu.gpu.enumerate_adapters_sync() if "Vulkan" in a.info["backend_type"]
    )
    device = adapter.request_device_sync(required_features=[])
    module = device.create_shader_module(code=text)
    device.create_compute_pipeline(layout="auto", compute={"module": module, "entry_point": "fill"})
