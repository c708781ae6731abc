// murk_fog.wgsl — include this in engine materials to sample a murk fog
// instance in world space, in the same coordinates murk uses.
//
// Bind the instance's mask texture (`GpuBackend::mask_texture`: Rgba16Float,
// value / 65535 in red, row 0 = the area's local -Y edge) with a filtering
// sampler, and its parameter block (`murk_core::ShaderParams`, 48 bytes,
// uploaded as-is; the struct below mirrors core/src/frame.rs and
// backend-gpu/tests/layout.rs checks the two agree). Presentation only:
// gameplay reads the exact masks through murk's queries, never these floats.

struct MurkFogParams {
    center: vec3<f32>,
    enabled: f32,
    size: vec3<f32>,
    yaw_degrees: f32,
    visibility_cutoff: f32,
    use_z_layering: f32,
    explored_value: f32,
    mapped_value: f32,
}

// The area transform of core/src/transform.rs: local = rotate(-yaw) *
// (world - center); uv = local / size + 0.5 (u along local +X, v along +Y).
fn murk_fog_uv(world: vec3<f32>, p: MurkFogParams) -> vec2<f32> {
    let a = radians(p.yaw_degrees);
    let d = world.xy - p.center.xy;
    let local = vec2<f32>(d.x * cos(a) + d.y * sin(a), -d.x * sin(a) + d.y * cos(a));
    return local / p.size.xy + vec2<f32>(0.5, 0.5);
}

// Whether a world point lies inside the instance's area (and its height band
// when the instance uses Z layering: `use_z_layering`).
fn murk_fog_covers(world: vec3<f32>, p: MurkFogParams) -> bool {
    let uv = murk_fog_uv(world, p);
    let inside_xy = all(uv >= vec2<f32>(0.0)) && all(uv <= vec2<f32>(1.0));
    let inside_z = p.use_z_layering < 0.5 || abs(world.z - p.center.z) <= 0.5 * p.size.z;
    return inside_xy && inside_z;
}

// The mask at a world point (1.0 where the instance does not cover it or is
// disabled: no fog there).
fn murk_fog_sample(mask: texture_2d<f32>, samp: sampler, world: vec3<f32>, p: MurkFogParams) -> f32 {
    if (p.enabled < 0.5 || !murk_fog_covers(world, p)) {
        return 1.0;
    }
    return textureSampleLevel(mask, samp, murk_fog_uv(world, p), 0.0).r;
}

// Three-state composite (clear / explored / unexplored): 0 where visible,
// `haze` over explored ground, `dark` where never seen, with a squared fade
// across the explored boundary. Returns the fog opacity.
fn murk_fog_three_state(mask_value: f32, p: MurkFogParams, haze: f32, dark: f32) -> f32 {
    let e = max(p.explored_value, 1e-4);
    if (mask_value >= e) {
        // Between explored and visible: haze fades out toward clear.
        let t = clamp((mask_value - e) / max(1.0 - e, 1e-4), 0.0, 1.0);
        return haze * (1.0 - t);
    }
    // Below explored: from dark to haze, squared so the edge reads crisply.
    let t = clamp(mask_value / e, 0.0, 1.0);
    return mix(dark, haze, t * t);
}

// Four-state composite (clear / explored / mapped / unexplored): as the
// three-state one, with the mapped state (known from a map, never seen) at
// `mapped` opacity: the mask rises from 0 (unexplored, `dark`) to
// `mapped_value` (mapped), then to `explored_value` (explored, `haze`), then
// to 1 (visible, clear). With a mapped value of 0 it is the three-state one.
fn murk_fog_four_state(mask_value: f32, p: MurkFogParams, haze: f32, mapped: f32, dark: f32) -> f32 {
    let m = p.mapped_value;
    if (m <= 0.0 || mask_value >= p.explored_value) {
        return murk_fog_three_state(mask_value, p, haze, dark);
    }
    if (mask_value >= m) {
        let t = clamp((mask_value - m) / max(p.explored_value - m, 1e-4), 0.0, 1.0);
        return mix(mapped, haze, t * t);
    }
    let t = clamp(mask_value / m, 0.0, 1.0);
    return mix(dark, mapped, t * t);
}

// Whether an actor at this mask value counts as visible (the instance cutoff).
fn murk_fog_visible(mask_value: f32, p: MurkFogParams) -> bool {
    return mask_value >= p.visibility_cutoff;
}
