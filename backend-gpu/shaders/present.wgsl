// Presentation (no CPU twin): copies the final mask into the texture that
// materials sample, as value / 65535 in every colour channel. Runs in the
// submission of the blend that wrote the mask; gameplay keeps reading the
// exact integers of the buffer.

@group(0) @binding(0) var<uniform> params: FrameParams;
// The `Final` texture (`final` is a reserved word in WGSL).
@group(0) @binding(1) var<storage, read> final_: array<u32>;
@group(0) @binding(2) var mask_texture: texture_storage_2d<rgba16float, write>;

@compute @workgroup_size(8, 8)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x >= params.out_width || id.y >= params.out_height) {
        return;
    }
    let v = f32(final_[id.y * params.out_width + id.x]) / 65535.0;
    textureStore(mask_texture, vec2<i32>(id.xy), vec4<f32>(v, v, v, 1.0));
}
