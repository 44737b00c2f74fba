// Changed-ABI variant of the seed's streaming attention backward with native float atomics:
// attention_o.wgsl (binding 11, the forward's O, gives D = rowsum(dO * O)) with dK and dV bound as
// array<atomic<f32>> instead of the seed's array<atomic<u32>>, and each f32 compare-and-swap add
// replaced by one atomicAdd. It needs the device feature shader-float32-atomic (storage atomics
// only; no `enable`). Not shipped: benchmarks/bench_kernels.py times it beside attention_o.wgsl
// and the seed-ABI kernel, to show what native float atomics buy (issue 30's rule).
//
// Kept in step with attention_o.wgsl by hand (a corpus cannot take code from outside its folder;
// tests/described/test_abi_variants.py checks the rest is the same text). The only differences:
// this header; the KERNEL marker and the entry point's name (attention_backward_of32); the types
// of dK and dV (bindings 6 and 7); and the dK/dV adds at the end of the file: add_keys_dk and
// add_keys_dv with their comment, and no nonzero4 (only the compare-and-swap adds used it).

const MAX_HEAD_DIM: u32 = 256u;
const DIM_CHUNK: u32 = 64u;
const CHUNK4: u32 = 16u;

// --- KERNEL: attention_backward_of32 ---
@group(0) @binding(0) var<storage, read> Q: array<f32>;
@group(0) @binding(1) var<storage, read> K: array<f32>;
@group(0) @binding(2) var<storage, read> V: array<f32>;
@group(0) @binding(3) var<storage, read> dO: array<f32>;
@group(0) @binding(4) var<storage, read> LSE: array<f32>;
@group(0) @binding(5) var<storage, read_write> dQ: array<f32>;
@group(0) @binding(6) var<storage, read_write> dK: array<atomic<f32>>;
@group(0) @binding(7) var<storage, read_write> dV: array<atomic<f32>>;
@group(0) @binding(8) var<uniform> dims: vec4<u32>;
@group(0) @binding(9) var<uniform> params: vec4<f32>;
@group(0) @binding(10) var<storage, read> seg: array<u32>;
// The changed ABI: the forward's output, so that D = rowsum(dO * O) needs no pass over the keys.
@group(0) @binding(11) var<storage, read> O: array<f32>;

// Queries per workgroup (the host divides the spec's grid x by it) and keys per tile.
const ROWS_PER_WORKGROUP: u32 = 64u;
const TILE_KEYS: u32 = 32u;

// K and V of a tile of keys, one chunk of DIM_CHUNK dims: key k's vec4 c (dims c, c + 16,
// c + 32, c + 48 of the chunk) sits at k * 16 + (c ^ swz(k)). The swizzle puts the four keys
// one load of the score loop reads (8 g + i for g = 0..3) on distinct banks without padding:
// the four arrays fill the 32 KiB a CPU adapter allows.
var<workgroup> sh_k: array<vec4<f32>, 512>;
var<workgroup> sh_v: array<vec4<f32>, 512>;
// P and dS of the tile: row r's keys 4 i .. 4 i + 3 in vec4 r * 8 + i. sh_ds first carries the
// partial sums of D.
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

// K and V of keys kt .. kt + 31 (clamped into the sequence), dims c0 .. c0 + 63 of kv head kvh,
// into sh_k and sh_v. The leading barrier keeps every earlier read of the four arrays first.
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

// Q.K and dO.V of one query row against keys 8 g .. 8 g + 7 of the tile (a: the first four).
struct Scores {
    sa: vec4<f32>,
    sb: vec4<f32>,
    pa: vec4<f32>,
    pb: vec4<f32>,
}

// One vec4 of dims of Q and dO against keys 8 g .. 8 g + 7 (their vec4s at k + 16 i).
fn score_step(r: Scores, qv: vec4<f32>, ov: vec4<f32>, k: u32) -> Scores {
    var o = r;
    o.sa.x = o.sa.x + dot(qv, sh_k[k]);
    o.sa.y = o.sa.y + dot(qv, sh_k[k + 16u]);
    o.sa.z = o.sa.z + dot(qv, sh_k[k + 32u]);
    o.sa.w = o.sa.w + dot(qv, sh_k[k + 48u]);
    o.sb.x = o.sb.x + dot(qv, sh_k[k + 64u]);
    o.sb.y = o.sb.y + dot(qv, sh_k[k + 80u]);
    o.sb.z = o.sb.z + dot(qv, sh_k[k + 96u]);
    o.sb.w = o.sb.w + dot(qv, sh_k[k + 112u]);
    o.pa.x = o.pa.x + dot(ov, sh_v[k]);
    o.pa.y = o.pa.y + dot(ov, sh_v[k + 16u]);
    o.pa.z = o.pa.z + dot(ov, sh_v[k + 32u]);
    o.pa.w = o.pa.w + dot(ov, sh_v[k + 48u]);
    o.pb.x = o.pb.x + dot(ov, sh_v[k + 64u]);
    o.pb.y = o.pb.y + dot(ov, sh_v[k + 80u]);
    o.pb.z = o.pb.z + dot(ov, sh_v[k + 96u]);
    o.pb.w = o.pb.w + dot(ov, sh_v[k + 112u]);
    return o;
}

