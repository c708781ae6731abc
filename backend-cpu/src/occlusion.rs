//! An instance's occlusion on the CPU: coverage, heights, the pyramid and
//! the distance field, with the tables derived from them to go faster
//! (none changes a result), built whole or updated where blockers changed,
//! copied between instances, and loaded from a texture set.

use crate::error::CpuError;
use crate::passes;
use crate::passes::visibility::{Accel, Occlusion};
use crate::texels::Texels;
use crate::tiles::next_version;
use murk_core::fixed::HEIGHT_FLOOR;
use murk_core::{Grid, MurkError, OcclusionInput, Result, TexelRect, Texture, TextureData, TextureSet};
use rayon::prelude::*;

/// The occlusion textures of one instance and what the CPU keeps beside them.
#[derive(Clone)]
pub(crate) struct OcclusionTextures {
    /// The internal grid's width and height.
    pub size: (u32, u32),
    /// 0/1 coverage.
    pub coverage: Vec<u8>,
    /// Heights, in height units.
    pub height: Vec<i32>,
    /// The coverage pyramid, levels 1.. (empty when not built).
    pub mips: Vec<Grid<u8>>,
    /// The distance field (empty when not built).
    pub distance_field: Grid<u32>,
    /// The distance field's column pass (empty: not known, an update
    /// builds the field whole).
    pub df_columns: Vec<u32>,
    /// The visibility pass's tables, a function of coverage and heights.
    pub accel: Accel,
    /// The version of every tile of these textures, taken anew by whatever
    /// may write them.
    pub version: u64,
}

/// What an update leaves the source windows to forget.
pub(crate) struct Forget {
    /// Where the occlusion may have changed.
    pub rects: Vec<TexelRect>,
    /// Whether the covered tops' classes changed (the windows' shadows go).
    pub shadows: bool,
}

impl OcclusionTextures {
    /// No blocker and heights at the floor, with its tables.
    pub fn new(width: u32, height: u32) -> Self {
        let n = (width * height) as usize;
        let (coverage, heights) = (vec![0; n], vec![HEIGHT_FLOOR; n]);
        let accel = Accel::new(&coverage, &heights, width, height);
        Self {
            size: (width, height),
            coverage,
            height: heights,
            mips: Vec::new(),
            distance_field: Grid::default(),
            df_columns: Vec::new(),
            accel,
            version: next_version(),
        }
    }

