// murk's 2D fog overlay: a mesh over the play area (Bevy's X/Y plane is
// murk's ground), drawn over the scene with the three-state look.

#import bevy_sprite::mesh2d_vertex_output::VertexOutput
#import murk::fog::{MurkFogParams, murk_fog_sample, murk_fog_three_state}
#import murk::look::FogLook

@group(#{MATERIAL_BIND_GROUP}) @binding(0) var<uniform> params: MurkFogParams;
@group(#{MATERIAL_BIND_GROUP}) @binding(1) var mask: texture_2d<f32>;
@group(#{MATERIAL_BIND_GROUP}) @binding(2) var mask_sampler: sampler;
@group(#{MATERIAL_BIND_GROUP}) @binding(3) var<uniform> look: FogLook;

@fragment
fn fragment(mesh: VertexOutput) -> @location(0) vec4<f32> {
    // The overlay's own depth is not a murk height: sample at the slab's centre.
    let world = vec3<f32>(mesh.world_position.xy, params.center.z);
    let value = murk_fog_sample(mask, mask_sampler, world, params);
    let opacity = murk_fog_three_state(value, params, look.haze, look.dark);
    return vec4<f32>(look.color.rgb, opacity * look.color.a);
}
