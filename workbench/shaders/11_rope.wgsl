// 11_rope.wgsl: rotary position embedding (RoPE) of Q and K, forward and backward, in place.
//
// Convention (RoFormer, Meta LLaMA): each head vector of head_dim elements is split into the
// interleaved pairs (2i, 2i+1), i in [0, head_dim/2). Pair i of the token at sequence index s
// turns by angle = (s + pos_offset) * theta_i, theta_i = rope_base^(-2i / head_dim):
//   forward   x0' = x0 c - x1 sn,    x1' = x0 sn + x1 c          (c = cos(angle), sn = sin(angle))
//   backward  g0  = g0' c + g1' sn,  g1  = -g0' sn + g1' c      (the transpose, R(-angle))
// Layout [seq, heads, head_dim] row-major; heads is n_heads for Q and n_kv_heads for K.
// dims = vec4<u32>(seq_len, heads, head_dim, pos_offset), params = vec4<f32>(rope_base, _, _, _).
// One thread per pair.

// 2*pi split for Cody-Waite reduction: the high part has 8 significant bits, so k * TWO_PI_HI is
// exact for |k| < 2^16, and the low part carries the rest of 2*pi.
const TWO_PI_HI: f32 = 6.28125;
const TWO_PI_LO: f32 = 1.9353071795864769e-3;
const INV_TWO_PI: f32 = 0.15915494309189535;

struct RopePair {
    i0: u32,  // flat index of the pair's first element; the second is i0 + 1
    c: f32,
    sn: f32,
}

// Number of pairs the dispatch covers.
fn rope_pair_count(dims: vec4<u32>) -> u32 {
    return dims.x * dims.y * (dims.z / 2u);
}

// Where pair `i` lives and the cosine and sine of its angle.
fn rope_pair(i: u32, dims: vec4<u32>, rope_base: f32) -> RopePair {
    let heads = dims.y;
    let head_dim = dims.z;
    let half = head_dim / 2u;
    let p = i % half;
    let row = i / half;  // s * heads + h
    let s = row / heads;
    let theta = pow(rope_base, -f32(2u * p) / f32(head_dim));
    let angle = f32(s + dims.w) * theta;
    // Reduce to about [-pi, pi] first: GPU sin/cos lose accuracy far from zero, and positions
    // reach the thousands.
    let k = round(angle * INV_TWO_PI);
    let r = (angle - k * TWO_PI_HI) - k * TWO_PI_LO;
    return RopePair(row * head_dim + 2u * p, cos(r), sin(r));
}

// --- KERNEL: rope_q ---
@group(0) @binding(0) var<storage, read_write> Q: array<f32>;
@group(0) @binding(1) var<uniform> dims: vec4<u32>;
@group(0) @binding(2) var<uniform> params: vec4<f32>;

@compute @workgroup_size(WG)
fn rope_q(@builtin(global_invocation_id) gid: vec3<u32>,
          @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    if (i >= rope_pair_count(dims)) { return; }
    let r = rope_pair(i, dims, params.x);
    let x0 = Q[r.i0];
    let x1 = Q[r.i0 + 1u];
    Q[r.i0] = x0 * r.c - x1 * r.sn;
    Q[r.i0 + 1u] = x0 * r.sn + x1 * r.c;
}

// --- KERNEL: rope_k ---
@group(0) @binding(0) var<storage, read_write> K: array<f32>;
@group(0) @binding(1) var<uniform> dims: vec4<u32>;
@group(0) @binding(2) var<uniform> params: vec4<f32>;

@compute @workgroup_size(WG)
fn rope_k(@builtin(global_invocation_id) gid: vec3<u32>,
          @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    if (i >= rope_pair_count(dims)) { return; }
    let r = rope_pair(i, dims, params.x);
    let x0 = K[r.i0];
    let x1 = K[r.i0 + 1u];
    K[r.i0] = x0 * r.c - x1 * r.sn;
    K[r.i0 + 1u] = x0 * r.sn + x1 * r.c;
}

// --- KERNEL: rope_q_backward ---
@group(0) @binding(0) var<storage, read_write> dQ: array<f32>;
@group(0) @binding(1) var<uniform> dims: vec4<u32>;
@group(0) @binding(2) var<uniform> params: vec4<f32>;

@compute @workgroup_size(WG)
fn rope_q_backward(@builtin(global_invocation_id) gid: vec3<u32>,
                   @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    if (i >= rope_pair_count(dims)) { return; }
    let r = rope_pair(i, dims, params.x);
    let g0 = dQ[r.i0];
    let g1 = dQ[r.i0 + 1u];
    // The rotation is orthonormal: its inverse is its transpose, i.e. the sine changes sign.
    dQ[r.i0] = g0 * r.c + g1 * r.sn;
    dQ[r.i0 + 1u] = -g0 * r.sn + g1 * r.c;
}

// --- KERNEL: rope_k_backward ---
@group(0) @binding(0) var<storage, read_write> dK: array<f32>;
@group(0) @binding(1) var<uniform> dims: vec4<u32>;
@group(0) @binding(2) var<uniform> params: vec4<f32>;

@compute @workgroup_size(WG)
fn rope_k_backward(@builtin(global_invocation_id) gid: vec3<u32>,
                   @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    if (i >= rope_pair_count(dims)) { return; }
    let r = rope_pair(i, dims, params.x);
    let g0 = dK[r.i0];
    let g1 = dK[r.i0 + 1u];
    dK[r.i0] = g0 * r.c + g1 * r.sn;
    dK[r.i0 + 1u] = -g0 * r.sn + g1 * r.c;
}
