// 11_rope.wgsl: rotary position embedding (RoPE) of Q and K, forward and backward, in place.
//
// Convention (RoFormer, Meta LLaMA): each head vector of head_dim elements is split into the
// interleaved pairs (2i, 2i+1), i in [0, head_dim/2). Pair i of the token at sequence index s
// turns by angle = (s + pos_offset) * theta_i, theta_i = rope_base^(-2i / head_dim):
//   forward   x0' = x0 c - x1 sn,    x1' = x0 sn + x1 c          (c = cos(angle), sn = sin(angle))
//   backward  g0  = g0' c + g1' sn,  g1  = -g0' sn + g1' c      (the transpose, R(-angle))
// Layout [seq, heads, head_dim] row-major; heads is n_heads for Q and n_kv_heads for K.
// dims = vec4<u32>(seq_len, heads, head_dim, pos_offset), params = vec4<f32>(rope_base, _, _, _).
// Four pairs per invocation, WG pairs apart, as vec4 lanes (block_lanes, 00_shared.wgsl).

// Read by the host: this file's kernels take 4 pairs per invocation (block_lanes), so they
// run ceil(count / (256 * 4)) workgroups.
const ELEMENTS_PER_INVOCATION: u32 = 4u;

// 2*pi split for Cody-Waite reduction: the high part has 8 significant bits, so k * TWO_PI_HI is
// exact for |k| < 2^16, and the low part carries the rest of 2*pi.
const TWO_PI_HI: f32 = 6.28125;
const TWO_PI_LO: f32 = 1.9353071795864769e-3;
const INV_TWO_PI: f32 = 0.15915494309189535;

// Four pairs, one per lane: where each starts and the cosine and sine of its angle.
struct RopeLanes {
    i0: vec4<u32>,  // flat index of each pair's first element; the second is i0 + 1
    c: vec4<f32>,
    sn: vec4<f32>,
}

// The two elements of four pairs, one pair per lane.
struct Pairs {
    a: vec4<f32>,  // elements 2i
    b: vec4<f32>,  // elements 2i + 1
}

// Number of pairs the dispatch covers.
fn rope_pair_count(dims: vec4<u32>) -> u32 {
    return dims.x * dims.y * (dims.z / 2u);
}

// Where one pair sits: pair p of head h of token s.
struct PairAt {
    p: u32,
    s: u32,
    h: u32,
}

// The position of pair `i` (two integer divisions).
fn pair_at(i: u32, half: u32, heads: u32) -> PairAt {
    let row = i / half;  // s * heads + h
    let s = row / heads;
    return PairAt(i - row * half, s, row - s * heads);
}

// The position `step` pairs after `x`, where `step` is itself a position (pair_at of the step):
// adding with carries costs a few adds, dividing again dozens of instructions.
fn pair_after(x: PairAt, step: PairAt, half: u32, heads: u32) -> PairAt {
    var p = x.p + step.p;
    var carry = 0u;
    if (p >= half) {
        p = p - half;
        carry = 1u;
    }
    var h = x.h + step.h + carry;
    var s = x.s + step.s;
    if (h >= heads) {
        h = h - heads;
        s = s + 1u;
    }
    return PairAt(p, s, h);
}

// Where the 4 pairs first, first + WG, first + 2 WG, first + 3 WG live and the cosine and sine
// of their angles.
fn rope_lanes(first: u32, dims: vec4<u32>, rope_base: f32) -> RopeLanes {
    let heads = dims.y;
    let head_dim = dims.z;
    let half = head_dim / 2u;
    let step = pair_at(WG, half, heads);
    let a = pair_at(first, half, heads);
    let b = pair_after(a, step, half, heads);
    let c = pair_after(b, step, half, heads);
    let d = pair_after(c, step, half, heads);
    let p = vec4<u32>(a.p, b.p, c.p, d.p);
    let s = vec4<u32>(a.s, b.s, c.s, d.s);
    let h = vec4<u32>(a.h, b.h, c.h, d.h);
    let theta = pow(vec4<f32>(rope_base), -vec4<f32>(2u * p) / f32(head_dim));
    let angle = vec4<f32>(s + dims.w) * theta;
    // Reduce to about [-pi, pi] first: GPU sin/cos lose accuracy far from zero, and positions
    // reach the thousands.
    let k = round(angle * INV_TWO_PI);
    let r = (angle - k * TWO_PI_HI) - k * TWO_PI_LO;
    return RopeLanes((s * heads + h) * head_dim + 2u * p, cos(r), sin(r));
}

