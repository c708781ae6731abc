// Batched mask queries: sample the final mask at texel indices into a small
// results buffer (only that buffer is read back, never the whole mask).

@group(0) @binding(0) var<storage, read> texels: array<u32>;
@group(0) @binding(1) var<storage, read> final_mask: array<u32>;
@group(0) @binding(2) var<storage, read_write> results: array<u32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x >= arrayLength(&texels)) {
        return;
    }
    results[id.x] = final_mask[texels[id.x]];
}
