// Causal depthwise conv1d, forward and backward: a WGSL port of the HIP backward kernel of seed
// 002 (chunked reverse traversal of the sequence, SiLU recomputed in the backward, two-level
// reduction of dweight/dbias), plus the forward it differentiates.
//
// Convention (the public causal-conv1d one, as in Mamba): for every batch b, channel c, step t,
//   pre[b, c, t] = bias[c] + sum_{k < W} weight[c, k] * x[b, c, t - (W - 1) + k],  x[.., < 0] = 0
//   out[b, c, t] = silu(pre[b, c, t]) when SiLU is on, else pre[b, c, t]
// so the weight's last tap multiplies the current step. Bias is treated as 0 when it is off.
// The zero padding before t = 0 is multiplied like any other input, as causal-conv1d's CUDA
// forward does: a NaN or Inf weight makes every step of its channel NaN or Inf (Inf x 0 =
// NaN), the first W - 1 included, in the forward and in the backward alike.
// Layout: x, out, dout, dx are (batch, dim, seqlen) contiguous; weight is (dim, width); bias (dim).
// Uniforms: dims = (batch, dim, seqlen, width), width in 2..4;
//           flags = (has_bias, silu, deterministic, _).

// Widest filter the backward's private arrays and halos are sized for.
const MAX_W: u32 = 4u;

// Logistic sigmoid with the sign branch of seed 001: exp only ever sees a non-positive argument,
// so it cannot overflow to Inf and turn into Inf/Inf = NaN for large |z|.
fn sigmoid(z: f32) -> f32 {
    if (z >= 0.0) {
        return 1.0 / (1.0 + exp(-z));
    }
    let e = exp(z);
    return e / (1.0 + e);
}

// --- KERNEL: causal_conv1d_fwd ---
// One invocation per output element (1-D over batch * dim * seqlen, host-foldable to 2-D).
// The W reads of neighbouring invocations overlap, so the caches serve all but one of them.

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> weight: array<f32>;
@group(0) @binding(2) var<storage, read> bias: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
@group(0) @binding(4) var<uniform> dims: vec4<u32>;
@group(0) @binding(5) var<uniform> flags: vec4<u32>;

@compute @workgroup_size(WG)
fn causal_conv1d_fwd(@builtin(global_invocation_id) gid: vec3<u32>,
                     @builtin(num_workgroups) nwg: vec3<u32>) {
    let dim = dims.y;
    let seqlen = dims.z;
    let width = dims.w;
    let i = flat_id(gid, nwg);
    if (i >= dims.x * dim * seqlen) {
        return;
    }
    let row = i / seqlen;
    let t = i - row * seqlen;
    let c = row % dim;

    var acc = 0.0;
    if (flags.x != 0u) {
        acc = bias[c];
    }
    for (var k = 0u; k < width; k++) {
        // Tap k reads x[t - back]; taps left of the sequence start read the zero padding, which
        // is still multiplied by the weight (see the header).
        let back = width - 1u - k;
        var xv = 0.0;
        if (t >= back) {
            xv = x[i - back];
        }
        acc += weight[c * width + k] * xv;
    }
    if (flags.y != 0u) {
        acc = acc * sigmoid(acc);
    }
    out[i] = acc;
}

// --- KERNEL: causal_conv1d_bwd ---
// Grid (dim, batch, 1): workgroup (c, b) owns row (b, c) and walks it in chunks of CHUNK steps
// from the last chunk to the first, as the seed does. With flags.z (deterministic) the grid is
// (dim, 1, 1) and each workgroup walks every batch row of its channel in order 0..batch.
//
// Per chunk starting at step c0 (position p = c0 + i):
//   sx[j] = x[c0 - HALO + j]   the chunk plus HALO steps of history (zero before t = 0)
//   sg[j] = g[c0 + j]          g = dL/dpre = dout * silu'(pre) (or dout), zero past seqlen;
//                              sg[CHUNK..CHUNK+HALO) is carried over from the chunk after
//   dx[p]        = sum_k weight[k] * g[p + W - 1 - k]
//   dweight[k]  += x[p - (W - 1) + k] * g[p]
//   dbias       += g[p]
// dweight/dbias are summed per invocation, then over the workgroup with the workgroup-memory
// tree of wg_reduce_sum (correct for any subgroup size), then across workgroups with a CAS-loop
// f32 add on array<atomic<u32>> (the host zero-fills both). The deterministic mode has a single
// workgroup per channel, so it stores its total with atomicStore: no float add is reordered and
// the result is bitwise reproducible.

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> weight: array<f32>;
@group(0) @binding(2) var<storage, read> bias: array<f32>;
@group(0) @binding(3) var<storage, read> dout: array<f32>;
@group(0) @binding(4) var<storage, read_write> dx: array<f32>;
@group(0) @binding(5) var<storage, read_write> dweight: array<atomic<u32>>;
@group(0) @binding(6) var<storage, read_write> dbias: array<atomic<u32>>;
@group(0) @binding(7) var<uniform> dims: vec4<u32>;
@group(0) @binding(8) var<uniform> flags: vec4<u32>;

// Steps per invocation per chunk; invocation lid owns steps lid, lid + WG, ... so that loads and
// stores of neighbouring invocations are contiguous.
const PER_LANE: u32 = 4u;
const CHUNK: u32 = WG * PER_LANE;
const HALO: u32 = MAX_W - 1u;

