// Pass 10, blend (every tick): final = lerp(start, upscaled, blend_t / 65536).
// One invocation per output texel, in 8x8 tiles (a dispatch has at most
// 65535 workgroups a side). Twin: backend-cpu/src/passes/blend.rs.

@group(0) @binding(0) var<uniform> params: FrameParams;
@group(0) @binding(1) var<storage, read> start: array<u32>;
@group(0) @binding(2) var<storage, read> upscale: array<u32>;
// The `Final` texture (`final` is a reserved word in WGSL).
@group(0) @binding(3) var<storage, read_write> final_: array<u32>;

@compute @workgroup_size(8, 8)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x >= params.out_width || id.y >= params.out_height) {
        return;
    }
    let i = id.y * params.out_width + id.x;
    final_[i] = lerp_mask(start[i], upscale[i], params.blend_t);
}
