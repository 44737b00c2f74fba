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
//
// Memory access: a score is a dot product over one K row, and one invocation per key walking its
// own row makes every load instruction of a subgroup touch as many cache lines as it has
// invocations. So PARTS neighbouring invocations share a key, each summing every PARTS-th
// element (a load instruction of 32 invocations then touches 32 / PARTS rows, PARTS contiguous
// floats each), and the partial sums meet in workgroup memory. For P V, the workgroup works as
// WG / head_dim groups of head_dim lanes, group g taking every (WG / head_dim)-th key of a block,
// so all invocations load V rows (contiguous) instead of head_dim of them walking the block.

const MAX_HEAD_DIM: u32 = 256u;
// Invocations that share one key's dot product, and the keys one pass of the workgroup covers.
const PARTS: u32 = 4u;
const KEYS_PER_PASS: u32 = WG / PARTS;

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
var<workgroup> sh_part: array<f32, WG>;

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
    if (s >= seq_len || h >= n_heads || n_kv == 0u || hd == 0u || hd > MAX_HEAD_DIM) {
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

    // Score phase: invocation lid helps key lid / PARTS of a pass with elements part, part +
    // PARTS, ...; P V phase: group g of head_dim lanes, lane d.
    let part = lid % PARTS;
    let groups = WG / hd;
    let g = lid / hd;
    let lane = lid % hd;

    var m = NEG_BIG;
    var l = 0.0;
    var acc = 0.0;
    for (var blk = lo; blk <= s; blk = blk + WG) {
        // Scores of the block's keys into sh_p, NEG_BIG past s.
        for (var kp = 0u; kp < WG; kp = kp + KEYS_PER_PASS) {
            let j = blk + kp + lid / PARTS;
            var dot = 0.0;
            if (j <= s) {
                let k_base = (j * n_kv + kvh) * hd;
                for (var d = part; d < hd; d = d + PARTS) {
                    dot = dot + sh_q[d] * K[k_base + d];
                }
            }
            sh_part[lid] = dot;
            workgroupBarrier();
            if (lid < KEYS_PER_PASS && blk + kp + lid <= s) {
                var total = 0.0;
                for (var r = 0u; r < PARTS; r = r + 1u) {
                    total = total + sh_part[lid * PARTS + r];
                }
                sh_p[kp + lid] = total * scale;
            }
            workgroupBarrier();
        }
        let j = blk + lid;
        var score = NEG_BIG;
        if (j <= s) {
            score = sh_p[lid];
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
        if (g < groups) {
            var a = acc * alpha;
            for (var t = g; t < n_blk; t = t + groups) {
                a = a + sh_p[t] * V[((blk + t) * n_kv + kvh) * hd + lane];
            }
            acc = a;
        }
        m = m_new;
        // sh_p is rewritten by the next block.
        workgroupBarrier();
    }
    // The groups' partial sums of P V meet in workgroup memory.
    sh_part[lid] = acc;
    workgroupBarrier();
    if (lid < hd) {
        var total = 0.0;
        for (var gg = 0u; gg < groups; gg = gg + 1u) {
            total = total + sh_part[gg * hd + lid];
        }
        O[q_base + lid] = total / l;
    }
    if (lid == 0u) {
        LSE[s * n_heads + h] = m + log(l);
    }
}
