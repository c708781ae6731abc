//! The version of the bytes of each save tile of each mask
//! ([`murk_core::TILE`]-sided, as a rollback state keeps them): a pass
//! gives a new version to every tile that holds a block it marked (the
//! blend: a block whose bytes it changed), so a tile under the version a
//! saved tile has holds the saved bytes, and a save or a load passes it by.
//! [`Copies`] says which masks hold another's bytes, so that a save shares
//! the other's tiles unread. The masks' tiles are versioned one by one, the
//! occlusion's all together.

use crate::passes::dirty::{Blocks, BLOCK};
use crate::passes::footprints::TILE_ROWS;
use murk_core::hash::LeafHashes;
use murk_core::{InstanceDims, Masks, OcclusionBuild, Texture, TiledImage, TILE};
use std::sync::atomic::{AtomicU64, Ordering};

const _: () = assert!((TILE as usize).is_multiple_of(BLOCK), "a tile holds whole blocks");

/// The last version given to texture bytes, by any CPU backend of the
/// process (the versions of the tiles of `Backend::save_tiles`): versions
/// are never given twice.
static VERSIONS: AtomicU64 = AtomicU64::new(0);

/// A version not given before.
pub fn next_version() -> u64 {
    VERSIONS.fetch_add(1, Ordering::Relaxed) + 1
}

/// The versions of every mask's tiles, `None` while the masks are not
/// versioned.
pub type MaskVersions = Option<Masks<TileVersions>>;

/// The tiles of every mask of an instance of `dims`, each at `version`.
pub fn every_mask_at(dims: InstanceDims, version: u64) -> Masks<TileVersions> {
    Masks::from_fn(|mask| {
        let (w, h) = mask.size(dims, OcclusionBuild::default()).expect("a mask has a size");
        TileVersions::new(w, h, version)
    })
}

/// The versions of `mask` (`None` while the masks are not versioned).
pub fn of(masks: &mut MaskVersions, mask: Texture) -> Option<&mut TileVersions> {
    masks.as_mut().map(|m| &mut m[mask])
}

/// The tiles (row-major, of the grid of `marks`) that hold a marked block.
pub fn marked_tiles(marks: &Blocks) -> Vec<usize> {
    // Most marks of a quiet tick are clear: found at the speed of a read.
    if !marks.any() {
        return Vec::new();
    }
    let (tile, per_tile, per_row) = (TILE as usize, TILE as usize / BLOCK, marks.per_row.max(1));
    let across = marks.per_row.div_ceil(per_tile);
    let (mut marked, mut any) = (Vec::new(), vec![false; marks.per_row]);
    for (ty, rows) in marks.marks.chunks(per_row * tile).enumerate() {
        any.fill(false);
        for row in rows.chunks(per_row) {
            for (a, &m) in any.iter_mut().zip(row) {
                *a |= m;
            }
        }
        marked.extend(any.chunks(per_tile).enumerate().filter(|(_, blocks)| blocks.contains(&true)).map(|(tx, _)| ty * across + tx));
    }
    marked
}

/// The marks of a grid of one mark per band of [`TILE_ROWS`] rows and block
/// column of a `width x height` texture (as the blend marks).
pub fn band_marks_len(width: u32, height: u32) -> usize {
    (width as usize).div_ceil(BLOCK) * (height as usize).div_ceil(TILE_ROWS)
}

/// The tiles (row-major) that hold a mark of `marks`, a grid of
/// [`band_marks_len`] marks over a texture `width` texels wide.
pub fn band_tiles(marks: &[bool], width: u32) -> Vec<usize> {
    const { assert!((TILE as usize).is_multiple_of(TILE_ROWS), "a tile holds whole bands") };
    let (per_row, across) = ((width as usize).div_ceil(BLOCK), TiledImage::tiles_across(width) as usize);
    let (bands_per_tile, blocks_per_tile) = (TILE as usize / TILE_ROWS, TILE as usize / BLOCK);
    let mut tiles: Vec<usize> = marks
        .chunks(per_row.max(1))
        .enumerate()
        .flat_map(|(band, row)| row.iter().enumerate().filter(|(_, m)| **m).map(move |(k, _)| band / bands_per_tile * across + k / blocks_per_tile))
        .collect();
    tiles.sort_unstable();
    tiles.dedup();
    tiles
}

