// Step 5 of the visibility pass, the ray over the occlusion, by each ray
// method (Step Scan, DDA with the corner rule, HDDA, Distance Field): what
// the visibility pass (`visibility.wgsl`) and the sight lines
// (`lines.wgsl`) both march. Every step integer; twin:
// backend-cpu/src/passes/visibility/march.rs, line for line.

@group(0) @binding(0) var<uniform> params: FrameParams;
@group(0) @binding(4) var<storage, read> coverage: array<u32>;
@group(0) @binding(5) var<storage, read> height: array<i32>;
@group(0) @binding(6) var<storage, read> mips: array<u32>;
@group(0) @binding(7) var<storage, read> mip_table: array<vec4<u32>>;
@group(0) @binding(8) var<storage, read> distance_field: array<u32>;

struct Ray {
    sx: i32,
    sy: i32,
    tx: i32,
    ty: i32,
    n: i32,
    eye: i32,
    rise: i32,
}

fn inside(x: i32, y: i32) -> bool {
    return x >= 0 && y >= 0 && u32(x) < params.width && u32(y) < params.height;
}

fn covered(x: i32, y: i32) -> bool {
    return inside(x, y) && coverage[u32(y) * params.width + u32(x)] != 0u;
}

fn height_at(x: i32, y: i32) -> i32 {
    if (inside(x, y)) {
        return height[u32(y) * params.width + u32(x)];
    }
    return HEIGHT_FLOOR;
}

fn blocks(r: Ray, x: i32, y: i32) -> bool {
    if (!covered(x, y)) {
        return false;
    }
    let k = max(abs(x - r.sx), abs(y - r.sy));
    return (height_at(x, y) - r.eye) * r.n > r.rise * k;
}

// Level `level` (>= 1) block holding texel (x, y) has no coverage.
fn mip_empty(level: u32, x: i32, y: i32) -> bool {
    let t = mip_table[level];
    let bx = x >> level;
    let by = y >> level;
    return bx < 0 || by < 0 || u32(bx) >= t.y || u32(by) >= t.z || mips[t.x + u32(by) * t.y + u32(bx)] == 0u;
}

fn step_scan(r: Ray) -> bool {
    let ddx = r.tx - r.sx;
    let ddy = r.ty - r.sy;
    let nx = abs(ddx);
    let ny = abs(ddy);
    let n = max(nx, ny);
    for (var k = 1; k < n; k = k + 1) {
        var x: i32;
        var y: i32;
        if (nx >= ny) {
            x = r.sx + sign(ddx) * k;
            y = r.sy + sign(ddy) * ((2 * k * ny + n) / (2 * n));
        } else {
            x = r.sx + sign(ddx) * ((2 * k * nx + n) / (2 * n));
            y = r.sy + sign(ddy) * k;
        }
        if (blocks(r, x, y)) {
            return false;
        }
    }
    return true;
}

// DDA state for the hierarchical skip: the empty block we are in.
var<private> empty_level: u32;
var<private> empty_bx: i32;
var<private> empty_by: i32;

fn check(r: Ray, x: i32, y: i32, hierarchical: bool) -> bool {
    if (hierarchical) {
        if (empty_level > 0u && (x >> empty_level) == empty_bx && (y >> empty_level) == empty_by) {
            return false;
        }
        empty_level = 0u;
        var level = 0u;
        while (level < params.mip_levels && mip_empty(level + 1u, x, y)) {
            level = level + 1u;
        }
        if (level > 0u) {
            empty_level = level;
            empty_bx = x >> level;
            empty_by = y >> level;
            return false;
        }
    }
    return blocks(r, x, y);
}

fn dda(r: Ray, hierarchical: bool) -> bool {
    let ddx = r.tx - r.sx;
    let ddy = r.ty - r.sy;
    let nx = abs(ddx);
    let ny = abs(ddy);
    let stx = sign(ddx);
    let sty = sign(ddy);
    var x = r.sx;
    var y = r.sy;
    var ix = 0;
    var iy = 0;
    empty_level = 0u;
    loop {
        let a = (2 * ix + 1) * ny;
        let b = (2 * iy + 1) * nx;
        if (a == b) {
            let side_x = check(r, x + stx, y, hierarchical);
            let side_y = check(r, x, y + sty, hierarchical);
            if (side_x && side_y) {
                return false;
            }
            x = x + stx;
            y = y + sty;
            ix = ix + 1;
            iy = iy + 1;
        } else if (a < b) {
            x = x + stx;
            ix = ix + 1;
        } else {
            y = y + sty;
            iy = iy + 1;
        }
        if (ix == nx && iy == ny) {
            return true;
        }
        if (check(r, x, y, hierarchical)) {
            return false;
        }
    }
    // Not reached: the loop returns when it arrives at the target.
    return true;
}

fn distance_field_march(r: Ray) -> u32 {
    let scale = i32(params.df_scale);
    let dxq = (r.tx - r.sx) * 8;
    let dyq = (r.ty - r.sy) * 8;
    let len = i32(isqrt(u32(dxq * dxq) + u32(dyq * dyq)));
    let ox = r.sx * 8 + 4;
    let oy = r.sy * 8 + 4;
    var travelled = 0;
    var light = 65535;
    let k_q8 = i32(params.soft_shadow_k_q8);
    let jitter = i32(params.df_jitter);
    while (travelled < len) {
        let px = ox + dxq * travelled / len;
        let py = oy + dyq * travelled / len;
        let cx = px >> 3u;
        let cy = py >> 3u;
        if (cx == r.tx && cy == r.ty) {
            break;
        }
        let gx = div_floor(cx, scale);
        let gy = div_floor(cy, scale);
        var d2 = FAR;
        if (gx >= 0 && gy >= 0 && u32(gx) < params.df_width && u32(gy) < params.df_height) {
            d2 = distance_field[u32(gy) * params.df_width + u32(gx)];
        }
        var step: i32;
        if (d2 == 0u && !(cx == r.sx && cy == r.sy)) {
            if (blocks(r, cx, cy)) {
                return 0u;
            }
            step = 4;
        } else {
            let dist = i32(isqrt(min(d2, 1073741824u))) * scale * 8;
            step = max(dist - 3 * scale * 4, 4);
            if (k_q8 > 0 && travelled > 0 && d2 > 0u) {
                let ratio = min(k_q8 * min(dist, 65536) / travelled, 256);
                light = min(light, ratio * 65535 / 256);
            }
        }
        if (jitter > 0) {
            let h = i32(hash2(cx, cy) & 0xffffu);
            let factor = 65536 - jitter + ((jitter * h) >> 15u);
            step = max(((min(step, 4 * len) * (factor >> 4u)) >> 12u), 1);
        }
        travelled = travelled + step;
    }
    return u32(light);
}

// The light ray `r` lets through by the profile's method, 0..=MASK_MAX.
fn march(r: Ray) -> u32 {
    switch (params.method) {
        case 1u: {
            return select(0u, MASK_MAX, step_scan(r));
        }
        case 2u: {
            return select(0u, MASK_MAX, dda(r, false));
        }
        case 3u: {
            return select(0u, MASK_MAX, dda(r, true));
        }
        case 4u: {
            return distance_field_march(r);
        }
        default: {
            return MASK_MAX;
        }
    }
}
