// Pass 9, upscale: bilinear from the internal grid to the output grid, with
// exact integer taps and weights in units of 1 / 2s, the four taps mixed in
// one sum rounded once (so that the upscale commutes with quarter turns and
// mirrors), edges clamped. Twin: backend-cpu/src/passes/upscale.rs.

@group(0) @binding(0) var<uniform> params: FrameParams;
@group(0) @binding(1) var<storage, read> compose: array<u32>;
@group(0) @binding(2) var<storage, read_write> upscale: array<u32>;

struct Taps {
    i0: u32,
    i1: u32,
    f: u32,
}

fn taps(o: u32, scale: u32, n: u32) -> Taps {
    let num = 2 * i32(o) + 1 - i32(scale);
    let den = 2 * i32(scale);
    let i0 = div_floor(num, den);
    let f = u32(num - i0 * den);
    let last = i32(n) - 1;
    return Taps(u32(clamp(i0, 0, last)), u32(clamp(i0 + 1, 0, last)), f);
}

@compute @workgroup_size(8, 8)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x >= params.out_width || id.y >= params.out_height) {
        return;
    }
    let o = id.y * params.out_width + id.x;
    if (params.lod_scale == 1u) {
        upscale[o] = compose[o];
        return;
    }
    let w = params.width;
    let den = 2u * params.lod_scale;
    let ty = taps(id.y, params.lod_scale, params.height);
    let tx = taps(id.x, params.lod_scale, w);
    // At most 65535 * 32 * 32 < 2^26.
    let top = compose[ty.i0 * w + tx.i0] * (den - tx.f) + compose[ty.i0 * w + tx.i1] * tx.f;
    let bottom = compose[ty.i1 * w + tx.i0] * (den - tx.f) + compose[ty.i1 * w + tx.i1] * tx.f;
    let all = den * den;
    upscale[o] = (top * (den - ty.f) + bottom * ty.f + all / 2u) / all;
}
