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
// Tiling (FlashAttention-2's forward, in workgroup memory): a workgroup owns 64 queries and walks
// their keys in tiles of TILE_KEYS with an online softmax (running max m, running sum l). Per
// tile, K and V (one chunk of DIM_CHUNK dims, vec4 c = dims c, c + 16, c + 32, c + 48, swizzled
// as in 10_backward_attention.wgsl) go to workgroup memory; invocation (row lid / 4, g = lid % 4)
// scores its query against keys 8 g .. 8 g + 7 (its Q row in registers when head_dim <= 64: the
// loop reads only workgroup memory, and a K vec4 serves the 8 rows of a warp at once), the four
// invocations of a row meet in workgroup memory for the row's max, P goes to workgroup memory,
// and the same invocation adds P V into the vec4s g, g + 4, g + 8, g + 12 of its row's output.
// Lanes 16 dims apart keep every global load instruction contiguous across 16 invocations (the
// ABI's scalar arrays give no vec4 loads). A row's sum l is kept per invocation against the
// shared max and summed once at the end. Key tiles that every query of the tile sees skip the
// mask; the others select hidden pairs away (a hidden key's V, NaN say, never meets a 0).
// head_dim > DIM_CHUNK runs the whole walk once per chunk of output dims (the scores over every
// chunk are recomputed): rare, correct. (The previous kernel, 16 queries per workgroup and two
// keys per invocation, read three vec4 from workgroup memory per two dot products.)

const MAX_HEAD_DIM: u32 = 256u;
// Queries per workgroup, keys per tile, dims per chunk (16 vec4).
const ROWS_PER_WORKGROUP: u32 = 64u;
const TILE_KEYS: u32 = 32u;
const DIM_CHUNK: u32 = 64u;
const CHUNK4: u32 = 16u;

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

// K and V of the tile: key k's vec4 c at k * 16 + (c ^ swz(k)). P of the tile: row r's keys
// 4 i .. 4 i + 3 in vec4 r * 8 + i. sh_row: the four partial maxima (then sums) of each row.
var<workgroup> sh_k: array<vec4<f32>, 512>;
var<workgroup> sh_v: array<vec4<f32>, 512>;
var<workgroup> sh_p: array<vec4<f32>, 512>;
var<workgroup> sh_row: array<f32, 256>;

// The invocation's Q row when head_dim <= DIM_CHUNK (loaded once for every key tile).
var<private> q_row: array<vec4<f32>, 16>;

// The swizzle: the four keys one load of the score loop reads (8 g + i, g = 0..3) land on
// distinct banks, and so do the four vec4s of one key the P V loop reads.
fn swz(k: u32) -> u32 {
    return (k >> 3u) & 3u;
}

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

// K and V of keys kt .. kt + 31 (clamped into the sequence), dims c0 .. c0 + 63 of kv head kvh,
// into sh_k and sh_v. The leading barrier keeps every earlier read of them first.
fn load_kv(kt: u32, c0: u32, kvh: u32, lid: u32) {
    let hd = dims.w;
    workgroupBarrier();
    let c = lid % 16u;
    for (var half = 0u; half < 2u; half = half + 1u) {
        let k = lid / 16u + 16u * half;
        let base = (min(kt + k, dims.x - 1u) * dims.z + kvh) * hd;
        sh_k[k * 16u + (c ^ swz(k))] = k4(base, c0 + c, hd);
        sh_v[k * 16u + (c ^ swz(k))] = v4(base, c0 + c, hd);
    }
    workgroupBarrier();
}

// Q.K of one query row against keys 8 g .. 8 g + 7 (a: the first four).
struct Scores {
    sa: vec4<f32>,
    sb: vec4<f32>,
}

fn score_step(r: Scores, qv: vec4<f32>, k: u32) -> Scores {
    var o = r;
    o.sa.x = o.sa.x + dot(qv, sh_k[k]);
    o.sa.y = o.sa.y + dot(qv, sh_k[k + 16u]);
    o.sa.z = o.sa.z + dot(qv, sh_k[k + 32u]);
    o.sa.w = o.sa.w + dot(qv, sh_k[k + 48u]);
    o.sb.x = o.sb.x + dot(qv, sh_k[k + 64u]);
    o.sb.y = o.sb.y + dot(qv, sh_k[k + 80u]);
    o.sb.z = o.sb.z + dot(qv, sh_k[k + 96u]);
    o.sb.w = o.sb.w + dot(qv, sh_k[k + 112u]);
    return o;
}

