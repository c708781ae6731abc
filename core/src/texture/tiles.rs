//! Textures as tiles: how a rollback state keeps them. A texture is cut
//! into [`TILE`]-sided tiles, each one allocation; a state shares with the
//! state before it every tile no pass wrote since.

use super::image::TextureImage;
use super::rect::TexelRect;
use super::texel::{Texel, TexelKind, TextureData, TileData};
use std::sync::Arc;

/// Side of the square tiles a rollback state keeps a texture in
/// ([`TiledImage`]), in texels.
pub const TILE: u32 = 32;

/// A texture held as [`TILE`]-sided tiles, row-major (the last column and
/// row of tiles cut to the texture's size). A rollback state keeps its
/// textures so: a tile no pass wrote since the state before is that
/// state's tile, shared, not a copy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TiledImage {
    /// Width in texels.
    pub width: u32,
    /// Height in texels.
    pub height: u32,
    /// The backend's version of each tile's bytes when it was read, row by
    /// row of tiles: two tiles at one place of one texture under one
    /// nonzero version hold the same bytes (a backend never gives a version
    /// to two contents). 0: the backend does not version it.
    pub versions: Vec<u64>,
    /// The tiles' texels, row by row of tiles, each tile's row by row. An
    /// image that holds another's tile at every place (an upscaled mask
    /// equal to the composed one) shares the other's list: the versions are
    /// each texture's own.
    pub tiles: Arc<[TileData]>,
}

impl TiledImage {
    /// Tiles along a row of a `width` texels wide texture.
    pub fn tiles_across(width: u32) -> u32 {
        width.div_ceil(TILE)
    }

    /// How many tiles a `width x height` texture is held in.
    pub fn tile_count(width: u32, height: u32) -> usize {
        Self::tiles_across(width) as usize * height.div_ceil(TILE) as usize
    }

    /// The texels of tile `i` of a `width x height` texture.
    pub fn tile_rect(width: u32, height: u32, i: usize) -> TexelRect {
        let across = Self::tiles_across(width) as usize;
        let (x0, y0) = ((i % across) as u32 * TILE, (i / across) as u32 * TILE);
        TexelRect { x0, y0, x1: (x0 + TILE).min(width), y1: (y0 + TILE).min(height) }
    }

    /// A copy of tile `i` of a row-major `width x height` grid of texels.
    pub fn copy_tile<T: Texel>(texels: &[T], width: u32, height: u32, i: usize) -> TileData {
        Self::copy_tile_or_twin(texels, width, height, i, [])
    }

