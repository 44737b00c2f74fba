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
// tile, K and V (one chunk of DIM_CHUNK dims, vec4 c = dims c, c + 16, c + 32, c + 48, swizzled)
// go to workgroup memory; invocation (rp = lid / 8, g = lid % 8) scores two queries, rows rp and
// rp + 32, against keys 4 g .. 4 g + 3, its two Q rows in registers when head_dim <= 64: the
// score loop reads only workgroup memory, each K vec4 feeds two dot products, and one load
// instruction serves the 4 row pairs of a warp. The eight invocations of a row meet in
// workgroup memory for the row's max, P goes to workgroup memory, and the same invocation adds
// P V into the vec4s g and g + 8 of both rows' outputs (each V vec4 read feeds both rows).
// Lanes 16 dims apart keep every global load instruction contiguous across 16 invocations (the
// ABI's scalar arrays give no vec4 loads). A row's sum l is kept per invocation against the
// shared max and summed once at the end. Key tiles that every query of the tile sees skip the
// mask; the others select hidden pairs away (a hidden key's V, NaN say, never meets a 0).
// head_dim > DIM_CHUNK runs the whole walk once per chunk of output dims (the scores over every
// chunk are recomputed): rare, correct. Measured on the H100 at seq 2048 / 8192: the previous
// kernel (16 queries per workgroup, two keys per invocation) 0.985 / 13.16 ms; one query row
// per invocation (64 x 32 tiles, 8 keys each) 0.853 / 9.96 ms; 32 queries per workgroup with
// one row per invocation 0.896 / 12.37 ms; this one 0.731 / 8.39 ms, and 0.535 / 6.25 with the
// loops over the held Q rows unrolled by hand (see scores()).

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
// 4 i .. 4 i + 3 in vec4 r * 8 + i. sh_row: the eight partial maxima (then sums) of each row
// pair's first row at lid, of its second at 256 + lid.
var<workgroup> sh_k: array<vec4<f32>, 512>;
var<workgroup> sh_v: array<vec4<f32>, 512>;
var<workgroup> sh_p: array<vec4<f32>, 512>;
var<workgroup> sh_row: array<f32, 512>;

// The invocation's two Q rows when head_dim <= DIM_CHUNK (loaded once for every key tile).
var<private> q_row: array<vec4<f32>, 16>;
var<private> q_row1: array<vec4<f32>, 16>;