// The scores of query row q_base against keys kt + 8 g + i over every chunk of head_dim; then
// chunk c0 of K and V stays in workgroup memory (reloaded when head_dim > DIM_CHUNK).
fn scores(kt: u32, c0: u32, kvh: u32, q_base: u32, g: u32, lid: u32) -> Scores {
    let hd = dims.w;
    var r = Scores(vec4<f32>(0.0), vec4<f32>(0.0));
    let k0 = 8u * g * 16u;
    if (hd <= DIM_CHUNK) {
        load_kv(kt, 0u, kvh, lid);
        for (var c = 0u; c < CHUNK4; c = c + 1u) {
            r = score_step(r, q_row[c], k0 + (c ^ g));
        }
        return r;
    }
    for (var d0 = 0u; d0 < hd; d0 = d0 + DIM_CHUNK) {
        load_kv(kt, d0, kvh, lid);
        for (var c = 0u; c < CHUNK4; c = c + 1u) {
            r = score_step(r, q4(q_base, d0 + c, hd), k0 + (c ^ g));
        }
    }
    load_kv(kt, c0, kvh, lid);
    return r;
}

// Which of the four keys j0 .. j0 + 3 query s (first visible key lo) sees.
fn visible4(j0: u32, lo: u32, s: u32, live: bool) -> vec4<bool> {
    let j = j0 + vec4<u32>(0u, 1u, 2u, 3u);
    return (j >= vec4<u32>(lo)) & (j <= vec4<u32>(s)) & vec4<bool>(live);
}

fn masked(x: f32, v: vec4<f32>, vis: bool) -> vec4<f32> {
    return select(vec4<f32>(0.0), x * v, vis);
}

// The output accumulators of one invocation: vec4s g, g + 4, g + 8, g + 12 of its row's chunk.
struct Acc {
    a0: vec4<f32>,
    a1: vec4<f32>,
    a2: vec4<f32>,
    a3: vec4<f32>,
}

// acc += p * V[key t] over the four vec4s of this invocation (vec4 c of key t at t * 16 +
// (c ^ swz(t))), the product selected away where the key is hidden.
fn pv_step(acc: Acc, p: f32, t: u32, g: u32, vis: bool) -> Acc {
    let x = swz(t);
    let b = t * 16u;
    var o = acc;
    o.a0 = o.a0 + masked(p, sh_v[b + (g ^ x)], vis);
    o.a1 = o.a1 + masked(p, sh_v[b + ((g + 4u) ^ x)], vis);
    o.a2 = o.a2 + masked(p, sh_v[b + ((g + 8u) ^ x)], vis);
    o.a3 = o.a3 + masked(p, sh_v[b + ((g + 12u) ^ x)], vis);
    return o;
}

fn pv_step_all(acc: Acc, p: f32, t: u32, g: u32) -> Acc {
    let x = swz(t);
    let b = t * 16u;
    var o = acc;
    o.a0 = o.a0 + p * sh_v[b + (g ^ x)];
    o.a1 = o.a1 + p * sh_v[b + ((g + 4u) ^ x)];
    o.a2 = o.a2 + p * sh_v[b + ((g + 8u) ^ x)];
    o.a3 = o.a3 + p * sh_v[b + ((g + 12u) ^ x)];
    return o;
}

