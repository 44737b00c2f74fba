// Shared preamble, prepended by the host to every kernel file of this corpus (wgslconfig.toml).
// Helpers only: no bindings live here, so each kernel declares exactly the ABI it documents.

const WG: u32 = 256u;

// Flat element index for 1-D kernels. The host folds a grid of more than 65,535 workgroups
// into (65535, ceil(total / 65535), 1); row y then starts at y * nwg.x * WG.
fn flat_id(gid: vec3<u32>, nwg: vec3<u32>) -> u32 {
    return gid.y * nwg.x * WG + gid.x;
}

// Elementwise kernels give each invocation 4 elements, WG apart, of one block of BLOCK = 4 WG:
// every load instruction of a workgroup is contiguous, and an invocation has 4 loads per input in
// flight before it does any arithmetic (one load each left an H100 waiting on memory latency at
// about 60% of its copy bandwidth). The 4 elements are the lanes of a vec4 (registers): a private
// array indexed in a loop lands in slow local memory on some drivers. Such a kernel declares
// `const ELEMENTS_PER_INVOCATION: u32 = 4u;`, which the host reads to divide the spec's
// one-element-per-invocation grid (it folds grids past 65,535 workgroups into 2-D).
const BLOCK: u32 = WG * 4u;

// Flat indices of this invocation's 4 elements: its block's start plus its place in the
// workgroup, then WG apart. The caller checks each lane against the element count.
fn block_lanes(wid: vec3<u32>, lid: u32, nwg: vec3<u32>) -> vec4<u32> {
    let first = (wid.y * nwg.x + wid.x) * BLOCK + lid;
    return first + vec4<u32>(0u, WG, 2u * WG, 3u * WG);
}

// True for every value that is neither NaN nor +-Inf. Checked on the bit pattern: a
// compiler may assume IEEE comparisons never see NaN and fold `x != x` away.
fn is_finite(x: f32) -> bool {
    return (bitcast<u32>(x) & 0x7f800000u) != 0x7f800000u;
}

// Replaces NaN and +-Inf by 0 so one bad element cannot poison a whole gradient.
fn nan_guard(x: f32) -> f32 {
    return select(0.0, x, is_finite(x));
}

// is_finite and nan_guard for the 4 lanes of an elementwise kernel.
fn is_finite4(x: vec4<f32>) -> vec4<bool> {
    return (bitcast<vec4<u32>>(x) & vec4<u32>(0x7f800000u)) != vec4<u32>(0x7f800000u);
}

fn nan_guard4(x: vec4<f32>) -> vec4<f32> {
    return select(vec4<f32>(0.0), x, is_finite4(x));
}

// Workgroup reductions. naga does not accept workgroup pointers as function parameters, so the
// helpers own one workgroup array; drivers allocate it only in kernels that call them.
var<workgroup> wg_scratch: array<f32, WG>;

// Sum of `v` over the workgroup, returned to every invocation. A tree over workgroup memory with
// barriers: correct for any subgroup size (8 on lavapipe, 32 on NVIDIA). Call it from uniform
// control flow in every invocation of a workgroup of exactly WG invocations (lid < WG).
fn wg_reduce_sum(v: f32, lid: u32) -> f32 {
    wg_scratch[lid] = v;
    workgroupBarrier();
    for (var stride = WG / 2u; stride > 0u; stride = stride / 2u) {
        if (lid < stride) {
            wg_scratch[lid] = wg_scratch[lid] + wg_scratch[lid + stride];
        }
        workgroupBarrier();
    }
    let total = wg_scratch[0];
    workgroupBarrier();
    return total;
}

// The same tree, for a maximum.
fn wg_reduce_max(v: f32, lid: u32) -> f32 {
    wg_scratch[lid] = v;
    workgroupBarrier();
    for (var stride = WG / 2u; stride > 0u; stride = stride / 2u) {
        if (lid < stride) {
            wg_scratch[lid] = max(wg_scratch[lid], wg_scratch[lid + stride]);
        }
        workgroupBarrier();
    }
    let total = wg_scratch[0];
    workgroupBarrier();
    return total;
}

// The query tile and head a workgroup of the attention kernels takes (their grid: a workgroup
// per tile of queries and head), as (tile, head), tiles counted from the first query.
// Workgroups start in the order of their linear index (x first) and the last query tiles see the
// most keys, so the first n_heads workgroups take the last tile of every head, the next n_heads
// the one before, and so on: no long tile starts after the short ones. Taking one head's tiles
// in turn, at seq 2048 (32 tiles x 12 heads on 132 SMs), started seven heads' longest tiles
// last: the backward took 2.58 ms on the H100 against 2.04 now, the forward 0.534 against 0.440.
fn longest_tile_first(wid: vec3<u32>, n_tiles: u32, n_heads: u32) -> vec2<u32> {
    let order = wid.y * n_tiles + wid.x;
    return vec2<u32>(n_tiles - 1u - order / n_heads, order % n_heads);
}
