// Causal softmax attention, backward, in three kernels that compute the same chain rule:
//
//   P[s,j]  = exp(scale * Q[s].K[j] - LSE[s])          (LSE saved by attention_forward)
//   dP[s,j] = dO[s].V[j]
//   D[s]    = sum_j P[s,j] dP[s,j]                      (= dO[s].O[s])
//   dS[s,j] = scale * P[s,j] (dP[s,j] - D[s])           (scale folded into dS)
//   dQ[s]  += sum_j dS[s,j] K[j]
//   dK[j]  += sum_{s, h in group} dS[s,j] Q[s]
//   dV[j]  += sum_{s, h in group} P[s,j] dO[s]
//
// Layouts (row-major): Q, dO, dQ [seq, n_heads, head_dim]; K, V, dK, dV [seq, n_kv_heads,
// head_dim]; LSE [seq, n_heads]; P_scratch, dS_scratch [seq, n_heads, seq] (P_scratch[s,h,j]).
// GQA: query head h reads kv head h / (n_heads / n_kv_heads). Mask: key j is visible to query s
// iff seg[s] <= j <= s (causal, within one document); seg[s] > s is read as seg[s] = s.
// head_dim <= 256. Gradients are added (+=) to what the buffers hold: the host zeroes them
// before the first micro-step.
//
// - attention_backward_short (seq <= 1024, grid (seq, n_heads, 1)): one workgroup per (s, h)
//   holds P[s,*] and dP[s,*] in workgroup memory, owns dQ[s,h,*] and flushes the whole rows
//   P_scratch[s,h,*] and dS_scratch[s,h,*] (zero where the mask hides key j).
// - attention_backward_short_dKdV (seq <= 1024, grid (seq, n_kv_heads, 1)): one workgroup per
//   (j, kv_h) gathers the scratch column j over s >= j and the query heads of kv_h, and owns
//   dK[j,kv_h,*], dV[j,kv_h,*]: no atomics.
// - attention_backward (any seq, grid (seq, n_heads, 1)): one workgroup per (s, h); pass A finds
//   D, pass B walks the key blocks of WG again, owns dQ[s,h,*] and scatters into dK and dV with
//   f32 compare-and-swap adds on array<atomic<u32>> (several s and the GQA group share a slot).
//
// Special values: a hidden (masked) pair contributes nothing, not 0 x its value. The kernels only
// ever sum over visible keys, and the scratch holds exact zeros for hidden pairs (never
// scale * 0 * (dP - D), which is NaN when D is), so a NaN or Inf in one document's Q, K, V or dO
// never reaches another document's gradients. attention_backward_short_dKdV does not bind seg: it
// skips the scratch's zero entries instead, which also skips a visible P or dS that is exactly 0
// (an underflowed P); that differs from the other paths only against a NaN or Inf in Q or dO.
//
// Reductions are trees over workgroup memory with barriers (wg_reduce_sum of 00_shared.wgsl, and
// sh_partial below), so they hold for any subgroup size.
// Threads that need a sum over keys for each of head_dim lanes work as WG / head_dim groups of
// head_dim lanes: group g takes every (WG / head_dim)-th key, and lane d sums the groups at the end.

const MAX_HEAD_DIM: u32 = 256u;
const MAX_SHORT_SEQ: u32 = 1024u;
// attention_backward_short: invocations that share one key's dot products, and the keys one pass
// of the workgroup covers.
const PARTS: u32 = 4u;
const KEYS_PER_PASS: u32 = WG / PARTS;

// --- KERNEL: attention_backward ---
@group(0) @binding(0) var<storage, read> Q: array<f32>;
@group(0) @binding(1) var<storage, read> K: array<f32>;
@group(0) @binding(2) var<storage, read> V: array<f32>;
@group(0) @binding(3) var<storage, read> dO: array<f32>;
@group(0) @binding(4) var<storage, read> LSE: array<f32>;
@group(0) @binding(5) var<storage, read_write> dQ: array<f32>;
@group(0) @binding(6) var<storage, read_write> dK: array<atomic<u32>>;
@group(0) @binding(7) var<storage, read_write> dV: array<atomic<u32>>;
@group(0) @binding(8) var<uniform> dims: vec4<u32>;
@group(0) @binding(9) var<uniform> params: vec4<f32>;
@group(0) @binding(10) var<storage, read> seg: array<u32>;

var<workgroup> sh_q: array<f32, 256>;
var<workgroup> sh_do: array<f32, 256>;
var<workgroup> sh_p: array<f32, 256>;
var<workgroup> sh_dp: array<f32, 256>;
var<workgroup> sh_partial: array<f32, WG>;


