// Pass 5, visibility: per texel, the strongest reveal of its tile's sources,
// scaled down by the strongest anti-vision source. Every step integer; the
// rays are marched by `rays.wgsl`; twin: backend-cpu/src/passes/visibility/,
// line for line.
// Two entry points: `main` paints reveal and anti-vision per texel into
// `painted` (reveal in the low 16 bits, anti-vision in the high 16);
// `finish` lights covered texels from their open neighbours (reveal_walls)
// and applies the anti-vision, reading only `painted`.

@group(0) @binding(1) var<storage, read> sources: array<SourceTexel>;
@group(0) @binding(2) var<storage, read> bin_offsets: array<u32>;
@group(0) @binding(3) var<storage, read> bin_indices: array<u32>;
@group(0) @binding(9) var<storage, read_write> visibility: array<u32>;
@group(0) @binding(10) var<storage, read_write> painted: array<u32>;

fn falloff_value(s: SourceTexel, x: u32, y: u32) -> u32 {
    let dx = centre_q(i32(x)) - s.x;
    let dy = centre_q(i32(y)) - s.y;
    let r = s.radius;
    if (abs(dx) >= r || abs(dy) >= r) {
        return 0u;
    }
    let d2 = u32(dx * dx) + u32(dy * dy);
    if (d2 >= u32(r * r)) {
        return 0u;
    }
    if ((s.flags & SOURCE_HAS_CONE) != 0u && d2 > 0u) {
        let d = i32(isqrt(d2));
        if (dx * s.cone_x + dy * s.cone_y < s.cone_cos * d) {
            return 0u;
        }
    }
    let inner = s.inner_radius;
    var v = MASK_MAX;
    if (d2 > u32(inner * inner)) {
        let d = i32(isqrt(d2));
        v = u32(r - d) * 65535u / u32(r - inner);
    }
    return mask_mul(v, s.strength);
}

fn source_value(s: SourceTexel, x: u32, y: u32) -> u32 {
    let v = falloff_value(s, x, y);
    // A source that sees through occlusion reveals by its falloff alone.
    if (v == 0u || (s.flags & SOURCE_SEE_THROUGH) != 0u) {
        return v;
    }
    let sx = s.x >> 3u;
    let sy = s.y >> 3u;
    let tx = i32(x);
    let ty = i32(y);
    if (sx == tx && sy == ty) {
        return v;
    }
    let target_h = height_at(tx, ty) + params.target_height;
    let r = Ray(sx, sy, tx, ty, max(abs(tx - sx), abs(ty - sy)), s.eye, target_h - s.eye);
    let light = march(r);
    return mask_mul(v, light);
}

@compute @workgroup_size(8, 8)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x >= params.width || id.y >= params.height) {
        return;
    }
    let t = (id.y / params.tile_size) * params.tiles_x + id.x / params.tile_size;
    var reveal = 0u;
    var conceal = 0u;
    for (var k = bin_offsets[t]; k < bin_offsets[t + 1u]; k = k + 1u) {
        let s = sources[bin_indices[k]];
        if ((s.flags & SOURCE_ANTI) != 0u) {
            conceal = max(conceal, falloff_value(s, id.x, id.y));
        } else if (reveal < MASK_MAX) {
            reveal = max(reveal, source_value(s, id.x, id.y));
        }
    }
    painted[id.y * params.width + id.x] = reveal | (conceal << 16u);
}

// A covered texel takes the strongest reveal of its open 8-neighbours
// (wall_reveal in the CPU twin); then the anti-vision scales it down.
@compute @workgroup_size(8, 8)
fn finish(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x >= params.width || id.y >= params.height) {
        return;
    }
    let x = i32(id.x);
    let y = i32(id.y);
    let own = painted[id.y * params.width + id.x];
    var reveal = own & 0xffffu;
    if (params.reveal_walls != 0u && covered(x, y)) {
        for (var ny = y - 1; ny <= y + 1; ny = ny + 1) {
            for (var nx = x - 1; nx <= x + 1; nx = nx + 1) {
                if (inside(nx, ny) && !covered(nx, ny)) {
                    reveal = max(reveal, painted[u32(ny) * params.width + u32(nx)] & 0xffffu);
                }
            }
        }
    }
    visibility[id.y * params.width + id.x] = mask_mul(reveal, MASK_MAX - (own >> 16u));
}
