// 01_embedding.wgsl: token id -> vector, the first step of the forward pass, and its backward.
//
//   embed_lookup      out[s, d] = table[tokens[s], d], or 0 when tokens[s] >= vocab_size
//   embed_backward    grad_table[tokens[s], d] += grad_out[s, d] for every (s, d), by CAS atomics
//   embed_lookup_w16  embed_lookup with an f16 table and an f32 output
//
// Layouts are row-major: tokens [seq], table [vocab, d_model], out / grad_out [seq, d_model].
// dims = vec4<u32>(seq_len, d_model, vocab_size, unused). embed_lookup takes 4 elements of the
// flat [seq, d_model] output per invocation, as vec4 lanes (block_lanes, 00_shared.wgsl),
// embed_lookup_w16 takes 8; the backward one element per invocation.

// --- KERNEL: embed_lookup ---
@group(0) @binding(0) var<storage, read> tokens: array<u32>;
@group(0) @binding(1) var<storage, read> table: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> dims: vec4<u32>;

// Read by the host: 4 elements per invocation (block_lanes), ceil(count / 1024) workgroups.
const ELEMENTS_PER_INVOCATION: u32 = 4u;

@compute @workgroup_size(WG)
fn embed_lookup(@builtin(workgroup_id) wid: vec3<u32>,
                @builtin(local_invocation_index) lid: u32,
                @builtin(num_workgroups) nwg: vec3<u32>) {
    let d_model = dims.y;
    let i = block_lanes(wid, lid, nwg);
    let ok = i < vec4<u32>(dims.x * d_model);
    let s = i / vec4<u32>(d_model);
    // Token ids, then table values, then stores: each phase's loads are in flight together.
    var t = vec4<u32>();
    if (ok.x) { t.x = tokens[s.x]; }
    if (ok.y) { t.y = tokens[s.y]; }
    if (ok.z) { t.z = tokens[s.z]; }
    if (ok.w) { t.w = tokens[s.w]; }
    // A corrupt id (padding, vocabulary mismatch) gives a zero row instead of reading past the
    // table.
    let hit = ok & (t < vec4<u32>(dims.z));
    let src = t * d_model + (i - s * d_model);
    var v = vec4<f32>();
    if (hit.x) { v.x = table[src.x]; }
    if (hit.y) { v.y = table[src.y]; }
    if (hit.z) { v.z = table[src.z]; }
    if (hit.w) { v.w = table[src.w]; }
    if (ok.x) { out[i.x] = v.x; }
    if (ok.y) { out[i.y] = v.y; }
    if (ok.z) { out[i.z] = v.z; }
    if (ok.w) { out[i.w] = v.w; }
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

// Read by the host: 8 elements per invocation (two sets of vec4 lanes, see the kernel),
// ceil(count / 2048) workgroups.
const ELEMENTS_PER_INVOCATION: u32 = 8u;

// Token ids of the 4 lanes `i` (flat output indices), 0 where `ok` is false.
fn w16_tokens(s: vec4<u32>, ok: vec4<bool>) -> vec4<u32> {
    var t = vec4<u32>();
    if (ok.x) { t.x = tokens_w16[s.x]; }
    if (ok.y) { t.y = tokens_w16[s.y]; }
    if (ok.z) { t.z = tokens_w16[s.z]; }
    if (ok.w) { t.w = tokens_w16[s.w]; }
    return t;
}

// Table values at `src`, widened to f32 (exactly: every f16 value is an f32 value); 0 where
// `hit` is false.
fn w16_values(src: vec4<u32>, hit: vec4<bool>) -> vec4<f32> {
    var v = vec4<f32>();
    if (hit.x) { v.x = f32(table_w16[src.x]); }
    if (hit.y) { v.y = f32(table_w16[src.y]); }
    if (hit.z) { v.z = f32(table_w16[src.z]); }
    if (hit.w) { v.w = f32(table_w16[src.w]); }
    return v;
}

fn w16_store(i: vec4<u32>, ok: vec4<bool>, v: vec4<f32>) {
    if (ok.x) { out_w16[i.x] = v.x; }
    if (ok.y) { out_w16[i.y] = v.y; }
    if (ok.z) { out_w16[i.z] = v.z; }
    if (ok.w) { out_w16[i.w] = v.w; }
}

// Eight elements per invocation, two sets of vec4 lanes a block (WG * 4) apart: a 2-byte load
// brings half the bytes of an f32 one, so twice as many are kept in flight.
@compute @workgroup_size(WG)
fn embed_lookup_w16(@builtin(workgroup_id) wid: vec3<u32>,
                    @builtin(local_invocation_index) lid: u32,
                    @builtin(num_workgroups) nwg: vec3<u32>) {
    let d_model = dims_w16.y;
    let count = dims_w16.x * d_model;
    let first = (wid.y * nwg.x + wid.x) * 2u * BLOCK + lid;
    let ia = first + vec4<u32>(0u, WG, 2u * WG, 3u * WG);
    let ib = ia + BLOCK;
    let ok_a = ia < vec4<u32>(count);
    let ok_b = ib < vec4<u32>(count);
    let sa = ia / vec4<u32>(d_model);
    let sb = ib / vec4<u32>(d_model);
    // Token ids, then table values, then stores: each phase's loads are in flight together.
    let ta = w16_tokens(sa, ok_a);
    let tb = w16_tokens(sb, ok_b);
    // A corrupt id (padding, vocabulary mismatch) gives a zero row instead of reading past the
    // table.
    let va = w16_values(ta * d_model + (ia - sa * d_model), ok_a & (ta < vec4<u32>(dims_w16.z)));
    let vb = w16_values(tb * d_model + (ib - sb * d_model), ok_b & (tb < vec4<u32>(dims_w16.z)));
    w16_store(ia, ok_a, va);
    w16_store(ib, ok_b, vb);
}
