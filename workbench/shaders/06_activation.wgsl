// FFN activations, forward: tanh-form GeLU in place, and the fused SwiGLU combine silu(gate) * up.
// Four elements per invocation as the lanes of a vec4 (block_lanes, 00_shared.wgsl), no shared
// memory. Helpers below are this file's preamble (no bindings); they work lane by lane.

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

// x * sigmoid(x); tends to x for large x (sigmoid rounds to exactly 1). Where sigmoid underflows
// to 0 the result is 0, which also gives silu(-Inf) = 0 instead of -Inf * 0 = NaN.
fn silu(v: vec4<f32>) -> vec4<f32> {
    let s = sigmoid(v);
    return select(v * s, vec4<f32>(0.0), s == vec4<f32>(0.0));
}

// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))). The polynomial sees x clamped to +-100: tanh
// is already exactly +-1 in f32 there, and the clamp keeps x^3 (and tanh implementations built
// on exp) far from overflow. The outer factor uses the unclamped x, so gelu(x) = x for x >= 100;
// below -100 the result is 0 (also for -Inf, where x * 0 would be NaN). NaN stays NaN.
fn gelu(v: vec4<f32>) -> vec4<f32> {
    let vc = clamp(v, vec4<f32>(-100.0), vec4<f32>(100.0));
    let inner = SQRT_2_OVER_PI * (vc + GELU_COEFF * vc * vc * vc);
    let y = 0.5 * v * (1.0 + tanh(inner));
    return select(y, vec4<f32>(0.0), v <= vec4<f32>(-100.0));
}

// --- KERNEL: gelu_inplace ---
@group(0) @binding(0) var<storage, read_write> x: array<f32>;
@group(0) @binding(1) var<uniform> n: u32;

@compute @workgroup_size(WG, 1, 1)
fn gelu_inplace(@builtin(workgroup_id) wid: vec3<u32>,
                @builtin(local_invocation_index) lid: u32,
                @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = block_lanes(wid, lid, nwg);
    let ok = i < vec4<u32>(n);
    // All four loads before any store: a store to x in between would keep the compiler from
    // issuing the later loads early.
    var v = vec4<f32>();
    if (ok.x) { v.x = x[i.x]; }
    if (ok.y) { v.y = x[i.y]; }
    if (ok.z) { v.z = x[i.z]; }
    if (ok.w) { v.w = x[i.w]; }
    let r = gelu(v);
    if (ok.x) { x[i.x] = r.x; }
    if (ok.y) { x[i.y] = r.y; }
    if (ok.z) { x[i.z] = r.z; }
    if (ok.w) { x[i.w] = r.w; }
}

// --- KERNEL: swiglu_combine ---
@group(0) @binding(0) var<storage, read> gate: array<f32>;
@group(0) @binding(1) var<storage, read> up: array<f32>;
@group(0) @binding(2) var<storage, read_write> hidden: array<f32>;
@group(0) @binding(3) var<uniform> n: u32;

@compute @workgroup_size(WG, 1, 1)
fn swiglu_combine(@builtin(workgroup_id) wid: vec3<u32>,
                  @builtin(local_invocation_index) lid: u32,
                  @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = block_lanes(wid, lid, nwg);
    let ok = i < vec4<u32>(n);
    var g = vec4<f32>();
    var u = vec4<f32>();
    if (ok.x) { g.x = gate[i.x]; u.x = up[i.x]; }
    if (ok.y) { g.y = gate[i.y]; u.y = up[i.y]; }
    if (ok.z) { g.z = gate[i.z]; u.z = up[i.z]; }
    if (ok.w) { g.w = gate[i.w]; u.w = up[i.w]; }
    let h = silu(g) * u;
    if (ok.x) { hidden[i.x] = h.x; }
    if (ok.y) { hidden[i.y] = h.y; }
    if (ok.z) { hidden[i.z] = h.z; }
    if (ok.w) { hidden[i.w] = h.w; }
}