// The swizzle: the eight keys one load of the score loop reads (4 g + i, g = 0..7) land on
// distinct banks, and so do the eight vec4s of one key the P V loop reads.
fn swz(k: u32) -> u32 {
    return (k >> 2u) & 7u;
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

// Q.K of two query rows against keys 4 g .. 4 g + 3.
struct Scores {
    s0: vec4<f32>,
    s1: vec4<f32>,
}

fn score_step(r: Scores, q0v: vec4<f32>, q1v: vec4<f32>, k: u32) -> Scores {
    var o = r;
    let ka = sh_k[k];
    let kb = sh_k[k + 16u];
    let kc = sh_k[k + 32u];
    let kd = sh_k[k + 48u];
    o.s0 = o.s0 + vec4<f32>(dot(q0v, ka), dot(q0v, kb), dot(q0v, kc), dot(q0v, kd));
    o.s1 = o.s1 + vec4<f32>(dot(q1v, ka), dot(q1v, kb), dot(q1v, kc), dot(q1v, kd));
    return o;
}

// The scores of query rows qb0 and qb1 against keys kt + 4 g + i over every chunk of head_dim;
// then chunk c0 of K and V stays in workgroup memory (reloaded when head_dim > DIM_CHUNK).
fn scores(kt: u32, c0: u32, kvh: u32, qb0: u32, qb1: u32, g: u32, lid: u32) -> Scores {
    let hd = dims.w;
    var r = Scores(vec4<f32>(0.0), vec4<f32>(0.0));
    let k0 = 4u * g * 16u;
    if (hd <= DIM_CHUNK) {
        load_kv(kt, 0u, kvh, lid);
        // Unrolled by hand: with a loop counter as the index, the H100's driver kept the rows in
        // memory instead of registers (0.730 -> 0.535 ms at seq 2048, 8.40 -> 6.25 at 8192).
        r = score_step(r, q_row[0], q_row1[0], k0 + (0u ^ g));
        r = score_step(r, q_row[1], q_row1[1], k0 + (1u ^ g));
        r = score_step(r, q_row[2], q_row1[2], k0 + (2u ^ g));
        r = score_step(r, q_row[3], q_row1[3], k0 + (3u ^ g));
        r = score_step(r, q_row[4], q_row1[4], k0 + (4u ^ g));
        r = score_step(r, q_row[5], q_row1[5], k0 + (5u ^ g));
        r = score_step(r, q_row[6], q_row1[6], k0 + (6u ^ g));
        r = score_step(r, q_row[7], q_row1[7], k0 + (7u ^ g));
        r = score_step(r, q_row[8], q_row1[8], k0 + (8u ^ g));
        r = score_step(r, q_row[9], q_row1[9], k0 + (9u ^ g));
        r = score_step(r, q_row[10], q_row1[10], k0 + (10u ^ g));
        r = score_step(r, q_row[11], q_row1[11], k0 + (11u ^ g));
        r = score_step(r, q_row[12], q_row1[12], k0 + (12u ^ g));
        r = score_step(r, q_row[13], q_row1[13], k0 + (13u ^ g));
        r = score_step(r, q_row[14], q_row1[14], k0 + (14u ^ g));
        r = score_step(r, q_row[15], q_row1[15], k0 + (15u ^ g));
        return r;
    }
    for (var d0 = 0u; d0 < hd; d0 = d0 + DIM_CHUNK) {
        load_kv(kt, d0, kvh, lid);
        for (var c = 0u; c < CHUNK4; c = c + 1u) {
            r = score_step(r, q4(qb0, d0 + c, hd), q4(qb1, d0 + c, hd), k0 + (c ^ g));
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

// The output accumulators of one invocation: vec4s g and g + 8 of its two rows.
struct Acc {
    a0: vec4<f32>,
    a1: vec4<f32>,
    b0: vec4<f32>,
    b1: vec4<f32>,
}

// acc += p * V[key t] for both rows (p0, p1), the products of hidden pairs selected away.
fn pv_step(acc: Acc, p0: f32, p1: f32, t: u32, g: u32, v0: bool, v1: bool) -> Acc {
    let x = swz(t);
    let b = t * 16u;
    let va = sh_v[b + (g ^ x)];
    let vb = sh_v[b + ((g + 8u) ^ x)];
    var o = acc;
    o.a0 = o.a0 + masked(p0, va, v0);
    o.a1 = o.a1 + masked(p0, vb, v0);
    o.b0 = o.b0 + masked(p1, va, v1);
    o.b1 = o.b1 + masked(p1, vb, v1);
    return o;
}

fn pv_step_all(acc: Acc, p0: f32, p1: f32, t: u32, g: u32) -> Acc {
    let x = swz(t);
    let b = t * 16u;
    let va = sh_v[b + (g ^ x)];
    let vb = sh_v[b + ((g + 8u) ^ x)];
    var o = acc;
    o.a0 = o.a0 + p0 * va;
    o.a1 = o.a1 + p0 * vb;
    o.b0 = o.b0 + p1 * va;
    o.b1 = o.b1 + p1 * vb;
    return o;
}

// The max, then the sum, of row values over the 8 invocations of a row (8 consecutive slots).
fn max8(i: u32) -> f32 {
    let a = max(vec4<f32>(sh_row[i], sh_row[i + 1u], sh_row[i + 2u], sh_row[i + 3u]),
        vec4<f32>(sh_row[i + 4u], sh_row[i + 5u], sh_row[i + 6u], sh_row[i + 7u]));
    return max(max(a.x, a.y), max(a.z, a.w));
}

fn sum8(i: u32) -> f32 {
    let a = vec4<f32>(sh_row[i], sh_row[i + 1u], sh_row[i + 2u], sh_row[i + 3u])
        + vec4<f32>(sh_row[i + 4u], sh_row[i + 5u], sh_row[i + 6u], sh_row[i + 7u]);
    return (a.x + a.y) + (a.z + a.w);
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
    // Uniform per workgroup, so returning here keeps every later barrier in uniform control flow.
    if (wid.x >= n_tiles || wid.y >= n_heads || n_kv == 0u || hd == 0u || hd > MAX_HEAD_DIM) {
        return;
    }
    let tile = longest_tile_first(wid, n_tiles, n_heads);
    let h = tile.y;
    let q0 = tile.x * ROWS_PER_WORKGROUP;
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
    // Invocation (rp = lid / 8, g = lid % 8): rows rp and rp + 32, keys 4 g .. 4 g + 3 of each
    // tile, output vec4s g and g + 8.
    let g = lid % 8u;
    let rp = lid / 8u;
    let s0 = q0 + rp;
    let s1 = s0 + 32u;
    let live0 = s0 < seq_len;
    let live1 = s1 < seq_len;
    let sq0 = min(s0, q_last);
    let sq1 = min(s1, q_last);
    let lo0 = min(seg[sq0], sq0);
    let lo1 = min(seg[sq1], sq1);
    let qb0 = (sq0 * n_heads + h) * hd;
    let qb1 = (sq1 * n_heads + h) * hd;
    if (hd <= DIM_CHUNK) {
        // Unrolled by hand: with a loop counter as the index, the H100's driver kept the rows in
        // memory instead of registers (0.730 -> 0.535 ms at seq 2048, 8.40 -> 6.25 at 8192).
        q_row[0] = q4(qb0, 0u, hd);
        q_row1[0] = q4(qb1, 0u, hd);
        q_row[1] = q4(qb0, 1u, hd);
        q_row1[1] = q4(qb1, 1u, hd);
        q_row[2] = q4(qb0, 2u, hd);
        q_row1[2] = q4(qb1, 2u, hd);
        q_row[3] = q4(qb0, 3u, hd);
        q_row1[3] = q4(qb1, 3u, hd);
        q_row[4] = q4(qb0, 4u, hd);
        q_row1[4] = q4(qb1, 4u, hd);
        q_row[5] = q4(qb0, 5u, hd);
        q_row1[5] = q4(qb1, 5u, hd);
        q_row[6] = q4(qb0, 6u, hd);
        q_row1[6] = q4(qb1, 6u, hd);
        q_row[7] = q4(qb0, 7u, hd);
        q_row1[7] = q4(qb1, 7u, hd);
        q_row[8] = q4(qb0, 8u, hd);
        q_row1[8] = q4(qb1, 8u, hd);
        q_row[9] = q4(qb0, 9u, hd);
        q_row1[9] = q4(qb1, 9u, hd);
        q_row[10] = q4(qb0, 10u, hd);
        q_row1[10] = q4(qb1, 10u, hd);
        q_row[11] = q4(qb0, 11u, hd);
        q_row1[11] = q4(qb1, 11u, hd);
        q_row[12] = q4(qb0, 12u, hd);
        q_row1[12] = q4(qb1, 12u, hd);
        q_row[13] = q4(qb0, 13u, hd);
        q_row1[13] = q4(qb1, 13u, hd);
        q_row[14] = q4(qb0, 14u, hd);
        q_row1[14] = q4(qb1, 14u, hd);
        q_row[15] = q4(qb0, 15u, hd);
        q_row1[15] = q4(qb1, 15u, hd);
    }
    let row8 = lid & ~7u;

    for (var c0 = 0u; c0 < hd; c0 = c0 + DIM_CHUNK) {
        var m0 = NEG_BIG;
        var m1 = NEG_BIG;
        var l0 = 0.0;
        var l1 = 0.0;
        var acc = Acc(vec4<f32>(0.0), vec4<f32>(0.0), vec4<f32>(0.0), vec4<f32>(0.0));
        for (var kt = k_lo; kt <= q_last; kt = kt + TILE_KEYS) {
            let sc = scores(kt, c0, kvh, qb0, qb1, g, lid);
            let j0 = kt + 4u * g;
            let v0 = visible4(j0, lo0, s0, live0);
            let v1 = visible4(j0, lo1, s1, live1);
            let x0 = select(vec4<f32>(NEG_BIG), sc.s0 * scale, v0);
            let x1 = select(vec4<f32>(NEG_BIG), sc.s1 * scale, v1);
            sh_row[lid] = max(max(x0.x, x0.y), max(x0.z, x0.w));
            sh_row[256u + lid] = max(max(x1.x, x1.y), max(x1.z, x1.w));
            workgroupBarrier();
            let mn0 = max(m0, max8(row8));
            let mn1 = max(m1, max8(256u + row8));
            let p0 = select(vec4<f32>(0.0), exp(x0 - mn0), v0);
            let p1 = select(vec4<f32>(0.0), exp(x1 - mn1), v1);
            let al0 = exp(m0 - mn0);
            let al1 = exp(m1 - mn1);
            l0 = l0 * al0 + (p0.x + p0.y) + (p0.z + p0.w);
            l1 = l1 * al1 + (p1.x + p1.y) + (p1.z + p1.w);
            m0 = mn0;
            m1 = mn1;
            sh_p[rp * 8u + g] = p0;
            sh_p[(rp + 32u) * 8u + g] = p1;
            workgroupBarrier();
            acc.a0 = acc.a0 * al0;
            acc.a1 = acc.a1 * al0;
            acc.b0 = acc.b0 * al1;
            acc.b1 = acc.b1 * al1;
            if (all_rows && kt >= lo_max && kt + TILE_KEYS - 1u <= q0) {
                for (var t = 0u; t < TILE_KEYS; t = t + 4u) {
                    let pa = sh_p[rp * 8u + t / 4u];
                    let pb = sh_p[(rp + 32u) * 8u + t / 4u];
                    acc = pv_step_all(acc, pa.x, pb.x, t, g);
                    acc = pv_step_all(acc, pa.y, pb.y, t + 1u, g);
                    acc = pv_step_all(acc, pa.z, pb.z, t + 2u, g);
                    acc = pv_step_all(acc, pa.w, pb.w, t + 3u, g);
                }
            } else {
                for (var t = 0u; t < TILE_KEYS; t = t + 4u) {
                    let pa = sh_p[rp * 8u + t / 4u];
                    let pb = sh_p[(rp + 32u) * 8u + t / 4u];
                    let w0 = visible4(kt + t, lo0, s0, live0);
                    let w1 = visible4(kt + t, lo1, s1, live1);
                    acc = pv_step(acc, pa.x, pb.x, t, g, w0.x, w1.x);
                    acc = pv_step(acc, pa.y, pb.y, t + 1u, g, w0.y, w1.y);
                    acc = pv_step(acc, pa.z, pb.z, t + 2u, g, w0.z, w1.z);
                    acc = pv_step(acc, pa.w, pb.w, t + 3u, g, w0.w, w1.w);
                }
            }
        }
        // Each row's sum: each invocation holds its keys' share, against the same running max.
        workgroupBarrier();
        sh_row[lid] = l0;
        sh_row[256u + lid] = l1;
        workgroupBarrier();
        let lr0 = sum8(row8);
        let lr1 = sum8(256u + row8);
        if (live0) {
            let o_base = (s0 * n_heads + h) * hd;
            store4(o_base, c0, g, acc.a0 / lr0);
            store4(o_base, c0, g + 8u, acc.a1 / lr0);
            if (c0 == 0u && g == 0u) {
                LSE[s0 * n_heads + h] = m0 + log(lr0);
            }
        }
        if (live1) {
            let o_base = (s1 * n_heads + h) * hd;
            store4(o_base, c0, g, acc.b0 / lr1);
            store4(o_base, c0, g + 8u, acc.b1 / lr1);
            if (c0 == 0u && g == 0u) {
                LSE[s1 * n_heads + h] = m1 + log(lr1);
            }
        }
    }
}