// x' = R(angle) x.
fn rotate(x: Pairs, c: vec4<f32>, sn: vec4<f32>) -> Pairs {
    return Pairs(x.a * c - x.b * sn, x.a * sn + x.b * c);
}

// The rotation is orthonormal: its inverse is its transpose, i.e. the sine changes sign.
fn rotate_back(g: Pairs, c: vec4<f32>, sn: vec4<f32>) -> Pairs {
    return Pairs(g.a * c + g.b * sn, -g.a * sn + g.b * c);
}

// --- KERNEL: rope_q ---
@group(0) @binding(0) var<storage, read_write> Q: array<f32>;
@group(0) @binding(1) var<uniform> dims: vec4<u32>;
@group(0) @binding(2) var<uniform> params: vec4<f32>;

@compute @workgroup_size(WG)
fn rope_q(@builtin(workgroup_id) wid: vec3<u32>,
          @builtin(local_invocation_index) lid: u32,
          @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = block_lanes(wid, lid, nwg);
    let ok = i < vec4<u32>(rope_pair_count(dims));
    let r = rope_lanes(i.x, dims, params.x);
    // All eight loads before any store (in place: a store in between would hold them back).
    var x = Pairs();
    if (ok.x) { x.a.x = Q[r.i0.x]; x.b.x = Q[r.i0.x + 1u]; }
    if (ok.y) { x.a.y = Q[r.i0.y]; x.b.y = Q[r.i0.y + 1u]; }
    if (ok.z) { x.a.z = Q[r.i0.z]; x.b.z = Q[r.i0.z + 1u]; }
    if (ok.w) { x.a.w = Q[r.i0.w]; x.b.w = Q[r.i0.w + 1u]; }
    let y = rotate(x, r.c, r.sn);
    if (ok.x) { Q[r.i0.x] = y.a.x; Q[r.i0.x + 1u] = y.b.x; }
    if (ok.y) { Q[r.i0.y] = y.a.y; Q[r.i0.y + 1u] = y.b.y; }
    if (ok.z) { Q[r.i0.z] = y.a.z; Q[r.i0.z + 1u] = y.b.z; }
    if (ok.w) { Q[r.i0.w] = y.a.w; Q[r.i0.w + 1u] = y.b.w; }
}

// --- KERNEL: rope_k ---
@group(0) @binding(0) var<storage, read_write> K: array<f32>;
@group(0) @binding(1) var<uniform> dims: vec4<u32>;
@group(0) @binding(2) var<uniform> params: vec4<f32>;

@compute @workgroup_size(WG)
fn rope_k(@builtin(workgroup_id) wid: vec3<u32>,
          @builtin(local_invocation_index) lid: u32,
          @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = block_lanes(wid, lid, nwg);
    let ok = i < vec4<u32>(rope_pair_count(dims));
    let r = rope_lanes(i.x, dims, params.x);
    // All eight loads before any store (in place: a store in between would hold them back).
    var x = Pairs();
    if (ok.x) { x.a.x = K[r.i0.x]; x.b.x = K[r.i0.x + 1u]; }
    if (ok.y) { x.a.y = K[r.i0.y]; x.b.y = K[r.i0.y + 1u]; }
    if (ok.z) { x.a.z = K[r.i0.z]; x.b.z = K[r.i0.z + 1u]; }
    if (ok.w) { x.a.w = K[r.i0.w]; x.b.w = K[r.i0.w + 1u]; }
    let y = rotate(x, r.c, r.sn);
    if (ok.x) { K[r.i0.x] = y.a.x; K[r.i0.x + 1u] = y.b.x; }
    if (ok.y) { K[r.i0.y] = y.a.y; K[r.i0.y + 1u] = y.b.y; }
    if (ok.z) { K[r.i0.z] = y.a.z; K[r.i0.z + 1u] = y.b.z; }
    if (ok.w) { K[r.i0.w] = y.a.w; K[r.i0.w + 1u] = y.b.w; }
}

