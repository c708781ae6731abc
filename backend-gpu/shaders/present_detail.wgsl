// Presentation (no CPU twin), on request: the blurred visibility, explored
// memory and composed mask at the internal resolution, as value / 65535 in
// the red, green and blue channels. Runs in the recompute's submission.

@group(0) @binding(0) var<uniform> params: FrameParams;
@group(0) @binding(1) var<storage, read> blur: array<u32>;
@group(0) @binding(2) var<storage, read> memory: array<u32>;
@group(0) @binding(3) var<storage, read> compose: array<u32>;
@group(0) @binding(4) var detail_texture: texture_storage_2d<rgba16float, write>;

@compute @workgroup_size(8, 8)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x >= params.width || id.y >= params.height) {
        return;
    }
    let i = id.y * params.width + id.x;
    let unit = vec3<f32>(f32(blur[i]), f32(memory[i]), f32(compose[i])) / 65535.0;
    textureStore(detail_texture, vec2<i32>(id.xy), vec4<f32>(unit, 1.0));
}
