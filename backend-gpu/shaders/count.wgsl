// The explored count: how many texels of an instance's memory are above 0.
// Each workgroup counts its texels in workgroup memory and adds its sum to
// `total[0]` (cleared before the dispatch) once. Twin: `KeptCount` in
// backend-cpu/src/tiles.rs (the same count, kept per tile).

// x: how many texels.
@group(0) @binding(0) var<uniform> grid: vec4<u32>;
@group(0) @binding(1) var<storage, read> memory: array<u32>;
@group(0) @binding(2) var<storage, read_write> total: array<atomic<u32>>;

var<workgroup> local: atomic<u32>;

// Rows of at most 32768 workgroups (a dispatch has at most 65535 a side).
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>, @builtin(local_invocation_index) lane: u32) {
    let k = id.y * groups.x * 256u + id.x;
    if (k < grid.x && memory[k] > 0u) {
        atomicAdd(&local, 1u);
    }
    workgroupBarrier();
    if (lane == 0u) {
        let sum = atomicLoad(&local);
        if (sum > 0u) {
            atomicAdd(&total[0], sum);
        }
    }
}
