// Pass 10, blend (every tick): final = lerp(start, upscaled, blend_t / 65536).
// Twin: backend-cpu/src/passes/blend.rs.

@group(0) @binding(0) var<uniform> params: FrameParams;
@group(0) @binding(1) var<storage, read> start: array<u32>;
@group(0) @binding(2) var<storage, read> upscaled: array<u32>;
@group(0) @binding(3) var<storage, read_write> final_mask: array<u32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let n = params.out_width * params.out_height;
    if (id.x >= n) {
        return;
    }
    final_mask[id.x] = lerp_mask(start[id.x], upscaled[id.x], params.blend_t);
}
