// attention_backward_o: the seed's streaming attention backward (the shared body,
// attention_backward_body.wgsl) with one more binding, 11, the forward's output O. With O bound,
// D = sum_j P dP of each query row is rowsum(dO * O), a dot product of one row, instead of a
// first pass over every visible key (the seed ABI has no O and no scratch for D, so the shipped
// kernel walks the keys twice). dK and dV stay the seed's array<atomic<u32>>, added by f32
// compare-and-swap.

// --- KERNEL: attention_backward_o ---
@group(0) @binding(6) var<storage, read_write> dK: array<atomic<u32>>;
@group(0) @binding(7) var<storage, read_write> dV: array<atomic<u32>>;
// The changed ABI: the forward's output, so that D = rowsum(dO * O) needs no pass over the keys.
@group(0) @binding(11) var<storage, read> O: array<f32>;

@compute @workgroup_size(256)
fn attention_backward_o(
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

// Not +0 or -0, from the bits: `v != 0.0` may compile to an ordered compare, false for NaN.
fn nonzero4(v: vec4<f32>) -> vec4<bool> {
    return (bitcast<vec4<u32>>(v) & vec4<u32>(0x7fffffffu)) != vec4<u32>(0u);
}

// Adds v_k to the lanes of key j + k (k = 0..3) of dK, as f32 compare-and-swap on the bits. The
// sixteen loads, then each round's sixteen compare-and-swaps, are issued before any result is
// looked at, so their round trips to L2 overlap (one add after another waited out 32 round
// trips per invocation and key tile). A zero is not added (x + 0 would only turn -0 into +0);
// a lane that is not added still loads an element that exists, and never writes it.
fn add_keys_dk(
    j: u32,
    kvh: u32,
    d: u32,
    v0: vec4<f32>,
    v1: vec4<f32>,
    v2: vec4<f32>,
    v3: vec4<f32>,
) {
    let last = arrayLength(&dK) - 1u;
    let i0 = min(lanes(j + 0u, kvh, d), vec4<u32>(last));
    let i1 = min(lanes(j + 1u, kvh, d), vec4<u32>(last));
    let i2 = min(lanes(j + 2u, kvh, d), vec4<u32>(last));
    let i3 = min(lanes(j + 3u, kvh, d), vec4<u32>(last));
    var t0 = lanes_ok(j + 0u, d) & nonzero4(v0);
    var t1 = lanes_ok(j + 1u, d) & nonzero4(v1);
    var t2 = lanes_ok(j + 2u, d) & nonzero4(v2);
    var t3 = lanes_ok(j + 3u, d) & nonzero4(v3);
    var o0 = vec4<u32>(atomicLoad(&dK[i0.x]), atomicLoad(&dK[i0.y]), atomicLoad(&dK[i0.z]),
        atomicLoad(&dK[i0.w]));
    var o1 = vec4<u32>(atomicLoad(&dK[i1.x]), atomicLoad(&dK[i1.y]), atomicLoad(&dK[i1.z]),
        atomicLoad(&dK[i1.w]));
    var o2 = vec4<u32>(atomicLoad(&dK[i2.x]), atomicLoad(&dK[i2.y]), atomicLoad(&dK[i2.z]),
        atomicLoad(&dK[i2.w]));
    var o3 = vec4<u32>(atomicLoad(&dK[i3.x]), atomicLoad(&dK[i3.y]), atomicLoad(&dK[i3.z]),
        atomicLoad(&dK[i3.w]));
    loop {
        if (!any(t0 | t1 | t2 | t3)) {
            break;
        }
        if (t0.x) {
            let r = atomicCompareExchangeWeak(
                &dK[i0.x], o0.x, bitcast<u32>(bitcast<f32>(o0.x) + v0.x));
            t0.x = !r.exchanged;
            o0.x = r.old_value;
        }
        if (t0.y) {
            let r = atomicCompareExchangeWeak(
                &dK[i0.y], o0.y, bitcast<u32>(bitcast<f32>(o0.y) + v0.y));
            t0.y = !r.exchanged;
            o0.y = r.old_value;
        }
        if (t0.z) {
            let r = atomicCompareExchangeWeak(
                &dK[i0.z], o0.z, bitcast<u32>(bitcast<f32>(o0.z) + v0.z));
            t0.z = !r.exchanged;
            o0.z = r.old_value;
        }
        if (t0.w) {
            let r = atomicCompareExchangeWeak(
                &dK[i0.w], o0.w, bitcast<u32>(bitcast<f32>(o0.w) + v0.w));
            t0.w = !r.exchanged;
            o0.w = r.old_value;
        }
        if (t1.x) {
            let r = atomicCompareExchangeWeak(
                &dK[i1.x], o1.x, bitcast<u32>(bitcast<f32>(o1.x) + v1.x));
            t1.x = !r.exchanged;
            o1.x = r.old_value;
        }
        if (t1.y) {
            let r = atomicCompareExchangeWeak(
                &dK[i1.y], o1.y, bitcast<u32>(bitcast<f32>(o1.y) + v1.y));
            t1.y = !r.exchanged;
            o1.y = r.old_value;
        }
        if (t1.z) {
            let r = atomicCompareExchangeWeak(
                &dK[i1.z], o1.z, bitcast<u32>(bitcast<f32>(o1.z) + v1.z));
            t1.z = !r.exchanged;
            o1.z = r.old_value;
        }
        if (t1.w) {
            let r = atomicCompareExchangeWeak(
                &dK[i1.w], o1.w, bitcast<u32>(bitcast<f32>(o1.w) + v1.w));
            t1.w = !r.exchanged;
            o1.w = r.old_value;
        }
        if (t2.x) {
            let r = atomicCompareExchangeWeak(
                &dK[i2.x], o2.x, bitcast<u32>(bitcast<f32>(o2.x) + v2.x));
            t2.x = !r.exchanged;
            o2.x = r.old_value;
        }
        if (t2.y) {
            let r = atomicCompareExchangeWeak(
                &dK[i2.y], o2.y, bitcast<u32>(bitcast<f32>(o2.y) + v2.y));
            t2.y = !r.exchanged;
            o2.y = r.old_value;
        }
        if (t2.z) {
            let r = atomicCompareExchangeWeak(
                &dK[i2.z], o2.z, bitcast<u32>(bitcast<f32>(o2.z) + v2.z));
            t2.z = !r.exchanged;
            o2.z = r.old_value;
        }
        if (t2.w) {
            let r = atomicCompareExchangeWeak(
                &dK[i2.w], o2.w, bitcast<u32>(bitcast<f32>(o2.w) + v2.w));
            t2.w = !r.exchanged;
            o2.w = r.old_value;
        }
        if (t3.x) {
            let r = atomicCompareExchangeWeak(
                &dK[i3.x], o3.x, bitcast<u32>(bitcast<f32>(o3.x) + v3.x));
            t3.x = !r.exchanged;
            o3.x = r.old_value;
        }
        if (t3.y) {
            let r = atomicCompareExchangeWeak(
                &dK[i3.y], o3.y, bitcast<u32>(bitcast<f32>(o3.y) + v3.y));
            t3.y = !r.exchanged;
            o3.y = r.old_value;
        }
        if (t3.z) {
            let r = atomicCompareExchangeWeak(
                &dK[i3.z], o3.z, bitcast<u32>(bitcast<f32>(o3.z) + v3.z));
            t3.z = !r.exchanged;
            o3.z = r.old_value;
        }
        if (t3.w) {
            let r = atomicCompareExchangeWeak(
                &dK[i3.w], o3.w, bitcast<u32>(bitcast<f32>(o3.w) + v3.w));
            t3.w = !r.exchanged;
            o3.w = r.old_value;
        }
    }
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
    let last = arrayLength(&dV) - 1u;
    let i0 = min(lanes(j + 0u, kvh, d), vec4<u32>(last));
    let i1 = min(lanes(j + 1u, kvh, d), vec4<u32>(last));
    let i2 = min(lanes(j + 2u, kvh, d), vec4<u32>(last));
    let i3 = min(lanes(j + 3u, kvh, d), vec4<u32>(last));
    var t0 = lanes_ok(j + 0u, d) & nonzero4(v0);
    var t1 = lanes_ok(j + 1u, d) & nonzero4(v1);
    var t2 = lanes_ok(j + 2u, d) & nonzero4(v2);
    var t3 = lanes_ok(j + 3u, d) & nonzero4(v3);
    var o0 = vec4<u32>(atomicLoad(&dV[i0.x]), atomicLoad(&dV[i0.y]), atomicLoad(&dV[i0.z]),
        atomicLoad(&dV[i0.w]));
    var o1 = vec4<u32>(atomicLoad(&dV[i1.x]), atomicLoad(&dV[i1.y]), atomicLoad(&dV[i1.z]),
        atomicLoad(&dV[i1.w]));
    var o2 = vec4<u32>(atomicLoad(&dV[i2.x]), atomicLoad(&dV[i2.y]), atomicLoad(&dV[i2.z]),
        atomicLoad(&dV[i2.w]));
    var o3 = vec4<u32>(atomicLoad(&dV[i3.x]), atomicLoad(&dV[i3.y]), atomicLoad(&dV[i3.z]),
        atomicLoad(&dV[i3.w]));
    loop {
        if (!any(t0 | t1 | t2 | t3)) {
            break;
        }
        if (t0.x) {
            let r = atomicCompareExchangeWeak(
                &dV[i0.x], o0.x, bitcast<u32>(bitcast<f32>(o0.x) + v0.x));
            t0.x = !r.exchanged;
            o0.x = r.old_value;
        }
        if (t0.y) {
            let r = atomicCompareExchangeWeak(
                &dV[i0.y], o0.y, bitcast<u32>(bitcast<f32>(o0.y) + v0.y));
            t0.y = !r.exchanged;
            o0.y = r.old_value;
        }
        if (t0.z) {
            let r = atomicCompareExchangeWeak(
                &dV[i0.z], o0.z, bitcast<u32>(bitcast<f32>(o0.z) + v0.z));
            t0.z = !r.exchanged;
            o0.z = r.old_value;
        }
        if (t0.w) {
            let r = atomicCompareExchangeWeak(
                &dV[i0.w], o0.w, bitcast<u32>(bitcast<f32>(o0.w) + v0.w));
            t0.w = !r.exchanged;
            o0.w = r.old_value;
        }
        if (t1.x) {
            let r = atomicCompareExchangeWeak(
                &dV[i1.x], o1.x, bitcast<u32>(bitcast<f32>(o1.x) + v1.x));
            t1.x = !r.exchanged;
            o1.x = r.old_value;
        }
        if (t1.y) {
            let r = atomicCompareExchangeWeak(
                &dV[i1.y], o1.y, bitcast<u32>(bitcast<f32>(o1.y) + v1.y));
            t1.y = !r.exchanged;
            o1.y = r.old_value;
        }
        if (t1.z) {
            let r = atomicCompareExchangeWeak(
                &dV[i1.z], o1.z, bitcast<u32>(bitcast<f32>(o1.z) + v1.z));
            t1.z = !r.exchanged;
            o1.z = r.old_value;
        }
        if (t1.w) {
            let r = atomicCompareExchangeWeak(
                &dV[i1.w], o1.w, bitcast<u32>(bitcast<f32>(o1.w) + v1.w));
            t1.w = !r.exchanged;
            o1.w = r.old_value;
        }
        if (t2.x) {
            let r = atomicCompareExchangeWeak(
                &dV[i2.x], o2.x, bitcast<u32>(bitcast<f32>(o2.x) + v2.x));
            t2.x = !r.exchanged;
            o2.x = r.old_value;
        }
        if (t2.y) {
            let r = atomicCompareExchangeWeak(
                &dV[i2.y], o2.y, bitcast<u32>(bitcast<f32>(o2.y) + v2.y));
            t2.y = !r.exchanged;
            o2.y = r.old_value;
        }
        if (t2.z) {
            let r = atomicCompareExchangeWeak(
                &dV[i2.z], o2.z, bitcast<u32>(bitcast<f32>(o2.z) + v2.z));
            t2.z = !r.exchanged;
            o2.z = r.old_value;
        }
        if (t2.w) {
            let r = atomicCompareExchangeWeak(
                &dV[i2.w], o2.w, bitcast<u32>(bitcast<f32>(o2.w) + v2.w));
            t2.w = !r.exchanged;
            o2.w = r.old_value;
        }
        if (t3.x) {
            let r = atomicCompareExchangeWeak(
                &dV[i3.x], o3.x, bitcast<u32>(bitcast<f32>(o3.x) + v3.x));
            t3.x = !r.exchanged;
            o3.x = r.old_value;
        }
        if (t3.y) {
            let r = atomicCompareExchangeWeak(
                &dV[i3.y], o3.y, bitcast<u32>(bitcast<f32>(o3.y) + v3.y));
            t3.y = !r.exchanged;
            o3.y = r.old_value;
        }
        if (t3.z) {
            let r = atomicCompareExchangeWeak(
                &dV[i3.z], o3.z, bitcast<u32>(bitcast<f32>(o3.z) + v3.z));
            t3.z = !r.exchanged;
            o3.z = r.old_value;
        }
        if (t3.w) {
            let r = atomicCompareExchangeWeak(
                &dV[i3.w], o3.w, bitcast<u32>(bitcast<f32>(o3.w) + v3.w));
            t3.w = !r.exchanged;
            o3.w = r.old_value;
        }
    }
}

