//! One value per mask, indexed by [`Texture`]: how the backends hold their
//! masks (`Masks<Vec<u16>>` on the CPU, `Masks<wgpu::Buffer>` on the GPU)
//! and whatever they keep per mask, so that a mask added to the table
//! needs no new field anywhere.

use super::table::{Texture, TEXTURES};
use std::ops::{Index, IndexMut};

/// How many masks an instance holds.
pub const MASK_COUNT: usize = {
    let mut count = 0;
    let mut i = 0;
    while i < TEXTURES.len() {
        if is_mask_row(i) {
            count += 1;
        }
        i += 1;
    }
    count
};

/// The masks, in table order.
pub const MASKS: [Texture; MASK_COUNT] = {
    let mut out = [Texture::Final; MASK_COUNT];
    let (mut i, mut at) = (0, 0);
    while i < TEXTURES.len() {
        if is_mask_row(i) {
            out[at] = TEXTURES[i].texture;
            at += 1;
        }
        i += 1;
    }
    out
};

/// Whether row `i` of the table is a mask's ([`Texture::is_mask`], in a
/// constant).
const fn is_mask_row(i: usize) -> bool {
    match TEXTURES[i].pass {
        Some(pass) => !pass.builds_occlusion(),
        None => true,
    }
}

/// A `T` for every mask of [`MASKS`], indexed by the mask's [`Texture`]
/// (indexing with a texture that is not a mask panics).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Masks<T>([T; MASK_COUNT]);

impl<T> Masks<T> {
    /// One value per mask, made from the mask.
    pub fn from_fn(mut make: impl FnMut(Texture) -> T) -> Self {
        Self(std::array::from_fn(|i| make(MASKS[i])))
    }

    /// Where `mask` is among [`MASKS`], `None` for a texture that is not a
    /// mask.
    pub fn position(mask: Texture) -> Option<usize> {
        MASKS.iter().position(|&m| m == mask)
    }

    fn at(mask: Texture) -> usize {
        Self::position(mask).unwrap_or_else(|| panic!("texture `{}` is not a mask", mask.name()))
    }

    /// The value of `mask`, `None` for a texture that is not a mask.
    pub fn get(&self, mask: Texture) -> Option<&T> {
        Some(&self.0[Self::position(mask)?])
    }

    /// The value of `mask`, `None` for a texture that is not a mask.
    pub fn get_mut(&mut self, mask: Texture) -> Option<&mut T> {
        Some(&mut self.0[Self::position(mask)?])
    }

    /// The values of several different masks at once, each borrowed
    /// mutably (a pass reads some masks and writes others). Panics when a
    /// texture is not a mask or is named twice.
    pub fn disjoint_mut<const N: usize>(&mut self, masks: [Texture; N]) -> [&mut T; N] {
        let at = masks.map(Self::at);
        self.0.get_disjoint_mut(at).unwrap_or_else(|_| panic!("masks {masks:?} name one mask twice"))
    }

    /// Every mask with its value, in table order.
    pub fn iter(&self) -> impl Iterator<Item = (Texture, &T)> {
        MASKS.into_iter().zip(&self.0)
    }

    /// Every mask with its value, mutably, in table order.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (Texture, &mut T)> {
        MASKS.into_iter().zip(&mut self.0)
    }

    /// The values, in table order.
    pub fn values(&self) -> impl Iterator<Item = &T> {
        self.0.iter()
    }

    /// A value per mask made from this one's.
    pub fn map<U>(self, mut f: impl FnMut(Texture, T) -> U) -> Masks<U> {
        let mut masks = MASKS.into_iter();
        Masks(self.0.map(|value| f(masks.next().expect("one mask per value"), value)))
    }
}

impl<T> Index<Texture> for Masks<T> {
    type Output = T;
    fn index(&self, mask: Texture) -> &T {
        &self.0[Self::at(mask)]
    }
}

impl<T> IndexMut<Texture> for Masks<T> {
    fn index_mut(&mut self, mask: Texture) -> &mut T {
        &mut self.0[Self::at(mask)]
    }
}

impl<T> IntoIterator for Masks<T> {
    type Item = (Texture, T);
    type IntoIter = std::iter::Zip<std::array::IntoIter<Texture, MASK_COUNT>, std::array::IntoIter<T, MASK_COUNT>>;
    fn into_iter(self) -> Self::IntoIter {
        MASKS.into_iter().zip(self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_masks_are_the_textures_the_occlusion_passes_do_not_write() {
        let names: Vec<String> = MASKS.iter().map(|m| m.name()).collect();
        assert_eq!(names.join(" "), "visibility blur memory mapped compose upscale start final");
        assert!(TEXTURES.iter().all(|row| row.texture.is_mask() == Masks::<()>::position(row.texture).is_some()));
        let mut masks = Masks::from_fn(|t| t.name());
        assert_eq!(masks[Texture::Final], "final");
        assert_eq!(masks.get(Texture::Coverage), None);
        let [blur, memory] = masks.disjoint_mut([Texture::Blur, Texture::Memory]);
        std::mem::swap(blur, memory);
        assert_eq!(masks[Texture::Blur], "memory");
        assert_eq!(masks.map(|t, name| (t, name.len()))[Texture::Start], (Texture::Start, 5));
    }

    #[test]
    #[should_panic(expected = "texture `height` is not a mask")]
    fn indexing_with_a_texture_that_is_not_a_mask_panics() {
        let _ = &Masks::from_fn(|_| 0)[Texture::Height];
    }
}