    /// What the visibility pass reads.
    pub fn view(&self) -> Occlusion<'_> {
        Occlusion {
            width: self.size.0,
            height: self.size.1,
            coverage: &self.coverage,
            heights: &self.height,
            mips: &self.mips,
            distance_field: &self.distance_field,
            accel: &self.accel,
        }
    }

    /// An error unless `input` is of this grid's size.
    pub fn check_size(&self, input: &OcclusionInput) -> Result<()> {
        let (w, h) = self.size;
        if (input.width, input.height) != (w, h) {
            return Err(CpuError::size("occlusion input", (input.width, input.height), (w, h)).into());
        }
        Ok(())
    }

    /// Passes 1-3 over the whole grid (run inside the backend's pool).
    pub fn build(&mut self, input: &OcclusionInput) {
        self.version = next_version();
        let (w, h) = self.size;
        // Rasterized row by row into the tables' first pass.
        self.accel
            .fill_and_rebuild(&mut self.coverage, &mut self.height, w, h, |row, cov, hgt| passes::rasterize::rasterize_row(input, row, cov, hgt));
        self.mips = if input.build_mips { passes::mips::build_mips(&self.coverage, w, h) } else { Vec::new() };
        (self.distance_field, self.df_columns) = if input.distance_field_scale > 0 {
            passes::distance_field::distance_field_kept(&self.coverage, w, h, input.distance_field_scale)
        } else {
            (Grid::default(), Vec::new())
        };
    }

    /// Whether what is built (the pyramid, the field) is what `input` asks
    /// for, so that an update can redo only what changed.
    pub fn built_as(&self, input: &OcclusionInput) -> bool {
        let mips_built = !self.mips.is_empty() || self.size == (1, 1);
        input.build_mips == mips_built && (input.distance_field_scale > 0) == (self.distance_field.width > 0)
    }

    /// An error unless every rectangle of `changed` is a non-empty part of
    /// the grid.
    pub fn check_changed(&self, changed: &[TexelRect]) -> Result<()> {
        let (w, h) = self.size;
        match changed.iter().find(|r| r.is_empty() || r.x1 > w || r.y1 > h) {
            Some(r) => Err(MurkError::invalid("changed rectangle", format!("{r:?}"), format!("must be a non-empty part of the {w}x{h} grid"))),
            None => Ok(()),
        }
    }

    /// Passes 1-3 again within `changed` (checked, of an occlusion
    /// [`OcclusionTextures::built_as`] `input` asks; run inside the
    /// backend's pool); returns what the source windows must forget.
    pub fn update(&mut self, input: &OcclusionInput, changed: &[TexelRect]) -> Forget {
        self.version = next_version();
        let (w, h) = self.size;
        let capture = input.capture.as_deref();
        for r in changed {
            let shapes = murk_core::raster::shapes_meeting(input, r);
            let (x0, x1, wu) = (r.x0 as usize, r.x1 as usize, w as usize);
            let rows = r.y0 as usize * wu..r.y1 as usize * wu;
            self.coverage[rows.clone()].par_chunks_mut(wu).zip(self.height[rows].par_chunks_mut(wu)).enumerate().for_each(|(k, (cov, hgt))| {
                passes::rasterize::rasterize_span(&shapes, capture, r.y0 + k as u32, r.x0, &mut cov[x0..x1], &mut hgt[x0..x1]);
            });
        }
        let same_classes = self.accel.update(&self.coverage, &self.height, w, h, changed);
        let mut forget: Vec<TexelRect> = changed.to_vec();
        for r in changed {
            passes::mips::update_mips(&mut self.mips, &self.coverage, w, h, r);
        }
        let scale = input.distance_field_scale;
        if scale > 0 {
            if self.df_columns.len() == self.distance_field.texels.len() {
                let moved = passes::distance_field::update_distance_field(
                    &self.coverage,
                    w,
                    h,
                    scale,
                    changed,
                    &mut self.distance_field,
                    &mut self.df_columns,
                );
                // A window reads the field inside its box: where the
                // field moved, windows go too.
                forget.extend((!moved.is_empty()).then_some(moved));
            } else {
                (self.distance_field, self.df_columns) = passes::distance_field::distance_field_kept(&self.coverage, w, h, scale);
                forget = vec![TexelRect::grid(w, h)];
            }
        }
        Forget { rects: forget, shadows: !same_classes }
    }

    /// Copies another instance's occlusion, with its tables, under a new
    /// version; an error when the grids differ.
    pub fn copy_from(&mut self, other: &OcclusionTextures) -> Result<()> {
        if self.size != other.size {
            let ((w, h), (ow, oh)) = (other.size, self.size);
            return Err(CpuError::size("the occlusion to share", (w, h), (ow, oh)).into());
        }
        // The tables are a function of coverage and height: copied with them.
        *self = OcclusionTextures { version: next_version(), ..other.clone() };
        Ok(())
    }

    /// The texels of one occlusion texture with its width and height
    /// (`None` for a texture that is not one); a pyramid level not built is
    /// an error naming it.
    pub fn texels(&self, texture: Texture) -> Option<Result<(u32, u32, Texels<'_>)>> {
        let (w, h) = self.size;
        Some(Ok(match texture {
            Texture::Coverage => (w, h, Texels::U8(&self.coverage)),
            Texture::Height => (w, h, Texels::I32(&self.height)),
            Texture::Mip(level) => match level.checked_sub(1).and_then(|i| self.mips.get(i as usize)) {
                Some(grid) => (grid.width, grid.height, Texels::U8(&grid.texels)),
                None => return Some(Err(CpuError::NotBuilt { level, built: self.mips.len() }.into())),
            },
            Texture::DistanceField => (self.distance_field.width, self.distance_field.height, Texels::U32(&self.distance_field.texels)),
            _ => return None,
        }))
    }

    /// Loads the occlusion of a checked set (whole images): equal coverage
    /// and heights keep the tables, an equal whole keeps its version (else
    /// `version`). Returns whether coverage and heights were the ones held
    /// (the source windows then stay, to be finished anew).
    pub fn load(&mut self, set: &TextureSet, version: u64) -> Result<bool> {
        let (coverage, height) = match (set.get(Texture::Coverage).map(|i| &i.data), set.get(Texture::Height).map(|i| &i.data)) {
            (Some(TextureData::U8(c)), Some(TextureData::I32(h))) => (c, h),
            _ => return Err(CpuError::MissingTexture("coverage and heights".into()).into()),
        };
        let same_occlusion = *coverage == self.coverage && *height == self.height;
        let field = set.grid::<u32>(Texture::DistanceField).unwrap_or_default();
        let mips = set.mips();
        let (same_field, same_mips) = (field == self.distance_field, mips == self.mips);
        self.coverage.copy_from_slice(coverage);
        self.height.copy_from_slice(height);
        (self.mips, self.distance_field) = (mips, field);
        // The column pass kept for local updates belongs to the field it
        // built; equal bytes keep their version.
        if !(same_occlusion && same_field) {
            self.df_columns.clear();
        }
        if !(same_occlusion && same_field && same_mips) {
            self.version = version;
        }
        if !same_occlusion {
            let (w, h) = self.size;
            self.accel = Accel::new(&self.coverage, &self.height, w, h);
        }
        Ok(same_occlusion)
    }
}
