//! Pass 2, mips: the max-reduction pyramid of coverage (Hierarchical DDA only).
//!
//! Inputs: coverage (level 0). Outputs: levels 1.., each half the size
//! (rounded up) of the one below; a texel is 1 when any of its 2x2 children is.
//! Invariant: level `l` texel `(x, y)` is 0 only if every level-0 texel in
//! `[x << l, (x + 1) << l) x [y << l, (y + 1) << l)` is 0.
//! Twin: `backend-gpu/shaders/mips.wgsl`.

use murk_core::Grid;

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

#[cfg(test)]
mod tests {
    use super::*;

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
