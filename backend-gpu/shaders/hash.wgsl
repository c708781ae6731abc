// The state hash of a 16-bit texture, as core/src/hash.rs defines it: one
// invocation per 16x16 leaf, then the root fold over the leaves in one
// invocation. WGSL has no 64-bit integers: a 64-bit value is a
// vec2<u32> (low word, high word), and products are built from 16-bit
// halves.

// Rust twin: `HashParams` in src/hash.rs.
struct HashParams {
    leaves: u32,
    width: u32,
    height: u32,
    slot: u32,
}

@group(0) @binding(0) var<uniform> params: HashParams;
@group(0) @binding(1) var<storage, read> src: array<u32>;
@group(0) @binding(2) var<storage, read_write> leaves: array<vec2<u32>>;
@group(0) @binding(3) var<storage, read_write> roots: array<vec2<u32>>;

const LEAF_SIDE: u32 = 16u;
const MULTIPLIER: vec2<u32> = vec2<u32>(0x7f4a7c15u, 0x9e3779b9u);
const FMIX_1: vec2<u32> = vec2<u32>(0xed558ccdu, 0xff51afd7u);
const FMIX_2: vec2<u32> = vec2<u32>(0x1a85ec53u, 0xc4ceb9feu);
const LEAF_SEED: vec2<u32> = vec2<u32>(0x6c656166u, 0x6d75726bu);
const ROOT_SEED: vec2<u32> = vec2<u32>(0x726f6f74u, 0x6d75726bu);

// The full 64-bit product of two 32-bit values.
fn wide_mul(a: u32, b: u32) -> vec2<u32> {
    let a0 = a & 0xffffu;
    let a1 = a >> 16u;
    let b0 = b & 0xffffu;
    let b1 = b >> 16u;
    let p00 = a0 * b0;
    let p01 = a0 * b1;
    let p10 = a1 * b0;
    let p11 = a1 * b1;
    let lo1 = p00 + (p01 << 16u);
    let lo = lo1 + (p10 << 16u);
    let carries = select(0u, 1u, lo1 < p00) + select(0u, 1u, lo < lo1);
    return vec2<u32>(lo, p11 + (p01 >> 16u) + (p10 >> 16u) + carries);
}

// a * b modulo 2^64.
fn mul64(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    let low = wide_mul(a.x, b.x);
    return vec2<u32>(low.x, low.y + a.x * b.y + a.y * b.x);
}

fn fold_step(a: vec2<u32>, w: vec2<u32>) -> vec2<u32> {
    let x = mul64(a ^ w, MULTIPLIER);
    // x >> 29
    return x ^ vec2<u32>((x.x >> 29u) | (x.y << 3u), x.y >> 29u);
}

// x ^ (x >> 33)
fn xor_shift_33(x: vec2<u32>) -> vec2<u32> {
    return vec2<u32>(x.x ^ (x.y >> 1u), x.y);
}

fn fmix(x: vec2<u32>) -> vec2<u32> {
    let a = mul64(xor_shift_33(x), FMIX_1);
    let b = mul64(xor_shift_33(a), FMIX_2);
    return xor_shift_33(b);
}

// Texel (x, y) as the CPU reads it back (16 bits), 0 past the texture.
fn texel(x: u32, y: u32) -> u32 {
    if (x < params.width && y < params.height) {
        return src[y * params.width + x] & 0xffffu;
    }
    return 0u;
}

@compute @workgroup_size(64)
fn leaf(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x >= params.leaves) {
        return;
    }
    let across = (params.width + LEAF_SIDE - 1u) / LEAF_SIDE;
    let x0 = (id.x % across) * LEAF_SIDE;
    let y0 = (id.x / across) * LEAF_SIDE;
    var a = LEAF_SEED;
    for (var y = y0; y < y0 + LEAF_SIDE; y += 1u) {
        for (var x = x0; x < x0 + LEAF_SIDE; x += 4u) {
            let w = vec2<u32>(texel(x, y) | (texel(x + 1u, y) << 16u), texel(x + 2u, y) | (texel(x + 3u, y) << 16u));
            a = fold_step(a, w);
        }
    }
    leaves[id.x] = fmix(a);
}

@compute @workgroup_size(1)
fn root() {
    let count = params.leaves;
    var a = fold_step(ROOT_SEED, vec2<u32>(params.width, params.height));
    for (var b = 0u; b < count; b += 1u) {
        a = fold_step(a, leaves[b]);
    }
    roots[params.slot] = fmix(a);
}
