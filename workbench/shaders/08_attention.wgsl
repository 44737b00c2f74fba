// Causal softmax attention, forward: O = softmax(scale * Q K^T + mask) V, and the natural-log
// logsumexp of each row of masked, scaled scores (LSE), which the backward kernels reuse.
//
// Layouts (row-major): Q, O [seq, n_heads, head_dim]; K, V [seq, n_kv_heads, head_dim];
// LSE [seq, n_heads]. GQA: query head h reads kv head h / (n_heads / n_kv_heads).
// Mask: key j is visible to query s iff seg[s] <= j <= s (causal, within one document);
// seg[s] > s is read as seg[s] = s, so every query sees at least itself.
// The spec's grid is (seq, n_heads, 1), one workgroup per (s, h); this kernel declares
// ROWS_PER_WORKGROUP, so the host divides x by it and a workgroup takes a tile of that many
// queries of one head. head_dim <= 256.
//
// Bindings: 0 Q (read), 1 K (read), 2 V (read), 3 O (read_write), 4 LSE (read_write),
// 5 dims: vec4<u32>(seq_len, n_heads, n_kv_heads, head_dim), 6 params: vec4<f32>(scale, _, _, _),
// 7 seg: array<u32> (read).
//
// Tiling (FlashAttention's shape, in workgroup memory): the workgroup walks its queries' keys in
// tiles of TILE_K with an online softmax (running max m, running sum l). Per tile, the Q and K
// chunks of DIM_CHUNK dims go to workgroup memory and invocation (row, col) of a 16 x 16 grid
// scores its query `row` against keys col and col + 16, reading both as vec4 (a K element feeds
// 16 queries, a Q element 32 keys); then V's chunk replaces K's and the same invocation adds
// P V into the vec4 of dims col, col + 16, col + 32, col + 48 of its query. Lanes 16 dims apart
// keep every global load instruction contiguous across a row of invocations (the ABI's scalar
// arrays give no vec4 loads), and the vec4 is written out lane by lane with constant indices:
// a vector indexed by a loop variable lands in slow local memory on NVIDIA's driver. A row's max is the only cross-invocation step:
// 16 partials in workgroup memory, 4 barriers per tile in all (the previous kernel, one query per
// workgroup, spent about 27 per 256 keys of one query in its reduction trees). A row's sum l is
// kept per invocation against the shared max and summed once at the end. head_dim > DIM_CHUNK
// runs the whole walk once per chunk of output dims (the scores are recomputed): rare, correct.

const MAX_HEAD_DIM: u32 = 256u;
// Queries per workgroup, keys per tile, dims per chunk (16 vec4), and the padded vec4 stride of
// a chunk row in workgroup memory (17: the 8 rows a quarter-warp reads land on distinct banks).
const ROWS_PER_WORKGROUP: u32 = 16u;
const TILE_K: u32 = 32u;
const DIM_CHUNK: u32 = 64u;
const CHUNK4: u32 = 16u;
const STRIDE4: u32 = 17u;

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

var<workgroup> sh_q: array<vec4<f32>, 272>;
var<workgroup> sh_kv: array<vec4<f32>, 544>;
var<workgroup> sh_p: array<f32, 512>;
var<workgroup> sh_row: array<f32, 256>;

// Elements d, d + 16, d + 32, d + 48 of the row starting at `base`, zero past head_dim (so
// partial chunks add 0); indices are clamped into the row, so the loads need no branch.
fn q4(base: u32, d: u32, hd: u32) -> vec4<f32> {
    let e = base + min(d + vec4<u32>(0u, 16u, 32u, 48u), vec4<u32>(hd - 1u));
    let v = vec4<f32>(Q[e.x], Q[e.y], Q[e.z], Q[e.w]);
    return select(vec4<f32>(0.0), v, d + vec4<u32>(0u, 16u, 32u, 48u) < vec4<u32>(hd));
}

fn k4(base: u32, d: u32, hd: u32) -> vec4<f32> {
    let e = base + min(d + vec4<u32>(0u, 16u, 32u, 48u), vec4<u32>(hd - 1u));
    let v = vec4<f32>(K[e.x], K[e.y], K[e.z], K[e.w]);
    return select(vec4<f32>(0.0), v, d + vec4<u32>(0u, 16u, 32u, 48u) < vec4<u32>(hd));
}

fn v4(base: u32, d: u32, hd: u32) -> vec4<f32> {
    let e = base + min(d + vec4<u32>(0u, 16u, 32u, 48u), vec4<u32>(hd - 1u));
    let v = vec4<f32>(V[e.x], V[e.y], V[e.z], V[e.w]);
    return select(vec4<f32>(0.0), v, d + vec4<u32>(0u, 16u, 32u, 48u) < vec4<u32>(hd));
}

