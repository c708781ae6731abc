//! Smooth steps and value noise: the shared shaping functions of the looks.

use murk_core::fixed::hash2;

/// `smoothstep` as in shading languages.
pub fn smoothstep(e0: f32, e1: f32, x: f32) -> f32 {
    let t = ((x - e0) / (e1 - e0)).clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

/// The lattice hash of 3D value noise (the 2D [`hash2`] with Z folded into Y).
pub fn hash3(x: i32, y: i32, z: i32) -> u32 {
    hash2(x, ((y as u32) ^ (z as u32).wrapping_mul(0x9e37_79b9)) as i32)
}

fn lattice(h: u32) -> f32 {
    (h & 0xffff) as f32 / 65535.0
}

/// Smooth value noise in `0..1` on the integer lattice (2D).
pub fn value_noise2(x: f32, y: f32) -> f32 {
    let (x0, y0) = (x.floor(), y.floor());
    let (sx, sy) = (smoothstep(0.0, 1.0, x - x0), smoothstep(0.0, 1.0, y - y0));
    let (ix, iy) = (x0 as i32, y0 as i32);
    let h = |dx: i32, dy: i32| lattice(hash2(ix.wrapping_add(dx), iy.wrapping_add(dy)));
    let top = h(0, 0) + (h(1, 0) - h(0, 0)) * sx;
    let bottom = h(0, 1) + (h(1, 1) - h(0, 1)) * sx;
    top + (bottom - top) * sy
}

/// Smooth value noise in `0..1` on the integer lattice (3D), one octave.
pub fn value_noise3(p: [f32; 3]) -> f32 {
    let f = p.map(f32::floor);
    let s: [f32; 3] = [0, 1, 2].map(|i| smoothstep(0.0, 1.0, p[i] - f[i]));
    let i = f.map(|v| v as i32);
    let h = |dx: i32, dy: i32, dz: i32| lattice(hash3(i[0].wrapping_add(dx), i[1].wrapping_add(dy), i[2].wrapping_add(dz)));
    let plane = |dz: i32| {
        let top = h(0, 0, dz) + (h(1, 0, dz) - h(0, 0, dz)) * s[0];
        let bottom = h(0, 1, dz) + (h(1, 1, dz) - h(0, 1, dz)) * s[0];
        top + (bottom - top) * s[1]
    };
    plane(0) + (plane(1) - plane(0)) * s[2]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn noise_is_smooth_bounded_and_deterministic() {
        let mut last = value_noise3([0.0, 0.3, 0.7]);
        for i in 1..2000 {
            let x = i as f32 * 0.01;
            let v = value_noise3([x, 0.3, 0.7]);
            assert!((0.0..=1.0).contains(&v));
            assert!((v - last).abs() < 0.05, "jump at {x}");
            last = v;
        }
        assert_eq!(value_noise2(3.0, 4.0), lattice(hash2(3, 4)), "lattice points are the hash");
    }
}
