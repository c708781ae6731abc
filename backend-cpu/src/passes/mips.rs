//! Pass 2, mips: the max-reduction pyramid of coverage (Hierarchical DDA only).
//!
//! Inputs: coverage (level 0). Outputs: levels 1.., each half the size
//! (rounded up) of the one below; a texel is 1 when any of its 2x2 children is.
//! Invariant: level `l` texel `(x, y)` is 0 only if every level-0 texel in
//! `[x << l, (x + 1) << l) x [y << l, (y + 1) << l)` is 0.
//! Twin: `backend-gpu/shaders/mips.wgsl`.

use murk_core::{Grid, TexelRect};

/// Builds levels 1.. until a level is 1x1.
pub fn build_mips(coverage: &[u8], width: u32, height: u32) -> Vec<Grid<u8>> {
    let mut levels: Vec<Grid<u8>> = Vec::new();
    let (mut w, mut h) = (width, height);
    let mut below: &[u8] = coverage;
    let mut owned: Vec<u8>;
    while w > 1 || h > 1 {
        let (nw, nh) = (w.div_ceil(2), h.div_ceil(2));
        owned = vec![0u8; (nw * nh) as usize];
        for y in 0..nh {
            for x in 0..nw {
                let mut m = 0;
                for (dx, dy) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
                    let (sx, sy) = (2 * x + dx, 2 * y + dy);
                    if sx < w && sy < h {
                        m |= below[(sy * w + sx) as usize];
                    }
                }
                owned[(y * nw + x) as usize] = m;
            }
        }
        levels.push(Grid { width: nw, height: nh, texels: owned });
        below = &levels.last().expect("just pushed").texels;
        w = nw;
        h = nh;
    }
    levels
}

/// Brings `levels` (built by [`build_mips`]) up to date with `coverage`
/// where it changed, which is inside `rect`: each level redoes the texels
/// over the changed ones below it.
pub fn update_mips(levels: &mut [Grid<u8>], coverage: &[u8], width: u32, height: u32, rect: &TexelRect) {
    let (mut w, mut h, mut r) = (width, height, *rect);
    for l in 0..levels.len() {
        let (below, above) = levels.split_at_mut(l);
        let src: &[u8] = below.last().map_or(coverage, |g| &g.texels);
        let level = &mut above[0];
        r = TexelRect { x0: r.x0 / 2, y0: r.y0 / 2, x1: r.x1.div_ceil(2), y1: r.y1.div_ceil(2) };
        for y in r.y0..r.y1 {
            for x in r.x0..r.x1 {
                let mut m = 0;
                for (dx, dy) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
                    let (sx, sy) = (2 * x + dx, 2 * y + dy);
                    if sx < w && sy < h {
                        m |= src[(sy * w + sx) as usize];
                    }
                }
                level.texels[(y * level.width + x) as usize] = m;
            }
        }
        (w, h) = (level.width, level.height);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_update_equals_a_rebuild() {
        let (w, h) = (37u32, 21u32);
        let mut cov: Vec<u8> = (0..w * h).map(|i| u8::from(murk_core::fixed::hash2(i as i32, 9).is_multiple_of(7))).collect();
        let mut levels = build_mips(&cov, w, h);
        let rect = TexelRect { x0: 30, y0: 3, x1: 37, y1: 20 };
        for y in rect.y0..rect.y1 {
            for x in rect.x0..rect.x1 {
                cov[(y * w + x) as usize] ^= 1;
            }
        }
        update_mips(&mut levels, &cov, w, h, &rect);
        assert_eq!(levels, build_mips(&cov, w, h));
    }

    #[test]
    fn pyramid_is_max_of_children() {
        let mut cov = vec![0u8; 10 * 6];
        cov[3 * 10 + 7] = 1;
        let levels = build_mips(&cov, 10, 6);
        assert_eq!(levels[0].width, 5);
        assert_eq!(levels[0].height, 3);
        assert_eq!(levels[0].texels[5 + 3], 1);
        assert_eq!(levels[0].texels.iter().map(|&v| u32::from(v)).sum::<u32>(), 1);
        let top = levels.last().unwrap();
        assert_eq!((top.width, top.height, top.texels[0]), (1, 1, 1));
    }
}
