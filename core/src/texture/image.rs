//! Whole images of textures: a texture as a backend hands it over
//! ([`TextureImage`]) and as a backend keeps it ([`Grid`]), and the
//! pyramid's levels drawn side by side in one image ([`mip_atlas`]).

use super::texel::{Texel, TextureData};

/// A texture read back from a backend, or handed to one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TextureImage {
    /// Width in texels.
    pub width: u32,
    /// Height in texels.
    pub height: u32,
    /// Row-major texels.
    pub data: TextureData,
}

impl TextureImage {
    /// Little-endian bytes of the texels (what goldens and snapshots use).
    pub fn bytes(&self) -> Vec<u8> {
        self.data.bytes()
    }

    /// The first texel `(x, y)` at which two images differ (`(0, 0)` when
    /// their sizes or texel types differ), or `None` when they are equal.
    pub fn first_difference(&self, other: &TextureImage) -> Option<(u32, u32)> {
        if (self.width, self.height) != (other.width, other.height) || self.data.kind() != other.data.kind() {
            return Some((0, 0));
        }
        let size = self.data.kind().size();
        let (a, b) = (self.bytes(), other.bytes());
        let i = a.chunks(size).zip(b.chunks(size)).position(|(p, q)| p != q)?;
        let w = self.width.max(1);
        Some((i as u32 % w, i as u32 / w))
    }

    /// A 16-bit grayscale rendering for pictures (not for comparison):
    /// coverage 0/1 becomes 0/65535, heights are offset to mid-gray, squared
    /// distances become distances scaled by 1024.
    pub fn to_gray16(&self) -> Vec<u16> {
        match &self.data {
            TextureData::U8(v) => v.iter().map(|&x| if x > 0 { 65535 } else { 0 }).collect(),
            TextureData::U16(v) => v.clone(),
            TextureData::I32(v) => v.iter().map(|&h| (h.clamp(-32768, 32767) + 32768) as u16).collect(),
            TextureData::U32(v) => v.iter().map(|&d| (f64::from(d).sqrt() * 1024.0).min(65535.0) as u16).collect(),
        }
    }
}

/// A row-major grid of texels and its size: how a backend keeps a texture.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Grid<T> {
    /// Width in texels.
    pub width: u32,
    /// Height in texels.
    pub height: u32,
    /// `width * height` texels, row by row.
    pub texels: Vec<T>,
}

impl<T: Texel> Grid<T> {
    /// A `width x height` grid holding `value` everywhere.
    pub fn filled(width: u32, height: u32, value: T) -> Self {
        Self { width, height, texels: vec![value; width as usize * height as usize] }
    }

    /// A copy as a texture image.
    pub fn image(&self) -> TextureImage {
        TextureImage { width: self.width, height: self.height, data: T::wrap(self.texels.clone()) }
    }

    /// The grid a texture image holds, `None` when its texels are of
    /// another type or their count is not its width times its height.
    pub fn from_image(img: &TextureImage) -> Option<Self> {
        let texels = T::unwrap(&img.data)?;
        (texels.len() as u64 == u64::from(img.width) * u64::from(img.height)).then(|| Self {
            width: img.width,
            height: img.height,
            texels: texels.to_vec(),
        })
    }
}

/// The mip levels laid side by side, level 1 at the left, in one image as
/// tall as level 1: how the whole pyramid of a `width x height` grid is
/// drawn and kept in the conformance goldens (zeros when none is built).
pub fn mip_atlas(width: u32, height: u32, levels: &[Grid<u8>]) -> TextureImage {
    let (w1, h1) = (width.div_ceil(2).max(1), height.div_ceil(2).max(1));
    let total_w = levels.iter().map(|l| l.width).sum::<u32>().max(w1);
    let mut atlas = vec![0u8; (total_w * h1) as usize];
    let mut x0 = 0;
    for level in levels {
        for (y, row) in level.texels.chunks(level.width.max(1) as usize).enumerate() {
            let at = y * total_w as usize + x0;
            atlas[at..at + row.len()].copy_from_slice(row);
        }
        x0 += level.width as usize;
    }
    TextureImage { width: total_w, height: h1, data: TextureData::U8(atlas) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_atlas_puts_levels_side_by_side() {
        let levels = vec![Grid { width: 2, height: 2, texels: vec![1, 0, 0, 1] }, Grid { width: 1, height: 1, texels: vec![1] }];
        let atlas = mip_atlas(4, 4, &levels);
        assert_eq!((atlas.width, atlas.height), (3, 2));
        assert_eq!(atlas.data, TextureData::U8(vec![1, 0, 1, 0, 1, 0]));
        let none = mip_atlas(4, 4, &[]);
        assert_eq!((none.width, none.height, none.data.len()), (2, 2, 4));
    }

    #[test]
    fn the_first_difference_is_named_by_its_texel() {
        let a = TextureImage { width: 4, height: 3, data: TextureData::U16(vec![0; 12]) };
        let mut b = a.clone();
        assert_eq!(a.first_difference(&b), None);
        if let TextureData::U16(v) = &mut b.data {
            v[6] = 1;
        }
        assert_eq!(a.first_difference(&b), Some((2, 1)));
        let other_type = TextureImage { width: 4, height: 3, data: TextureData::U8(vec![0; 12]) };
        assert_eq!(a.first_difference(&other_type), Some((0, 0)));
    }
}
