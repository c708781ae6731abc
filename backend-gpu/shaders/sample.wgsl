// Batched mask samples (queries, stealth actors, sight footprints): the
// final masks of up to six requests (instances, or one instance asked
// twice) sampled in one dispatch at the texel indices `first .. first +
// count` of the batch's list, into the same places of a results buffer
// shared by the whole batch (only that buffer is read back, never a mask).
// Request `s` of the dispatch owns positions `ends[s - 1] .. ends[s]` of
// the range (from 0) and reads mask `s`; unused slots repeat mask 0.

// Rust twin: `SampleRange` in src/gpu/mod.rs.
struct SampleRange {
    first: u32,
    count: u32,
    pad: vec2<u32>,
    // Where each request's texels end, counted from `first` (0..6 used).
    ends: array<vec4<u32>, 2>,
}

@group(0) @binding(0) var<storage, read> texels: array<u32>;
@group(0) @binding(1) var<storage, read_write> results: array<u32>;
@group(0) @binding(2) var<uniform> range: SampleRange;
@group(0) @binding(3) var<storage, read> mask0: array<u32>;
@group(0) @binding(4) var<storage, read> mask1: array<u32>;
@group(0) @binding(5) var<storage, read> mask2: array<u32>;
@group(0) @binding(6) var<storage, read> mask3: array<u32>;
@group(0) @binding(7) var<storage, read> mask4: array<u32>;
@group(0) @binding(8) var<storage, read> mask5: array<u32>;

fn end_of(slot: u32) -> u32 {
    return range.ends[slot / 4u][slot % 4u];
}

// Rows of at most 32768 workgroups (a dispatch has at most 65535 a side),
// so a batch of any size is sampled whole.
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let k = id.y * groups.x * 64u + id.x;
    if (k >= range.count) {
        return;
    }
    var slot = 0u;
    while (slot < 5u && k >= end_of(slot)) {
        slot += 1u;
    }
    let i = range.first + k;
    let at = texels[i];
    var v = 0u;
    switch slot {
        case 0u: { v = mask0[at]; }
        case 1u: { v = mask1[at]; }
        case 2u: { v = mask2[at]; }
        case 3u: { v = mask3[at]; }
        case 4u: { v = mask4[at]; }
        default: { v = mask5[at]; }
    }
    results[i] = v;
}