/// One version per tile of a `width x height` texture, row-major.
#[derive(Clone, Debug)]
pub struct TileVersions {
    width: usize,
    height: usize,
    versions: Vec<u64>,
}

impl TileVersions {
    /// Every tile at `version`.
    pub fn new(width: u32, height: u32, version: u64) -> Self {
        Self { width: width as usize, height: height as usize, versions: vec![version; TiledImage::tile_count(width, height)] }
    }

    /// The version of tile `i`.
    pub fn get(&self, i: usize) -> u64 {
        self.versions[i]
    }

    /// Every tile's version, row by row of tiles.
    pub fn all(&self) -> &[u64] {
        &self.versions
    }

    /// Every tile to `version`.
    pub fn stamp_all(&mut self, version: u64) {
        self.versions.fill(version);
    }

    /// Each tile holding a block marked in `marks` (a grid of this size) to
    /// `version`.
    pub fn stamp(&mut self, marks: &Blocks, version: u64) {
        debug_assert_eq!((marks.width, marks.height), (self.width, self.height));
        self.stamp_tiles(&marked_tiles(marks), version);
    }

    /// The tiles `marked` ([`marked_tiles`] of marks over this grid) to
    /// `version`.
    pub fn stamp_tiles(&mut self, marked: &[usize], version: u64) {
        for &i in marked {
            self.versions[i] = version;
        }
    }

    /// The versions of `tiles` (a texture of this size), a tile not
    /// versioned to `fresh`.
    pub fn take(&mut self, tiles: &TiledImage, fresh: u64) {
        for (v, &t) in self.versions.iter_mut().zip(&tiles.versions) {
            *v = if t == 0 { fresh } else { t };
        }
    }
}

/// Which masks are known to hold another mask's bytes, so that a save
/// shares the other's tiles instead of reading and copying them.
#[derive(Clone, Debug, Default)]
pub struct Copies {
    /// The upscaled mask is the composed one (an upscale of scale 1 copies
    /// every block of composed that moved, and all of it after a load).
    pub upscale_is_compose: bool,
    /// The blend start holds the final mask as it was when a recompute last
    /// restarted the blend, and these were the final mask's tile versions
    /// then (`None`: not known, or the masks not versioned).
    pub start_from: Option<Vec<u64>>,
    /// Per tile of the final mask, the upscaled mask's version whose bytes
    /// it holds (the last blend that changed the tile left every value of
    /// it at its target's), 0 where not known (`None`: none known).
    pub final_from: Option<Vec<u64>>,
}

impl Copies {
    /// The blend start was just made the final mask: copied where the two
    /// may differ (the unsettled blocks), equal elsewhere.
    pub fn start_made(&mut self, masks: &MaskVersions) {
        self.start_from = masks.as_ref().map(|m| m[Texture::Final].versions.clone());
    }

    /// A blend changed the tiles `written` of the final mask (ascending),
    /// and left those of `apart` (ascending) apart from the upscaled mask
    /// (its target, equal to it elsewhere): the others of `written` hold the
    /// upscaled mask's values.
    pub fn final_written(&mut self, written: &[usize], apart: &[usize], masks: &MaskVersions) {
        let Some(upscale) = masks.as_ref().map(|m| &m[Texture::Upscale]) else {
            self.final_from = None;
            return;
        };
        let from = self.final_from.get_or_insert_with(Vec::new);
        from.resize(upscale.versions.len(), 0);
        for &i in written {
            from[i] = if apart.binary_search(&i).is_ok() { 0 } else { upscale.versions[i] };
        }
    }
}

/// The leaf hashes of one mask and the versions of its tiles they were
/// taken at: a hash rehashes only the tiles whose version moved since.
#[derive(Clone, Debug)]
pub struct KeptHash {
    seen: Vec<u64>,
    leaves: LeafHashes,
}

