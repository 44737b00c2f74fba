// Changed-ABI variants of rope_k and rope_k_backward (11_rope.wgsl): K as array<vec4<f32>>, so one
// 16-byte load brings two whole interleaved pairs (2i, 2i+1) and (2i+2, 2i+3) and one store puts
// them back; the seed's array<f32> takes a 4-byte access per element. Same convention and angle
// arithmetic as the seed kernels; head_dim must be a multiple of 4 (the shapes say so). Not
// shipped: benchmarks/bench_kernels.py times them beside the seed-ABI kernels.
// dims = vec4<u32>(seq_len, heads, head_dim, pos_offset), params = vec4<f32>(rope_base, _, _, _).

const WG: u32 = 256u;
const TWO_PI_HI: f32 = 6.28125;
const TWO_PI_LO: f32 = 1.9353071795864769e-3;
const INV_TWO_PI: f32 = 0.15915494309189535;

// The cosine and sine of the angles of the two pairs in vec4 `v` (x: pair 2v, y: pair 2v + 1).
struct Turn {
    c: vec2<f32>,
    sn: vec2<f32>,
}

fn turn(v: u32, dims: vec4<u32>, rope_base: f32) -> Turn {
    let half = dims.z / 2u;
    let pair = 2u * v;
    let row = pair / half;  // s * heads + h
    let s = row / dims.y;
    let p = vec2<f32>(f32(pair - row * half), f32(pair - row * half + 1u));
    let theta = pow(vec2<f32>(rope_base), -2.0 * p / f32(dims.z));
    let angle = f32(s + dims.w) * theta;
    // Cody-Waite reduction to about [-pi, pi], as in 11_rope.wgsl.
    let k = round(angle * INV_TWO_PI);
    let r = (angle - k * TWO_PI_HI) - k * TWO_PI_LO;
    return Turn(cos(r), sin(r));
}

// The vec4 `x` at index `v` (two interleaved pairs) turned by R(angle), or by its transpose
// R(-angle) (the sine's sign flipped) when `sign` is -1.
fn turned(x: vec4<f32>, v: u32, dims: vec4<u32>, rope_base: f32, sign: f32) -> vec4<f32> {
    let t = turn(v, dims, rope_base);
    let sn = sign * t.sn;
    let a = x.xz;  // elements 2i of the two pairs
    let b = x.yw;  // elements 2i + 1
    let ra = a * t.c - b * sn;
    let rb = a * sn + b * t.c;
    return vec4<f32>(ra.x, rb.x, ra.y, rb.y);
}

// --- KERNEL: rope_k_vec4 ---
@group(0) @binding(0) var<storage, read_write> K: array<vec4<f32>>;
@group(0) @binding(1) var<uniform> dims: vec4<u32>;
@group(0) @binding(2) var<uniform> params: vec4<f32>;

@compute @workgroup_size(WG)
fn rope_k_vec4(@builtin(workgroup_id) wid: vec3<u32>,
               @builtin(local_invocation_index) lid: u32,
               @builtin(num_workgroups) nwg: vec3<u32>) {
    let v = (wid.y * nwg.x + wid.x) * WG + lid;
    if (v < dims.x * dims.y * dims.z / 4u) {
        K[v] = turned(K[v], v, dims, params.x, 1.0);
    }
}

// --- KERNEL: rope_k_backward_vec4 ---
@group(0) @binding(0) var<storage, read_write> dK: array<vec4<f32>>;
@group(0) @binding(1) var<uniform> dims: vec4<u32>;
@group(0) @binding(2) var<uniform> params: vec4<f32>;

@compute @workgroup_size(WG)
fn rope_k_backward_vec4(@builtin(workgroup_id) wid: vec3<u32>,
                        @builtin(local_invocation_index) lid: u32,
                        @builtin(num_workgroups) nwg: vec3<u32>) {
    let v = (wid.y * nwg.x + wid.x) * WG + lid;
    if (v < dims.x * dims.y * dims.z / 4u) {
        dK[v] = turned(dK[v], v, dims, params.x, -1.0);
    }
}