// This invocation's Q and dO rows (score role) when head_dim <= DIM_CHUNK: loaded once, used by
// every key tile of both passes, so the score loop reads only workgroup memory.
var<private> q_row: array<vec4<f32>, 16>;
var<private> o_row: array<vec4<f32>, 16>;

// The scores of query row q_base against keys kt + 8 g + i, over every chunk of head_dim: Q and
// dO from q_row / o_row, or (head_dim > DIM_CHUNK) from global memory through the cache. Leaves
// the last chunk of K and V in sh_k and sh_v.
fn scores(kt: u32, kvh: u32, q_base: u32, g: u32, lid: u32) -> Scores {
    let hd = dims.w;
    var r = Scores(vec4<f32>(0.0), vec4<f32>(0.0), vec4<f32>(0.0), vec4<f32>(0.0));
    let k0 = 8u * g * 16u;
    if (hd <= DIM_CHUNK) {
        load_kv(kt, 0u, kvh, lid);
        for (var c = 0u; c < CHUNK4; c = c + 1u) {
            r = score_step(r, q_row[c], o_row[c], k0 + (c ^ g));
        }
        return r;
    }
    for (var c0 = 0u; c0 < hd; c0 = c0 + DIM_CHUNK) {
        load_kv(kt, c0, kvh, lid);
        for (var c = 0u; c < CHUNK4; c = c + 1u) {
            let qv = q4(q_base, c0 + c, hd);
            let ov = do4(q_base, c0 + c, hd);
            r = score_step(r, qv, ov, k0 + (c ^ g));
        }
    }
    return r;
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
// walks them again and, per tile, (1) recomputes S and dP, invocation (row lid / 4, keys
// 8 (lid % 4) .. + 7) holding 8 of each in registers, and writes P and dS to workgroup memory;
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
fn attention_backward_of32(
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
    // The tile's first visible key: the smallest lo of its queries (the same in every invocation),
    // and the largest lo: a key tile of [lo_max, q0] is visible to every query of the tile.
    var k_lo = q_last;
    var lo_max = 0u;
    for (var r = q0; r <= q_last; r = r + 1u) {
        k_lo = min(k_lo, min(seg[r], r));
        lo_max = max(lo_max, min(seg[r], r));
    }
    let all_rows = q0 + ROWS_PER_WORKGROUP <= seq_len;

    // Score role: row lid / 4, keys 8 g .. 8 g + 7 of each tile.
    let g = lid % 4u;
    let s = q0 + lid / 4u;
    let live = s < seq_len;
    let sq = min(s, q_last);
    let lo = min(seg[sq], sq);
    let lse = LSE[sq * n_heads + h];
    let q_base = (sq * n_heads + h) * hd;
    if (hd <= DIM_CHUNK) {
        for (var c = 0u; c < CHUNK4; c = c + 1u) {
            q_row[c] = q4(q_base, c, hd);
            o_row[c] = do4(q_base, c, hd);
        }
    }

    // D = dO . O of this invocation's query (FlashAttention-2's form): no pass A.
    var big_d = 0.0;
    for (var d = 0u; d < hd; d = d + 1u) {
        big_d = big_d + dO[q_base + d] * O[q_base + d];
    }

    // dQ role: rows lid / 16 + 16 m (m = 0..3), vec4 c of a chunk.
    let c = lid % 16u;
    let rq = lid / 16u;
    // dK/dV role: dK (half 0) or dV (half 1) of keys 4 kq .. 4 kq + 3, vec4 c, over every row.
    let half = lid / 128u;
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
            // (1) P and dS of this tile.
            let sc = scores(kt, kvh, q_base, g, lid);
            let j0 = kt + 8u * g;
            let va = visible4(j0, lo, s, live);
            let vb = visible4(j0 + 4u, lo, s, live);
            let pa = select(vec4<f32>(0.0), exp(sc.sa * scale - lse), va);
            let pb = select(vec4<f32>(0.0), exp(sc.sb * scale - lse), vb);
            let r8 = (lid / 4u) * 8u + 2u * g;
            sh_p[r8] = pa;
            sh_p[r8 + 1u] = pb;
            sh_ds[r8] = select(vec4<f32>(0.0), scale * pa * (sc.pa - big_d), va);
            sh_ds[r8 + 1u] = select(vec4<f32>(0.0), scale * pb * (sc.pb - big_d), vb);
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
                let ka = sh_k[t * 16u + x];
                let kb = sh_k[(t + 1u) * 16u + x];
                let kc = sh_k[(t + 2u) * 16u + x];
                let kd = sh_k[(t + 3u) * 16u + x];
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
            // tile's rows, eight rows a step with their loads issued first, then adds them.
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

// Adds v_k to the lanes of key j + k (k = 0..3) of dK that exist: one native f32 atomicAdd
// per lane, its result unused, so the compiler may issue a reduction that waits for no reply
// (the compare-and-swap loop waits out a round trip per try). Zeros are added too: x + 0 is x
// except for x = -0, which becomes +0, and a dK that starts at zeros (+0) never holds -0, since
// +0 + -0 is +0; a NaN or Inf is added as attention_o.wgsl adds it.
fn add_keys_dk(
    j: u32,
    kvh: u32,
    d: u32,
    v0: vec4<f32>,
    v1: vec4<f32>,
    v2: vec4<f32>,
    v3: vec4<f32>,
) {
    let t0 = lanes_ok(j + 0u, d);
    let t1 = lanes_ok(j + 1u, d);
    let t2 = lanes_ok(j + 2u, d);
    let t3 = lanes_ok(j + 3u, d);
    let i0 = lanes(j + 0u, kvh, d);
    let i1 = lanes(j + 1u, kvh, d);
    let i2 = lanes(j + 2u, kvh, d);
    let i3 = lanes(j + 3u, kvh, d);
    if (t0.x) { atomicAdd(&dK[i0.x], v0.x); }
    if (t0.y) { atomicAdd(&dK[i0.y], v0.y); }
    if (t0.z) { atomicAdd(&dK[i0.z], v0.z); }
    if (t0.w) { atomicAdd(&dK[i0.w], v0.w); }
    if (t1.x) { atomicAdd(&dK[i1.x], v1.x); }
    if (t1.y) { atomicAdd(&dK[i1.y], v1.y); }
    if (t1.z) { atomicAdd(&dK[i1.z], v1.z); }
    if (t1.w) { atomicAdd(&dK[i1.w], v1.w); }
    if (t2.x) { atomicAdd(&dK[i2.x], v2.x); }
    if (t2.y) { atomicAdd(&dK[i2.y], v2.y); }
    if (t2.z) { atomicAdd(&dK[i2.z], v2.z); }
    if (t2.w) { atomicAdd(&dK[i2.w], v2.w); }
    if (t3.x) { atomicAdd(&dK[i3.x], v3.x); }
    if (t3.y) { atomicAdd(&dK[i3.y], v3.y); }
    if (t3.z) { atomicAdd(&dK[i3.z], v3.z); }
    if (t3.w) { atomicAdd(&dK[i3.w], v3.w); }
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
    let t0 = lanes_ok(j + 0u, d);
    let t1 = lanes_ok(j + 1u, d);
    let t2 = lanes_ok(j + 2u, d);
    let t3 = lanes_ok(j + 3u, d);
    let i0 = lanes(j + 0u, kvh, d);
    let i1 = lanes(j + 1u, kvh, d);
    let i2 = lanes(j + 2u, kvh, d);
    let i3 = lanes(j + 3u, kvh, d);
    if (t0.x) { atomicAdd(&dV[i0.x], v0.x); }
    if (t0.y) { atomicAdd(&dV[i0.y], v0.y); }
    if (t0.z) { atomicAdd(&dV[i0.z], v0.z); }
    if (t0.w) { atomicAdd(&dV[i0.w], v0.w); }
    if (t1.x) { atomicAdd(&dV[i1.x], v1.x); }
    if (t1.y) { atomicAdd(&dV[i1.y], v1.y); }
    if (t1.z) { atomicAdd(&dV[i1.z], v1.z); }
    if (t1.w) { atomicAdd(&dV[i1.w], v1.w); }
    if (t2.x) { atomicAdd(&dV[i2.x], v2.x); }
    if (t2.y) { atomicAdd(&dV[i2.y], v2.y); }
    if (t2.z) { atomicAdd(&dV[i2.z], v2.z); }
    if (t2.w) { atomicAdd(&dV[i2.w], v2.w); }
    if (t3.x) { atomicAdd(&dV[i3.x], v3.x); }
    if (t3.y) { atomicAdd(&dV[i3.y], v3.y); }
    if (t3.z) { atomicAdd(&dV[i3.z], v3.z); }
    if (t3.w) { atomicAdd(&dV[i3.w], v3.w); }
}