    /// Tile `i` of a row-major `width x height` grid of texels: the first of
    /// `twins` that holds the same texels, shared, or else a copy. (A save
    /// offers the tiles it just took at the same place of other masks:
    /// several masks often hold the same bytes there.)
    pub fn copy_tile_or_twin<'a, T: Texel>(
        texels: &[T],
        width: u32,
        height: u32,
        i: usize,
        twins: impl IntoIterator<Item = &'a TileData>,
    ) -> TileData {
        const SIDE: usize = TILE as usize;
        let rect = Self::tile_rect(width, height, i);
        let (w, x0, x1) = (width as usize, rect.x0 as usize, rect.x1 as usize);
        let rows = rect.y0 as usize..rect.y1 as usize;
        // Gathered on the stack, then copied once into the tile's allocation.
        let mut gathered = [T::default(); SIDE * SIDE];
        let out = &mut gathered[..(x1 - x0) * rows.len()];
        if x1 - x0 == SIDE {
            // Rows of a length the compiler knows: copied without a call.
            for (dst, y) in out.as_chunks_mut::<SIDE>().0.iter_mut().zip(rows) {
                dst.copy_from_slice(&texels[y * w + x0..y * w + x1]);
            }
        } else {
            for (dst, y) in out.chunks_exact_mut(x1 - x0).zip(rows) {
                dst.copy_from_slice(&texels[y * w + x0..y * w + x1]);
            }
        }
        match twins.into_iter().find(|twin| T::unwrap_tile(twin).is_some_and(|t| t == out)) {
            Some(twin) => twin.clone(),
            None => T::wrap_tile(Arc::from(&*out)),
        }
    }

    /// An image cut into tiles, none of them versioned.
    pub fn split(image: &TextureImage) -> Self {
        let (w, h) = (image.width, image.height);
        let tile = |i| match &image.data {
            TextureData::U8(v) => Self::copy_tile(v, w, h, i),
            TextureData::U16(v) => Self::copy_tile(v, w, h, i),
            TextureData::I32(v) => Self::copy_tile(v, w, h, i),
            TextureData::U32(v) => Self::copy_tile(v, w, h, i),
        };
        let count = Self::tile_count(w, h);
        Self { width: w, height: h, versions: vec![0; count], tiles: (0..count).map(tile).collect() }
    }

    /// Writes the tiles into a row-major grid of their size and type, all
    /// but those `skip` names by index; `false` (and nothing written) when a
    /// tile is of another type or size.
    pub fn write_into<T: Texel>(&self, texels: &mut [T], skip: impl Fn(usize) -> bool) -> bool {
        if texels.len() != self.width as usize * self.height as usize || !self.fits() {
            return false;
        }
        let w = self.width as usize;
        for (i, tile) in self.tiles.iter().enumerate().filter(|(i, _)| !skip(*i)) {
            let Some(src) = T::unwrap_tile(tile) else { return false };
            let rect = Self::tile_rect(self.width, self.height, i);
            let (x0, x1) = (rect.x0 as usize, rect.x1 as usize);
            for (k, row) in src.chunks_exact(x1 - x0).enumerate() {
                let at = (rect.y0 as usize + k) * w;
                texels[at + x0..at + x1].copy_from_slice(row);
            }
        }
        true
    }

    /// As [`Self::write_into`], and where the grid changed: for each row of
    /// a tile written whose texels were not all there already, the span
    /// from its first to its last texel that took a new value (`None`, and
    /// nothing written, where `write_into` answers `false`). A rollback's
    /// load redoes the work downstream of a texture over these spans only.
    pub fn write_changes_into<T: Texel>(&self, texels: &mut [T], skip: impl Fn(usize) -> bool) -> Option<Vec<TexelRect>> {
        if texels.len() != self.width as usize * self.height as usize || !self.fits() {
            return None;
        }
        let w = self.width as usize;
        let mut changed = Vec::new();
        for (i, tile) in self.tiles.iter().enumerate().filter(|(i, _)| !skip(*i)) {
            let src = T::unwrap_tile(tile)?;
            let rect = Self::tile_rect(self.width, self.height, i);
            let (x0, x1) = (rect.x0 as usize, rect.x1 as usize);
            for (k, row) in src.chunks_exact(x1 - x0).enumerate() {
                let (y, at) = (rect.y0 + k as u32, (rect.y0 as usize + k) * w);
                let held = &mut texels[at + x0..at + x1];
                // Most rows of a rewritten tile are whole comparisons that hold.
                if held == row {
                    continue;
                }
                let differs = |(a, b): (&T, &T)| a != b;
                let first = row.iter().zip(held.iter()).position(differs).expect("the rows differ");
                let last = row.iter().zip(held.iter()).rposition(differs).expect("the rows differ");
                held[first..=last].copy_from_slice(&row[first..=last]);
                changed.push(TexelRect { x0: (x0 + first) as u32, y0: y, x1: (x0 + last + 1) as u32, y1: y + 1 });
            }
        }
        Some(changed)
    }

    /// Whether there is one tile and one version per place, each tile of its
    /// place's size and all of one texel type.
    pub fn fits(&self) -> bool {
        let kind = self.kind();
        self.tiles.len() == Self::tile_count(self.width, self.height)
            && self.versions.len() == self.tiles.len()
            && self
                .tiles
                .iter()
                .enumerate()
                .all(|(i, t)| Some(t.kind()) == kind && t.len() as u64 == Self::tile_rect(self.width, self.height, i).area())
    }

    /// The texel type of its tiles (`None` when it has none).
    pub fn kind(&self) -> Option<TexelKind> {
        self.tiles.first().map(TileData::kind)
    }

    /// The whole image, the tiles put together.
    pub fn to_image(&self) -> TextureImage {
        fn joined<T: Texel>(img: &TiledImage) -> TextureData {
            let mut texels = vec![T::default(); img.width as usize * img.height as usize];
            img.write_into(&mut texels, |_| false);
            T::wrap(texels)
        }
        let data = match self.kind() {
            Some(TexelKind::U16) | None => joined::<u16>(self),
            Some(TexelKind::U8) => joined::<u8>(self),
            Some(TexelKind::I32) => joined::<i32>(self),
            Some(TexelKind::U32) => joined::<u32>(self),
        };
        TextureImage { width: self.width, height: self.height, data }
    }

    /// Whether every tile is the same allocation as `other`'s at its place.
    pub fn shares_all(&self, other: &TiledImage) -> bool {
        Arc::ptr_eq(&self.tiles, &other.tiles)
            || self.tiles.len() == other.tiles.len() && self.tiles.iter().zip(other.tiles.iter()).all(|(a, b)| a.same(b))
    }
}
