// Changed-ABI variants of three seed kernels: swiglu_combine (06_activation.wgsl),
// ffn_gelu_backward and ffn_swiglu_backward (09_backward_ffn.wgsl), with every buffer an
// array<vec4<f32>> instead of the seeds' array<f32>, so each load and store moves 16 bytes. The
// same arithmetic, one vec4 per invocation. Not shipped: benchmarks/bench_kernels.py times them
// beside the seed-ABI kernels, to show what the wider element type buys (issue 13's rule for a
// target out of reach with the seed ABI). A corpus of its own, so it repeats the few lines of
// activation maths it needs (a corpus cannot take a preamble from outside its folder).

const WG: u32 = 256u;
const SQRT_2_OVER_PI: f32 = 0.7978845608;
const GELU_COEFF: f32 = 0.044715;

// The vec4 this invocation owns; 1-D grids past 65,535 workgroups arrive folded into 2-D.
fn vec_index(wid: vec3<u32>, lid: u32, nwg: vec3<u32>) -> u32 {
    return (wid.y * nwg.x + wid.x) * WG + lid;
}

fn finite4(x: vec4<f32>) -> vec4<bool> {
    return (bitcast<vec4<u32>>(x) & vec4<u32>(0x7f800000u)) != vec4<u32>(0x7f800000u);
}

// exp() only sees -|v|, so it never overflows (see 09_backward_ffn.wgsl).
fn sigmoid(v: vec4<f32>) -> vec4<f32> {
    let e = exp(-abs(v));
    return select(e / (1.0 + e), 1.0 / (1.0 + e), v >= vec4<f32>(0.0));
}

// d/dx of the tanh-form GeLU, x clamped to +-100 as the seed kernel does.
fn gelu_derivative(v: vec4<f32>) -> vec4<f32> {
    let x = clamp(v, vec4<f32>(-100.0), vec4<f32>(100.0));
    let x2 = x * x;
    let t = tanh(SQRT_2_OVER_PI * (x + GELU_COEFF * x2 * x));
    return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * SQRT_2_OVER_PI * (1.0 + 3.0 * GELU_COEFF * x2);
}

// A non-finite result becomes 0, and so does every lane whose activation input is not finite.
fn guarded(r: vec4<f32>, input: vec4<f32>) -> vec4<f32> {
    return select(vec4<f32>(0.0), r, finite4(r) & finite4(input));
}

// --- KERNEL: swiglu_combine_vec4 ---
@group(0) @binding(0) var<storage, read> gate: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> up: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> hidden: array<vec4<f32>>;
@group(0) @binding(3) var<uniform> n: u32;

@compute @workgroup_size(WG)
fn swiglu_combine_vec4(@builtin(workgroup_id) wid: vec3<u32>,
                       @builtin(local_invocation_index) lid: u32,
                       @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = vec_index(wid, lid, nwg);
    if (i < n) {
        let g = gate[i];
        let s = sigmoid(g);
        // silu(g) is 0 where the sigmoid underflows (also silu(-Inf), not -Inf * 0 = NaN).
        hidden[i] = select(g * s, vec4<f32>(0.0), s == vec4<f32>(0.0)) * up[i];
    }
}

// --- KERNEL: ffn_gelu_backward_vec4 ---
@group(0) @binding(0) var<storage, read> grad_hidden: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> pre_gelu: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> grad_pre: array<vec4<f32>>;
@group(0) @binding(3) var<uniform> n: u32;

@compute @workgroup_size(WG)
fn ffn_gelu_backward_vec4(@builtin(workgroup_id) wid: vec3<u32>,
                          @builtin(local_invocation_index) lid: u32,
                          @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = vec_index(wid, lid, nwg);
    if (i < n) {
        let pg = pre_gelu[i];
        grad_pre[i] = guarded(grad_hidden[i] * gelu_derivative(pg), pg);
    }
}

// --- KERNEL: ffn_swiglu_backward_vec4 ---
@group(0) @binding(0) var<storage, read> grad_hidden: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> gate: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> up: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> grad_gate: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> grad_up: array<vec4<f32>>;
@group(0) @binding(5) var<uniform> n: u32;

@compute @workgroup_size(WG)
fn ffn_swiglu_backward_vec4(@builtin(workgroup_id) wid: vec3<u32>,
                            @builtin(local_invocation_index) lid: u32,
                            @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = vec_index(wid, lid, nwg);
    if (i < n) {
        let g = grad_hidden[i];
        let gt = gate[i];
        let u = up[i];
        let s = sigmoid(gt);
        grad_gate[i] = guarded(g * (u * (s * (1.0 + gt * (1.0 - s)))), gt);
        grad_up[i] = guarded(g * (gt * s), gt);
    }
}