var<workgroup> sx: array<f32, CHUNK + HALO>;
var<workgroup> sg: array<f32, CHUNK + HALO>;

fn cas_add_dweight(idx: u32, v: f32) {
    var old = atomicLoad(&dweight[idx]);
    loop {
        let new_bits = bitcast<u32>(bitcast<f32>(old) + v);
        let res = atomicCompareExchangeWeak(&dweight[idx], old, new_bits);
        if (res.exchanged) {
            break;
        }
        old = res.old_value;
    }
}

fn cas_add_dbias(idx: u32, v: f32) {
    var old = atomicLoad(&dbias[idx]);
    loop {
        let new_bits = bitcast<u32>(bitcast<f32>(old) + v);
        let res = atomicCompareExchangeWeak(&dbias[idx], old, new_bits);
        if (res.exchanged) {
            break;
        }
        old = res.old_value;
    }
}

@compute @workgroup_size(WG)
fn causal_conv1d_bwd(@builtin(local_invocation_index) lid: u32,
                     @builtin(workgroup_id) wid: vec3<u32>) {
    let dim = dims.y;
    let seqlen = dims.z;
    let width = dims.w;
    let has_bias = flags.x != 0u;
    let silu = flags.y != 0u;
    let deterministic = flags.z != 0u;
    let c = wid.x;
    // Tap 0 of chunk offset i: x[p - (W - 1)] sits at sx[i + HALO - (W - 1)] = sx[i + off].
    let off = MAX_W - width;

    var w = array<f32, MAX_W>();
    for (var k = 0u; k < width; k++) {
        w[k] = weight[c * width + k];
    }
    var bias_c = 0.0;
    if (has_bias) {
        bias_c = bias[c];
    }

    var b_lo = wid.y;
    var b_hi = wid.y + 1u;
    if (deterministic) {
        b_lo = 0u;
        b_hi = dims.x;
    }
    let n_chunks = (seqlen + CHUNK - 1u) / CHUNK;

    var dw = array<f32, MAX_W>();
    var db = 0.0;
    for (var b = b_lo; b < b_hi; b++) {
        let row = (b * dim + c) * seqlen;
        // Nothing follows the last chunk: its carried-in g is zero.
        if (lid < HALO) {
            sg[CHUNK + lid] = 0.0;
        }
        for (var chunk = n_chunks; chunk > 0u; chunk--) {
            let c0 = (chunk - 1u) * CHUNK;

            // Stage x for the chunk and its history; this invocation's dout values only feed its
            // own g, so they go to registers in the same pass.
            var dv = array<f32, PER_LANE>();
            for (var e = 0u; e < PER_LANE; e++) {
                let i = lid + e * WG;
                let p = c0 + i;
                var v = 0.0;
                if (p < seqlen) {
                    v = x[row + p];
                    dv[e] = dout[row + p];
                }
                sx[HALO + i] = v;
            }
            if (lid < HALO) {
                var v = 0.0;
                if (c0 + lid >= HALO) {
                    v = x[row + c0 + lid - HALO];
                }
                sx[lid] = v;
            }
            workgroupBarrier();

            // g for the chunk, recomputing the pre-activation when SiLU is on.
            for (var e = 0u; e < PER_LANE; e++) {
                let i = lid + e * WG;
                let p = c0 + i;
                // dv[e] is 0 past seqlen, so the look-ahead there reads zeros.
                var g = dv[e];
                if (silu && p < seqlen) {
                    var z = bias_c;
                    for (var k = 0u; k < width; k++) {
                        z += w[k] * sx[i + off + k];
                    }
                    let s = sigmoid(z);
                    g *= s * (1.0 + z * (1.0 - s));
                }
                sg[i] = g;
            }
            workgroupBarrier();

            // dx and the per-invocation partial sums of dweight and dbias.
            for (var e = 0u; e < PER_LANE; e++) {
                let i = lid + e * WG;
                let p = c0 + i;
                if (p < seqlen) {
                    var acc = 0.0;
                    for (var k = 0u; k < width; k++) {
                        acc += w[k] * sg[i + width - 1u - k];
                    }
                    dx[row + p] = acc;
                    let g = sg[i];
                    db += g;
                    for (var k = 0u; k < width; k++) {
                        dw[k] += sx[i + off + k] * g;
                    }
                }
            }
            workgroupBarrier();

            // The first HALO g of this chunk are the look-ahead of the chunk before it. Only
            // invocation lid touches sg[lid] and sg[CHUNK + lid] until the next g pass, which
            // comes after the next staging barrier.
            if (lid < HALO) {
                sg[CHUNK + lid] = sg[lid];
            }
        }
    }

    for (var k = 0u; k < width; k++) {
        let total = wg_reduce_sum(dw[k], lid);
        if (lid == 0u) {
            if (deterministic) {
                atomicStore(&dweight[c * width + k], bitcast<u32>(total));
            } else {
                cas_add_dweight(c * width + k, total);
            }
        }
    }
    if (has_bias) {
        let total = wg_reduce_sum(db, lid);
        if (lid == 0u) {
            if (deterministic) {
                atomicStore(&dbias[c], bitcast<u32>(total));
            } else {
                cas_add_dbias(c, total);
            }
        }
    }
}