// f32 add on a slot that holds f32 bits: retry until no other invocation changed it in between.
fn atomic_add_dk(i: u32, v: f32) {
    if (v == 0.0) {
        return;
    }
    var old = atomicLoad(&dK[i]);
    loop {
        let res = atomicCompareExchangeWeak(&dK[i], old, bitcast<u32>(bitcast<f32>(old) + v));
        if (res.exchanged) {
            break;
        }
        old = res.old_value;
    }
}

fn atomic_add_dv(i: u32, v: f32) {
    if (v == 0.0) {
        return;
    }
    var old = atomicLoad(&dV[i]);
    loop {
        let res = atomicCompareExchangeWeak(&dV[i], old, bitcast<u32>(bitcast<f32>(old) + v));
        if (res.exchanged) {
            break;
        }
        old = res.old_value;
    }
}

@compute @workgroup_size(256)
fn attention_backward(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let seq_len = dims.x;
    let n_heads = dims.y;
    let n_kv = dims.z;
    let hd = dims.w;
    let s = wid.x;
    let h = wid.y;
    // Uniform per workgroup, so returning here keeps every later barrier in uniform control flow.
    if (s >= seq_len || h >= n_heads || n_kv == 0u || hd == 0u || hd > MAX_HEAD_DIM) {
        return;
    }
    let kvh = h / (n_heads / n_kv);
    let scale = params.x;
    let q_base = (s * n_heads + h) * hd;
    if (lid < hd) {
        sh_q[lid] = Q[q_base + lid];
        sh_do[lid] = dO[q_base + lid];
    }
    let lse = LSE[s * n_heads + h];
    let lo = min(seg[s], s);
    workgroupBarrier();

    // Pass A: D = sum_j P dP over every visible key.
    var d_part = 0.0;
    for (var j = lo + lid; j <= s; j = j + WG) {
        let kv_base = (j * n_kv + kvh) * hd;
        var qk = 0.0;
        var dov = 0.0;
        for (var d = 0u; d < hd; d = d + 1u) {
            qk = qk + sh_q[d] * K[kv_base + d];
            dov = dov + sh_do[d] * V[kv_base + d];
        }
        d_part = d_part + exp(qk * scale - lse) * dov;
    }
    let big_d = wg_reduce_sum(d_part, lid);

    // Pass B: recompute P and dP block by block, now that D is known.
    let groups = WG / hd;
    let g = lid / hd;
    let lane = lid % hd;
    var dq_acc = 0.0;
    for (var blk = lo; blk <= s; blk = blk + WG) {
        let j = blk + lid;
        var p = 0.0;
        var ds = 0.0;
        if (j <= s) {
            let kv_base = (j * n_kv + kvh) * hd;
            var qk = 0.0;
            var dov = 0.0;
            for (var d = 0u; d < hd; d = d + 1u) {
                qk = qk + sh_q[d] * K[kv_base + d];
                dov = dov + sh_do[d] * V[kv_base + d];
            }
            p = exp(qk * scale - lse);
            ds = scale * p * (dov - big_d);
        }
        sh_p[lid] = p;
        sh_dp[lid] = ds;
        workgroupBarrier();
        let n_blk = min(WG, s + 1u - blk);
        if (g < groups) {
            for (var t = g; t < n_blk; t = t + groups) {
                dq_acc = dq_acc + sh_dp[t] * K[((blk + t) * n_kv + kvh) * hd + lane];
            }
        }
        // Consecutive invocations take consecutive (key, d) slots of this block.
        for (var e = lid; e < n_blk * hd; e = e + WG) {
            let t = e / hd;
            let d = e % hd;
            let kv_i = ((blk + t) * n_kv + kvh) * hd + d;
            atomic_add_dk(kv_i, sh_dp[t] * sh_q[d]);
            atomic_add_dv(kv_i, sh_p[t] * sh_do[d]);
        }
        // sh_p and sh_dp are rewritten by the next block.
        workgroupBarrier();
    }
    sh_partial[lid] = dq_acc;
    workgroupBarrier();
    if (lid < hd) {
        var total = 0.0;
        for (var gg = 0u; gg < groups; gg = gg + 1u) {
            total = total + sh_partial[gg * hd + lid];
        }
        dQ[q_base + lid] = dQ[q_base + lid] + total;
    }
}

