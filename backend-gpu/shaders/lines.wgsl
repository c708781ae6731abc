// Sight lines: per line, the light the ray from a looker's texel (its eye
// at `eye`) to the ground of a target texel lets through, marched by
// `rays.wgsl` exactly as the visibility pass marches a source's ray. Twin:
// `line_light` in backend-cpu/src/passes/visibility/source.rs.

// Rust twin: `LineRay` in src/lines.rs.
struct LineRay {
    sx: i32,
    sy: i32,
    tx: i32,
    ty: i32,
    eye: i32,
    pad0: i32,
    pad1: i32,
    pad2: i32,
}

@group(0) @binding(1) var<storage, read> lines: array<LineRay>;
@group(0) @binding(2) var<storage, read_write> light: array<u32>;
// x: how many lines.
@group(0) @binding(3) var<uniform> line_count: vec4<u32>;

// Rows of at most 32768 workgroups (a dispatch has at most 65535 a side).
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let k = id.y * groups.x * 64u + id.x;
    if (k >= line_count.x) {
        return;
    }
    let l = lines[k];
    if (l.sx == l.tx && l.sy == l.ty) {
        light[k] = MASK_MAX;
        return;
    }
    let target_h = height_at(l.tx, l.ty) + params.target_height;
    light[k] = march(Ray(l.sx, l.sy, l.tx, l.ty, max(abs(l.tx - l.sx), abs(l.ty - l.sy)), l.eye, target_h - l.eye));
}
