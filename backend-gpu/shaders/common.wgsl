// Shared by every pass (prepended to each pass's module).
//
// The structs mirror core/src/frame.rs one for one (SourceTexel, CircleTexel,
// PolygonTexel, FrameParams); backend-gpu/tests/layout.rs checks their sizes
// and offsets against the Rust definitions. All arithmetic is integer and
// stays inside 32 bits by the bounds of docs/determinism.md.

struct SourceTexel {
    x: i32,
    y: i32,
    radius: i32,
    inner_radius: i32,
    eye: i32,
    cone_x: i32,
    cone_y: i32,
    cone_cos: i32,
    strength: u32,
    flags: u32,
}

struct CircleTexel {
    x: i32,
    y: i32,
    radius: i32,
    height: i32,
}

struct PolygonTexel {
    first: u32,
    count: u32,
    height: i32,
    pad: u32,
}

struct FrameParams {
    width: u32,
    height: u32,
    out_width: u32,
    out_height: u32,
    tile_size: u32,
    tiles_x: u32,
    method: u32,
    target_height: i32,
    df_width: u32,
    df_height: u32,
    df_scale: u32,
    soft_shadow_k_q8: u32,
    df_jitter: u32,
    mip_levels: u32,
    blur_radius: u32,
    forget_step: u32,
    fade_in_step: u32,
    relax_step: u32,
    explored_value: u32,
    show_memory_alpha: u32,
    freeze_memory: u32,
    blend_t: u32,
    has_capture: u32,
    lod_scale: u32,
    reveal_walls: u32,
    mapped_value: u32,
}


const MASK_MAX: u32 = 65535u;
const HEIGHT_FLOOR: i32 = 0;
const CAPTURE_EMPTY: i32 = -2147483647 - 1;
const SOURCE_HAS_CONE: u32 = 1u;
const SOURCE_ANTI: u32 = 2u;
const SOURCE_SEE_THROUGH: u32 = 4u;
const FAR: u32 = 4294967295u;

// Largest r with r * r <= v (bit by bit, as fixed::isqrt).
fn isqrt(v: u32) -> u32 {
    var rem = v;
    var root = 0u;
    var bit = 1u << 30u;
    while (bit > rem) {
        bit = bit >> 2u;
    }
    while (bit != 0u) {
        if (rem >= root + bit) {
            rem = rem - (root + bit);
            root = (root >> 1u) + bit;
        } else {
            root = root >> 1u;
        }
        bit = bit >> 2u;
    }
    return root;
}

// a * b / 65535, rounded (fixed::mask_mul).
fn mask_mul(a: u32, b: u32) -> u32 {
    return (a * b + 32767u) / 65535u;
}

// a + (b - a) * t / 65536, toward a (fixed::lerp_mask).
fn lerp_mask(a: u32, b: u32, t: u32) -> u32 {
    if (b >= a) {
        return a + (((b - a) * t) >> 16u);
    }
    return a - (((a - b) * t) >> 16u);
}

// fixed::hash2.
fn hash2(x: i32, y: i32) -> u32 {
    var h = (bitcast<u32>(x) * 0x8da6b343u) ^ (bitcast<u32>(y) * 0xd8163841u);
    h = h ^ (h >> 15u);
    h = h * 0x2c1b3c6du;
    h = h ^ (h >> 12u);
    h = h * 0x297a2d39u;
    h = h ^ (h >> 15u);
    return h;
}

// Floor division (Rust's div_euclid for a positive divisor).
fn div_floor(a: i32, b: i32) -> i32 {
    let q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) {
        return q - 1;
    }
    return q;
}

// Q3 coordinate of the centre of texel i.
fn centre_q(i: i32) -> i32 {
    return i * 8 + 4;
}
