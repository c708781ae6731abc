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

// Rows of at most 32768 workgroups (a dispatch has at most 65535 a side),
// so a batch of any size is sampled whole.
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let k = id.y * groups.x * 64u + id.x;
    if (k >= range.count) {
        return;
    }
    let i = range.first + k;
    results[i] = final_mask[texels[i]];
}
