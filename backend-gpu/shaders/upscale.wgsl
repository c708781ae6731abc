// Pass 9, upscale: bilinear from the internal grid to the output grid, with
// exact integer taps and Q16 weights, X then Y, edges clamped.
// Twin: backend-cpu/src/passes/upscale.rs.

@group(0) @binding(0) var<uniform> params: FrameParams;
@group(0) @binding(1) var<storage, read> composed: array<u32>;
@group(0) @binding(2) var<storage, read_write> upscaled: array<u32>;

struct Taps {
    i0: u32,
    i1: u32,
    f: u32,
}

fn taps(o: u32, scale: u32, n: u32) -> Taps {
    let num = 2 * i32(o) + 1 - i32(scale);
    let den = 2 * i32(scale);
    let i0 = div_floor(num, den);
    let frac = num - i0 * den;
    let f = u32(frac * 65536 / den);
    let last = i32(n) - 1;
    return Taps(u32(clamp(i0, 0, last)), u32(clamp(i0 + 1, 0, last)), f);
}

fn mix_mask(a: u32, b: u32, f: u32) -> u32 {
    return (a * (65536u - f) + b * f + 32768u) >> 16u;
}

@compute @workgroup_size(8, 8)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x >= params.out_width || id.y >= params.out_height) {
        return;
    }
    let o = id.y * params.out_width + id.x;
    if (params.lod_scale == 1u) {
        upscaled[o] = composed[o];
        return;
    }
    let w = params.width;
    let ty = taps(id.y, params.lod_scale, params.height);
    let tx = taps(id.x, params.lod_scale, w);
    let top = mix_mask(composed[ty.i0 * w + tx.i0], composed[ty.i0 * w + tx.i1], tx.f);
    let bottom = mix_mask(composed[ty.i1 * w + tx.i0], composed[ty.i1 * w + tx.i1], tx.f);
    upscaled[o] = mix_mask(top, bottom, ty.f);
}