// Writes vec4 c of the output chunk c0 of row o_base (lanes past head_dim skipped).
fn store4(o_base: u32, c0: u32, c: u32, v: vec4<f32>) {
    let hd = dims.w;
    let d = c0 + c;
    let o = o_base + d;
    if (d < hd) { O[o] = v.x; }
    if (d + 16u < hd) { O[o + 16u] = v.y; }
    if (d + 32u < hd) { O[o + 32u] = v.z; }
    if (d + 48u < hd) { O[o + 48u] = v.w; }
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
    // The tile's first visible key (smallest lo of its queries) and the largest lo: a key tile
    // of [lo_max, q0] is visible to every query of the tile.
    var k_lo = q_last;
    var lo_max = 0u;
    for (var r = q0; r <= q_last; r = r + 1u) {
        k_lo = min(k_lo, min(seg[r], r));
        lo_max = max(lo_max, min(seg[r], r));
    }
    let all_rows = q0 + ROWS_PER_WORKGROUP <= seq_len;
    let g = lid % 4u;
    let s = q0 + lid / 4u;
    let live = s < seq_len;
    let sq = min(s, q_last);
    let lo = min(seg[sq], sq);
    let q_base = (sq * n_heads + h) * hd;
    if (hd <= DIM_CHUNK) {
        for (var c = 0u; c < CHUNK4; c = c + 1u) {
            q_row[c] = q4(q_base, c, hd);
        }
    }
    let row4 = lid & ~3u;

    for (var c0 = 0u; c0 < hd; c0 = c0 + DIM_CHUNK) {
        var m = NEG_BIG;
        var l = 0.0;
        var acc = Acc(vec4<f32>(0.0), vec4<f32>(0.0), vec4<f32>(0.0), vec4<f32>(0.0));
        for (var kt = k_lo; kt <= q_last; kt = kt + TILE_KEYS) {
            let sc = scores(kt, c0, kvh, q_base, g, lid);
            let j0 = kt + 8u * g;
            let va = visible4(j0, lo, s, live);
            let vb = visible4(j0 + 4u, lo, s, live);
            let xa = select(vec4<f32>(NEG_BIG), sc.sa * scale, va);
            let xb = select(vec4<f32>(NEG_BIG), sc.sb * scale, vb);
            let mx = max(xa, xb);
            sh_row[lid] = max(max(mx.x, mx.y), max(mx.z, mx.w));
            workgroupBarrier();
            let mt = max(max(sh_row[row4], sh_row[row4 + 1u]), max(sh_row[row4 + 2u], sh_row[row4 + 3u]));
            let m_new = max(m, mt);
            let pa = select(vec4<f32>(0.0), exp(xa - m_new), va);
            let pb = select(vec4<f32>(0.0), exp(xb - m_new), vb);
            let alpha = exp(m - m_new);
            l = l * alpha + (pa.x + pa.y + pa.z + pa.w) + (pb.x + pb.y + pb.z + pb.w);
            m = m_new;
            let r8 = (lid / 4u) * 8u + 2u * g;
            sh_p[r8] = pa;
            sh_p[r8 + 1u] = pb;
            workgroupBarrier();
            acc.a0 = acc.a0 * alpha;
            acc.a1 = acc.a1 * alpha;
            acc.a2 = acc.a2 * alpha;
            acc.a3 = acc.a3 * alpha;
            let pr = (lid / 4u) * 8u;
            if (all_rows && kt >= lo_max && kt + TILE_KEYS - 1u <= q0) {
                for (var t = 0u; t < TILE_KEYS; t = t + 4u) {
                    let p4 = sh_p[pr + t / 4u];
                    acc = pv_step_all(acc, p4.x, t, g);
                    acc = pv_step_all(acc, p4.y, t + 1u, g);
                    acc = pv_step_all(acc, p4.z, t + 2u, g);
                    acc = pv_step_all(acc, p4.w, t + 3u, g);
                }
            } else {
                for (var t = 0u; t < TILE_KEYS; t = t + 4u) {
                    let p4 = sh_p[pr + t / 4u];
                    let vis = visible4(kt + t, lo, s, live);
                    acc = pv_step(acc, p4.x, t, g, vis.x);
                    acc = pv_step(acc, p4.y, t + 1u, g, vis.y);
                    acc = pv_step(acc, p4.z, t + 2u, g, vis.z);
                    acc = pv_step(acc, p4.w, t + 3u, g, vis.w);
                }
            }
        }
        // The row's sum: each invocation holds its keys' share, against the same running max.
        workgroupBarrier();
        sh_row[lid] = l;
        workgroupBarrier();
        let l_row = (sh_row[row4] + sh_row[row4 + 1u]) + (sh_row[row4 + 2u] + sh_row[row4 + 3u]);
        if (live) {
            let o_base = (s * n_heads + h) * hd;
            store4(o_base, c0, g, acc.a0 / l_row);
            store4(o_base, c0, g + 4u, acc.a1 / l_row);
            store4(o_base, c0, g + 8u, acc.a2 / l_row);
            store4(o_base, c0, g + 12u, acc.a3 / l_row);
            if (c0 == 0u && g == 0u) {
                LSE[s * n_heads + h] = m + log(l_row);
            }
        }
    }
}
