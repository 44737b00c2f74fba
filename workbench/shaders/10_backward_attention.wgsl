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

    // P and dP for the whole row, zero where the mask hides key j; each invocation keeps the
    // same keys through the D reduction and the dS flush, so those need no barrier of their own.
    var d_part = 0.0;
    for (var j = lid; j < seq_len; j = j + WG) {
        var p = 0.0;
        var dp = 0.0;
        if (j >= lo && j <= s) {
            let kv_base = (j * n_kv + kvh) * hd;
            var qk = 0.0;
            var dov = 0.0;
            for (var d = 0u; d < hd; d = d + 1u) {
                qk = qk + sh_q[d] * K[kv_base + d];
                dov = dov + sh_do[d] * V[kv_base + d];
            }
            p = exp(qk * scale - lse);
            dp = dov;
        }
        sh_p_full[j] = p;
        sh_dp_full[j] = dp;
        d_part = d_part + p * dp;
    }
    let big_d = wg_reduce_sum(d_part, lid);

    // dS overwrites dP in place; both rows go to scratch for attention_backward_short_dKdV.
    // Hidden entries are stored as exact zeros: p = 0 there, but 0 * (0 - D) is NaN when D is,
    // and attention_backward_short_dKdV reads these zeros as the mask.
    let row = (s * n_heads + h) * seq_len;
    for (var j = lid; j < seq_len; j = j + WG) {
        let p = sh_p_full[j];
        let ds = select(0.0, scale * p * (sh_dp_full[j] - big_d), j >= lo && j <= s);
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
    // whose hidden entries are zero. A zero entry is skipped, not multiplied: 0 * Q or 0 * dO
    // would carry a NaN of another document's query into this key. is_zero tests the bits, as
    // is_finite does: `ds != 0.0` may compile to an ordered compare that is false for NaN. The
    // hd lanes of a group share s, so the branches are uniform within a group.
    var dk = 0.0;
    var dv = 0.0;
    if (g < groups) {
        for (var s = j + g; s < seq_len; s = s + groups) {
            for (var r = 0u; r < group; r = r + 1u) {
                let h = kvh * group + r;
                let sc = (s * n_heads + h) * seq_len + j;
                let qi = (s * n_heads + h) * hd + lane;
                let ds = dS_scratch[sc];
                let p = P_scratch[sc];
                if (!is_zero(ds)) {
                    dk = dk + ds * Q[qi];
                }
                if (!is_zero(p)) {
                    dv = dv + p * dO[qi];
                }
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
