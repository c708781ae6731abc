//! Footprints judged in the sight signal (`Backend::submit_footprints`):
//! the cutoff where a texel of a footprint reaches it, else 0. The signal
//! at a texel is the larger of the raw visibility and the scripted sight
//! reveal there. Read whole every judgment: a footprint is a few texels,
//! and the visibility changes wherever a unit walks. No GPU twin: the GPU
//! samples both planes and reduces each footprint (`gpu/mod.rs`).

use murk_core::backend::footprint_value;
use murk_core::FootprintList;

/// Every footprint of `list` judged in the signal of `visibility` and the
/// optional `sight` plane (`width` texels a row).
pub fn judge_all(visibility: &[u16], sight: Option<&[u16]>, width: usize, list: &FootprintList, cutoff: u16) -> Vec<u16> {
    let at = |x: u32, y: u32| y as usize * width + x as usize;
    (0..list.ends.len())
        .map(|i| {
            let texels = list.footprint(i);
            let top = match sight {
                None => texels.iter().map(|&[x, y]| visibility[at(x, y)]).max(),
                Some(sight) => texels.iter().map(|&[x, y]| visibility[at(x, y)].max(sight[at(x, y)])).max(),
            };
            footprint_value(top.unwrap_or(0), cutoff)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A footprint is seen where its visibility or its sight reveal
    /// reaches the cutoff, and only there.
    #[test]
    fn the_signal_is_the_larger_of_visibility_and_sight() {
        let visibility = [0, 10, 0, 0, 0, 0];
        let sight = [0, 0, 0, 0, 30, 0];
        let list = FootprintList { texels: vec![[0, 0], [1, 0], [2, 0], [1, 1], [2, 1], [0, 1]], ends: vec![2, 3, 5, 6] };
        assert_eq!(judge_all(&visibility, None, 3, &list, 10), vec![10, 0, 0, 0]);
        assert_eq!(judge_all(&visibility, Some(&sight), 3, &list, 10), vec![10, 0, 10, 0]);
        assert_eq!(judge_all(&visibility, Some(&sight), 3, &list, 31), vec![0, 0, 0, 0]);
    }
}
