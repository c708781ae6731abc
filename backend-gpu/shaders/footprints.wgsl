// Sight footprints judged on the device: one invocation per footprint
// reads its texels in an observer's visibility and sight reveal, takes the
// larger value and writes the cutoff where it reaches the cutoff, else 0
// (`footprint_value` in murk-core). Only these values are read back: one
// per footprint, never a texel.
//
// `lists` holds each footprint list of the batch once: where each of its
// footprints ends (counted in texels from the list's first), then the
// index of each of its texels in the observer's planes. Up to three
// observers a dispatch; observer `s` owns footprints `starts[s] ..
// starts[s + 1]` of the dispatch and reads planes `vis{s}` and `sight{s}`
// (unused slots repeat observer 0's).

// Rust twin: `FootprintRange` in src/footprints.rs.
struct FootprintRange {
    // Footprints judged by this dispatch.
    count: u32,
    pad0: u32,
    pad1: u32,
    pad2: u32,
    // Where each observer's footprints start in the dispatch; [3] = count.
    starts: vec4<u32>,
    // Where each observer's list keeps its footprints' ends in `lists`.
    ends_at: vec4<u32>,
    // Where each observer's list keeps its texel indices in `lists`.
    texels_at: vec4<u32>,
    // Where each observer's values go in `results`.
    out_at: vec4<u32>,
    // Each observer's cutoff.
    cutoffs: vec4<u32>,
}

@group(0) @binding(0) var<storage, read> lists: array<u32>;
@group(0) @binding(1) var<storage, read_write> results: array<u32>;
@group(0) @binding(2) var<uniform> range: FootprintRange;
@group(0) @binding(3) var<storage, read> vis0: array<u32>;
@group(0) @binding(4) var<storage, read> sight0: array<u32>;
@group(0) @binding(5) var<storage, read> vis1: array<u32>;
@group(0) @binding(6) var<storage, read> sight1: array<u32>;
@group(0) @binding(7) var<storage, read> vis2: array<u32>;
@group(0) @binding(8) var<storage, read> sight2: array<u32>;

// The larger signal at texel `at` in observer `slot`'s planes (the sight
// reveal's value is the low half of its word).
fn signal(slot: u32, at: u32) -> u32 {
    switch slot {
        case 0u: { return max(vis0[at] & 0xffffu, sight0[at] & 0xffffu); }
        case 1u: { return max(vis1[at] & 0xffffu, sight1[at] & 0xffffu); }
        default: { return max(vis2[at] & 0xffffu, sight2[at] & 0xffffu); }
    }
}

// Rows of at most 32768 workgroups (a dispatch has at most 65535 a side),
// so a batch of any size is judged whole.
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let k = id.y * groups.x * 64u + id.x;
    if (k >= range.count) {
        return;
    }
    var slot = 0u;
    while (slot < 2u && k >= range.starts[slot + 1u]) {
        slot += 1u;
    }
    let j = k - range.starts[slot];
    let ends = range.ends_at[slot];
    var first = 0u;
    if (j > 0u) {
        first = lists[ends + j - 1u];
    }
    let end = lists[ends + j];
    let texels = range.texels_at[slot];
    var top = 0u;
    for (var t = first; t < end; t += 1u) {
        top = max(top, signal(slot, lists[texels + t]));
    }
    let cutoff = range.cutoffs[slot];
    results[range.out_at[slot] + j] = select(0u, cutoff, top >= cutoff);
}
