// 01_embedding.wgsl: token id -> vector, the first step of the forward pass, and its backward.
//
//   embed_lookup      out[s, d] = table[tokens[s], d], or 0 when tokens[s] >= vocab_size
//   embed_backward    grad_table[tokens[s], d] += grad_out[s, d] for every (s, d), by CAS atomics
//   embed_lookup_w16  embed_lookup with an f16 table and an f32 output
//
// Layouts are row-major: tokens [seq], table [vocab, d_model], out / grad_out [seq, d_model].
// dims = vec4<u32>(seq_len, d_model, vocab_size, unused). One thread per (s, d) element.

// --- KERNEL: embed_lookup ---
@group(0) @binding(0) var<storage, read> tokens: array<u32>;
@group(0) @binding(1) var<storage, read> table: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> dims: vec4<u32>;

@compute @workgroup_size(WG)
fn embed_lookup(@builtin(global_invocation_id) gid: vec3<u32>,
                @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    let seq_len = dims.x;
    let d_model = dims.y;
    let vocab_size = dims.z;
    if (i >= seq_len * d_model) { return; }
    let s = i / d_model;
    let d = i % d_model;
    let t = tokens[s];
    // A corrupt id (padding, vocabulary mismatch) gives a zero row instead of reading past the table.
    if (t >= vocab_size) {
        out[i] = 0.0;
        return;
    }
    out[i] = table[t * d_model + d];
}

// --- KERNEL: embed_backward ---
@group(0) @binding(0) var<storage, read> tokens: array<u32>;
@group(0) @binding(1) var<storage, read> grad_out: array<f32>;
// f32 bits: WGSL has no atomic<f32>, so the add is a compare-exchange loop on the bit pattern.
// The host zero-fills it; 0u is the bit pattern of +0.0.
@group(0) @binding(2) var<storage, read_write> grad_table: array<atomic<u32>>;
@group(0) @binding(3) var<uniform> dims: vec4<u32>;

@compute @workgroup_size(WG)
fn embed_backward(@builtin(global_invocation_id) gid: vec3<u32>,
                  @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    let seq_len = dims.x;
    let d_model = dims.y;
    let vocab_size = dims.z;
    if (i >= seq_len * d_model) { return; }
    let s = i / d_model;
    let d = i % d_model;
    let t = tokens[s];
    if (t >= vocab_size) { return; }
    let val = grad_out[i];
    // Zero adds nothing (and costs an atomic); NaN/Inf from upstream must not poison the table.
    if (val == 0.0 || !is_finite(val)) { return; }
    let dst = t * d_model + d;
    // Positions holding the same token race on this slot: retry until no one wrote in between.
    var old_bits = atomicLoad(&grad_table[dst]);
    loop {
        let new_bits = bitcast<u32>(bitcast<f32>(old_bits) + val);
        let res = atomicCompareExchangeWeak(&grad_table[dst], old_bits, new_bits);
        if (res.exchanged) { break; }
        old_bits = res.old_value;
    }
}

// --- KERNEL: embed_lookup_w16 ---
@group(0) @binding(0) var<storage, read> tokens_w16: array<u32>;
// Half the bytes of the f32 table; the forward reads an f16 mirror of the f32 master weights.
@group(0) @binding(1) var<storage, read> table_w16: array<f16>;
@group(0) @binding(2) var<storage, read_write> out_w16: array<f32>;
@group(0) @binding(3) var<uniform> dims_w16: vec4<u32>;

@compute @workgroup_size(WG)
fn embed_lookup_w16(@builtin(global_invocation_id) gid: vec3<u32>,
                    @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    let seq_len = dims_w16.x;
    let d_model = dims_w16.y;
    let vocab_size = dims_w16.z;
    if (i >= seq_len * d_model) { return; }
    let s = i / d_model;
    let d = i % d_model;
    let t = tokens_w16[s];
    if (t >= vocab_size) {
        out_w16[i] = 0.0;
        return;
    }
    // Every f16 value is exactly representable in f32: the widening is exact.
    out_w16[i] = f32(table_w16[t * d_model + d]);
}
