//! The texels of one texture of an instance, borrowed, whatever their type:
//! what a read, a save and a hash take from the textures an instance holds.

use murk_core::{TextureData, TextureImage, TileData, TiledImage};

/// Borrowed texels of one of the four texel types.
pub(crate) enum Texels<'a> {
    U8(&'a [u8]),
    U16(&'a [u16]),
    I32(&'a [i32]),
    U32(&'a [u32]),
}

impl Texels<'_> {
    /// A copy as an image of `width x height`.
    pub fn image(&self, width: u32, height: u32) -> TextureImage {
        let data = match self {
            Texels::U8(v) => TextureData::U8(v.to_vec()),
            Texels::U16(v) => TextureData::U16(v.to_vec()),
            Texels::I32(v) => TextureData::I32(v.to_vec()),
            Texels::U32(v) => TextureData::U32(v.to_vec()),
        };
        TextureImage { width, height, data }
    }

    /// Tile `i` of the texture, `width x height` texels: the first of
    /// `twins` that holds its texels, or else a copy.
    pub fn tile<'a>(&self, width: u32, height: u32, i: usize, twins: impl IntoIterator<Item = &'a TileData>) -> TileData {
        match self {
            Texels::U8(v) => TiledImage::copy_tile_or_twin(v, width, height, i, twins),
            Texels::U16(v) => TiledImage::copy_tile_or_twin(v, width, height, i, twins),
            Texels::I32(v) => TiledImage::copy_tile_or_twin(v, width, height, i, twins),
            Texels::U32(v) => TiledImage::copy_tile_or_twin(v, width, height, i, twins),
        }
    }
}
