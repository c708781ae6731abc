// Batched mask samples (queries, stealth actors): for one instance, sample
// its final mask at the texel indices `first .. first + count` of the
// batch's list into the same places of a results buffer shared by every
// instance of the batch (only that buffer is read back, never a mask).

// Rust twin: `SampleRange` in src/gpu.rs.
struct SampleRange {
    first: u32,
    count: u32,
    pad: vec2<u32>,
}

@group(0) @binding(0) var<storage, read> texels: array<u32>;
@group(0) @binding(1) var<storage, read> final_mask: array<u32>;
@group(0) @binding(2) var<storage, read_write> results: array<u32>;
@group(0) @binding(3) var<uniform> range: SampleRange;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x >= range.count) {
        return;
    }
    let i = range.first + id.x;
    results[i] = final_mask[texels[i]];
}
