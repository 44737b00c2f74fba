// FFN activations, backward: the element-wise chain rule through tanh-form GeLU and through the
// SwiGLU combine. Four elements per invocation as the lanes of a vec4 (block_lanes,
// 00_shared.wgsl), no shared memory. Every output goes through nan_guard, and an element whose
// activation input is not finite gets gradient 0 (see the kernels).
// Helpers below are this file's preamble (no bindings); they work lane by lane.

// Read by the host: this file's kernels take 4 elements per invocation (block_lanes), so they
// run ceil(count / (256 * 4)) workgroups.
const ELEMENTS_PER_INVOCATION: u32 = 4u;

const SQRT_2_OVER_PI: f32 = 0.7978845608;
const GELU_COEFF: f32 = 0.044715;

// Logistic sigmoid, chosen by the sign so exp() only ever sees a non-positive argument: it can
// underflow to 0 (harmless) but never overflow to Inf and turn into Inf / Inf = NaN. For v >= 0
// it is 1 / (1 + exp(-v)), else exp(v) / (1 + exp(v)); both share e = exp(-|v|).
fn sigmoid(v: vec4<f32>) -> vec4<f32> {
    let e = exp(-abs(v));
    return select(e / (1.0 + e), 1.0 / (1.0 + e), v >= vec4<f32>(0.0));
}

// d/dx [x sigmoid(x)] = s + x s (1 - s) = s (1 + x (1 - s)), from the sigmoid s of the same x.
fn silu_derivative_from(v: vec4<f32>, s: vec4<f32>) -> vec4<f32> {
    return s * (1.0 + v * (1.0 - s));
}

// d/dx [0.5 x (1 + tanh(u))], u = sqrt(2/pi) (x + 0.044715 x^3):
//   0.5 (1 + tanh(u)) + 0.5 x sech^2(u) u',
//   sech^2 = 1 - tanh^2,   u' = sqrt(2/pi) (1 + 3 * 0.044715 x^2).
// x is clamped to +-100 as in the forward: tanh is exactly +-1 there, so the result is exactly
// 1 above and 0 below, and x^3 stays far from overflow.
fn gelu_derivative(v: vec4<f32>) -> vec4<f32> {
    let x = clamp(v, vec4<f32>(-100.0), vec4<f32>(100.0));
    let x2 = x * x;
    let inner = SQRT_2_OVER_PI * (x + GELU_COEFF * x2 * x);
    let t = tanh(inner);
    let sech2 = 1.0 - t * t;
    let d_inner = SQRT_2_OVER_PI * (1.0 + 3.0 * GELU_COEFF * x2);
    return 0.5 * (1.0 + t) + 0.5 * x * sech2 * d_inner;
}

// --- KERNEL: ffn_gelu_backward ---
@group(0) @binding(0) var<storage, read> grad_hidden: array<f32>;
@group(0) @binding(1) var<storage, read> pre_gelu: array<f32>;
@group(0) @binding(2) var<storage, read_write> grad_pre: array<f32>;
@group(0) @binding(3) var<uniform> n: u32;

@compute @workgroup_size(WG, 1, 1)
fn ffn_gelu_backward(@builtin(workgroup_id) wid: vec3<u32>,
                     @builtin(local_invocation_index) lid: u32,
                     @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = block_lanes(wid, lid, nwg);
    let ok = i < vec4<u32>(n);
    var g = vec4<f32>();
    var pg = vec4<f32>();
    if (ok.x) { g.x = grad_hidden[i.x]; pg.x = pre_gelu[i.x]; }
    if (ok.y) { g.y = grad_hidden[i.y]; pg.y = pre_gelu[i.y]; }
    if (ok.z) { g.z = grad_hidden[i.z]; pg.z = pre_gelu[i.z]; }
    if (ok.w) { g.w = grad_hidden[i.w]; pg.w = pre_gelu[i.w]; }
    let r = g * gelu_derivative(pg);
    // WGSL leaves clamp(NaN, lo, hi) open (it may return a bound, making the derivative finite),
    // so a non-finite pre-activation is zeroed explicitly rather than through the product.
    let out = select(vec4<f32>(0.0), nan_guard4(r), is_finite4(pg));
    if (ok.x) { grad_pre[i.x] = out.x; }
    if (ok.y) { grad_pre[i.y] = out.y; }
    if (ok.z) { grad_pre[i.z] = out.z; }
    if (ok.w) { grad_pre[i.w] = out.w; }
}

// --- KERNEL: ffn_swiglu_backward ---
@group(0) @binding(0) var<storage, read> grad_hidden: array<f32>;
@group(0) @binding(1) var<storage, read> gate: array<f32>;
@group(0) @binding(2) var<storage, read> up: array<f32>;
@group(0) @binding(3) var<storage, read_write> grad_gate: array<f32>;
@group(0) @binding(4) var<storage, read_write> grad_up: array<f32>;
@group(0) @binding(5) var<uniform> n: u32;

@compute @workgroup_size(WG, 1, 1)
fn ffn_swiglu_backward(@builtin(workgroup_id) wid: vec3<u32>,
                       @builtin(local_invocation_index) lid: u32,
                       @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = block_lanes(wid, lid, nwg);
    let ok = i < vec4<u32>(n);
    var g = vec4<f32>();
    var gt = vec4<f32>();
    var u = vec4<f32>();
    if (ok.x) { g.x = grad_hidden[i.x]; gt.x = gate[i.x]; u.x = up[i.x]; }
    if (ok.y) { g.y = grad_hidden[i.y]; gt.y = gate[i.y]; u.y = up[i.y]; }
    if (ok.z) { g.z = grad_hidden[i.z]; gt.z = gate[i.z]; u.z = up[i.z]; }
    if (ok.w) { g.w = grad_hidden[i.w]; gt.w = gate[i.w]; u.w = up[i.w]; }
    // One sigmoid serves both silu(gate) and silu'(gate).
    let s = sigmoid(gt);
    // silu' lies in [-0.1, 1.1], so scaling `up` by it first cannot overflow where the true
    // gradient is finite; `g * u` first would (g = 1.83, u = -3e38 is finite, g * u is not).
    let dg = g * (u * silu_derivative_from(gt, s));
    let du = g * (gt * s);
    // A non-finite gate is zeroed explicitly: at +-Inf the formulas meet Inf * 0, and the rule
    // should not depend on how a compiler treats that.
    let fin = is_finite4(gt);
    let out_gate = select(vec4<f32>(0.0), nan_guard4(dg), fin);
    let out_up = select(vec4<f32>(0.0), nan_guard4(du), fin);
    if (ok.x) { grad_gate[i.x] = out_gate.x; grad_up[i.x] = out_up.x; }
    if (ok.y) { grad_gate[i.y] = out_gate.y; grad_up[i.y] = out_up.y; }
    if (ok.z) { grad_gate[i.z] = out_gate.z; grad_up[i.z] = out_up.z; }
    if (ok.w) { grad_gate[i.w] = out_gate.w; grad_up[i.w] = out_up.w; }
}