impl KeptHash {
    /// The hashes of masks, each `(mask, width, height, texels, versions)`:
    /// `kept[mask]` is the hash last taken of that mask, and the tiles whose
    /// version moved since are rehashed, those of every mask in one parallel
    /// run (all of a mask's when none is kept, or one of another size). The
    /// results are kept for the next call.
    pub fn hash_all(kept: &mut Masks<Option<KeptHash>>, asks: &[(Texture, u32, u32, &[u16], &TileVersions)]) -> Vec<u64> {
        // Each mask once, however often it is asked for, in mask order.
        let mut masks: Vec<_> = asks.iter().collect();
        masks.sort_unstable_by_key(|a| Masks::<()>::position(a.0));
        masks.dedup_by_key(|a| a.0);
        let mut slots = kept.iter_mut();
        let mut work = Vec::with_capacity(masks.len());
        for &&(m, width, height, texels, versions) in &masks {
            let slot = slots.find(|(mask, _)| *mask == m).expect("one slot per mask, masks in table order").1;
            if !slot.as_ref().is_some_and(|k| k.leaves.fits(width, height) && k.seen.len() == versions.versions.len()) {
                *slot = Some(KeptHash { seen: versions.versions.clone(), leaves: LeafHashes::new(width, height, texels) });
            }
            let k = slot.as_mut().expect("kept above");
            let moved = k.seen.iter().zip(&versions.versions).enumerate().filter(|(_, (s, v))| s != v).map(|(i, _)| i).collect();
            k.seen.clone_from(&versions.versions);
            work.push((&mut k.leaves, texels, moved));
        }
        murk_core::hash::rehash(&mut work);
        let roots = murk_core::hash::hashes(&work.iter().map(|w| &*w.0).collect::<Vec<_>>());
        asks.iter().map(|a| roots[masks.iter().position(|b| b.0 == a.0).expect("each mask")]).collect()
    }
}

/// The explored texels (memory above 0) of each tile of an instance's
/// memory and the versions of the tiles they were counted at: a count
/// recounts only the tiles whose version moved since.
#[derive(Clone, Debug, Default)]
pub struct KeptCount {
    seen: Vec<u64>,
    counts: Vec<u32>,
}

impl KeptCount {
    /// The texels above 0 of `memory` (`width` texels a row, tiles at
    /// `versions`), recounting the tiles whose version moved since the
    /// last call (all of them the first time, or at another size), in
    /// parallel on the caller's pool.
    pub fn count(&mut self, width: u32, memory: &[u16], versions: &TileVersions) -> u64 {
        use rayon::prelude::*;
        if self.seen.len() != versions.versions.len() || self.counts.len() != versions.versions.len() {
            *self = Self { seen: vec![0; versions.versions.len()], counts: vec![0; versions.versions.len()] };
            // Version 0 is never given: every tile is counted.
        }
        let (w, tile) = (width as usize, TILE as usize);
        let across = TiledImage::tiles_across(width) as usize;
        self.counts.par_iter_mut().zip(self.seen.par_iter_mut()).zip(&versions.versions).enumerate().for_each(|(i, ((count, seen), &v))| {
            if *seen == v {
                return;
            }
            let (x0, y0) = (i % across * tile, i / across * tile);
            let x1 = (x0 + tile).min(w);
            *count = memory.chunks(w).skip(y0).take(tile).map(|row| row[x0..x1].iter().filter(|&&m| m > 0).count() as u32).sum();
            *seen = v;
        });
        self.counts.iter().map(|&c| u64::from(c)).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A marked block versions exactly the tile it lies in, at the grid's
    /// cut edges too.
    #[test]
    fn a_mark_versions_the_tile_it_lies_in() {
        let (w, h) = (3 * TILE + 5, 2 * TILE + 1);
        let mut versions = TileVersions::new(w, h, 1);
        let across = TiledImage::tiles_across(w) as usize;
        assert_eq!(versions.versions.len(), across * 3);
        for (x, y) in [(0, 0), (TILE, 0), (3 * TILE + 4, 2 * TILE), (TILE - 1, TILE)] {
            let mut marks = Blocks::new(w as usize, h as usize, false);
            marks.mark(murk_core::TexelRect { x0: x, y0: y, x1: x + 1, y1: y + 1 }, 0);
            versions.stamp_all(1);
            versions.stamp(&marks, 2);
            let at = (y / TILE) as usize * across + (x / TILE) as usize;
            for i in 0..versions.versions.len() {
                assert_eq!(versions.get(i), if i == at { 2 } else { 1 }, "mark at ({x}, {y}), tile {i}");
            }
        }
    }
}
