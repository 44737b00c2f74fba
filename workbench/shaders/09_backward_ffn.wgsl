// FFN activations, backward: the element-wise chain rule through tanh-form GeLU and through the
// SwiGLU combine. One thread per element, no shared memory. Every output goes through nan_guard,
// and an element whose activation input is not finite gets gradient 0 (see the kernels).
// Helpers below are this file's preamble (no bindings).

const SQRT_2_OVER_PI: f32 = 0.7978845608;
const GELU_COEFF: f32 = 0.044715;

// Logistic sigmoid, branched on the sign so exp() only ever sees a non-positive argument: it can
// underflow to 0 (harmless) but never overflow to Inf and turn into Inf / Inf = NaN.
fn sigmoid(v: f32) -> f32 {
    if (v >= 0.0) {
        return 1.0 / (1.0 + exp(-v));
    }
    let e = exp(v);
    return e / (1.0 + e);
}

// d/dx [x sigmoid(x)] = s + x s (1 - s) = s (1 + x (1 - s)), from the sigmoid s of the same x.
fn silu_derivative_from(v: f32, s: f32) -> f32 {
    return s * (1.0 + v * (1.0 - s));
}

// d/dx [0.5 x (1 + tanh(u))], u = sqrt(2/pi) (x + 0.044715 x^3):
//   0.5 (1 + tanh(u)) + 0.5 x sech^2(u) u',
//   sech^2 = 1 - tanh^2,   u' = sqrt(2/pi) (1 + 3 * 0.044715 x^2).
// x is clamped to +-100 as in the forward: tanh is exactly +-1 there, so the result is exactly
// 1 above and 0 below, and x^3 stays far from overflow.
fn gelu_derivative(v: f32) -> f32 {
    let x = clamp(v, -100.0, 100.0);
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
fn ffn_gelu_backward(@builtin(global_invocation_id) gid: vec3<u32>,
                     @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    if (i >= n) {
        return;
    }
    let g = grad_hidden[i];
    let pg = pre_gelu[i];
    let r = g * gelu_derivative(pg);
    // WGSL leaves clamp(NaN, lo, hi) open (it may return a bound, making the derivative finite),
    // so a non-finite pre-activation is zeroed explicitly rather than through the product.
    grad_pre[i] = select(0.0, nan_guard(r), is_finite(pg));
}

// --- KERNEL: ffn_swiglu_backward ---
@group(0) @binding(0) var<storage, read> grad_hidden: array<f32>;
@group(0) @binding(1) var<storage, read> gate: array<f32>;
@group(0) @binding(2) var<storage, read> up: array<f32>;
@group(0) @binding(3) var<storage, read_write> grad_gate: array<f32>;
@group(0) @binding(4) var<storage, read_write> grad_up: array<f32>;
@group(0) @binding(5) var<uniform> n: u32;

@compute @workgroup_size(WG, 1, 1)
fn ffn_swiglu_backward(@builtin(global_invocation_id) gid: vec3<u32>,
                       @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    if (i >= n) {
        return;
    }
    let g = grad_hidden[i];
    let gt = gate[i];
    let u = up[i];
    // One sigmoid serves both silu(gate) and silu'(gate).
    let s = sigmoid(gt);
    // silu' lies in [-0.1, 1.1], so scaling `up` by it first cannot overflow where the true
    // gradient is finite; `g * u` first would (g = 1.83, u = -3e38 is finite, g * u is not).
    let dg = g * (u * silu_derivative_from(gt, s));
    let du = g * (gt * s);
    // A non-finite gate is zeroed explicitly: at +-Inf the formulas meet Inf * 0, and the rule
    // should not depend on how a compiler treats that.
    let ok = is_finite(gt);
    grad_gate[i] = select(0.0, nan_guard(dg), ok);
    grad_up[i] = select(0.0, nan_guard(du), ok);
}