// --- KERNEL: attention_backward_short ---
@group(0) @binding(0) var<storage, read> Q: array<f32>;
@group(0) @binding(1) var<storage, read> K: array<f32>;
@group(0) @binding(2) var<storage, read> V: array<f32>;
@group(0) @binding(3) var<storage, read> dO: array<f32>;
@group(0) @binding(4) var<storage, read> LSE: array<f32>;
@group(0) @binding(5) var<storage, read_write> dQ: array<f32>;
@group(0) @binding(6) var<storage, read_write> P_scratch: array<f32>;
@group(0) @binding(7) var<storage, read_write> dS_scratch: array<f32>;
@group(0) @binding(8) var<uniform> dims: vec4<u32>;
@group(0) @binding(9) var<uniform> params: vec4<f32>;
@group(0) @binding(10) var<storage, read> seg: array<u32>;

var<workgroup> sh_q: array<f32, 256>;
var<workgroup> sh_do: array<f32, 256>;
var<workgroup> sh_p_full: array<f32, 1024>;
var<workgroup> sh_dp_full: array<f32, 1024>;
var<workgroup> sh_partial: array<f32, WG>;
var<workgroup> sh_partial_dov: array<f32, WG>;


@compute @workgroup_size(256)
fn attention_backward_short(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let seq_len = dims.x;
    let n_heads = dims.y;
    let n_kv = dims.z;
    let hd = dims.w;
    let s = wid.x;
    let h = wid.y;
    // Uniform per workgroup, so returning here keeps every later barrier in uniform control flow.
    // A row longer than MAX_SHORT_SEQ does not fit sh_p_full: attention_backward handles it.
    if (s >= seq_len || h >= n_heads || n_kv == 0u || hd == 0u || hd > MAX_HEAD_DIM
        || seq_len > MAX_SHORT_SEQ) {
        return;
    }
    let kvh = h / (n_heads / n_kv);
    let scale = params.x;
    let q_base = (s * n_heads + h) * hd;
    if (lid < hd) {
        sh_q[lid] = Q[q_base + lid];
        sh_do[lid] = dO[q_base + lid];
    }
    let lse = LSE[s * n_heads + h];
    let lo = min(seg[s], s);
    workgroupBarrier();

    // P and dP for the visible keys, a pass of KEYS_PER_PASS keys at a time: PARTS neighbouring
    // invocations share a key, each summing every PARTS-th element of its K and V rows (so a
    // subgroup's loads touch a few rows, not one row per invocation), and the partial sums meet
    // in workgroup memory, where the first KEYS_PER_PASS invocations finish them. Entries
    // outside [lo, s] are left stale: the flush below masks them.
    let part = lid % PARTS;
    var d_part = 0.0;
    for (var j0 = lo - lo % KEYS_PER_PASS; j0 <= s; j0 = j0 + KEYS_PER_PASS) {
        let j = j0 + lid / PARTS;
        var qk = 0.0;
        var dov = 0.0;
        if (j >= lo && j <= s) {
            let kv_base = (j * n_kv + kvh) * hd;
            for (var d = part; d < hd; d = d + PARTS) {
                qk = qk + sh_q[d] * K[kv_base + d];
                dov = dov + sh_do[d] * V[kv_base + d];
            }
        }
        sh_partial[lid] = qk;
        sh_partial_dov[lid] = dov;
        workgroupBarrier();
        let jj = j0 + lid;
        if (lid < KEYS_PER_PASS && jj >= lo && jj <= s) {
            var a = 0.0;
            var b = 0.0;
            for (var r = 0u; r < PARTS; r = r + 1u) {
                a = a + sh_partial[lid * PARTS + r];
                b = b + sh_partial_dov[lid * PARTS + r];
            }
            let p = exp(a * scale - lse);
            sh_p_full[jj] = p;
            sh_dp_full[jj] = b;
            d_part = d_part + p * b;
        }
        workgroupBarrier();
    }
    let big_d = wg_reduce_sum(d_part, lid);

    // dS overwrites dP in place; both rows go to scratch for attention_backward_short_dKdV.
    // Hidden entries are stored as exact zeros: p = 0 there, but 0 * (0 - D) is NaN when D is,
    // and attention_backward_short_dKdV reads these zeros as the mask.
    let row = (s * n_heads + h) * seq_len;
    for (var j = lid; j < seq_len; j = j + WG) {
        let visible = j >= lo && j <= s;
        let p = select(0.0, sh_p_full[j], visible);
        let ds = select(0.0, scale * p * (sh_dp_full[j] - big_d), visible);
        sh_dp_full[j] = ds;
        P_scratch[row + j] = p;
        dS_scratch[row + j] = ds;
    }
    workgroupBarrier();

    // dQ[s,h,d] = sum_j dS[j] K[j,kvh,d], the keys shared out over WG / hd groups.
    let groups = WG / hd;
    let g = lid / hd;
    let lane = lid % hd;
    var acc = 0.0;
    if (g < groups) {
        for (var j = lo + g; j <= s; j = j + groups) {
            acc = acc + sh_dp_full[j] * K[(j * n_kv + kvh) * hd + lane];
        }
    }
    sh_partial[lid] = acc;
    workgroupBarrier();
    if (lid < hd) {
        var total = 0.0;
        for (var gg = 0u; gg < groups; gg = gg + 1u) {
            total = total + sh_partial[gg * hd + lid];
        }
        dQ[q_base + lid] = dQ[q_base + lid] + total;
    }
}