@compute @workgroup_size(256)
fn attention_forward(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let seq_len = dims.x;
    let n_heads = dims.y;
    let n_kv = dims.z;
    let hd = dims.w;
    let n_tiles = (seq_len + ROWS_PER_WORKGROUP - 1u) / ROWS_PER_WORKGROUP;
    let h = wid.y;
    // Uniform per workgroup, so returning here keeps every later barrier in uniform control flow.
    if (wid.x >= n_tiles || h >= n_heads || n_kv == 0u || hd == 0u || hd > MAX_HEAD_DIM) {
        return;
    }
    // The last query tiles see the most keys: they take the first workgroups.
    let q0 = (n_tiles - 1u - wid.x) * ROWS_PER_WORKGROUP;
    let q_last = min(q0 + ROWS_PER_WORKGROUP, seq_len) - 1u;
    let kvh = h / (n_heads / n_kv);
    let scale = params.x;
    let row = lid / 16u;
    let col = lid % 16u;
    let s = q0 + row;
    let live = s < seq_len;
    let sq = min(s, q_last);
    let lo = min(seg[sq], sq);
    // The tile's first visible key: the smallest lo of its queries (the same in every invocation).
    var k_lo = q_last;
    for (var r = q0; r <= q_last; r = r + 1u) {
        k_lo = min(k_lo, min(seg[r], r));
    }
    let q_base = (sq * n_heads + h) * hd;

    // Start of key j's row of K or V (clamped: loads past the sequence are harmless and unused).
    let kv_last = seq_len - 1u;
    let q_first = q4(q_base, col, hd);

    for (var c0 = 0u; c0 < hd; c0 = c0 + DIM_CHUNK) {
        var m = NEG_BIG;
        var l = 0.0;
        var acc = vec4<f32>(0.0);
        // This invocation's two K rows (first chunk) and V rows (output chunk) of the first tile.
        // Each pair is stored to workgroup memory when its tile needs it and then at once loaded
        // again for the next tile, so the loads of tile t + 1 are in flight during tile t's work.
        var ka = k4((min(k_lo + row, kv_last) * n_kv + kvh) * hd, col, hd);
        var kb = k4((min(k_lo + row + 16u, kv_last) * n_kv + kvh) * hd, col, hd);
        var va = v4((min(k_lo + row, kv_last) * n_kv + kvh) * hd, c0 + col, hd);
        var vb = v4((min(k_lo + row + 16u, kv_last) * n_kv + kvh) * hd, c0 + col, hd);
        for (var kt = k_lo; kt <= q_last; kt = kt + TILE_K) {
            let ja = (min(kt + TILE_K + row, kv_last) * n_kv + kvh) * hd;
            let jb = (min(kt + TILE_K + row + 16u, kv_last) * n_kv + kvh) * hd;
            // Scores of query `row` against keys kt + col and kt + col + 16, chunk by chunk.
            var s0 = 0.0;
            var s1 = 0.0;
            for (var d0 = 0u; d0 < hd; d0 = d0 + DIM_CHUNK) {
                if (d0 == 0u) {
                    sh_q[row * STRIDE4 + col] = q_first;
                    sh_kv[row * STRIDE4 + col] = ka;
                    sh_kv[(row + 16u) * STRIDE4 + col] = kb;
                    ka = k4(ja, col, hd);
                    kb = k4(jb, col, hd);
                } else {
                    sh_q[row * STRIDE4 + col] = q4(q_base, d0 + col, hd);
                    for (var half = 0u; half < 2u; half = half + 1u) {
                        let kr = row + 16u * half;
                        let j = min(kt + kr, kv_last);
                        sh_kv[kr * STRIDE4 + col] = k4((j * n_kv + kvh) * hd, d0 + col, hd);
                    }
                }
                workgroupBarrier();
                for (var c = 0u; c < CHUNK4; c = c + 1u) {
                    let qv = sh_q[row * STRIDE4 + c];
                    s0 = s0 + dot(qv, sh_kv[col * STRIDE4 + c]);
                    s1 = s1 + dot(qv, sh_kv[(col + 16u) * STRIDE4 + c]);
                }
                workgroupBarrier();
            }
            let j0 = kt + col;
            let j1 = j0 + 16u;
            let vis0 = live && j0 >= lo && j0 <= s;
            let vis1 = live && j1 >= lo && j1 <= s;
            let sc0 = select(NEG_BIG, s0 * scale, vis0);
            let sc1 = select(NEG_BIG, s1 * scale, vis1);
            sh_row[lid] = max(sc0, sc1);
            // V's chunk of output dims replaces K's (the score reads ended at the last barrier).
            sh_kv[row * STRIDE4 + col] = va;
            sh_kv[(row + 16u) * STRIDE4 + col] = vb;
            va = v4(ja, c0 + col, hd);
            vb = v4(jb, c0 + col, hd);
            workgroupBarrier();
            var mt = NEG_BIG;
            for (var r = 0u; r < 16u; r = r + 1u) {
                mt = max(mt, sh_row[row * 16u + r]);
            }
            let m_new = max(m, mt);
            let p0 = select(0.0, exp(sc0 - m_new), vis0);
            let p1 = select(0.0, exp(sc1 - m_new), vis1);
            let alpha = exp(m - m_new);
            l = l * alpha + p0 + p1;
            m = m_new;
            sh_p[row * TILE_K + col] = p0;
            sh_p[row * TILE_K + col + 16u] = p1;
            workgroupBarrier();
            // Only the keys this query sees: a hidden key's V (NaN, say) must not meet a 0.
            acc = acc * alpha;
            let t_begin = max(lo, kt) - kt;
            let t_end = min(s + 1u, kt + TILE_K) - min(kt, s + 1u);
            for (var t = t_begin; t < t_end; t = t + 1u) {
                acc = acc + sh_p[row * TILE_K + t] * sh_kv[t * STRIDE4 + col];
            }
            workgroupBarrier();
        }
        // The row's sum: each invocation holds its keys' share, against the same running max.
        sh_row[lid] = l;
        workgroupBarrier();
        var l_row = 0.0;
        for (var r = 0u; r < 16u; r = r + 1u) {
            l_row = l_row + sh_row[row * 16u + r];
        }
        if (live) {
            let out = acc / l_row;
            let o = (s * n_heads + h) * hd + c0 + col;
            let d = c0 + col;
            if (d < hd) { O[o] = out.x; }
            if (d + 16u < hd) { O[o + 16u] = out.y; }
            if (d + 32u < hd) { O[o + 32u] = out.z; }
            if (d + 48u < hd) { O[o + 48u] = out.w; }
            if (c0 == 0u && col == 0u) {
                LSE[s * n_heads + h] = m + log(l_row);
            }
        }
        workgroupBarrier();
    }
}
