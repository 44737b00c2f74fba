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
// - attention_backward_short (seq <= 1024, spec grid (seq, n_heads, 1)): owns dQ[s,h,*] and
//   writes the whole rows P_scratch[s,h,*] and dS_scratch[s,h,*] (zero where the mask hides key
//   j). It declares ROWS_PER_WORKGROUP: a workgroup takes a tile of that many queries of one head.
// - attention_backward_short_dKdV (seq <= 1024, spec grid (seq, n_kv_heads, 1)): gathers the
//   scratch columns over s >= j and the query heads of kv_h, and owns dK[j,kv_h,*], dV[j,kv_h,*]:
//   no atomics. With ROWS_PER_WORKGROUP a workgroup takes a tile of that many keys.
// - attention_backward (any seq, spec grid (seq, n_heads, 1)): declares ROWS_PER_WORKGROUP, so a
//   workgroup takes a tile of 64 queries of one head; pass A finds D, pass B walks the key tiles
//   again, owns dQ[s,h,*] and adds each key tile's dK and dV, summed over the 64 queries, with
//   f32 compare-and-swap adds on array<atomic<u32>> (other query tiles and the GQA group share a
//   slot). Its kernel comment has the layout.
//
// Special values: a hidden (masked) pair contributes nothing, not 0 x its value. The kernels only
// ever sum over visible keys, and the scratch holds exact zeros for hidden pairs (never
// scale * 0 * (dP - D), which is NaN when D is), so a NaN or Inf in one document's Q, K, V or dO
// never reaches another document's gradients. attention_backward_short_dKdV does not bind seg: it
// skips the scratch's zero entries instead, which also skips a visible P or dS that is exactly 0
// (an underflowed P); that differs from the other paths only against a NaN or Inf in Q or dO.
//
// Reductions go through workgroup memory with barriers (the row partials below), so they hold
// for any subgroup size.
//
// The split kernels are tiled as attention_forward is (see 08_attention.wgsl): a 16 x 16 grid of
// invocations (row, col), chunks of DIM_CHUNK dims in workgroup memory read as vec4 with a padded
// stride, and head_dim > DIM_CHUNK handled one chunk of output dims at a time.

const MAX_HEAD_DIM: u32 = 256u;
const MAX_SHORT_SEQ: u32 = 1024u;
// Keys per tile (short); dims per chunk (16 vec4, lanes 16 dims apart: see 08_attention.wgsl)
// and the padded vec4 stride of a chunk row in workgroup memory (17: the 8 rows a quarter-warp
// reads land on distinct banks).
const TILE_K: u32 = 32u;
const DIM_CHUNK: u32 = 64u;
const CHUNK4: u32 = 16u;
const STRIDE4: u32 = 17u;

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

// Queries per workgroup (the host divides the spec's grid x by it) and keys per tile.
const ROWS_PER_WORKGROUP: u32 = 64u;
const TILE_KEYS: u32 = 32u;

// K (from 0) and V (from KV_V) of a tile of keys, one chunk of DIM_CHUNK dims: key k's vec4 c
// (dims c, c + 16, c + 32, c + 48 of the chunk) sits at k * 16 + (c ^ swz(k)). The swizzle puts
// the four keys one load of the score loop reads (8 g + i for g = 0..3) on distinct banks
// without padding: the three arrays fill the 32 KiB a CPU adapter allows.
const KV_V: u32 = 512u;
var<workgroup> sh_kv: array<vec4<f32>, 1024>;
// P and dS of the tile: row r's keys 4 i .. 4 i + 3 in vec4 r * 8 + i. sh_ds holds dP between
// the scores and dS, and first carries the partial sums of D.
var<workgroup> sh_p: array<vec4<f32>, 512>;
var<workgroup> sh_ds: array<vec4<f32>, 512>;

fn swz(k: u32) -> u32 {
    return (k >> 3u) & 3u;
}

// Elements d, d + 16, d + 32, d + 48 of a row starting at `base`, zero past head_dim (so
// partial chunks add 0); indices are clamped into the row, so the loads need no branch.
fn q4(base: u32, d: u32, hd: u32) -> vec4<f32> {
    let e = base + min(d + vec4<u32>(0u, 16u, 32u, 48u), vec4<u32>(hd - 1u));
    let v = vec4<f32>(Q[e.x], Q[e.y], Q[e.z], Q[e.w]);
    return select(vec4<f32>(0.0), v, d + vec4<u32>(0u, 16u, 32u, 48u) < vec4<u32>(hd));
}

