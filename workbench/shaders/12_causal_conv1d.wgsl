// Causal depthwise conv1d, forward and backward: a WGSL port of the HIP backward kernel of seed
// 002 (the sequence in chunks, SiLU recomputed in the backward, two-level reduction of
// dweight/dbias), plus the forward it differentiates. Unlike the seed's reverse walk, each
// backward chunk is independent (it recomputes the few look-ahead values it needs), so chunks
// run in parallel.
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

// Logistic sigmoid with the sign rule of seed 001: exp only ever sees a non-positive argument,
// so it cannot overflow to Inf and turn into Inf/Inf = NaN for large |z|. For z >= 0 it is
// 1 / (1 + exp(-z)), else exp(z) / (1 + exp(z)); both share e = exp(-|z|), and a select instead
// of a branch keeps the invocations of a subgroup on one path.
fn sigmoid(z: f32) -> f32 {
    let e = exp(-abs(z));
    return select(e / (1.0 + e), 1.0 / (1.0 + e), z >= 0.0);
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
// Grid (dim, batch, ceil(seqlen / (CHUNK * CHUNKS_PER_GROUP))): workgroup (c, b, z) owns chunks
// z CHUNKS_PER_GROUP .. (z + 1) CHUNKS_PER_GROUP - 1 of row (b, c), each of CHUNK steps and each
// independent of the others: it loads HALO steps of x on each side and recomputes the HALO
// values of g after the chunk instead of waiting for them. With flags.z
// (deterministic) the grid is (dim, 1, 1) and each workgroup walks every chunk of every batch row
// of its channel in order.
//
// Per chunk starting at step c0 (position p = c0 + i):
//   sx[j] = x[c0 - HALO + j]   the chunk plus HALO steps each side (zero outside the row)
//   sg[j] = g[c0 + j]          g = dL/dpre = dout * silu'(pre) (or dout), zero past seqlen
//   dx[p]        = sum_k weight[k] * g[p + W - 1 - k]
//   dweight[k]  += x[p - (W - 1) + k] * g[p]
//   dbias       += g[p]
// The filter is held right-aligned in a vec4 (tap k at lane k + 4 - W): tap lane j reads
// x[p - 3 + j] = sx[i + j] and g[p + 3 - j] = sg[i + 3 - j]; lanes below 4 - W are skipped, not
// multiplied by zero, so a NaN or Inf never enters through a tap the filter does not have.
// Every loop over taps or lanes is written out, so nothing lives in (slow) private arrays.
// dweight/dbias are summed per invocation, then over the workgroup by a tree in workgroup memory
// (correct for any subgroup size), then across workgroups with a CAS-loop f32 add on
// array<atomic<u32>> (the host zero-fills both). The deterministic mode has a single workgroup
// per channel, so it stores its total with atomicStore: no float add is reordered and the
// result is bitwise reproducible.

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> weight: array<f32>;
@group(0) @binding(2) var<storage, read> bias: array<f32>;
@group(0) @binding(3) var<storage, read> dout: array<f32>;
@group(0) @binding(4) var<storage, read_write> dx: array<f32>;
@group(0) @binding(5) var<storage, read_write> dweight: array<atomic<u32>>;
@group(0) @binding(6) var<storage, read_write> dbias: array<atomic<u32>>;
@group(0) @binding(7) var<uniform> dims: vec4<u32>;
@group(0) @binding(8) var<uniform> flags: vec4<u32>;

// Steps per invocation per chunk, the lanes of a vec4: invocation lid owns chunk offsets lid,
// lid + WG, lid + 2 WG, lid + 3 WG, so that loads and stores of neighbouring invocations are
// contiguous.
const CHUNK: u32 = WG * 4u;
const HALO: u32 = MAX_W - 1u;
// Chunks one workgroup takes in turn (atomic mode): its partial sums meet once for all of them.
// One chunk per workgroup spent a third of the H100's time in the reduction tree and CAS adds.
const CHUNKS_PER_GROUP: u32 = 4u;

var<workgroup> sx: array<f32, CHUNK + 2u * HALO>;
var<workgroup> sg: array<f32, CHUNK + HALO>;
var<workgroup> red_w: array<vec4<f32>, WG>;
var<workgroup> red_b: array<f32, WG>;

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

// sum_j w[j] * v[j] over the filter's taps (on[j]); taps it does not have are skipped.
fn taps(w: vec4<f32>, v: vec4<f32>, on: vec4<bool>) -> f32 {
    let t = select(vec4<f32>(0.0), w * v, on);
    return (t.x + t.y) + (t.z + t.w);
}

// The 4 steps of x that the taps see for chunk offset i (sx holds x from c0 - HALO).
fn window(i: u32) -> vec4<f32> {
    return vec4<f32>(sx[i], sx[i + 1u], sx[i + 2u], sx[i + 3u]);
}

// g for dout `d` whose step's x window is `xw`: dout times silu'(pre) with SiLU, else dout.
fn grad_pre(d: f32, xw: vec4<f32>, w: vec4<f32>, on: vec4<bool>, bias_c: f32, silu: bool) -> f32 {
    if (!silu) {
        return d;
    }
    let z = bias_c + taps(w, xw, on);
    let s = sigmoid(z);
    return d * (s * (1.0 + z * (1.0 - s)));
}

// Sums of the invocations' tap partials (vec4) and bias partials over the workgroup; every
// invocation gets them. A tree over workgroup memory, from uniform control flow.
struct Partials {
    dw: vec4<f32>,
    db: f32,
}

fn wg_sum_partials(p: Partials, lid: u32) -> Partials {
    red_w[lid] = p.dw;
    red_b[lid] = p.db;
    workgroupBarrier();
    for (var stride = WG / 2u; stride > 0u; stride = stride / 2u) {
        if (lid < stride) {
            red_w[lid] = red_w[lid] + red_w[lid + stride];
            red_b[lid] = red_b[lid] + red_b[lid + stride];
        }
        workgroupBarrier();
    }
    let total = Partials(red_w[0], red_b[0]);
    workgroupBarrier();
    return total;
}

// What one invocation loads from memory for one chunk: its 4 steps of x and dout, and for the
// first HALO invocations one step of history before the chunk and one look-ahead step after it.
struct Staged {
    xv: vec4<f32>,
    dv: vec4<f32>,
    before: f32,
    after: f32,
    d_after: f32,
}

// The loads of one chunk of row `row` starting at c0 (zeros outside the row). Kept apart from
// the work on the chunk so that a workgroup can issue the next chunk's loads before it works on
// the current one: they are in flight across its barriers.
fn load_chunk(row: u32, c0: u32, lid: u32) -> Staged {
    let seqlen = dims.z;
    let p = c0 + lid + vec4<u32>(0u, WG, 2u * WG, 3u * WG);
    let in_row = p < vec4<u32>(seqlen);
    var st = Staged(vec4<f32>(0.0), vec4<f32>(0.0), 0.0, 0.0, 0.0);
    if (in_row.x) { st.xv.x = x[row + p.x]; st.dv.x = dout[row + p.x]; }
    if (in_row.y) { st.xv.y = x[row + p.y]; st.dv.y = dout[row + p.y]; }
    if (in_row.z) { st.xv.z = x[row + p.z]; st.dv.z = dout[row + p.z]; }
    if (in_row.w) { st.xv.w = x[row + p.w]; st.dv.w = dout[row + p.w]; }
    if (lid < HALO) {
        if (c0 + lid >= HALO) {
            st.before = x[row + c0 + lid - HALO];
        }
        let q = c0 + CHUNK + lid;
        if (q < seqlen) {
            st.after = x[row + q];
            st.d_after = dout[row + q];
        }
    }
    return st;
}

// dx at chunk offset ie (from g of the steps the taps reach ahead) and its step's share of the
// dweight and dbias partials, added to `acc`; nothing past seqlen.
fn dx_step(row: u32, c0: u32, ie: u32, in_row: bool, xw: vec4<f32>, w: vec4<f32>,
           on: vec4<bool>, acc: Partials) -> Partials {
    if (!in_row) {
        return acc;
    }
    let g = sg[ie];
    let ahead = vec4<f32>(sg[ie + 3u], sg[ie + 2u], sg[ie + 1u], g);
    dx[row + c0 + ie] = taps(w, ahead, on);
    return Partials(acc.dw + select(vec4<f32>(0.0), xw * g, on), acc.db + g);
}

// dx of one chunk of row (b, c) starting at c0 from its loads `st`, and this invocation's
// partials added to `acc`.
fn bwd_chunk(st: Staged, row: u32, c0: u32, lid: u32, w: vec4<f32>, on: vec4<bool>,
             bias_c: f32, acc: Partials) -> Partials {
    let seqlen = dims.z;
    let silu = flags.y != 0u;
    // Stage x (the chunk and HALO steps each side) in workgroup memory; dout only feeds this
    // invocation's own g, so it stays in registers.
    let i = lid + vec4<u32>(0u, WG, 2u * WG, 3u * WG);
    let in_row = c0 + i < vec4<u32>(seqlen);
    let dv = st.dv;
    let d_after = st.d_after;
    sx[HALO + i.x] = st.xv.x;
    sx[HALO + i.y] = st.xv.y;
    sx[HALO + i.z] = st.xv.z;
    sx[HALO + i.w] = st.xv.w;
    if (lid < HALO) {
        sx[lid] = st.before;
        sx[HALO + CHUNK + lid] = st.after;
    }
    workgroupBarrier();

    // g for the chunk and for the HALO steps after it (zero past seqlen), recomputing the
    // pre-activation when SiLU is on. The x windows are read once and kept for the partials of
    // dweight below (with SiLU they feed both).
    let xw0 = window(i.x);
    let xw1 = window(i.y);
    let xw2 = window(i.z);
    let xw3 = window(i.w);
    sg[i.x] = select(0.0, grad_pre(dv.x, xw0, w, on, bias_c, silu), in_row.x);
    sg[i.y] = select(0.0, grad_pre(dv.y, xw1, w, on, bias_c, silu), in_row.y);
    sg[i.z] = select(0.0, grad_pre(dv.z, xw2, w, on, bias_c, silu), in_row.z);
    sg[i.w] = select(0.0, grad_pre(dv.w, xw3, w, on, bias_c, silu), in_row.w);
    if (lid < HALO) {
        let q = CHUNK + lid;
        sg[q] = select(0.0, grad_pre(d_after, window(q), w, on, bias_c, silu), c0 + q < seqlen);
    }
    workgroupBarrier();

    // dx and the partial sums of dweight (per tap lane) and dbias.
    var out = acc;
    out = dx_step(row, c0, i.x, in_row.x, xw0, w, on, out);
    out = dx_step(row, c0, i.y, in_row.y, xw1, w, on, out);
    out = dx_step(row, c0, i.z, in_row.z, xw2, w, on, out);
    out = dx_step(row, c0, i.w, in_row.w, xw3, w, on, out);
    // The next chunk (deterministic mode) overwrites sx and sg.
    workgroupBarrier();
    return out;
}

@compute @workgroup_size(WG)
fn causal_conv1d_bwd(@builtin(local_invocation_index) lid: u32,
                     @builtin(workgroup_id) wid: vec3<u32>) {
    let dim = dims.y;
    let seqlen = dims.z;
    let width = dims.w;
    let has_bias = flags.x != 0u;
    let deterministic = flags.z != 0u;
    let c = wid.x;

    // The filter right-aligned: tap k at lane k + 4 - width; `on` marks the lanes it has.
    let shift = MAX_W - width;
    let on = vec4<u32>(0u, 1u, 2u, 3u) >= vec4<u32>(shift);
    var w = vec4<f32>();
    if (on.x) { w.x = weight[c * width]; }
    if (on.y) { w.y = weight[c * width + 1u - shift]; }
    w.z = weight[c * width + 2u - shift];
    w.w = weight[c * width + 3u - shift];
    var bias_c = 0.0;
    if (has_bias) {
        bias_c = bias[c];
    }

    var acc = Partials(vec4<f32>(0.0), 0.0);
    let n_chunks = (seqlen + CHUNK - 1u) / CHUNK;
    if (deterministic) {
        for (var b = 0u; b < dims.x; b++) {
            let row = (b * dim + c) * seqlen;
            for (var k = 0u; k < n_chunks; k++) {
                let st = load_chunk(row, k * CHUNK, lid);
                acc = bwd_chunk(st, row, k * CHUNK, lid, w, on, bias_c, acc);
            }
        }
    } else {
        let row = (wid.y * dim + c) * seqlen;
        let k_end = min(n_chunks, (wid.z + 1u) * CHUNKS_PER_GROUP);
        // The next chunk's loads go out before the work on this one (software pipelining).
        var st = load_chunk(row, wid.z * CHUNKS_PER_GROUP * CHUNK, lid);
        for (var k = wid.z * CHUNKS_PER_GROUP; k < k_end; k++) {
            var next = st;
            if (k + 1u < k_end) {
                next = load_chunk(row, (k + 1u) * CHUNK, lid);
            }
            acc = bwd_chunk(st, row, k * CHUNK, lid, w, on, bias_c, acc);
            st = next;
        }
    }

    let total = wg_sum_partials(acc, lid);
    // One invocation per tap and one for the bias, so the CAS loops run side by side.
    if (lid < width) {
        let v = total.dw[lid + shift];
        if (deterministic) {
            atomicStore(&dweight[c * width + lid], bitcast<u32>(v));
        } else {
            cas_add_dweight(c * width + lid, v);
        }
    }
    if (has_bias && lid == MAX_W) {
        if (deterministic) {
            atomicStore(&dbias[c], bitcast<u32>(total.db));
        } else {
            cas_add_dbias(c, total.db);
        }
    }
}