// --- KERNEL: rope_q_backward ---
@group(0) @binding(0) var<storage, read_write> dQ: array<f32>;
@group(0) @binding(1) var<uniform> dims: vec4<u32>;
@group(0) @binding(2) var<uniform> params: vec4<f32>;

@compute @workgroup_size(WG)
fn rope_q_backward(@builtin(workgroup_id) wid: vec3<u32>,
                   @builtin(local_invocation_index) lid: u32,
                   @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = block_lanes(wid, lid, nwg);
    let ok = i < vec4<u32>(rope_pair_count(dims));
    let r = rope_lanes(i.x, dims, params.x);
    // All eight loads before any store (in place: a store in between would hold them back).
    var x = Pairs();
    if (ok.x) { x.a.x = dQ[r.i0.x]; x.b.x = dQ[r.i0.x + 1u]; }
    if (ok.y) { x.a.y = dQ[r.i0.y]; x.b.y = dQ[r.i0.y + 1u]; }
    if (ok.z) { x.a.z = dQ[r.i0.z]; x.b.z = dQ[r.i0.z + 1u]; }
    if (ok.w) { x.a.w = dQ[r.i0.w]; x.b.w = dQ[r.i0.w + 1u]; }
    let y = rotate_back(x, r.c, r.sn);
    if (ok.x) { dQ[r.i0.x] = y.a.x; dQ[r.i0.x + 1u] = y.b.x; }
    if (ok.y) { dQ[r.i0.y] = y.a.y; dQ[r.i0.y + 1u] = y.b.y; }
    if (ok.z) { dQ[r.i0.z] = y.a.z; dQ[r.i0.z + 1u] = y.b.z; }
    if (ok.w) { dQ[r.i0.w] = y.a.w; dQ[r.i0.w + 1u] = y.b.w; }
}

// --- KERNEL: rope_k_backward ---
@group(0) @binding(0) var<storage, read_write> dK: array<f32>;
@group(0) @binding(1) var<uniform> dims: vec4<u32>;
@group(0) @binding(2) var<uniform> params: vec4<f32>;

@compute @workgroup_size(WG)
fn rope_k_backward(@builtin(workgroup_id) wid: vec3<u32>,
                   @builtin(local_invocation_index) lid: u32,
                   @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = block_lanes(wid, lid, nwg);
    let ok = i < vec4<u32>(rope_pair_count(dims));
    let r = rope_lanes(i.x, dims, params.x);
    // All eight loads before any store (in place: a store in between would hold them back).
    var x = Pairs();
    if (ok.x) { x.a.x = dK[r.i0.x]; x.b.x = dK[r.i0.x + 1u]; }
    if (ok.y) { x.a.y = dK[r.i0.y]; x.b.y = dK[r.i0.y + 1u]; }
    if (ok.z) { x.a.z = dK[r.i0.z]; x.b.z = dK[r.i0.z + 1u]; }
    if (ok.w) { x.a.w = dK[r.i0.w]; x.b.w = dK[r.i0.w + 1u]; }
    let y = rotate_back(x, r.c, r.sn);
    if (ok.x) { dK[r.i0.x] = y.a.x; dK[r.i0.x + 1u] = y.b.x; }
    if (ok.y) { dK[r.i0.y] = y.a.y; dK[r.i0.y + 1u] = y.b.y; }
    if (ok.z) { dK[r.i0.z] = y.a.z; dK[r.i0.z + 1u] = y.b.z; }
    if (ok.w) { dK[r.i0.w] = y.a.w; dK[r.i0.w + 1u] = y.b.w; }
}
