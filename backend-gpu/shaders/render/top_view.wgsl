// A top view of a fog instance's area drawn the way a game's material would
// draw fog: the fragment shader finds the world point under each pixel,
// samples the mask texture through the engine include (murk_fog.wgsl, put
// before this file) with a filtering sampler, and shades the three states
// over a checkered ground.

@group(0) @binding(0) var mask: texture_2d<f32>;
@group(0) @binding(1) var mask_sampler: sampler;
@group(0) @binding(2) var<uniform> fog: MurkFogParams;

struct Varyings {
    @builtin(position) position: vec4<f32>,
    @location(0) uv: vec2<f32>,
}

// One triangle covering the target; uv (0, 0) at the top-left pixel.
@vertex
fn vertex(@builtin(vertex_index) i: u32) -> Varyings {
    let corner = vec2<f32>(f32((i << 1u) & 2u), f32(i & 2u));
    var out: Varyings;
    out.position = vec4<f32>(corner * 2.0 - 1.0, 0.0, 1.0);
    out.uv = vec2<f32>(corner.x, 1.0 - corner.y);
    return out;
}

@fragment
fn fragment(in: Varyings) -> @location(0) vec4<f32> {
    // The inverse of murk_fog_uv: from the area's local frame to the world.
    let a = radians(fog.yaw_degrees);
    let local = (in.uv - vec2<f32>(0.5, 0.5)) * fog.size.xy;
    let xy = fog.center.xy + vec2<f32>(local.x * cos(a) - local.y * sin(a), local.x * sin(a) + local.y * cos(a));
    let value = murk_fog_sample(mask, mask_sampler, vec3<f32>(xy, fog.center.z), fog);
    let opacity = murk_fog_three_state(value, fog, 0.45, 0.92);
    let cell = vec2<i32>(floor(xy / 4.0));
    let ground = select(vec3<f32>(0.42, 0.50, 0.36), vec3<f32>(0.55, 0.62, 0.45), ((cell.x + cell.y) & 1) == 0);
    let fog_colour = vec3<f32>(0.03, 0.04, 0.08);
    return vec4<f32>(mix(ground, fog_colour, opacity), 1.0);
}
