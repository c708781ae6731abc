// The 3D fog surface: per grid vertex, the sheet's height and drop factor.
// Twin: backend-cpu/src/variants/surface.rs and
// core/src/looks/mod.rs (surface_elevation).

struct SurfaceParams {
    origin: vec2<f32>,
    spacing: vec2<f32>,
    cols: u32,
    rows: u32,
    time_s: f32,
    fog_level: f32,
    amplitude: f32,
    noise_scale: f32,
    speed: f32,
    sink: f32,
}

@group(0) @binding(0) var<uniform> surface: SurfaceParams;
@group(0) @binding(1) var<uniform> area: MurkFogParams;
@group(0) @binding(2) var<uniform> mask_info: MaskInfo;
@group(0) @binding(3) var<storage, read> mask: array<u32>;
@group(0) @binding(4) var<storage, read> ground: array<f32>;
@group(0) @binding(5) var<storage, read_write> vertices: array<vec2<f32>>;

fn elevation(x: f32, y: f32) -> f32 {
    let sx = x * surface.noise_scale;
    let sy = y * surface.noise_scale;
    let t = surface.time_s * surface.speed;
    let fbm = 0.65 * value_noise3(vec3<f32>(sx, sy, t)) + 0.35 * value_noise3(vec3<f32>(2.0 * sx + 17.0, 2.0 * sy + 5.0, 2.0 * t));
    return fbm + 0.2 * value_noise3(vec3<f32>(3.0 * sx + 41.0, 3.0 * sy + 23.0, 1.5 * t));
}

@compute @workgroup_size(8, 8)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x >= surface.cols || id.y >= surface.rows) {
        return;
    }
    let k = id.y * surface.cols + id.x;
    let x = surface.origin.x + f32(id.x) * surface.spacing.x;
    let y = surface.origin.y + f32(id.y) * surface.spacing.y;
    let g = ground[k];
    var known = 0.0;
    for (var b = -1; b <= 1; b = b + 1) {
        for (var a = -1; a <= 1; a = a + 1) {
            let w = (0.5 - 0.25 * f32(abs(a))) * (0.5 - 0.25 * f32(abs(b)));
            known = known + w * known_at(vec3<f32>(x + f32(a) * surface.spacing.x, y + f32(b) * surface.spacing.y, g));
        }
    }
    let drop = smooth01(known);
    let top = surface.fog_level + elevation(x, y) * surface.amplitude;
    let bottom = g - surface.sink;
    vertices[k] = vec2<f32>(top + (bottom - top) * drop, drop);
}
