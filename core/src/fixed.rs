//! Fixed-point formats shared by every backend.
//!
//! Everything that feeds gameplay is integer. Core projects world inputs into
//! these formats once (see [`crate::transform`]); backends only ever see the
//! integers. The bounds below keep every product of the visibility and
//! rasterize passes inside 32 bits, so a WGSL twin (no 64-bit integers) gets
//! the same bytes as the CPU. `docs/determinism.md` explains each bound.

/// Fractional bits of texel-space positions and lengths (Q3: 1/8 texel).
pub const TEXEL_FRAC_BITS: u32 = 3;
/// One texel in the texel-space fixed-point format.
pub const TEXEL_ONE: i32 = 1 << TEXEL_FRAC_BITS;
/// Largest mask value: "visible now".
pub const MASK_MAX: u16 = u16::MAX;
/// Largest resolution (texels along either axis) of an instance.
pub const MAX_RESOLUTION: u32 = 4096;
/// Largest vision radius in internal texels.
pub const MAX_RADIUS_TEXELS: i32 = 4095;
/// Height units per slab: heights are measured from the bottom of the
/// instance's area box in units of `extents.z / HEIGHT_UNITS_PER_SLAB`.
pub const HEIGHT_UNITS_PER_SLAB: f64 = 256.0;
/// Largest magnitude of a quantized height (256 slabs above or below).
pub const HEIGHT_LIMIT: i32 = (1 << 16) - 1;
/// Height stored for a wall (a blocker with no height): above every eye.
pub const HEIGHT_WALL: i32 = 1 << 16;
/// Height of an uncovered texel: the bottom of the area box.
pub const HEIGHT_FLOOR: i32 = 0;
/// Fractional bits of unit vectors (cone directions, cosines): Q14.
pub const UNIT_FRAC_BITS: u32 = 14;
/// One in the unit-vector format.
pub const UNIT_ONE: i32 = 1 << UNIT_FRAC_BITS;

/// Integer square root: the largest `r` with `r * r <= v`.
///
/// That value is unique, so the WGSL twin (bit by bit, in 32-bit integers)
/// gives the same answer as this double-precision guess and its correction.
pub fn isqrt(v: u32) -> u32 {
    // A double holds every u32 exactly and its square root is correctly
    // rounded, so the guess is off by at most one; the checks make it the floor.
    let mut r = f64::from(v).sqrt() as u64;
    let v = u64::from(v);
    if r * r > v {
        r -= 1;
    } else if (r + 1) * (r + 1) <= v {
        r += 1;
    }
    r as u32
}

/// Converts a fraction in `0..=1` to the mask scale `0..=65535`, rounding to nearest.
pub fn unit_to_mask(x: f64) -> u16 {
    (x * f64::from(MASK_MAX)).round() as u16
}

/// `a * b / 65535`, rounded to nearest, for two mask values.
pub fn mask_mul(a: u16, b: u16) -> u16 {
    let p = u32::from(a) * u32::from(b) + 32767;
    (p / 65535) as u16
}

/// Linear interpolation `a + (b - a) * t / 65536` with `t` in `0..=65536`.
///
/// Rounds toward `a`, symmetrically for rising and falling values, so the
/// blend never overshoots and stays inside 32 bits.
pub fn lerp_mask(a: u16, b: u16, t: u32) -> u16 {
    debug_assert!(t <= 65536, "blend factor {t} above 1.0");
    if b >= a {
        a + ((u32::from(b - a) * t) >> 16) as u16
    } else {
        a - ((u32::from(a - b) * t) >> 16) as u16
    }
}

/// `v.floor()` computed by truncation, so a hot loop calls no library
/// `floor` where the target has no rounding instruction (x86-64 before
/// SSE4.1). Below 2^52 a truncation to `i64` is exact; above, every `f64`
/// is already whole (and infinities and NaN pass through). Only the sign of
/// a zero can differ from `floor` (`-0.0` gives `0.0`).
pub fn floor_exact(v: f64) -> f64 {
    if v.abs() < 4_503_599_627_370_496.0 {
        let t = v as i64 as f64;
        if t > v {
            t - 1.0
        } else {
            t
        }
    } else {
        v
    }
}

/// A small integer hash (for deterministic jitter), the same on every backend.
pub fn hash2(x: i32, y: i32) -> u32 {
    let mut h = (x as u32).wrapping_mul(0x8da6_b343) ^ (y as u32).wrapping_mul(0xd816_3841);
    h ^= h >> 15;
    h = h.wrapping_mul(0x2c1b_3c6d);
    h ^= h >> 12;
    h = h.wrapping_mul(0x297a_2d39);
    h ^= h >> 15;
    h
}

/// FNV-1a, 64-bit: the state hash used for lockstep checks and goldens.
#[derive(Clone, Copy, Debug)]
pub struct Fnv64(u64);

impl Default for Fnv64 {
    fn default() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv64 {
    /// Feeds bytes.
    pub fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    /// Feeds a slice of `u16` as little-endian bytes.
    pub fn write_u16s(&mut self, values: &[u16]) {
        for v in values {
            self.write(&v.to_le_bytes());
        }
    }
    /// The hash so far.
    pub fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn isqrt_is_floor_sqrt() {
        let squares = (60_000u32..=65_535).flat_map(|k| [k * k - 1, k * k, k * k + 1]);
        for v in (0..200_000u32).chain([u32::MAX, u32::MAX - 1, 1 << 30, (1 << 30) - 1]).chain(squares) {
            let r = isqrt(v);
            assert!(u64::from(r) * u64::from(r) <= u64::from(v), "{v}");
            assert!(u64::from(r + 1) * u64::from(r + 1) > u64::from(v), "{v}");
        }
    }

    #[test]
    fn lerp_endpoints_and_symmetry() {
        assert_eq!(lerp_mask(100, 60000, 0), 100);
        assert_eq!(lerp_mask(100, 60000, 65536), 60000);
        assert_eq!(lerp_mask(60000, 100, 65536), 100);
        assert_eq!(lerp_mask(0, 65535, 32768), 32767);
        assert_eq!(lerp_mask(65535, 0, 32768), 65535 - 32767);
    }

    #[test]
    fn floor_exact_is_floor() {
        let mut values = vec![
            0.0,
            -0.0,
            0.5,
            -0.5,
            1.0,
            -1.0,
            2.999_999,
            -2.000_001,
            1e-300,
            -1e-300,
            f64::MAX,
            f64::MIN,
            4_503_599_627_370_495.5,
            -4_503_599_627_370_495.5,
        ];
        values.extend([f64::INFINITY, f64::NEG_INFINITY, 9.007_199_254_740_993e15, -1e18]);
        for k in 0..20_000 {
            let x = f64::from(hash2(k, 5)) / f64::from(u32::MAX) * 2e6 - 1e6;
            values.extend([x, x / 1e3, x * 1e9, x.floor(), x.floor() - f64::EPSILON]);
        }
        for v in values {
            assert_eq!(floor_exact(v), v.floor(), "{v}");
        }
        assert!(floor_exact(f64::NAN).is_nan());
    }

    #[test]
    fn mask_mul_identity() {
        for a in [0u16, 1, 2, 1000, 32768, 65534, 65535] {
            assert_eq!(mask_mul(a, 65535), a);
            assert_eq!(mask_mul(a, 0), 0);
        }
    }
}
