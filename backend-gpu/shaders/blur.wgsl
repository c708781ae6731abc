// Pass 6, blur: one axis of a Gaussian step per dispatch, weights summing to
// 256, edges clamped. axis.along_y = 0: along X, the unrounded sum(w * v)
// (below 2^24) into the scratch; 1: along Y over the scratch,
// (sum(w * s) + 32768) >> 16 (below 2^32). No rounding between the axes, so
// the blur commutes with transposition. Twin: backend-cpu/src/passes/blur.rs.

// Which axis a dispatch blurs (Rust twin: `BlurAxis` in src/passes/blur.rs).
struct BlurAxis {
    along_y: u32,
    pad0: u32,
    pad1: u32,
    pad2: u32,
}

@group(0) @binding(0) var<uniform> params: FrameParams;
@group(0) @binding(1) var<uniform> axis: BlurAxis;
@group(0) @binding(2) var<storage, read> weights: array<u32>;
@group(0) @binding(3) var<storage, read> src: array<u32>;
@group(0) @binding(4) var<storage, read_write> dst: array<u32>;

@compute @workgroup_size(8, 8)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let w = i32(params.width);
    let h = i32(params.height);
    if (id.x >= params.width || id.y >= params.height) {
        return;
    }
    let r = i32(params.blur_radius);
    var acc = select(32768u, 0u, axis.along_y == 0u);
    for (var j = 0; j <= 2 * r; j = j + 1) {
        var sx = i32(id.x);
        var sy = i32(id.y);
        if (axis.along_y == 0u) {
            sx = clamp(sx + j - r, 0, w - 1);
        } else {
            sy = clamp(sy + j - r, 0, h - 1);
        }
        acc = acc + weights[j] * src[u32(sy) * params.width + u32(sx)];
    }
    dst[id.y * params.width + id.x] = select(acc >> 16u, acc, axis.along_y == 0u);
}
