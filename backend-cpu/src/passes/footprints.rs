//! Footprints judged in the final mask (`Backend::submit_footprints`): the
//! cutoff where a texel of a footprint reaches it, else 0.
//!
//! Most units stand still and most of the mask settles, so most footprints
//! read as they read the tick before. The blend marks the tiles where it
//! changes a value ([`TILE_ROWS`] rows of one block), and a footprint whose
//! texels are those of the last judgment's footprint at the same place,
//! over tiles where nothing changed since, keeps its value without reading
//! the mask ([`Judge::judge`]; the bytes are [`judge_all`]'s, a property
//! test holds them equal). No GPU twin: the GPU samples the mask and
//! reduces each footprint (`gpu/mod.rs`).

use super::dirty::BLOCK;
use murk_core::backend::footprint_value;
use murk_core::FootprintList;
use std::sync::Arc;

/// Rows of a tile; a tile is one block ([`BLOCK`] texels) wide.
pub const TILE_ROWS: usize = 8;

/// What an instance keeps between judgments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Judge {
    /// Tiles per row of tiles.
    pub per_row: usize,
    /// Per tile, whether the mask may have changed there since the last
    /// judgment.
    pub changed: Vec<bool>,
    /// The last judgment (`None`: none since the mask was loaded).
    pub last: Option<Judged>,
}

/// Footprints judged, and what each read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Judged {
    /// The cutoff they were judged against.
    pub cutoff: u16,
    /// The footprints.
    pub list: Arc<FootprintList>,
    /// The value of each.
    pub values: Vec<u16>,
}

/// Every footprint of `list` read from `mask` (`width` texels a row): the
/// reference of [`Judge::judge`].
pub fn judge_all(mask: &[u16], width: usize, list: &FootprintList, cutoff: u16) -> Vec<u16> {
    (0..list.ends.len()).map(|i| read(mask, width, list.footprint(i), cutoff)).collect()
}

/// One footprint read from the mask.
fn read(mask: &[u16], width: usize, texels: &[[u32; 2]], cutoff: u16) -> u16 {
    let top = texels.iter().map(|&[x, y]| mask[y as usize * width + x as usize]).max().unwrap_or(0);
    footprint_value(top, cutoff)
}

impl Judge {
    /// Every tile marked, nothing judged, over a grid `width` by `height`.
    pub fn new(width: usize, height: usize) -> Self {
        let per_row = width.div_ceil(BLOCK);
        Self { per_row, changed: vec![true; per_row * height.div_ceil(TILE_ROWS)], last: None }
    }

    /// Judges every footprint of `list` in `mask`: a footprint with the
    /// texels of the last judgment's footprint at the same place (same
    /// cutoff), over tiles not marked since, keeps its value; any other is
    /// read from the mask. Clears the marks and keeps the judgment.
    pub fn judge(&mut self, mask: &[u16], width: usize, list: &Arc<FootprintList>, cutoff: u16) -> &[u16] {
        let last = self.last.take().filter(|old| old.cutoff == cutoff);
        let mut values = Vec::with_capacity(list.ends.len());
        for i in 0..list.ends.len() {
            let texels = list.footprint(i);
            let kept = last.as_ref().filter(|old| {
                i < old.values.len()
                    && old.list.footprint(i) == texels
                    && texels.iter().all(|&[x, y]| !self.changed[y as usize / TILE_ROWS * self.per_row + x as usize / BLOCK])
            });
            values.push(match kept {
                Some(old) => old.values[i],
                None => read(mask, width, texels, cutoff),
            });
        }
        self.changed.fill(false);
        &self.last.insert(Judged { cutoff, list: Arc::clone(list), values }).values
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Over masks that change in blocks (each marked as the blend marks
        /// it), with footprints that stay, move, come and go and a cutoff
        /// that may change, the kept judgments equal reading every
        /// footprint, and the rule (a texel of it at or above the cutoff).
        #[test]
        fn kept_judgments_equal_judging_all(w in 1usize..40, h in 1usize..20, seed in any::<u64>(), steps in 1usize..8, cutoffs in any::<[u16; 2]>()) {
            let mut rng = seed;
            let mut next = move || { rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407); (rng >> 33) as usize };
            let values = [0u16, cutoffs[0], cutoffs[0].saturating_sub(1), 65535, cutoffs[1]];
            let mut mask: Vec<u16> = (0..w * h).map(|_| values[next() % 5]).collect();
            let footprint = |next: &mut dyn FnMut() -> usize| -> Vec<[u32; 2]> {
                let (x, y) = (next() % w, next() % h);
                (0..1 + next() % 6).map(|_| [((x + next() % 3).min(w - 1)) as u32, ((y + next() % 3).min(h - 1)) as u32]).collect()
            };
            let mut footprints: Vec<Vec<[u32; 2]>> = (0..1 + next() % 12).map(|_| footprint(&mut next)).collect();
            let mut judge = Judge::new(w, h);
            for step in 0..steps {
                // Some blocks change, marked as the blend marks them.
                for _ in 0..next() % 4 {
                    let (row, k) = (next() % h, next() % w.div_ceil(BLOCK));
                    for v in &mut mask[row * w + k * BLOCK..row * w + ((k + 1) * BLOCK).min(w)] {
                        *v = values[next() % 5];
                    }
                    judge.changed[row / TILE_ROWS * judge.per_row + k] = true;
                }
                // Some footprints move; one may come or go.
                for f in footprints.iter_mut() {
                    if next() % 3 == 0 {
                        *f = footprint(&mut next);
                    }
                }
                match next() % 4 {
                    0 if footprints.len() > 1 => { footprints.remove(next() % footprints.len()); }
                    1 => { let at = next() % (footprints.len() + 1); footprints.insert(at, footprint(&mut next)); }
                    _ => {}
                }
                let mut list = FootprintList::default();
                for f in &footprints {
                    list.texels.extend_from_slice(f);
                    list.ends.push(list.texels.len() as u32);
                }
                let cutoff = cutoffs[usize::from(next() % 5 == 0)];
                let list = Arc::new(list);
                let got = judge.judge(&mask, w, &list, cutoff).to_vec();
                prop_assert_eq!(&got, &judge_all(&mask, w, &list, cutoff), "step {}", step);
                let rule: Vec<u16> = footprints.iter().map(|f| if f.iter().any(|&[x, y]| mask[y as usize * w + x as usize] >= cutoff) { cutoff } else { 0 }).collect();
                prop_assert_eq!(got, rule, "step {}: the rule", step);
            }
        }
    }
}
