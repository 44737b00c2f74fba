// The native float atomics variants of the seed's streaming attention backward (the shared
// body, attention_backward_body.wgsl): dK and dV bound as array<atomic<f32>> and added by one
// atomicAdd per element instead of a compare-and-swap loop on the f32 bits of the seed's
// array<atomic<u32>>. They need the device feature shader-float32-atomic (storage atomics only;
// no `enable`).
//
// - attention_backward_of32: attention_backward_o (attention_o.wgsl, the forward's O bound as
//   binding 11) with these adds.
// - attention_backward_f32: the seed's bindings with only dK and dV changed (no O: D by the seed
//   kernel's first pass).

// Adds v_k to the lanes of key j + k (k = 0..3) of dK that exist: one native f32 atomicAdd
// per lane, its result unused, so the compiler may issue a reduction that waits for no reply
// (the compare-and-swap loop waits out a round trip per try). Zeros are added too: x + 0 is x
// except for x = -0, which becomes +0, and a dK that starts at zeros (+0) never holds -0, since
// +0 + -0 is +0; a NaN or Inf is added as the compare-and-swap adds add it.
fn add_keys_dk(
    j: u32,
    kvh: u32,
    d: u32,
    v0: vec4<f32>,
    v1: vec4<f32>,
    v2: vec4<f32>,
    v3: vec4<f32>,
) {
    let t0 = lanes_ok(j + 0u, d);
    let t1 = lanes_ok(j + 1u, d);
    let t2 = lanes_ok(j + 2u, d);
    let t3 = lanes_ok(j + 3u, d);
    let i0 = lanes(j + 0u, kvh, d);
    let i1 = lanes(j + 1u, kvh, d);
    let i2 = lanes(j + 2u, kvh, d);
    let i3 = lanes(j + 3u, kvh, d);
    if (t0.x) { atomicAdd(&dK[i0.x], v0.x); }
    if (t0.y) { atomicAdd(&dK[i0.y], v0.y); }
    if (t0.z) { atomicAdd(&dK[i0.z], v0.z); }
    if (t0.w) { atomicAdd(&dK[i0.w], v0.w); }
    if (t1.x) { atomicAdd(&dK[i1.x], v1.x); }
    if (t1.y) { atomicAdd(&dK[i1.y], v1.y); }
    if (t1.z) { atomicAdd(&dK[i1.z], v1.z); }
    if (t1.w) { atomicAdd(&dK[i1.w], v1.w); }
    if (t2.x) { atomicAdd(&dK[i2.x], v2.x); }
    if (t2.y) { atomicAdd(&dK[i2.y], v2.y); }
    if (t2.z) { atomicAdd(&dK[i2.z], v2.z); }
    if (t2.w) { atomicAdd(&dK[i2.w], v2.w); }
    if (t3.x) { atomicAdd(&dK[i3.x], v3.x); }
    if (t3.y) { atomicAdd(&dK[i3.y], v3.y); }
    if (t3.z) { atomicAdd(&dK[i3.z], v3.z); }
    if (t3.w) { atomicAdd(&dK[i3.w], v3.w); }
}

// add_keys_dk for dV.
fn add_keys_dv(
    j: u32,
    kvh: u32,
    d: u32,
    v0: vec4<f32>,
    v1: vec4<f32>,
    v2: vec4<f32>,
    v3: vec4<f32>,
) {
    let t0 = lanes_ok(j + 0u, d);
    let t1 = lanes_ok(j + 1u, d);
    let t2 = lanes_ok(j + 2u, d);
    let t3 = lanes_ok(j + 3u, d);
    let i0 = lanes(j + 0u, kvh, d);
    let i1 = lanes(j + 1u, kvh, d);
    let i2 = lanes(j + 2u, kvh, d);
    let i3 = lanes(j + 3u, kvh, d);
    if (t0.x) { atomicAdd(&dV[i0.x], v0.x); }
    if (t0.y) { atomicAdd(&dV[i0.y], v0.y); }
    if (t0.z) { atomicAdd(&dV[i0.z], v0.z); }
    if (t0.w) { atomicAdd(&dV[i0.w], v0.w); }
    if (t1.x) { atomicAdd(&dV[i1.x], v1.x); }
    if (t1.y) { atomicAdd(&dV[i1.y], v1.y); }
    if (t1.z) { atomicAdd(&dV[i1.z], v1.z); }
    if (t1.w) { atomicAdd(&dV[i1.w], v1.w); }
    if (t2.x) { atomicAdd(&dV[i2.x], v2.x); }
    if (t2.y) { atomicAdd(&dV[i2.y], v2.y); }
    if (t2.z) { atomicAdd(&dV[i2.z], v2.z); }
    if (t2.w) { atomicAdd(&dV[i2.w], v2.w); }
    if (t3.x) { atomicAdd(&dV[i3.x], v3.x); }
    if (t3.y) { atomicAdd(&dV[i3.y], v3.y); }
    if (t3.z) { atomicAdd(&dV[i3.z], v3.z); }
    if (t3.w) { atomicAdd(&dV[i3.w], v3.w); }
}

// --- KERNEL: attention_backward_of32 ---
@group(0) @binding(6) var<storage, read_write> dK: array<atomic<f32>>;
@group(0) @binding(7) var<storage, read_write> dV: array<atomic<f32>>;
// The changed ABI: the forward's output, so that D = rowsum(dO * O) needs no pass over the keys.
@group(0) @binding(11) var<storage, read> O: array<f32>;

@compute @workgroup_size(256)
fn attention_backward_of32(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    backward(wid, lid);
}

// D = dO . O of the row role's query (FlashAttention-2's form): no pass over the keys.
fn row_d(t: RowTile) -> f32 {
    let hd = dims.w;
    let o_base = (t.sq * dims.y + t.h) * hd;
    var big_d = 0.0;
    for (var d = 0u; d < hd; d = d + 1u) {
        big_d = big_d + dO[o_base + d] * O[o_base + d];
    }
    return big_d;
}

// --- KERNEL: attention_backward_f32 ---
@group(0) @binding(6) var<storage, read_write> dK: array<atomic<f32>>;
@group(0) @binding(7) var<storage, read_write> dV: array<atomic<f32>>;

@compute @workgroup_size(256)
fn attention_backward_f32(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    backward(wid, lid);
}

// D by the seed kernel's first pass over the keys: this kernel binds no O.
fn row_d(t: RowTile) -> f32 {
    return d_first_pass(t);
}
