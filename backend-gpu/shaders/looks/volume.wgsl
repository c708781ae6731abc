// Volumetric ground fog: the half-resolution march (`march`) and the
// depth-aware upsample (`upsample`).
// Twin: backend-cpu/src/variants/volume.rs.

struct VolumeParams {
    eye: vec4<f32>,
    forward: vec4<f32>,
    right: vec4<f32>,
    up: vec4<f32>,
    light_dir: vec4<f32>,
    light_colour: vec4<f32>,
    ambient_colour: vec4<f32>,
    density: f32,
    falloff: f32,
    anisotropy: f32,
    range: f32,
    wind: vec2<f32>,
    noise_frequency: f32,
    time_s: f32,
    width: u32,
    height: u32,
    half_width: u32,
    half_height: u32,
    steps: u32,
    frame: u32,
    has_history: u32,
    temporal_blend: f32,
}

@group(0) @binding(0) var<uniform> volume: VolumeParams;
@group(0) @binding(1) var<uniform> area: MurkFogParams;
@group(0) @binding(2) var<uniform> mask_info: MaskInfo;
@group(0) @binding(3) var<storage, read> mask: array<u32>;
@group(0) @binding(4) var<storage, read> depth: array<f32>;
@group(0) @binding(5) var<storage, read> history: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read_write> half_frame: array<vec4<f32>>;
@group(0) @binding(7) var<storage, read_write> full_frame: array<vec4<f32>>;

const SKY_DEPTH: f32 = 1.0e5;

fn block_depth(x: u32, y: u32) -> f32 {
    var d = SKY_DEPTH;
    for (var k = 0u; k < 4u; k = k + 1u) {
        let px = 2u * x + (k & 1u);
        let py = 2u * y + (k >> 1u);
        if (px < volume.width && py < volume.height) {
            d = min(d, depth[py * volume.width + px]);
        }
    }
    return d;
}

// volume.rs `open`: no fog once three quarters explored.
fn open_at(p: vec3<f32>) -> f32 {
    return 1.0 - smooth01(known_at(p) / 0.75);
}

fn density_at(p: vec3<f32>) -> f32 {
    let q = vec3<f32>((p.x - volume.wind.x * volume.time_s) * volume.noise_frequency, (p.y - volume.wind.y * volume.time_s) * volume.noise_frequency, p.z * volume.noise_frequency);
    let noise = value_noise3(q);
    return volume.density * exp(-volume.falloff * max(p.z, 0.0)) * (0.35 + 0.65 * noise) * open_at(p);
}

fn henyey_greenstein(cos_theta: f32, g: f32) -> f32 {
    let d = 1.0 + g * g - 2.0 * g * cos_theta;
    return (1.0 - g * g) / max(d * sqrt(d), 1e-6);
}

fn height_fog_depth(z0: f32, dir_z: f32, len: f32) -> f32 {
    let k = volume.falloff * dir_z;
    if (abs(k) < 1e-5) {
        return volume.density * exp(-volume.falloff * z0) * len;
    }
    let z1 = z0 + dir_z * len;
    return volume.density * (exp(-volume.falloff * z0) - exp(-volume.falloff * z1)) / k;
}

@compute @workgroup_size(8, 8)
fn march(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x >= volume.half_width || id.y >= volume.half_height) {
        return;
    }
    let nx = 2.0 * f32(2u * id.x + 1u) / f32(volume.width) - 1.0;
    let ny = 1.0 - 2.0 * f32(2u * id.y + 1u) / f32(volume.height);
    let dir = normalize(volume.forward.xyz + nx * volume.right.xyz + ny * volume.up.xyz);
    let ray_len = block_depth(id.x, id.y);
    let phase = henyey_greenstein(dot(dir, volume.light_dir.xyz), volume.anisotropy);
    let light = volume.light_colour.rgb * phase + volume.ambient_colour.rgb;
    let eye = volume.eye.xyz;
    // The march span: from where the ray enters the bank, for the range.
    let top = 4.6 / volume.falloff;
    var start = 0.0;
    if (eye.z > top) {
        if (dir.z < 0.0) {
            start = min((eye.z - top) / -dir.z, ray_len);
        } else {
            start = ray_len;
        }
    }
    var end = start;
    if (volume.steps > 0u) {
        end = min(ray_len, start + volume.range);
    }
    var trans = 1.0;
    var scatter = vec3<f32>(0.0);
    let open_start = open_at(eye + dir * start);
    if (start > 0.0 && open_start > 0.0) {
        let st = exp(-(open_start * 0.675 * height_fog_depth(max(eye.z, 0.0), dir.z, start)));
        scatter = scatter + trans * (1.0 - st) * light;
        trans = trans * st;
    }
    if (end > start) {
        let dt = (end - start) / f32(volume.steps);
        let jitter = lattice(hash3(i32(id.x), i32(id.y), i32(volume.frame)));
        for (var i = 0u; i < volume.steps; i = i + 1u) {
            let p = eye + dir * (start + (f32(i) + jitter) * dt);
            let st = exp(-(density_at(p) * dt));
            scatter = scatter + trans * (1.0 - st) * light;
            trans = trans * st;
        }
    }
    let open_end = open_at(eye + dir * ray_len);
    if (ray_len > end && open_end > 0.0) {
        let st = exp(-(open_end * 0.675 * height_fog_depth(max(eye.z + dir.z * end, 0.0), dir.z, ray_len - end)));
        scatter = scatter + trans * (1.0 - st) * light;
        trans = trans * st;
    }
    var cur = vec4<f32>(scatter, trans);
    let k = id.y * volume.half_width + id.x;
    if (volume.has_history != 0u) {
        let old = history[k];
        cur = old + (cur - old) * volume.temporal_blend;
    }
    half_frame[k] = cur;
}

@compute @workgroup_size(8, 8)
fn upsample(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x >= volume.width || id.y >= volume.height) {
        return;
    }
    let d = min(depth[id.y * volume.width + id.x], SKY_DEPTH);
    let hx = (f32(id.x) + 0.5) * 0.5 - 0.5;
    let hy = (f32(id.y) + 0.5) * 0.5 - 0.5;
    let x0 = floor(hx);
    let y0 = floor(hy);
    let fx = hx - x0;
    let fy = hy - y0;
    var acc = vec4<f32>(0.0);
    var total = 0.0;
    for (var k = 0u; k < 4u; k = k + 1u) {
        let dx = i32(k & 1u);
        let dy = i32(k >> 1u);
        var wb = 1.0;
        if (dx == 0) { wb = wb * (1.0 - fx); } else { wb = wb * fx; }
        if (dy == 0) { wb = wb * (1.0 - fy); } else { wb = wb * fy; }
        let tx = u32(clamp(i32(x0) + dx, 0, i32(volume.half_width) - 1));
        let ty = u32(clamp(i32(y0) + dy, 0, i32(volume.half_height) - 1));
        let dh = block_depth(tx, ty);
        let w = wb / (1.0e-3 + abs(d - dh) / max(d, 1.0e-3));
        acc = acc + w * half_frame[ty * volume.half_width + tx];
        total = total + w;
    }
    full_frame[id.y * volume.width + id.x] = acc / max(total, 1.0e-12);
}