fn do4(base: u32, d: u32, hd: u32) -> vec4<f32> {
    let e = base + min(d + vec4<u32>(0u, 16u, 32u, 48u), vec4<u32>(hd - 1u));
    let v = vec4<f32>(dO[e.x], dO[e.y], dO[e.z], dO[e.w]);
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

// K or V of key kt + k (clamped into the sequence), the vec4 of chunk dims d, d + 16, d + 32,
// d + 48 of kv head kvh.
fn fetch_k(kt: u32, k: u32, kvh: u32, d: u32) -> vec4<f32> {
    return k4((min(kt + k, dims.x - 1u) * dims.z + kvh) * dims.w, d, dims.w);
}

fn fetch_v(kt: u32, k: u32, kvh: u32, d: u32) -> vec4<f32> {
    return v4((min(kt + k, dims.x - 1u) * dims.z + kvh) * dims.w, d, dims.w);
}

// This invocation's share of a tile into sh_kv: keys lid / 16 (ka, va) and
// lid / 16 + 16 (kb, vb), vec4 lid % 16 of the chunk. The caller holds the barriers.
fn store_kv(lid: u32, ka: vec4<f32>, va: vec4<f32>, kb: vec4<f32>, vb: vec4<f32>) {
    let c = lid % 16u;
    let a = lid / 16u;
    let b = a + 16u;
    sh_kv[a * 16u + (c ^ swz(a))] = ka;
    sh_kv[KV_V + a * 16u + (c ^ swz(a))] = va;
    sh_kv[b * 16u + (c ^ swz(b))] = kb;
    sh_kv[KV_V + b * 16u + (c ^ swz(b))] = vb;
}

// K and V of keys kt .. kt + 31, dims c0 .. c0 + 63 of kv head kvh, into sh_kv. The leading
// barrier keeps every earlier read of the three arrays first.
fn load_kv(kt: u32, c0: u32, kvh: u32, lid: u32) {
    workgroupBarrier();
    let d = c0 + lid % 16u;
    let a = lid / 16u;
    store_kv(lid, fetch_k(kt, a, kvh, d), fetch_v(kt, a, kvh, d), fetch_k(kt, a + 16u, kvh, d),
        fetch_v(kt, a + 16u, kvh, d));
    workgroupBarrier();
}

// One matrix's scores of an invocation's two query rows against keys 8 g .. 8 g + 7 of the
// tile: Q.K (the invocation's rows are Q rows) or dO.V (dO rows). a: the first four keys.
struct Scores {
    a0: vec4<f32>,
    b0: vec4<f32>,
    a1: vec4<f32>,
    b1: vec4<f32>,
}

// One vec4 of dims of both rows (x0, x1) against keys 8 g .. 8 g + 7 of K or V (their vec4s at
// k + 16 i): the eight loads are issued first, and each feeds both rows.
fn score_step(r: Scores, x0: vec4<f32>, x1: vec4<f32>, k: u32) -> Scores {
    let m0 = sh_kv[k];
    let m1 = sh_kv[k + 16u];
    let m2 = sh_kv[k + 32u];
    let m3 = sh_kv[k + 48u];
    let m4 = sh_kv[k + 64u];
    let m5 = sh_kv[k + 80u];
    let m6 = sh_kv[k + 96u];
    let m7 = sh_kv[k + 112u];
    return Scores(
        r.a0 + vec4<f32>(dot(x0, m0), dot(x0, m1), dot(x0, m2), dot(x0, m3)),
        r.b0 + vec4<f32>(dot(x0, m4), dot(x0, m5), dot(x0, m6), dot(x0, m7)),
        r.a1 + vec4<f32>(dot(x1, m0), dot(x1, m1), dot(x1, m2), dot(x1, m3)),
        r.b1 + vec4<f32>(dot(x1, m4), dot(x1, m5), dot(x1, m6), dot(x1, m7)),
    );
}

// This invocation's two rows (score role) when head_dim <= DIM_CHUNK, Q rows in half 0 and dO
// rows in half 1: loaded once, used by every key tile of both passes, so the score loop reads
// only workgroup memory.
var<private> x_row0: array<vec4<f32>, 16>;
var<private> x_row1: array<vec4<f32>, 16>;

// Q (half 0) or dO (half 1): the elements d, d + 16, d + 32, d + 48 of the row at `base`.
fn xr4(half: u32, base: u32, d: u32, hd: u32) -> vec4<f32> {
    if (half == 0u) {
        return q4(base, d, hd);
    }
    return do4(base, d, hd);
}

// The scores of the rows at b0 and b1 against keys kt + 8 g + i, over every chunk of head_dim:
// the rows from x_row0 / x_row1, or (head_dim > DIM_CHUNK) from global memory through the
// cache. Leaves the last chunk of K and V in sh_kv.
fn scores(kt: u32, kvh: u32, b0: u32, b1: u32, g: u32, half: u32, lid: u32) -> Scores {
    let hd = dims.w;
    if (hd <= DIM_CHUNK) {
        load_kv(kt, 0u, kvh, lid);
        return scores_held(g, half);
    }
    var r = Scores(vec4<f32>(0.0), vec4<f32>(0.0), vec4<f32>(0.0), vec4<f32>(0.0));
    let k0 = half * KV_V + 128u * g;
    for (var c0 = 0u; c0 < hd; c0 = c0 + DIM_CHUNK) {
        load_kv(kt, c0, kvh, lid);
        for (var c = 0u; c < CHUNK4; c = c + 1u) {
            r = score_step(r, xr4(half, b0, c0 + c, hd), xr4(half, b1, c0 + c, hd), k0 + (c ^ g));
        }
    }
    return r;
}

// The scores of the rows in x_row0 / x_row1 against keys 8 g .. 8 g + 7 of the tile in sh_kv
// (K in half 0, V in half 1).
fn scores_held(g: u32, half: u32) -> Scores {
    var sc = Scores(vec4<f32>(0.0), vec4<f32>(0.0), vec4<f32>(0.0), vec4<f32>(0.0));
    let k0 = half * KV_V + 128u * g;
    // Unrolled by hand: with a loop counter as the index, the H100's driver kept the rows in
    // memory instead of registers (issue 30: 35.2 -> 29.5 ms at seq 8192).
    sc = score_step(sc, x_row0[0], x_row1[0], k0 + (0u ^ g));
    sc = score_step(sc, x_row0[1], x_row1[1], k0 + (1u ^ g));
    sc = score_step(sc, x_row0[2], x_row1[2], k0 + (2u ^ g));
    sc = score_step(sc, x_row0[3], x_row1[3], k0 + (3u ^ g));
    sc = score_step(sc, x_row0[4], x_row1[4], k0 + (4u ^ g));
    sc = score_step(sc, x_row0[5], x_row1[5], k0 + (5u ^ g));
    sc = score_step(sc, x_row0[6], x_row1[6], k0 + (6u ^ g));
    sc = score_step(sc, x_row0[7], x_row1[7], k0 + (7u ^ g));
    sc = score_step(sc, x_row0[8], x_row1[8], k0 + (8u ^ g));
    sc = score_step(sc, x_row0[9], x_row1[9], k0 + (9u ^ g));
    sc = score_step(sc, x_row0[10], x_row1[10], k0 + (10u ^ g));
    sc = score_step(sc, x_row0[11], x_row1[11], k0 + (11u ^ g));
    sc = score_step(sc, x_row0[12], x_row1[12], k0 + (12u ^ g));
    sc = score_step(sc, x_row0[13], x_row1[13], k0 + (13u ^ g));
    sc = score_step(sc, x_row0[14], x_row1[14], k0 + (14u ^ g));
    sc = score_step(sc, x_row0[15], x_row1[15], k0 + (15u ^ g));
    return sc;
}

// The tile's scores into workgroup memory, rows rp and rp + 32 (tile rows), keys 8 g .. 8 g + 7:
// half 0 writes P (exactly 0 where hidden), half 1 dP. The caller holds the barriers.
fn store_scores(sc: Scores, half: u32, rp: u32, g: u32, j0: u32, rows: ScoreRows) {
    let i0 = rp * 8u + 2u * g;
    let i1 = i0 + 256u;
    if (half == 0u) {
        let scale = params.x;
        sh_p[i0] = select(vec4<f32>(0.0), exp(sc.a0 * scale - rows.lse0),
            visible4(j0, rows.lo0, rows.s0, rows.live0));
        sh_p[i0 + 1u] = select(vec4<f32>(0.0), exp(sc.b0 * scale - rows.lse0),
            visible4(j0 + 4u, rows.lo0, rows.s0, rows.live0));
        sh_p[i1] = select(vec4<f32>(0.0), exp(sc.a1 * scale - rows.lse1),
            visible4(j0, rows.lo1, rows.s1, rows.live1));
        sh_p[i1 + 1u] = select(vec4<f32>(0.0), exp(sc.b1 * scale - rows.lse1),
            visible4(j0 + 4u, rows.lo1, rows.s1, rows.live1));
    } else {
        sh_ds[i0] = sc.a0;
        sh_ds[i0 + 1u] = sc.b0;
        sh_ds[i1] = sc.a1;
        sh_ds[i1 + 1u] = sc.b1;
    }
}

// What the P of an invocation's two score rows needs: the query, its first visible key, its LSE
// and whether it is inside the sequence.
struct ScoreRows {
    s0: u32,
    lo0: u32,
    lse0: f32,
    live0: bool,
    s1: u32,
    lo1: u32,
    lse1: f32,
    live1: bool,
}

// Pass A's share of D from one tile: sum of P dP over the keys j0 .. j0 + 7 of query s, from
// sh_p and sh_ds at i8 (P is 0 where hidden, but dP there may be NaN: visible pairs only).
fn d_terms(i8: u32, j0: u32, lo: u32, s: u32, live: bool) -> f32 {
    let va = visible4(j0, lo, s, live);
    let vb = visible4(j0 + 4u, lo, s, live);
    let terms = select(vec4<f32>(0.0), sh_p[i8] * sh_ds[i8], va)
        + select(vec4<f32>(0.0), sh_p[i8 + 1u] * sh_ds[i8 + 1u], vb);
    return terms.x + terms.y + terms.z + terms.w;
}

// dS = scale P (dP - D) in place of dP at i8 (keys j0 .. j0 + 7 of query s), exactly 0 where
// hidden.
fn ds_terms(i8: u32, j0: u32, lo: u32, s: u32, live: bool, scale: f32, big_d: f32) {
    let va = visible4(j0, lo, s, live);
    let vb = visible4(j0 + 4u, lo, s, live);
    sh_ds[i8] = select(vec4<f32>(0.0), scale * sh_p[i8] * (sh_ds[i8] - big_d), va);
    sh_ds[i8 + 1u] = select(vec4<f32>(0.0), scale * sh_p[i8 + 1u] * (sh_ds[i8 + 1u] - big_d), vb);
}

// Which of the four keys j0 .. j0 + 3 query s (first visible key lo) sees.
fn visible4(j0: u32, lo: u32, s: u32, live: bool) -> vec4<bool> {
    let j = j0 + vec4<u32>(0u, 1u, 2u, 3u);
    return (j >= vec4<u32>(lo)) & (j <= vec4<u32>(s)) & vec4<bool>(live);
}

// x * v where the pair is visible, exactly 0 where hidden (never 0 x a NaN of a hidden key).
fn masked(x: f32, v: vec4<f32>, vis: bool) -> vec4<f32> {
    return select(vec4<f32>(0.0), x * v, vis);
}

// The dK (or dV) sums of one invocation: keys 4 kq + k (k = 0..3), one vec4 of dims each.
struct Acc4 {
    a0: vec4<f32>,
    a1: vec4<f32>,
    a2: vec4<f32>,
    a3: vec4<f32>,
}

// acc_k += w[k] x for one query row: w its dS (or P) against the four keys, x its Q (or dO).
fn add_row(acc: Acc4, w: vec4<f32>, x: vec4<f32>) -> Acc4 {
    return Acc4(acc.a0 + w.x * x, acc.a1 + w.y * x, acc.a2 + w.z * x, acc.a3 + w.w * x);
}

// add_row with the products of hidden pairs selected away.
fn add_row_masked(acc: Acc4, w: vec4<f32>, x: vec4<f32>, vis: vec4<bool>) -> Acc4 {
    return Acc4(acc.a0 + masked(w.x, x, vis.x), acc.a1 + masked(w.y, x, vis.y),
        acc.a2 + masked(w.z, x, vis.z), acc.a3 + masked(w.w, x, vis.w));
}

// Which of the four keys j0 .. j0 + 3 query row s sees (none when the row is not `live`).
fn row_vis(j0: u32, s: u32, live: bool) -> vec4<bool> {
    return visible4(j0, min(seg[s], s), s, live);
}

// Eight rows of one step of the dK/dV sums (dS or P against the four keys, and Q or dO), all
// loaded before any product; a struct of registers, as Acc4, not an array (never local memory).
struct Rows8 {
    r0: vec4<f32>,
    r1: vec4<f32>,
    r2: vec4<f32>,
    r3: vec4<f32>,
    r4: vec4<f32>,
    r5: vec4<f32>,
    r6: vec4<f32>,
    r7: vec4<f32>,
}

// acc += the step's eight rows (rows r .. r + 7 of the tile, queries sr and sr4): every product
// when the whole tile sees key tile j's keys (`full`), else with the hidden pairs selected away.
fn add_rows8(acc: Acc4, w: Rows8, x: Rows8, full: bool, j: u32, sr: vec4<u32>, sr4: vec4<u32>,
    r: u32, r_end: u32) -> Acc4 {
    if (full) {
        return add_row(add_row(add_row(add_row(add_row(add_row(add_row(add_row(acc,
            w.r0, x.r0), w.r1, x.r1), w.r2, x.r2), w.r3, x.r3), w.r4, x.r4), w.r5, x.r5),
            w.r6, x.r6), w.r7, x.r7);
    }
    var a = add_row_masked(acc, w.r0, x.r0, row_vis(j, sr.x, r < r_end));
    a = add_row_masked(a, w.r1, x.r1, row_vis(j, sr.y, r + 1u < r_end));
    a = add_row_masked(a, w.r2, x.r2, row_vis(j, sr.z, r + 2u < r_end));
    a = add_row_masked(a, w.r3, x.r3, row_vis(j, sr.w, r + 3u < r_end));
    a = add_row_masked(a, w.r4, x.r4, row_vis(j, sr4.x, r + 4u < r_end));
    a = add_row_masked(a, w.r5, x.r5, row_vis(j, sr4.y, r + 5u < r_end));
    a = add_row_masked(a, w.r6, x.r6, row_vis(j, sr4.z, r + 6u < r_end));
    return add_row_masked(a, w.r7, x.r7, row_vis(j, sr4.w, r + 7u < r_end));
}

// A workgroup owns ROWS_PER_WORKGROUP queries of one head (FlashAttention-2's backward, query
// side): pass A walks their keys in tiles of TILE_KEYS and sums D = sum_j P dP per row; pass B
// walks them again and, per tile, (1) recomputes S (invocations 0-127) and dP (128-255), each
// invocation two rows (rp, rp + 32) against 8 keys, so each K or V load feeds two rows; P and
// dP meet in workgroup memory, where invocation (row lid / 4, keys 8 (lid % 4) .. + 7) turns
// them into D's terms (pass A) or dS (pass B);
// (2) adds dS K into dQ, held in registers (invocation: 4 rows lid / 16 + 16 m, the vec4 of
// dims lid % 16 + 16 c); (3) sums, for each key, dS^T Q (the first 128 invocations) or P^T dO
// (the other 128) over the tile's 64 rows in registers, eight rows a step with the step's
// sixteen loads issued before its products (one row a step waited out a load per row: 13 of
// the 44 ms at seq 8192 on the H100), and adds them to dK or dV with one compare-and-swap per
// element and tile: the global atomics drop 64-fold against one per query, and the queries
// sharing a key slot are the other query tiles and the GQA group. Splitting by matrix rather
// than by rows needs no exchange of partial sums in workgroup memory (two barriers a tile).
// head_dim > DIM_CHUNK repeats pass B once per chunk of output dims (the scores over every
// chunk are recomputed): rare, correct. Every product of a hidden pair is selected away, so a
// NaN or Inf reaches exactly the gradients of the pairs that see it.
@compute @workgroup_size(256)
fn attention_backward(
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
    // The tile's first visible key: the smallest lo of its queries (the same in every invocation),
    // and the largest lo: a key tile of [lo_max, q0] is visible to every query of the tile.
    var k_lo = q_last;
    var lo_max = 0u;
    for (var r = q0; r <= q_last; r = r + 1u) {
        k_lo = min(k_lo, min(seg[r], r));
        lo_max = max(lo_max, min(seg[r], r));
    }
    let all_rows = q0 + ROWS_PER_WORKGROUP <= seq_len;

    // Score role: half 0 scores Q.K, half 1 dO.V, of rows rp and rp + 32 against keys 8 g ..
    // 8 g + 7 of each tile (each K or V load feeds both rows).
    let g = lid % 4u;
    let half = lid / 128u;
    let rp = (lid % 128u) / 4u;
    let s0 = q0 + rp;
    let s1 = s0 + 32u;
    let sq0 = min(s0, q_last);
    let sq1 = min(s1, q_last);
    let rows = ScoreRows(s0, min(seg[sq0], sq0), LSE[sq0 * n_heads + h], s0 < seq_len,
        s1, min(seg[sq1], sq1), LSE[sq1 * n_heads + h], s1 < seq_len);
    let b0 = (sq0 * n_heads + h) * hd;
    let b1 = (sq1 * n_heads + h) * hd;
    if (hd <= DIM_CHUNK) {
        // Unrolled by hand: with a loop counter as the index, the H100's driver kept the rows in
        // memory instead of registers (issue 30: 35.2 -> 29.5 ms at seq 8192).
        x_row0[0] = xr4(half, b0, 0u, hd);
        x_row1[0] = xr4(half, b1, 0u, hd);
        x_row0[1] = xr4(half, b0, 1u, hd);
        x_row1[1] = xr4(half, b1, 1u, hd);
        x_row0[2] = xr4(half, b0, 2u, hd);
        x_row1[2] = xr4(half, b1, 2u, hd);
        x_row0[3] = xr4(half, b0, 3u, hd);
        x_row1[3] = xr4(half, b1, 3u, hd);
        x_row0[4] = xr4(half, b0, 4u, hd);
        x_row1[4] = xr4(half, b1, 4u, hd);
        x_row0[5] = xr4(half, b0, 5u, hd);
        x_row1[5] = xr4(half, b1, 5u, hd);
        x_row0[6] = xr4(half, b0, 6u, hd);
        x_row1[6] = xr4(half, b1, 6u, hd);
        x_row0[7] = xr4(half, b0, 7u, hd);
        x_row1[7] = xr4(half, b1, 7u, hd);
        x_row0[8] = xr4(half, b0, 8u, hd);
        x_row1[8] = xr4(half, b1, 8u, hd);
        x_row0[9] = xr4(half, b0, 9u, hd);
        x_row1[9] = xr4(half, b1, 9u, hd);
        x_row0[10] = xr4(half, b0, 10u, hd);
        x_row1[10] = xr4(half, b1, 10u, hd);
        x_row0[11] = xr4(half, b0, 11u, hd);
        x_row1[11] = xr4(half, b1, 11u, hd);
        x_row0[12] = xr4(half, b0, 12u, hd);
        x_row1[12] = xr4(half, b1, 12u, hd);
        x_row0[13] = xr4(half, b0, 13u, hd);
        x_row1[13] = xr4(half, b1, 13u, hd);
        x_row0[14] = xr4(half, b0, 14u, hd);
        x_row1[14] = xr4(half, b1, 14u, hd);
        x_row0[15] = xr4(half, b0, 15u, hd);
        x_row1[15] = xr4(half, b1, 15u, hd);
    }
    // Row role (D and dS): row lid / 4, keys 8 g .. 8 g + 7, its P and dP at i8 = 2 lid.
    let s = q0 + lid / 4u;
    let live = s < seq_len;
    let sq = min(s, q_last);
    let lo = min(seg[sq], sq);
    let i8 = 2u * lid;

    // Pass A: D = sum_j P dP over the visible keys. With head_dim <= DIM_CHUNK the next key
    // tile's K and V are fetched into registers while this tile is scored (only the held rows
    // and the scores are live here), so no tile waits out its fetch: 3.24 -> 3.18 ms at
    // seq 2048, 38.15 -> 37.41 at 8192 on the H100. The same in pass B, where the dK/dV sums
    // hold more registers, lost (37.41 -> 38.68).
    var d_part = 0.0;
    if (hd <= DIM_CHUNK) {
        let lc = lid % 16u;
        let ka = lid / 16u;
        let kb = ka + 16u;
        var nka = fetch_k(k_lo, ka, kvh, lc);
        var nva = fetch_v(k_lo, ka, kvh, lc);
        var nkb = fetch_k(k_lo, kb, kvh, lc);
        var nvb = fetch_v(k_lo, kb, kvh, lc);
        for (var kt = k_lo; kt <= q_last; kt = kt + TILE_KEYS) {
            workgroupBarrier();
            store_kv(lid, nka, nva, nkb, nvb);
            workgroupBarrier();
            let nt = kt + TILE_KEYS;
            nka = fetch_k(nt, ka, kvh, lc);
            nva = fetch_v(nt, ka, kvh, lc);
            nkb = fetch_k(nt, kb, kvh, lc);
            nvb = fetch_v(nt, kb, kvh, lc);
            store_scores(scores_held(g, half), half, rp, g, kt + 8u * g, rows);
            workgroupBarrier();
            d_part = d_part + d_terms(i8, kt + 8u * g, lo, s, live);
        }
    } else {
        for (var kt = k_lo; kt <= q_last; kt = kt + TILE_KEYS) {
            store_scores(scores(kt, kvh, b0, b1, g, half, lid), half, rp, g, kt + 8u * g, rows);
            workgroupBarrier();
            d_part = d_part + d_terms(i8, kt + 8u * g, lo, s, live);
        }
    }
    workgroupBarrier();
    sh_ds[lid] = vec4<f32>(d_part, 0.0, 0.0, 0.0);
    workgroupBarrier();
    let row4 = lid & ~3u;
    let big_d = sh_ds[row4].x + sh_ds[row4 + 1u].x + sh_ds[row4 + 2u].x + sh_ds[row4 + 3u].x;

    // dQ role: rows lid / 16 + 16 m (m = 0..3), vec4 c of a chunk.
    let c = lid % 16u;
    let rq = lid / 16u;
    // dK/dV role: dK (half 0) or dV (half 1) of keys 4 kq .. 4 kq + 3, vec4 c, over every row.
    let kq = (lid % 128u) / 16u;
    let rs = q0 + rq + vec4<u32>(0u, 16u, 32u, 48u);
    let rlo = min(vec4<u32>(seg[min(rs.x, q_last)], seg[min(rs.y, q_last)],
        seg[min(rs.z, q_last)], seg[min(rs.w, q_last)]), rs);

    // Pass B, once per chunk of output dims. Its key tiles are walked from the diagonal down
    // (neighbouring query tiles, which run at the same time, stay two key tiles apart), and the
    // heads of a GQA group start n_kt / group tiles apart: fewer workgroups add to one dK/dV
    // slot at once (walking every tile up from k_lo had them all contend for the first ones).
    let n_kt = (q_last - k_lo) / TILE_KEYS + 1u;
    let group = n_heads / n_kv;
    let rot = (h % group) * n_kt / group;
    for (var c0 = 0u; c0 < hd; c0 = c0 + DIM_CHUNK) {
        var dq0 = vec4<f32>(0.0);
        var dq1 = vec4<f32>(0.0);
        var dq2 = vec4<f32>(0.0);
        var dq3 = vec4<f32>(0.0);
        for (var m = 0u; m < n_kt; m = m + 1u) {
            let kt = k_lo + ((n_kt - 1u - m + n_kt - rot) % n_kt) * TILE_KEYS;
            // (1) P and dP of this tile, then dS in place of dP.
            let j0 = kt + 8u * g;
            store_scores(scores(kt, kvh, b0, b1, g, half, lid), half, rp, g, j0, rows);
            workgroupBarrier();
            ds_terms(i8, j0, lo, s, live, scale, big_d);
            if (hd > DIM_CHUNK) {
                // The scores left the last chunk of K: this pass needs chunk c0.
                load_kv(kt, c0, kvh, lid);
            } else {
                workgroupBarrier();
            }
            // Every query of the tile sees every key of this key tile: no masks (uniform).
            let full = all_rows && kt >= lo_max && kt + TILE_KEYS - 1u <= q0;
            // (2) dQ += dS K, four keys at a time.
            for (var t = 0u; t < TILE_KEYS; t = t + 4u) {
                let x = c ^ swz(t);
                let ka = sh_kv[t * 16u + x];
                let kb = sh_kv[(t + 1u) * 16u + x];
                let kc = sh_kv[(t + 2u) * 16u + x];
                let kd = sh_kv[(t + 3u) * 16u + x];
                let d0 = sh_ds[rq * 8u + t / 4u];
                let d1 = sh_ds[(rq + 16u) * 8u + t / 4u];
                let d2 = sh_ds[(rq + 32u) * 8u + t / 4u];
                let d3 = sh_ds[(rq + 48u) * 8u + t / 4u];
                if (full) {
                    dq0 = dq0 + d0.x * ka + d0.y * kb + d0.z * kc + d0.w * kd;
                    dq1 = dq1 + d1.x * ka + d1.y * kb + d1.z * kc + d1.w * kd;
                    dq2 = dq2 + d2.x * ka + d2.y * kb + d2.z * kc + d2.w * kd;
                    dq3 = dq3 + d3.x * ka + d3.y * kb + d3.z * kc + d3.w * kd;
                } else {
                    let v0 = visible4(kt + t, rlo.x, rs.x, true);
                    let v1 = visible4(kt + t, rlo.y, rs.y, true);
                    let v2 = visible4(kt + t, rlo.z, rs.z, true);
                    let v3 = visible4(kt + t, rlo.w, rs.w, true);
                    dq0 = dq0 + masked(d0.x, ka, v0.x) + masked(d0.y, kb, v0.y)
                        + masked(d0.z, kc, v0.z) + masked(d0.w, kd, v0.w);
                    dq1 = dq1 + masked(d1.x, ka, v1.x) + masked(d1.y, kb, v1.y)
                        + masked(d1.z, kc, v1.z) + masked(d1.w, kd, v1.w);
                    dq2 = dq2 + masked(d2.x, ka, v2.x) + masked(d2.y, kb, v2.y)
                        + masked(d2.z, kc, v2.z) + masked(d2.w, kd, v2.w);
                    dq3 = dq3 + masked(d3.x, ka, v3.x) + masked(d3.y, kb, v3.y)
                        + masked(d3.z, kc, v3.z) + masked(d3.w, kd, v3.w);
                }
            }
            // (3) Half 0 sums dS^T Q (dK), half 1 P^T dO (dV), for keys 4 kq .. 4 kq + 3 over the
            // tile's rows, eight rows a step with their loads issued first, then adds them. Two
            // loops, one per half: one loop choosing Q or dO and dS or P per load was slower on
            // the H100 (28.3 -> 31.7 ms at seq 8192).
            var acc = Acc4(vec4<f32>(0.0), vec4<f32>(0.0), vec4<f32>(0.0), vec4<f32>(0.0));
            let r_end = q_last + 1u - q0;
            let j = kt + 4u * kq;
            if (half == 0u) {
                for (var r = 0u; r < r_end; r = r + 8u) {
                    let sr = min(q0 + r + vec4<u32>(0u, 1u, 2u, 3u), vec4<u32>(q_last));
                    let sr4 = min(q0 + r + vec4<u32>(4u, 5u, 6u, 7u), vec4<u32>(q_last));
                    let x0 = q4((sr.x * n_heads + h) * hd, c0 + c, hd);
                    let x1 = q4((sr.y * n_heads + h) * hd, c0 + c, hd);
                    let x2 = q4((sr.z * n_heads + h) * hd, c0 + c, hd);
                    let x3 = q4((sr.w * n_heads + h) * hd, c0 + c, hd);
                    let x4 = q4((sr4.x * n_heads + h) * hd, c0 + c, hd);
                    let x5 = q4((sr4.y * n_heads + h) * hd, c0 + c, hd);
                    let x6 = q4((sr4.z * n_heads + h) * hd, c0 + c, hd);
                    let x7 = q4((sr4.w * n_heads + h) * hd, c0 + c, hd);
                    let w0 = sh_ds[(r + 0u) * 8u + kq];
                    let w1 = sh_ds[(r + 1u) * 8u + kq];
                    let w2 = sh_ds[(r + 2u) * 8u + kq];
                    let w3 = sh_ds[(r + 3u) * 8u + kq];
                    let w4 = sh_ds[(r + 4u) * 8u + kq];
                    let w5 = sh_ds[(r + 5u) * 8u + kq];
                    let w6 = sh_ds[(r + 6u) * 8u + kq];
                    let w7 = sh_ds[(r + 7u) * 8u + kq];
                    acc = add_rows8(acc, Rows8(w0, w1, w2, w3, w4, w5, w6, w7),
                        Rows8(x0, x1, x2, x3, x4, x5, x6, x7), full, j, sr, sr4, r, r_end);
                }
            } else {
                for (var r = 0u; r < r_end; r = r + 8u) {
                    let sr = min(q0 + r + vec4<u32>(0u, 1u, 2u, 3u), vec4<u32>(q_last));
                    let sr4 = min(q0 + r + vec4<u32>(4u, 5u, 6u, 7u), vec4<u32>(q_last));
                    let x0 = do4((sr.x * n_heads + h) * hd, c0 + c, hd);
                    let x1 = do4((sr.y * n_heads + h) * hd, c0 + c, hd);
                    let x2 = do4((sr.z * n_heads + h) * hd, c0 + c, hd);
                    let x3 = do4((sr.w * n_heads + h) * hd, c0 + c, hd);
                    let x4 = do4((sr4.x * n_heads + h) * hd, c0 + c, hd);
                    let x5 = do4((sr4.y * n_heads + h) * hd, c0 + c, hd);
                    let x6 = do4((sr4.z * n_heads + h) * hd, c0 + c, hd);
                    let x7 = do4((sr4.w * n_heads + h) * hd, c0 + c, hd);
                    let w0 = sh_p[(r + 0u) * 8u + kq];
                    let w1 = sh_p[(r + 1u) * 8u + kq];
                    let w2 = sh_p[(r + 2u) * 8u + kq];
                    let w3 = sh_p[(r + 3u) * 8u + kq];
                    let w4 = sh_p[(r + 4u) * 8u + kq];
                    let w5 = sh_p[(r + 5u) * 8u + kq];
                    let w6 = sh_p[(r + 6u) * 8u + kq];
                    let w7 = sh_p[(r + 7u) * 8u + kq];
                    acc = add_rows8(acc, Rows8(w0, w1, w2, w3, w4, w5, w6, w7),
                        Rows8(x0, x1, x2, x3, x4, x5, x6, x7), full, j, sr, sr4, r, r_end);
                }
            }
            if (half == 0u) {
                add_keys_dk(j, kvh, c0 + c, acc.a0, acc.a1, acc.a2, acc.a3);
            } else {
                add_keys_dv(j, kvh, c0 + c, acc.a0, acc.a1, acc.a2, acc.a3);
            }
        }
        add_dq(rs.x, h, c0 + c, dq0);
        add_dq(rs.y, h, c0 + c, dq1);
        add_dq(rs.z, h, c0 + c, dq2);
        add_dq(rs.w, h, c0 + c, dq3);
    }
}

// Adds the vec4 of dims d, d + 16, d + 32, d + 48 of query s's dQ row of head h (owned: no
// atomics; none past the sequence or head_dim).
fn add_dq(s: u32, h: u32, d: u32, acc: vec4<f32>) {
    let hd = dims.w;
    if (s >= dims.x) {
        return;
    }
    let o = (s * dims.y + h) * hd + d;
    if (d < hd) { dQ[o] = dQ[o] + acc.x; }
    if (d + 16u < hd) { dQ[o + 16u] = dQ[o + 16u] + acc.y; }
    if (d + 32u < hd) { dQ[o + 32u] = dQ[o + 32u] + acc.z; }
    if (d + 48u < hd) { dQ[o + 48u] = dQ[o + 48u] + acc.w; }
}

// Element offsets of dims d, d + 16, d + 32, d + 48 of key j's dK/dV row, and which of them
// exist (inside the sequence and head_dim).
fn lanes(j: u32, kvh: u32, d: u32) -> vec4<u32> {
    return vec4<u32>((j * dims.z + kvh) * dims.w + d) + vec4<u32>(0u, 16u, 32u, 48u);
}

// Not +0 or -0, from the bits: `v != 0.0` may compile to an ordered compare, false for NaN.
fn nonzero4(v: vec4<f32>) -> vec4<bool> {
    return (bitcast<vec4<u32>>(v) & vec4<u32>(0x7fffffffu)) != vec4<u32>(0u);
}

fn lanes_ok(j: u32, d: u32) -> vec4<bool> {
    let dd = vec4<u32>(d) + vec4<u32>(0u, 16u, 32u, 48u);
    return (dd < vec4<u32>(dims.w)) & vec4<bool>(j < dims.x);
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

// Queries per workgroup (the host divides the spec's grid x by it).
const ROWS_PER_WORKGROUP: u32 = 16u;

var<workgroup> sh_q: array<vec4<f32>, 272>;
var<workgroup> sh_kv: array<vec4<f32>, 544>;
var<workgroup> sh_ds: array<f32, 512>;
var<workgroup> sh_row: array<f32, 256>;

// Elements d, d + 16, d + 32, d + 48 of a row starting at `base`, zero past head_dim (so
// partial chunks add 0); indices are clamped into the row, so the loads need no branch.
fn q4(base: u32, d: u32, hd: u32) -> vec4<f32> {
    let e = base + min(d + vec4<u32>(0u, 16u, 32u, 48u), vec4<u32>(hd - 1u));
    let v = vec4<f32>(Q[e.x], Q[e.y], Q[e.z], Q[e.w]);
    return select(vec4<f32>(0.0), v, d + vec4<u32>(0u, 16u, 32u, 48u) < vec4<u32>(hd));
}

fn do4(base: u32, d: u32, hd: u32) -> vec4<f32> {
    let e = base + min(d + vec4<u32>(0u, 16u, 32u, 48u), vec4<u32>(hd - 1u));
    let v = vec4<f32>(dO[e.x], dO[e.y], dO[e.z], dO[e.w]);
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

// Pass 1 walks the tile's keys in tiles of TILE_K: invocation (row, col) forms S and dP of query
// `row` against keys col and col + 16 (Q and K chunks, then dO and V chunks, in workgroup
// memory), writes P and dP to the scratch and sums P dP into its share of D. Pass 2, once D is
// known, reads its own entries back, turns dP into dS in place, and adds dS K into the vec4 of
// dQ dims col, col + 16, col + 32, col + 48 of its query (K chunks in workgroup memory again). The scratch round trip
// costs two reads of a row the invocation itself just wrote (from cache, mostly); it replaces
// whole rows of P and dP held in workgroup memory, which bound the old kernel to one query per
// workgroup.
@compute @workgroup_size(256)
fn attention_backward_short(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let seq_len = dims.x;
    let n_heads = dims.y;
    let n_kv = dims.z;
    let hd = dims.w;
    let n_tiles = (seq_len + ROWS_PER_WORKGROUP - 1u) / ROWS_PER_WORKGROUP;
    // Uniform per workgroup, so returning here keeps every later barrier in uniform control flow.
    // A row longer than MAX_SHORT_SEQ is attention_backward's.
    if (wid.x >= n_tiles || wid.y >= n_heads || n_kv == 0u || hd == 0u || hd > MAX_HEAD_DIM
        || seq_len > MAX_SHORT_SEQ) {
        return;
    }
    let tile = longest_tile_first(wid, n_tiles, n_heads);
    let h = tile.y;
    let q0 = tile.x * ROWS_PER_WORKGROUP;
    let q_last = min(q0 + ROWS_PER_WORKGROUP, seq_len) - 1u;
    let kvh = h / (n_heads / n_kv);
    let scale = params.x;
    let row = lid / 16u;
    let col = lid % 16u;
    let s = q0 + row;
    let live = s < seq_len;
    let sq = min(s, q_last);
    let lo = min(seg[sq], sq);
    let lse = LSE[sq * n_heads + h];
    // The tile's first visible key: the smallest lo of its queries (the same in every invocation).
    var k_lo = q_last;
    for (var r = q0; r <= q_last; r = r + 1u) {
        k_lo = min(k_lo, min(seg[r], r));
    }
    let q_base = (sq * n_heads + h) * hd;
    let row_base = (sq * n_heads + h) * seq_len;

    // Pass 1: P and dP of the visible keys into the scratch, and this invocation's share of D.
    // This invocation's two K and V rows (first chunk) of a tile are stored to workgroup memory
    // when the tile needs them and then at once loaded again for the next tile, so the loads of
    // tile t + 1 are in flight during tile t's work (as in attention_forward).
    let kv_last = seq_len - 1u;
    let q_first = q4(q_base, col, hd);
    let o_first = do4(q_base, col, hd);
    var ka = k4((min(k_lo + row, kv_last) * n_kv + kvh) * hd, col, hd);
    var kb = k4((min(k_lo + row + 16u, kv_last) * n_kv + kvh) * hd, col, hd);
    var va = v4((min(k_lo + row, kv_last) * n_kv + kvh) * hd, col, hd);
    var vb = v4((min(k_lo + row + 16u, kv_last) * n_kv + kvh) * hd, col, hd);
    var d_part = 0.0;
    for (var kt = k_lo; kt <= q_last; kt = kt + TILE_K) {
        let ja = (min(kt + TILE_K + row, kv_last) * n_kv + kvh) * hd;
        let jb = (min(kt + TILE_K + row + 16u, kv_last) * n_kv + kvh) * hd;
        var s0 = 0.0;
        var s1 = 0.0;
        var dp0 = 0.0;
        var dp1 = 0.0;
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
            if (d0 == 0u) {
                sh_q[row * STRIDE4 + col] = o_first;
                sh_kv[row * STRIDE4 + col] = va;
                sh_kv[(row + 16u) * STRIDE4 + col] = vb;
                va = v4(ja, col, hd);
                vb = v4(jb, col, hd);
            } else {
                sh_q[row * STRIDE4 + col] = do4(q_base, d0 + col, hd);
                for (var half = 0u; half < 2u; half = half + 1u) {
                    let kr = row + 16u * half;
                    let j = min(kt + kr, kv_last);
                    sh_kv[kr * STRIDE4 + col] = v4((j * n_kv + kvh) * hd, d0 + col, hd);
                }
            }
            workgroupBarrier();
            for (var c = 0u; c < CHUNK4; c = c + 1u) {
                let ov = sh_q[row * STRIDE4 + c];
                dp0 = dp0 + dot(ov, sh_kv[col * STRIDE4 + c]);
                dp1 = dp1 + dot(ov, sh_kv[(col + 16u) * STRIDE4 + c]);
            }
            workgroupBarrier();
        }
        let j0 = kt + col;
        let j1 = j0 + 16u;
        let vis0 = live && j0 >= lo && j0 <= s;
        let vis1 = live && j1 >= lo && j1 <= s;
        let p0 = select(0.0, exp(s0 * scale - lse), vis0);
        let p1 = select(0.0, exp(s1 * scale - lse), vis1);
        d_part = d_part + select(0.0, p0 * dp0, vis0) + select(0.0, p1 * dp1, vis1);
        if (live && j0 < seq_len) {
            P_scratch[row_base + j0] = p0;
            dS_scratch[row_base + j0] = dp0;
        }
        if (live && j1 < seq_len) {
            P_scratch[row_base + j1] = p1;
            dS_scratch[row_base + j1] = dp1;
        }
    }
    sh_row[lid] = d_part;
    workgroupBarrier();
    var big_d = 0.0;
    for (var r = 0u; r < 16u; r = r + 1u) {
        big_d = big_d + sh_row[row * 16u + r];
    }

    // Pass 2: dS = scale * P * (dP - D) in place (exact zeros where hidden: 0 * (0 - D) is NaN
    // when D is, and attention_backward_short_dKdV reads these zeros as the mask), then dQ.
    for (var c0 = 0u; c0 < hd; c0 = c0 + DIM_CHUNK) {
        var acc = vec4<f32>(0.0);
        ka = k4((min(k_lo + row, kv_last) * n_kv + kvh) * hd, c0 + col, hd);
        kb = k4((min(k_lo + row + 16u, kv_last) * n_kv + kvh) * hd, c0 + col, hd);
        for (var kt = k_lo; kt <= q_last; kt = kt + TILE_K) {
            sh_kv[row * STRIDE4 + col] = ka;
            sh_kv[(row + 16u) * STRIDE4 + col] = kb;
            ka = k4((min(kt + TILE_K + row, kv_last) * n_kv + kvh) * hd, c0 + col, hd);
            kb = k4((min(kt + TILE_K + row + 16u, kv_last) * n_kv + kvh) * hd, c0 + col, hd);
            for (var half = 0u; half < 2u; half = half + 1u) {
                let jc = col + 16u * half;
                let j = kt + jc;
                var ds = 0.0;
                if (live && j < seq_len) {
                    if (c0 == 0u) {
                        let vis = j >= lo && j <= s;
                        let p = P_scratch[row_base + j];
                        ds = select(0.0, scale * p * (dS_scratch[row_base + j] - big_d), vis);
                        dS_scratch[row_base + j] = ds;
                    } else {
                        ds = dS_scratch[row_base + j];
                    }
                }
                sh_ds[row * TILE_K + jc] = ds;
            }
            workgroupBarrier();
            // Only the keys this query sees: a hidden key's K (NaN, say) must not meet a 0.
            let t_begin = max(lo, kt) - kt;
            let t_end = min(s + 1u, kt + TILE_K) - min(kt, s + 1u);
            for (var t = t_begin; t < t_end; t = t + 1u) {
                acc = acc + sh_ds[row * TILE_K + t] * sh_kv[t * STRIDE4 + col];
            }
            workgroupBarrier();
        }
        if (live) {
            let o = (s * n_heads + h) * hd + c0 + col;
            let d = c0 + col;
            if (d < hd) { dQ[o] = dQ[o] + acc.x; }
            if (d + 16u < hd) { dQ[o + 16u] = dQ[o + 16u] + acc.y; }
            if (d + 32u < hd) { dQ[o + 32u] = dQ[o + 32u] + acc.z; }
            if (d + 48u < hd) { dQ[o + 48u] = dQ[o + 48u] + acc.w; }
        }
    }

    // The rest of each row, outside the keys the tiles covered, is hidden: exact zeros.
    let k_end = min(seq_len, k_lo + ((q_last - k_lo) / TILE_K + 1u) * TILE_K);
    for (var r = 0u; r < ROWS_PER_WORKGROUP; r = r + 1u) {
        let sr = q0 + r;
        if (sr < seq_len) {
            let base = (sr * n_heads + h) * seq_len;
            for (var j = lid; j < seq_len; j = j + WG) {
                if (j < k_lo || j >= k_end) {
                    P_scratch[base + j] = 0.0;
                    dS_scratch[base + j] = 0.0;
                }
            }
        }
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

// Keys per workgroup (the host divides the spec's grid x by it), and the phases that share a
// key's queries: phase g takes queries j + g, j + g + KEY_PHASES, ... (16 invocations per key
// and phase, one per vec4 of a 64-dim chunk).
const ROWS_PER_WORKGROUP: u32 = 2u;
const KEY_PHASES: u32 = 8u;

var<workgroup> sh_dk: array<vec4<f32>, 256>;
var<workgroup> sh_dv: array<vec4<f32>, 256>;

// +0 or -0, from the bits: unlike a float compare, never folded or ordered away for NaN.
fn is_zero(x: f32) -> bool {
    return (bitcast<u32>(x) & 0x7fffffffu) == 0u;
}

fn q4(base: u32, d: u32, hd: u32) -> vec4<f32> {
    let e = base + min(d + vec4<u32>(0u, 16u, 32u, 48u), vec4<u32>(hd - 1u));
    let v = vec4<f32>(Q[e.x], Q[e.y], Q[e.z], Q[e.w]);
    return select(vec4<f32>(0.0), v, d + vec4<u32>(0u, 16u, 32u, 48u) < vec4<u32>(hd));
}

fn do4(base: u32, d: u32, hd: u32) -> vec4<f32> {
    let e = base + min(d + vec4<u32>(0u, 16u, 32u, 48u), vec4<u32>(hd - 1u));
    let v = vec4<f32>(dO[e.x], dO[e.y], dO[e.z], dO[e.w]);
    return select(vec4<f32>(0.0), v, d + vec4<u32>(0u, 16u, 32u, 48u) < vec4<u32>(hd));
}

// What key j needs of query s, head h: its two scratch entries and the vec4s of its Q and dO rows
// at dims d, d + 16, d + 32, d + 48. A query past the sequence gives zeros (skipped); its index
// is clamped so that every load is issued without a branch.
struct QueryLoads {
    ds: f32,
    p: f32,
    q: vec4<f32>,
    o: vec4<f32>,
}

fn query_loads(s: u32, h: u32, j: u32, d: u32) -> QueryLoads {
    let seq_len = dims.x;
    let hd = dims.w;
    let row = min(s, seq_len - 1u) * dims.y + h;
    let live = s < seq_len;
    let ds = select(0.0, dS_scratch[row * seq_len + j], live);
    let p = select(0.0, P_scratch[row * seq_len + j], live);
    return QueryLoads(ds, p, q4(row * hd, d, hd), do4(row * hd, d, hd));
}

// x * v, or 0 where x is a zero scratch entry (the mask): never 0 * NaN.
fn skip_zero(x: f32, v: vec4<f32>) -> vec4<f32> {
    return select(x * v, vec4<f32>(0.0), is_zero(x));
}

// A workgroup owns ROWS_PER_WORKGROUP keys of kv head kvh. Invocation (g, k, col) sums, for
// its key j, the vec4 of dims col, col + 16, col + 32, col + 48 over the queries s = j + g,
// j + g + KEY_PHASES, ... (s >= j: causal) and the group's query heads, four queries per step
// with all their loads issued first (branch-free); the phases meet in workgroup memory at the
// end. No barrier inside the walk: every load goes straight to global memory, where the
// workgroup's keys read the same Q and dO rows (contiguous across 16 invocations, cached) and
// each scratch entry is one address for 16 invocations. The causal triangle makes key 0 the
// longest walk (every query): phases split it KEY_PHASES ways. Swept on the H100 at seq 512
// (keys x phases): 8 x 2 0.184 ms, 4 x 4 0.151 ms, 2 x 8 0.107 ms.
// A zero scratch entry is skipped, not multiplied: its product is replaced by 0 (0 * Q or
// 0 * dO would carry a NaN of another document's query into this key). is_zero tests the bits,
// as is_finite does: `ds != 0.0` may compile to an ordered compare that is false for NaN.
@compute @workgroup_size(256)
fn attention_backward_short_dKdV(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let seq_len = dims.x;
    let n_heads = dims.y;
    let n_kv = dims.z;
    let hd = dims.w;
    let n_tiles = (seq_len + ROWS_PER_WORKGROUP - 1u) / ROWS_PER_WORKGROUP;
    // Uniform per workgroup, so returning here keeps every later barrier in uniform control flow.
    if (wid.x >= n_tiles || wid.y >= n_kv || hd == 0u || hd > MAX_HEAD_DIM) {
        return;
    }
    // Low keys see the most queries: the longest tiles are the first ones.
    let tile = longest_tile_first(wid, n_tiles, n_kv);
    let kvh = tile.y;
    let group = n_heads / n_kv;
    let col = lid % 16u;
    let k = (lid / 16u) % ROWS_PER_WORKGROUP;
    let g = lid / (16u * ROWS_PER_WORKGROUP);
    let j = (n_tiles - 1u - tile.x) * ROWS_PER_WORKGROUP + k;
    let live = j < seq_len;
    for (var c0 = 0u; c0 < hd; c0 = c0 + DIM_CHUNK) {
        var dk = vec4<f32>(0.0);
        var dv = vec4<f32>(0.0);
        if (live) {
            for (var s = j + g; s < seq_len; s = s + 4u * KEY_PHASES) {
                for (var r = 0u; r < group; r = r + 1u) {
                    let h = kvh * group + r;
                    let a = query_loads(s, h, j, c0 + col);
                    let b = query_loads(s + KEY_PHASES, h, j, c0 + col);
                    let c = query_loads(s + 2u * KEY_PHASES, h, j, c0 + col);
                    let e = query_loads(s + 3u * KEY_PHASES, h, j, c0 + col);
                    dk = dk + skip_zero(a.ds, a.q) + skip_zero(b.ds, b.q);
                    dk = dk + skip_zero(c.ds, c.q) + skip_zero(e.ds, e.q);
                    dv = dv + skip_zero(a.p, a.o) + skip_zero(b.p, b.o);
                    dv = dv + skip_zero(c.p, c.o) + skip_zero(e.p, e.o);
                }
            }
        }
        sh_dk[lid] = dk;
        sh_dv[lid] = dv;
        workgroupBarrier();
        if (g == 0u && live) {
            var tk = vec4<f32>(0.0);
            var tv = vec4<f32>(0.0);
            for (var gg = 0u; gg < KEY_PHASES; gg = gg + 1u) {
                tk = tk + sh_dk[gg * 16u * ROWS_PER_WORKGROUP + lid];
                tv = tv + sh_dv[gg * 16u * ROWS_PER_WORKGROUP + lid];
            }
            let o = (j * n_kv + kvh) * hd + c0 + col;
            let d = c0 + col;
            if (d < hd) {
                dK[o] = dK[o] + tk.x;
                dV[o] = dV[o] + tv.x;
            }
            if (d + 16u < hd) {
                dK[o + 16u] = dK[o + 16u] + tk.y;
                dV[o + 16u] = dV[o + 16u] + tv.y;
            }
            if (d + 32u < hd) {
                dK[o + 32u] = dK[o + 32u] + tk.z;
                dV[o + 32u] = dV[o + 32u] + tv.z;
            }
            if (d + 48u < hd) {
                dK[o + 48u] = dK[o + 48u] + tk.w;
                dV[o + 48u] = dV[o + 48u] + tv.w;
            }
        }
        workgroupBarrier();
    }
}
