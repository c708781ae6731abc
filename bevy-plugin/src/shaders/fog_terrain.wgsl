// murk's 3D terrain under fog: a StandardMaterial extension that lights the
// surface as usual, then darkens it by the fog's three-state opacity.
// Bevy is Y-up; murk's ground is its X/Y plane: murk = (x, -z, y).

#import bevy_pbr::{
    pbr_fragment::pbr_input_from_standard_material,
    pbr_functions::alpha_discard,
}
#import murk::fog::{MurkFogParams, murk_fog_sample, murk_fog_three_state}
#import murk::look::FogLook

#ifdef PREPASS_PIPELINE
#import bevy_pbr::{
    prepass_io::{VertexOutput, FragmentOutput},
    pbr_deferred_functions::deferred_output,
}
#else
#import bevy_pbr::{
    forward_io::{VertexOutput, FragmentOutput},
    pbr_functions::{apply_pbr_lighting, main_pass_post_lighting_processing},
    pbr_types::STANDARD_MATERIAL_FLAGS_UNLIT_BIT,
}
#endif

@group(#{MATERIAL_BIND_GROUP}) @binding(100) var<uniform> params: MurkFogParams;
@group(#{MATERIAL_BIND_GROUP}) @binding(101) var mask: texture_2d<f32>;
@group(#{MATERIAL_BIND_GROUP}) @binding(102) var mask_sampler: sampler;
@group(#{MATERIAL_BIND_GROUP}) @binding(103) var<uniform> look: FogLook;

@fragment
fn fragment(in: VertexOutput, @builtin(front_facing) is_front: bool) -> FragmentOutput {
    var pbr_input = pbr_input_from_standard_material(in, is_front);
    pbr_input.material.base_color = alpha_discard(pbr_input.material, pbr_input.material.base_color);
#ifdef PREPASS_PIPELINE
    let out = deferred_output(in, pbr_input);
#else
    var out: FragmentOutput;
    if (pbr_input.material.flags & STANDARD_MATERIAL_FLAGS_UNLIT_BIT) == 0u {
        out.color = apply_pbr_lighting(pbr_input);
    } else {
        out.color = pbr_input.material.base_color;
    }
    let w = in.world_position.xyz;
    let value = murk_fog_sample(mask, mask_sampler, vec3<f32>(w.x, -w.z, w.y), params);
    let opacity = murk_fog_three_state(value, params, look.haze, look.dark) * look.color.a;
    out.color = vec4<f32>(mix(out.color.rgb, look.color.rgb, opacity), out.color.a);
    out.color = main_pass_post_lighting_processing(pbr_input, out.color);
#endif
    return out;
}
