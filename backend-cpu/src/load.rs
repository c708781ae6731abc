//! Loading a checked texture set into a CPU instance (a restore, a
//! resample, a rollback), in place: the occlusion and every mask, skipping
//! the tiles the instance already holds under the set's versions.

use crate::error::CpuError;
use crate::instance::{CpuInstance, CpuNotes, Settling};
use crate::tiles::{self, next_version, TileVersions};
use crate::workers::Workers;
use murk_core::{OcclusionBuild, Resolution, Result, TexelRect, Texture, TextureData, TextureSet};
use rayon::prelude::*;

impl CpuInstance {
    /// Replaces every texture with `set`'s; an error changes nothing.
    pub fn load(&mut self, pool: &Workers, set: &TextureSet) -> Result<()> {
        let d = self.dims;
        // Every texture is checked before any is written: an error changes
        // nothing (the set checked each texture's type and texel count).
        for (texture, size) in set.sizes() {
            let expected = match texture.resolution() {
                Resolution::Internal | Resolution::Output => texture.size(d, OcclusionBuild::default()).expect("a mask has a size"),
                Resolution::Pyramid | Resolution::DistanceField => size,
            };
            if size != expected {
                let ((w, h), (ew, eh)) = (size, expected);
                return Err(CpuError::size(format!("texture `{}`", texture.name()), (w, h), (ew, eh)).into());
            }
        }
        // Written in place, into the buffers the instance has. A set of
        // tiles (a rollback state's) whose occlusion tiles are all under the
        // instance's occlusion version is the occlusion the instance holds:
        // it is left as it is, with its tables, source windows and the
        // field's column pass. Otherwise the tables and windows are a
        // function of coverage and height: a load of equal ones keeps them,
        // and the windows' combination is finished anew over the loaded
        // visibility.
        let fresh = next_version();
        let occlusion: Vec<Texture> = set.sizes().map(|(t, _)| t).filter(|t| t.is_occlusion()).collect();
        let saved_version = uniform_version(set, &occlusion);
        let same_occlusion = match saved_version {
            Some(v) if v == self.occlusion.version => true,
            _ => self.occlusion.load(set, saved_version.unwrap_or(fresh))?,
        };
        if !same_occlusion {
            self.windows.clear();
        }
        // The masks: a tile of a state's under the version the instance's
        // tile has is there already; the others are copied and take the
        // state's version (a whole image, or a tile not versioned, a new
        // one). A set of tiles starts the versions; whole images (a
        // restore, a resample) keep them only where they run.
        // What the masks copied of each other is not known of loaded ones.
        self.copies = tiles::Copies::default();
        if self.masks.iter().any(|(mask, _)| set.tiles(mask).is_some()) {
            self.mask_tiles.get_or_insert_with(|| tiles::every_mask_at(d, fresh));
        }
        // Each mask is written beside the others (a rollback's load writes
        // every tile the ticks since its state changed, megabytes of them).
        // The tiles of the visibility the load wrote (`None`: all of it).
        let versions: Vec<Option<&mut TileVersions>> = match self.mask_tiles.as_mut() {
            Some(m) => m.iter_mut().map(|(_, v)| Some(v)).collect(),
            None => self.masks.iter().map(|_| None).collect(),
        };
        let jobs: Vec<_> = self.masks.iter_mut().zip(versions).collect();
        let written: Vec<Result<Option<Vec<TexelRect>>>> =
            pool.install(|| jobs.into_par_iter().map(|((mask, buffer), versions)| write_mask(set, mask, buffer, versions, fresh)).collect());
        let mut rewritten = None;
        for w in written {
            rewritten = w?.or(rewritten);
        }
        // Over the same occlusion the windows and their combination stay;
        // the visibility's finish is redone where the load changed a texel
        // (elsewhere the texel is the one the finish made from the kept
        // combination, or one still pending a finish; and the finish
        // compares each block with what it holds: where the loaded texels
        // are the finish of the combination, nothing downstream moves).
        if same_occlusion {
            match rewritten {
                Some(rects) => self.windows.refinish(rects),
                None => self.windows.unfinish(),
            }
        }
        // What the state's notes say of its masks holds of them here; without
        // notes nothing is known settled or blurred. The reveals are an
        // input, not a texture: they stay.
        self.settling = match set.notes().and_then(|n| n.0.downcast_ref::<CpuNotes>()).filter(|n| n.dims == d) {
            Some(notes) => notes.settling.clone(),
            None => Settling::unknown(d),
        };
        // The next footprints are judged from the loaded visibility.
        self.judge = None;
        Ok(())
    }
}

/// Writes `mask` of `set` into `buffer`, its tiles' `versions` following:
/// a tile of a state's under the version the instance's tile has is there
/// already; the others are copied and take the state's version (a whole
/// image, or a tile not versioned, `fresh`). For the visibility written as
/// tiles, the spans of texels whose value the load changed.
fn write_mask(
    set: &TextureSet,
    mask: Texture,
    buffer: &mut [u16],
    versions: Option<&mut TileVersions>,
    fresh: u64,
) -> Result<Option<Vec<TexelRect>>> {
    let mut rewritten = None;
    match set.tiles(mask) {
        Some(img) => {
            let held = |i: usize| versions.as_ref().is_some_and(|v| img.versions[i] != 0 && img.versions[i] == v.get(i));
            // Of the visibility, where the load changed a texel: the
            // finish is redone there only.
            let written = if mask == Texture::Visibility {
                rewritten = img.write_changes_into(buffer, held);
                rewritten.is_some()
            } else {
                img.write_into(buffer, held)
            };
            if !written {
                return Err(CpuError::TexelType { texture: mask.name(), problem: "is not in tiles of 16-bit texels of its size".into() }.into());
            }
            if let Some(v) = versions {
                v.take(img, fresh);
            }
        }
        None => match set.get(mask).map(|i| &i.data) {
            Some(TextureData::U16(v)) => {
                buffer.copy_from_slice(v);
                if let Some(v) = versions {
                    v.stamp_all(fresh);
                }
            }
            _ => return Err(CpuError::MissingTexture(format!("the 16-bit texture `{}`", mask.name())).into()),
        },
    }
    Ok(rewritten)
}

/// The one version every tile of `textures` in `set` holds, when the set
/// holds them as tiles all under one version (`None` otherwise).
fn uniform_version(set: &TextureSet, textures: &[Texture]) -> Option<u64> {
    let mut versions = Vec::new();
    for &t in textures {
        versions.extend_from_slice(&set.tiles(t)?.versions);
    }
    let first = *versions.first()?;
    (first != 0 && versions.iter().all(|&v| v == first)).then_some(first)
}
