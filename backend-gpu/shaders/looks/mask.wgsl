// Shared by the surface and volume looks: the mask, bilinear, and how
// explored a world point is. Expects the module to declare `mask`
// (array<u32>, one 16-bit texel per entry), `mask_info` and `area`
// (MurkFogParams from the engine include).
// Twin: core/src/looks/mod.rs (MaskView::sample, MaskView::known_at).

struct MaskInfo {
    width: u32,
    height: u32,
    explored: f32,
    pad: u32,
}

fn mask_texel(x: f32, y: f32) -> f32 {
    let cx = u32(clamp(x, 0.0, f32(mask_info.width - 1u)));
    let cy = u32(clamp(y, 0.0, f32(mask_info.height - 1u)));
    return f32(mask[cy * mask_info.width + cx]) / 65535.0;
}

fn mask_sample(uv: vec2<f32>) -> f32 {
    let x = uv.x * f32(mask_info.width) - 0.5;
    let y = uv.y * f32(mask_info.height) - 0.5;
    let x0 = floor(x);
    let y0 = floor(y);
    let fx = x - x0;
    let fy = y - y0;
    let top = mask_texel(x0, y0) + (mask_texel(x0 + 1.0, y0) - mask_texel(x0, y0)) * fx;
    let bottom = mask_texel(x0, y0 + 1.0) + (mask_texel(x0 + 1.0, y0 + 1.0) - mask_texel(x0, y0 + 1.0)) * fx;
    return top + (bottom - top) * fy;
}

fn known_at(world: vec3<f32>) -> f32 {
    let uv = murk_fog_uv(world, area);
    if (area.enabled < 0.5 || uv.x < 0.0 || uv.x > 1.0 || uv.y < 0.0 || uv.y > 1.0) {
        return 1.0;
    }
    return clamp(mask_sample(uv) / mask_info.explored, 0.0, 1.0);
}
