// Causal softmax attention, forward: O = softmax(scale * Q K^T + mask) V, and the natural-log
// logsumexp of each row of masked, scaled scores (LSE), which the backward kernels reuse.
//
// Layouts (row-major): Q, O [seq, n_heads, head_dim]; K, V [seq, n_kv_heads, head_dim];
// LSE [seq, n_heads]. GQA: query head h reads kv head h / (n_heads / n_kv_heads).
// Mask: key j is visible to query s iff seg[s] <= j <= s (causal, within one document);
// seg[s] > s is read as seg[s] = s, so every query sees at least itself.
// One workgroup per (s, h): grid (seq, n_heads, 1). head_dim <= 256.
//
// Bindings: 0 Q (read), 1 K (read), 2 V (read), 3 O (read_write), 4 LSE (read_write),
// 5 dims: vec4<u32>(seq_len, n_heads, n_kv_heads, head_dim), 6 params: vec4<f32>(scale, _, _, _),
// 7 seg: array<u32> (read).
//
// Keys are visited in blocks of WG with an online softmax (running max m, running sum l), so any
// sequence length works with fixed workgroup memory. Reductions use the barrier trees of
// 00_shared.wgsl (wg_reduce_max, wg_reduce_sum): right for any subgroup size.

const MAX_HEAD_DIM: u32 = 256u;

// A finite stand-in for -inf: exp(NEG_BIG - finite) is exactly 0 and no inf - inf can appear.
const NEG_BIG: f32 = -3.0e38;

// --- KERNEL: attention_forward ---
@group(0) @binding(0) var<storage, read> Q: array<f32>;
@group(0) @binding(1) var<storage, read> K: array<f32>;
@group(0) @binding(2) var<storage, read> V: array<f32>;
@group(0) @binding(3) var<storage, read_write> O: array<f32>;
@group(0) @binding(4) var<storage, read_write> LSE: array<f32>;
@group(0) @binding(5) var<uniform> dims: vec4<u32>;
@group(0) @binding(6) var<uniform> params: vec4<f32>;
@group(0) @binding(7) var<storage, read> seg: array<u32>;

var<workgroup> sh_q: array<f32, 256>;
var<workgroup> sh_p: array<f32, 256>;

@compute @workgroup_size(256)
fn attention_forward(
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
    if (s >= seq_len || h >= n_heads || n_kv == 0u || hd > MAX_HEAD_DIM) {
        return;
    }
    let kvh = h / (n_heads / n_kv);
    let scale = params.x;
    let q_base = (s * n_heads + h) * hd;
    if (lid < hd) {
        sh_q[lid] = Q[q_base + lid];
    }
    let lo = min(seg[s], s);
    workgroupBarrier();

    var m = NEG_BIG;
    var l = 0.0;
    var acc = 0.0;
    for (var blk = lo; blk <= s; blk = blk + WG) {
        let j = blk + lid;
        var score = NEG_BIG;
        if (j <= s) {
            let k_base = (j * n_kv + kvh) * hd;
            var dot = 0.0;
            for (var d = 0u; d < hd; d = d + 1u) {
                dot = dot + sh_q[d] * K[k_base + d];
            }
            score = dot * scale;
        }
        // Every block holds key blk <= s, so its maximum is a real score.
        let m_new = max(m, wg_reduce_max(score, lid));
        var p = 0.0;
        if (j <= s) {
            p = exp(score - m_new);
        }
        sh_p[lid] = p;
        // The reduction's barriers also publish sh_p to the whole workgroup.
        let l_blk = wg_reduce_sum(p, lid);
        let alpha = exp(m - m_new);
        l = l * alpha + l_blk;
        let n_blk = min(WG, s + 1u - blk);
        if (lid < hd) {
            var a = acc * alpha;
            for (var t = 0u; t < n_blk; t = t + 1u) {
                a = a + sh_p[t] * V[((blk + t) * n_kv + kvh) * hd + lid];
            }
            acc = a;
        }
        m = m_new;
        // sh_p is rewritten by the next block.
        workgroupBarrier();
    }
    if (lid < hd) {
        O[q_base + lid] = acc / l;
    }
    if (lid == 0u) {
        LSE[s * n_heads + h] = m + log(l);
    }
}
