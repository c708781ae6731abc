//! Tile binning: which sources can touch each tile.
//!
//! The bins are a compressed list (offsets + indices) sized by a counting
//! pass, so a tile has no fixed capacity: a crowded tile simply gets a longer
//! list. No source is ever dropped.
//!
//! ```text
//! offsets: [0, 2, 2, 5, ...]    tile t lists indices[offsets[t]..offsets[t+1]]
//! indices: [s0, s3, | s1, s2, s3, | ...]
//! ```

use crate::fixed::TEXEL_ONE;
use crate::frame::SourceTexel;
pub use crate::frame::TileBins;

/// Inclusive texel range `[lo, hi]` whose centres may lie within `r` of `c`
/// (Q3), clipped to `0..n`; `None` when empty.
pub fn texel_span(c: i32, r: i32, n: u32) -> Option<(u32, u32)> {
    let half = TEXEL_ONE / 2;
    let lo = (c - r - half).div_euclid(TEXEL_ONE);
    let hi = (c + r - half).div_euclid(TEXEL_ONE) + 1;
    let lo = lo.max(0);
    let hi = hi.min(n as i32 - 1);
    (lo <= hi).then_some((lo as u32, hi as u32))
}

/// Bins `sources` into tiles of `tile_size` texels over a `width x height` grid.
pub fn bin_sources(sources: &[SourceTexel], width: u32, height: u32, tile_size: u32) -> TileBins {
    let tiles_x = width.div_ceil(tile_size);
    let tiles_y = height.div_ceil(tile_size);
    // Each source's tiles, worked out once for both passes (a tile side
    // that is a power of two divides by a shift).
    let shift = tile_size.is_power_of_two().then(|| tile_size.trailing_zeros());
    let tile = |t: u32| shift.map_or(t / tile_size, |k| t >> k);
    let ranges: Vec<Option<(u32, u32, u32, u32)>> = sources
        .iter()
        .map(|s| {
            let (x0, x1) = texel_span(s.x, s.radius, width)?;
            let (y0, y1) = texel_span(s.y, s.radius, height)?;
            Some((tile(x0), tile(x1), tile(y0), tile(y1)))
        })
        .collect();
    let mut counts = vec![0u32; (tiles_x * tiles_y) as usize + 1];
    for &(tx0, tx1, ty0, ty1) in ranges.iter().flatten() {
        for ty in ty0..=ty1 {
            for tx in tx0..=tx1 {
                counts[(ty * tiles_x + tx) as usize + 1] += 1;
            }
        }
    }
    for i in 1..counts.len() {
        counts[i] += counts[i - 1];
    }
    let offsets = counts;
    let mut cursor = offsets.clone();
    let mut indices = vec![0u32; *offsets.last().unwrap_or(&0) as usize];
    for (i, range) in ranges.iter().enumerate() {
        if let Some((tx0, tx1, ty0, ty1)) = *range {
            for ty in ty0..=ty1 {
                for tx in tx0..=tx1 {
                    let t = (ty * tiles_x + tx) as usize;
                    indices[cursor[t] as usize] = i as u32;
                    cursor[t] += 1;
                }
            }
        }
    }
    TileBins { tile_size, tiles_x, tiles_y, offsets, indices }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn src(x: i32, y: i32, r: i32) -> SourceTexel {
        SourceTexel { x: x * 8 + 4, y: y * 8 + 4, radius: r * 8, strength: 65535, ..Default::default() }
    }

    #[test]
    fn a_crowded_tile_keeps_every_source() {
        let sources: Vec<_> = (0..5000).map(|i| src(5 + i % 3, 5, 2)).collect();
        let bins = bin_sources(&sources, 64, 64, 16);
        assert_eq!(bins.sources_at(5, 5).len(), 5000);
        let listed: Vec<u32> = bins.sources_at(5, 5).to_vec();
        assert_eq!(listed, (0..5000).collect::<Vec<u32>>());
    }

    #[test]
    fn every_texel_in_range_is_in_a_tile_listing_the_source() {
        let sources = vec![src(10, 40, 9), src(60, 2, 30), src(-5, -5, 7), src(200, 200, 4)];
        // A tile side that is a power of two (divided by a shift) and one
        // that is not.
        for tile in [16, 24] {
            let bins = bin_sources(&sources, 64, 48, tile);
            for (i, s) in sources.iter().enumerate() {
                for y in 0..48u32 {
                    for x in 0..64u32 {
                        let dx = (x as i32 * 8 + 4 - s.x) as i64;
                        let dy = (y as i32 * 8 + 4 - s.y) as i64;
                        if dx * dx + dy * dy < i64::from(s.radius) * i64::from(s.radius) {
                            assert!(bins.sources_at(x, y).contains(&(i as u32)), "source {i} missing at {x},{y}");
                        }
                    }
                }
            }
            // The far-away source is in no tile.
            assert!(!bins.indices.contains(&3));
        }
    }
}
