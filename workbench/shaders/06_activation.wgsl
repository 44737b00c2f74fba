// FFN activations, forward: tanh-form GeLU in place, and the fused SwiGLU combine silu(gate) * up.
// One thread per element, no shared memory. Helpers below are this file's preamble (no bindings).

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

// x * sigmoid(x); tends to x for large x (sigmoid rounds to exactly 1). Where sigmoid underflows
// to 0 the result is 0, which also gives silu(-Inf) = 0 instead of -Inf * 0 = NaN.
fn silu(v: f32) -> f32 {
    let s = sigmoid(v);
    return select(v * s, 0.0, s == 0.0);
}

// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))). The polynomial sees x clamped to +-100: tanh
// is already exactly +-1 in f32 there, and the clamp keeps x^3 (and tanh implementations built
// on exp) far from overflow. The outer factor uses the unclamped x, so gelu(x) = x for x >= 100;
// below -100 the result is 0 (also for -Inf, where x * 0 would be NaN). NaN stays NaN.
fn gelu(v: f32) -> f32 {
    let vc = clamp(v, -100.0, 100.0);
    let inner = SQRT_2_OVER_PI * (vc + GELU_COEFF * vc * vc * vc);
    let y = 0.5 * v * (1.0 + tanh(inner));
    return select(y, 0.0, v <= -100.0);
}

// --- KERNEL: gelu_inplace ---
@group(0) @binding(0) var<storage, read_write> x: array<f32>;
@group(0) @binding(1) var<uniform> n: u32;

@compute @workgroup_size(WG, 1, 1)
fn gelu_inplace(@builtin(global_invocation_id) gid: vec3<u32>,
                @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    if (i >= n) {
        return;
    }
    x[i] = gelu(x[i]);
}

// --- KERNEL: swiglu_combine ---
@group(0) @binding(0) var<storage, read> gate: array<f32>;
@group(0) @binding(1) var<storage, read> up: array<f32>;
@group(0) @binding(2) var<storage, read_write> hidden: array<f32>;
@group(0) @binding(3) var<uniform> n: u32;

@compute @workgroup_size(WG, 1, 1)
fn swiglu_combine(@builtin(global_invocation_id) gid: vec3<u32>,
                  @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    if (i >= n) {
        return;
    }
    hidden[i] = silu(gate[i]) * up[i];
}
