// The three-state overlay's shading, after the blur and upscale passes ran
// on the mask (the same integer pipelines as the fog pipeline, so the
// smoothed mask is exact). Floats from here on; packs RGBA8 per pixel.
// Twin: backend-cpu/src/looks/overlay.rs (shade, breathing).

struct OverlayParams {
    width: u32,
    height: u32,
    upscale: u32,
    has_tint: u32,
    explored: f32,
    time_s: f32,
    haze_alpha: f32,
    breathing: f32,
    period_s: f32,
    mapped: f32,
    mapped_alpha: f32,
    pad0: f32,
    unexplored: vec4<f32>,
    haze: vec4<f32>,
    mapped_rgb: vec4<f32>,
}

@group(0) @binding(0) var<uniform> overlay: OverlayParams;
@group(0) @binding(1) var<storage, read> smooth_mask: array<u32>;
@group(0) @binding(2) var<storage, read> tint: array<u32>;
@group(0) @binding(3) var<storage, read_write> pixels: array<u32>;

const TAU: f32 = 6.2831853;

fn smoothstep_(e0: f32, e1: f32, x: f32) -> f32 {
    return smooth01((x - e0) / (e1 - e0));
}

// From the state below to the one above, squared across the boundary.
fn fade(a: vec4<f32>, b: vec4<f32>, t: f32) -> vec4<f32> {
    let c = clamp(t, 0.0, 1.0);
    let k = c * c;
    return a + (b - a) * k;
}

@compute @workgroup_size(8, 8)
fn shade(@builtin(global_invocation_id) id: vec3<u32>) {
    let s = overlay.upscale;
    let ow = overlay.width * s;
    let oh = overlay.height * s;
    if (id.x >= ow || id.y >= oh) {
        return;
    }
    let m = f32(smooth_mask[id.y * ow + id.x]) / 65535.0;
    var colour = overlay.haze.rgb;
    if (overlay.has_tint != 0u) {
        let t = tint[(id.y / s) * overlay.width + id.x / s];
        colour = vec3<f32>(f32(t & 0xffu), f32((t >> 8u) & 0xffu), f32((t >> 16u) & 0xffu));
    }
    let t = overlay.time_s;
    let phase = t * TAU / overlay.period_s;
    let drift = value_noise2(f32(id.x) * 0.03 / f32(s) + t * 0.11, f32(id.y) * 0.03 / f32(s) + t * 0.07);
    let noise = 0.5 + 0.5 * sin(phase + drift * TAU);

    let e = max(overlay.explored, 1e-4);
    let vis = clamp((m - e) / max(1.0 - e, 1e-4), 0.0, 1.0);
    let haze_alpha = overlay.haze_alpha + (noise * 2.0 - 1.0) * overlay.breathing;
    let clarity = smoothstep_(0.0, 0.85, vis);
    let lit = vec4<f32>(colour * (1.0 - clarity), haze_alpha * (1.0 - clarity));
    let dark = vec4<f32>(overlay.unexplored.rgb, 1.0);
    let map = vec4<f32>(overlay.mapped_rgb.rgb, overlay.mapped_alpha);
    var shaded: vec4<f32>;
    if (overlay.mapped <= 0.0 || m >= e) {
        shaded = fade(dark, lit, m / e);
    } else if (m < overlay.mapped) {
        shaded = fade(dark, map, m / overlay.mapped);
    } else {
        shaded = fade(map, lit, (m - overlay.mapped) / max(e - overlay.mapped, 1e-4));
    }
    let rgb = shaded.rgb;
    let alpha = shaded.a;
    let v = vec4<u32>(clamp(floor(vec4<f32>(rgb, alpha * 255.0) + 0.5), vec4<f32>(0.0), vec4<f32>(255.0)));
    pixels[id.y * ow + id.x] = v.x | (v.y << 8u) | (v.z << 16u) | (v.w << 24u);
}