// --- KERNEL: attention_backward_short_dKdV ---
@group(0) @binding(0) var<storage, read> Q: array<f32>;
@group(0) @binding(1) var<storage, read> dO: array<f32>;
@group(0) @binding(2) var<storage, read> P_scratch: array<f32>;
@group(0) @binding(3) var<storage, read> dS_scratch: array<f32>;
@group(0) @binding(4) var<storage, read_write> dK: array<f32>;
@group(0) @binding(5) var<storage, read_write> dV: array<f32>;
@group(0) @binding(6) var<uniform> dims: vec4<u32>;

var<workgroup> sh_dk_partial: array<f32, WG>;
var<workgroup> sh_dv_partial: array<f32, WG>;

// +0 or -0, from the bits: unlike a float compare, never folded or ordered away for NaN.
fn is_zero(x: f32) -> bool {
    return (bitcast<u32>(x) & 0x7fffffffu) == 0u;
}

@compute @workgroup_size(256)
fn attention_backward_short_dKdV(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let seq_len = dims.x;
    let n_heads = dims.y;
    let n_kv = dims.z;
    let hd = dims.w;
    let j = wid.x;
    let kvh = wid.y;
    // Uniform per workgroup, so returning here keeps every later barrier in uniform control flow.
    if (j >= seq_len || kvh >= n_kv || hd == 0u || hd > MAX_HEAD_DIM) {
        return;
    }
    let group = n_heads / n_kv;
    let groups = WG / hd;
    let g = lid / hd;
    let lane = lid % hd;
    // Causal: only queries s >= j can see key j; the document mask is already in the scratch,
    // whose hidden entries are zero. A zero entry is skipped, not multiplied: its product is
    // replaced by 0 (0 * Q or 0 * dO would carry a NaN of another document's query into this
    // key). is_zero tests the bits, as is_finite does: `ds != 0.0` may compile to an ordered
    // compare that is false for NaN.
    // Every load of a step is issued before any of its values is used (the skip is a select,
    // not a branch around the load), and two queries s, s + groups are taken per step, so an
    // invocation keeps eight loads in flight instead of waiting on each scratch entry in turn.
    var dk = 0.0;
    var dv = 0.0;
    if (g < groups) {
        for (var s = j + g; s < seq_len; s = s + 2u * groups) {
            let s2 = s + groups;
            let two = s2 < seq_len;
            for (var r = 0u; r < group; r = r + 1u) {
                let h = kvh * group + r;
                let sc = (s * n_heads + h) * seq_len + j;
                let qi = (s * n_heads + h) * hd + lane;
                let ds = dS_scratch[sc];
                let p = P_scratch[sc];
                let q = Q[qi];
                let o = dO[qi];
                var ds2 = 0.0;
                var p2 = 0.0;
                var q2 = 0.0;
                var o2 = 0.0;
                if (two) {
                    let sc2 = (s2 * n_heads + h) * seq_len + j;
                    let qi2 = (s2 * n_heads + h) * hd + lane;
                    ds2 = dS_scratch[sc2];
                    p2 = P_scratch[sc2];
                    q2 = Q[qi2];
                    o2 = dO[qi2];
                }
                dk = dk + select(ds * q, 0.0, is_zero(ds));
                dv = dv + select(p * o, 0.0, is_zero(p));
                dk = dk + select(ds2 * q2, 0.0, is_zero(ds2));
                dv = dv + select(p2 * o2, 0.0, is_zero(p2));
            }
        }
    }
    sh_dk_partial[lid] = dk;
    sh_dv_partial[lid] = dv;
    workgroupBarrier();
    if (lid < hd) {
        var tk = 0.0;
        var tv = 0.0;
        for (var gg = 0u; gg < groups; gg = gg + 1u) {
            tk = tk + sh_dk_partial[gg * hd + lid];
            tv = tv + sh_dv_partial[gg * hd + lid];
        }
        let o = (j * n_kv + kvh) * hd + lid;
        dK[o] = dK[o] + tk;
        dV[o] = dV[o] + tv;
    }
}
