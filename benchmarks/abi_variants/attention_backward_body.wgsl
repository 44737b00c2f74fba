// The body shared by the changed-ABI variants of the seed's streaming attention backward
// (attention_backward, workbench/shaders/10_backward_attention.wgsl), prepended to
// attention_o.wgsl and attention_f32.wgsl (wgslconfig.toml): the shipped kernel, copied (a corpus
// cannot take code from outside its folder), as the function `backward`, which each variant's
// entry point calls. Each variant declares dK and dV (bindings 6 and 7) and their adds
// (add_keys_dk, add_keys_dv), and gives D of a query row as `row_d`. Not shipped:
// benchmarks/bench_kernels.py times the variants beside the seed-ABI kernel, to show what each
// change of the ABI buys (issue 30's rule for a target out of reach with the seed ABI).

const MAX_HEAD_DIM: u32 = 256u;
const DIM_CHUNK: u32 = 64u;
const CHUNK4: u32 = 16u;

@group(0) @binding(0) var<storage, read> Q: array<f32>;
@group(0) @binding(1) var<storage, read> K: array<f32>;
@group(0) @binding(2) var<storage, read> V: array<f32>;
@group(0) @binding(3) var<storage, read> dO: array<f32>;
@group(0) @binding(4) var<storage, read> LSE: array<f32>;
@group(0) @binding(5) var<storage, read_write> dQ: array<f32>;
@group(0) @binding(8) var<uniform> dims: vec4<u32>;
@group(0) @binding(9) var<uniform> params: vec4<f32>;
@group(0) @binding(10) var<storage, read> seg: array<u32>;

// The query tile and head a workgroup of the attention kernels takes (00_shared.wgsl's, copied) (their grid: a workgroup
// per tile of queries and head), as (tile, head), tiles counted from the first query.
// Workgroups start in the order of their linear index (x first) and the last query tiles see the
// most keys, so the first n_heads workgroups take the last tile of every head, the next n_heads
// the one before, and so on: no long tile starts after the short ones. Taking one head's tiles
// in turn, at seq 2048 (32 tiles x 12 heads on 132 SMs), started seven heads' longest tiles
// last: the backward took 2.58 ms on the H100 against 2.04 now, the forward 0.534 against 0.440.
fn longest_tile_first(wid: vec3<u32>, n_tiles: u32, n_heads: u32) -> vec2<u32> {
    let order = wid.y * n_tiles + wid.x;
    return vec2<u32>(n_tiles - 1u - order / n_heads, order % n_heads);
}

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
// Pass A's share of D from one tile: sum of P dP over the keys j0 .. j0 + 7 of query s, from
// sh_p and sh_ds at i8 (P is 0 where hidden, but dP there may be NaN: visible pairs only).
fn d_terms(i8: u32, j0: u32, lo: u32, s: u32, live: bool) -> f32 {
    let va = visible4(j0, lo, s, live);
    let vb = visible4(j0 + 4u, lo, s, live);
    let terms = select(vec4<f32>(0.0), sh_p[i8] * sh_ds[i8], va)
        + select(vec4<f32>(0.0), sh_p[i8 + 1u] * sh_ds[i8 + 1u], vb);
    return terms.x + terms.y + terms.z + terms.w;
}

// The row role's query and the score role's rows of an invocation, as a kernel's row_d needs
// them.
struct RowTile {
    h: u32,
    q_last: u32,
    k_lo: u32,
    kvh: u32,
    lid: u32,
    g: u32,
    half: u32,
    rp: u32,
    b0: u32,
    b1: u32,
    rows: ScoreRows,
    s: u32,
    sq: u32,
    lo: u32,
    live: bool,
    i8: u32,
}

// D = sum_j P dP of the row role's query by a first pass over the visible keys (the seed
// kernel's pass A), for a kernel without O; the last barrier makes it uniform to call.
fn d_first_pass(t: RowTile) -> f32 {
    let hd = dims.w;
    var d_part = 0.0;
    if (hd <= DIM_CHUNK) {
        let lc = t.lid % 16u;
        let ka = t.lid / 16u;
        let kb = ka + 16u;
        var nka = fetch_k(t.k_lo, ka, t.kvh, lc);
        var nva = fetch_v(t.k_lo, ka, t.kvh, lc);
        var nkb = fetch_k(t.k_lo, kb, t.kvh, lc);
        var nvb = fetch_v(t.k_lo, kb, t.kvh, lc);
        for (var kt = t.k_lo; kt <= t.q_last; kt = kt + TILE_KEYS) {
            workgroupBarrier();
            store_kv(t.lid, nka, nva, nkb, nvb);
            workgroupBarrier();
            let nt = kt + TILE_KEYS;
            nka = fetch_k(nt, ka, t.kvh, lc);
            nva = fetch_v(nt, ka, t.kvh, lc);
            nkb = fetch_k(nt, kb, t.kvh, lc);
            nvb = fetch_v(nt, kb, t.kvh, lc);
            store_scores(scores_held(t.g, t.half), t.half, t.rp, t.g, kt + 8u * t.g, t.rows);
            workgroupBarrier();
            d_part = d_part + d_terms(t.i8, kt + 8u * t.g, t.lo, t.s, t.live);
        }
    } else {
        for (var kt = t.k_lo; kt <= t.q_last; kt = kt + TILE_KEYS) {
            let sc = scores(kt, t.kvh, t.b0, t.b1, t.g, t.half, t.lid);
            store_scores(sc, t.half, t.rp, t.g, kt + 8u * t.g, t.rows);
            workgroupBarrier();
            d_part = d_part + d_terms(t.i8, kt + 8u * t.g, t.lo, t.s, t.live);
        }
    }
    workgroupBarrier();
    sh_ds[t.lid] = vec4<f32>(d_part, 0.0, 0.0, 0.0);
    workgroupBarrier();
    let row4 = t.lid & ~3u;
    return sh_ds[row4].x + sh_ds[row4 + 1u].x + sh_ds[row4 + 2u].x + sh_ds[row4 + 3u].x;
}

fn backward(wid: vec3<u32>, lid: u32) {
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

    // D of the row role's query, as the kernel gets it (its row_d).
    let big_d = row_d(RowTile(h, q_last, k_lo, kvh, lid, g, half, rp, b0, b1, rows, s, sq, lo,
        live, i8));

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

fn lanes_ok(j: u32, d: u32) -> vec4<bool> {
    let dd = vec4<u32>(d) + vec4<u32>(0u, 16u, 32u, 48u);
    return (dd < vec4<u32>(dims.w)) & vec4<bool>(j < dims.x);
}
