//! The textures of an instance, named and typed in one place.
//!
//! Every instance holds the same list of textures, fixed by its size and by
//! what its last occlusion build made ([`OcclusionBuild`]): coverage and
//! heights, the coverage pyramid when the ray method needs it, the distance
//! field (empty unless built), the four internal masks and the three output
//! masks. [`instance_textures`] writes that list down once; snapshot export,
//! the restore checks, the world-space resample and both backends read it
//! from there. Backends hand textures over as [`StageImage`]s and keep them
//! as [`Grid`]s; a rollback state keeps them as [`TiledImage`]s, whose
//! tiles it shares with the states before it.

use crate::error::{MurkError, Result};
use crate::fixed::{HEIGHT_LIMIT, HEIGHT_WALL};
use serde::{Deserialize, Serialize};
use std::sync::{Arc, OnceLock};

/// Texture sizes of an instance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InstanceDims {
    /// Internal (LOD) width.
    pub width: u32,
    /// Internal (LOD) height.
    pub height: u32,
    /// Output width (the render target).
    pub out_width: u32,
    /// Output height.
    pub out_height: u32,
}

/// Texel data of a stage.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StageData {
    /// Coverage and mips.
    U8(Vec<u8>),
    /// Masks.
    U16(Vec<u16>),
    /// Heights.
    I32(Vec<i32>),
    /// Squared distances.
    U32(Vec<u32>),
}

/// A stage read back from a backend.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StageImage {
    /// Width in texels.
    pub width: u32,
    /// Height in texels.
    pub height: u32,
    /// Row-major texels.
    pub data: StageData,
}

impl StageImage {
    /// Little-endian bytes of the texels (what goldens and snapshots use).
    pub fn bytes(&self) -> Vec<u8> {
        // On a little-endian machine the texels are their bytes already.
        #[cfg(target_endian = "little")]
        return match &self.data {
            StageData::U8(v) => v.clone(),
            StageData::U16(v) => bytemuck::cast_slice(v).to_vec(),
            StageData::I32(v) => bytemuck::cast_slice(v).to_vec(),
            StageData::U32(v) => bytemuck::cast_slice(v).to_vec(),
        };
        #[cfg(target_endian = "big")]
        match &self.data {
            StageData::U8(v) => v.clone(),
            StageData::U16(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            StageData::I32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            StageData::U32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        }
    }

    /// The first texel `(x, y)` at which two images differ (`(0, 0)` when
    /// their sizes differ), or `None` when they are equal.
    pub fn first_difference(&self, other: &StageImage) -> Option<(u32, u32)> {
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
            StageData::U8(v) => v.iter().map(|&x| if x > 0 { 65535 } else { 0 }).collect(),
            StageData::U16(v) => v.clone(),
            StageData::I32(v) => v.iter().map(|&h| (h.clamp(-32768, 32767) + 32768) as u16).collect(),
            StageData::U32(v) => v.iter().map(|&d| (f64::from(d).sqrt() * 1024.0).min(65535.0) as u16).collect(),
        }
    }
}

/// The type of a texture's texels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TexelKind {
    /// Coverage and its pyramid: 0 or 1.
    U8,
    /// Masks: 0..=65535.
    U16,
    /// Heights, in height units.
    I32,
    /// Squared distances of the distance field.
    U32,
}

impl TexelKind {
    /// The code snapshots store (0 u8, 1 u16, 2 i32, 3 u32).
    pub fn code(self) -> u8 {
        match self {
            TexelKind::U8 => 0,
            TexelKind::U16 => 1,
            TexelKind::I32 => 2,
            TexelKind::U32 => 3,
        }
    }

    /// The kind a snapshot code names, `None` for an unknown code.
    pub fn from_code(code: u8) -> Option<Self> {
        [TexelKind::U8, TexelKind::U16, TexelKind::I32, TexelKind::U32].into_iter().find(|k| k.code() == code)
    }

    /// Bytes per texel.
    pub fn size(self) -> usize {
        match self {
            TexelKind::U8 => 1,
            TexelKind::U16 => 2,
            TexelKind::I32 | TexelKind::U32 => 4,
        }
    }

    /// The Rust name of the texel type.
    pub fn name(self) -> &'static str {
        match self {
            TexelKind::U8 => "u8",
            TexelKind::U16 => "u16",
            TexelKind::I32 => "i32",
            TexelKind::U32 => "u32",
        }
    }
}

impl StageData {
    /// The texel type it holds.
    pub fn kind(&self) -> TexelKind {
        match self {
            StageData::U8(_) => TexelKind::U8,
            StageData::U16(_) => TexelKind::U16,
            StageData::I32(_) => TexelKind::I32,
            StageData::U32(_) => TexelKind::U32,
        }
    }

    /// Number of texels.
    pub fn len(&self) -> usize {
        match self {
            StageData::U8(v) => v.len(),
            StageData::U16(v) => v.len(),
            StageData::I32(v) => v.len(),
            StageData::U32(v) => v.len(),
        }
    }

    /// Whether it holds no texel.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A texel type a [`Grid`] can hold: one of the four of [`StageData`].
pub trait Texel: Copy + Default + PartialEq + Send + Sync + 'static {
    /// Its kind.
    const KIND: TexelKind;
    /// Texels as stage data.
    fn wrap(texels: Vec<Self>) -> StageData;
    /// The texels of stage data of this type, `None` for another type.
    fn unwrap(data: &StageData) -> Option<&[Self]>;
    /// Texels as the data of a tile.
    fn wrap_tile(texels: Arc<[Self]>) -> TileData;
    /// The texels of a tile of this type, `None` for another type.
    fn unwrap_tile(data: &TileData) -> Option<&[Self]>;
}

macro_rules! texel {
    ($t:ty, $kind:ident) => {
        impl Texel for $t {
            const KIND: TexelKind = TexelKind::$kind;
            fn wrap(texels: Vec<Self>) -> StageData {
                StageData::$kind(texels)
            }
            fn unwrap(data: &StageData) -> Option<&[Self]> {
                match data {
                    StageData::$kind(v) => Some(v),
                    _ => None,
                }
            }
            fn wrap_tile(texels: Arc<[Self]>) -> TileData {
                TileData::$kind(texels)
            }
            fn unwrap_tile(data: &TileData) -> Option<&[Self]> {
                match data {
                    TileData::$kind(v) => Some(v),
                    _ => None,
                }
            }
        }
    };
}
texel!(u8, U8);
texel!(u16, U16);
texel!(i32, I32);
texel!(u32, U32);

/// A row-major grid of texels and its size.
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

    /// A copy as a stage image.
    pub fn image(&self) -> StageImage {
        StageImage { width: self.width, height: self.height, data: T::wrap(self.texels.clone()) }
    }

    /// The grid a stage image holds, `None` when its texels are of another
    /// type or their count is not its width times its height.
    pub fn from_image(img: &StageImage) -> Option<Self> {
        let texels = T::unwrap(&img.data)?;
        (texels.len() as u64 == u64::from(img.width) * u64::from(img.height)).then(|| Self {
            width: img.width,
            height: img.height,
            texels: texels.to_vec(),
        })
    }
}

/// One texture of an instance.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Texture {
    /// 0/1 coverage, internal resolution.
    Coverage,
    /// Heights, internal resolution.
    Height,
    /// Level `n >= 1` of the coverage pyramid: each level half the one below, rounded up.
    Mip(u32),
    /// Squared distances to the nearest covered texel, at the distance-field scale.
    DistanceField,
    /// Raw visibility, internal resolution.
    Visibility,
    /// Blurred visibility, internal resolution.
    Blur,
    /// Explored memory, internal resolution.
    Memory,
    /// Mapped knowledge (known from a map, never seen), internal resolution.
    Mapped,
    /// The composed mask, internal resolution.
    Compose,
    /// The composed mask at the output resolution.
    Upscale,
    /// Where the running blend started, output resolution.
    Start,
    /// The final mask materials sample, output resolution.
    Final,
}

impl Texture {
    /// Its stable name in snapshots (`coverage`, `mip3`, `final`, ...).
    pub fn name(self) -> String {
        match self {
            Texture::Mip(level) => format!("mip{level}"),
            other => other.fixed_name().to_string(),
        }
    }

    fn fixed_name(self) -> &'static str {
        match self {
            Texture::Coverage => "coverage",
            Texture::Height => "height",
            Texture::Mip(_) => "mip",
            Texture::DistanceField => "distance_field",
            Texture::Visibility => "visibility",
            Texture::Blur => "blur",
            Texture::Memory => "memory",
            Texture::Mapped => "mapped",
            Texture::Compose => "compose",
            Texture::Upscale => "upscale",
            Texture::Start => "start",
            Texture::Final => "final",
        }
    }

    /// The texture a snapshot name stands for, `None` for a name no texture has.
    pub fn parse(name: &str) -> Option<Self> {
        if let Some(level) = name.strip_prefix("mip") {
            // Canonical digits only: `mip01` is not `mip1`.
            return level.parse::<u32>().ok().filter(|l| *l >= 1 && l.to_string() == level).map(Texture::Mip);
        }
        [
            Texture::Coverage,
            Texture::Height,
            Texture::DistanceField,
            Texture::Visibility,
            Texture::Blur,
            Texture::Memory,
            Texture::Mapped,
            Texture::Compose,
            Texture::Upscale,
            Texture::Start,
            Texture::Final,
        ]
        .into_iter()
        .find(|t| t.fixed_name() == name)
    }

    /// The type of its texels.
    pub fn kind(self) -> TexelKind {
        match self {
            Texture::Coverage | Texture::Mip(_) => TexelKind::U8,
            Texture::Height => TexelKind::I32,
            Texture::DistanceField => TexelKind::U32,
            _ => TexelKind::U16,
        }
    }

    /// Whether it belongs to the occlusion (rebuilt from the blockers), not to the masks.
    pub fn is_occlusion(self) -> bool {
        matches!(self, Texture::Coverage | Texture::Height | Texture::Mip(_) | Texture::DistanceField)
    }
}

/// What an occlusion build made besides coverage and heights.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OcclusionBuild {
    /// The coverage pyramid (the hierarchical DDA reads it).
    pub mips: bool,
    /// The distance field's downscale: 0 (none), 1, 2 or 4.
    pub distance_field_scale: u32,
}

/// A texture of an instance and its size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TextureSpec {
    /// Which texture.
    pub texture: Texture,
    /// Width in texels.
    pub width: u32,
    /// Height in texels.
    pub height: u32,
}

/// The sizes of the coverage pyramid over a `width x height` grid: levels
/// 1.. in order, each half the one below rounded up, down to 1x1.
pub fn mip_sizes(width: u32, height: u32) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    let (mut w, mut h) = (width, height);
    while w > 1 || h > 1 {
        (w, h) = (w.div_ceil(2), h.div_ceil(2));
        out.push((w, h));
    }
    out
}

/// The textures an instance of `dims` holds after the occlusion build
/// `build` (`None`: nothing built yet), in the order snapshots list them.
pub fn instance_textures(dims: InstanceDims, build: Option<OcclusionBuild>) -> Vec<TextureSpec> {
    let (w, h) = (dims.width, dims.height);
    let entry = |texture, width, height| TextureSpec { texture, width, height };
    let mut out = vec![entry(Texture::Coverage, w, h), entry(Texture::Height, w, h)];
    let build = build.unwrap_or_default();
    if build.mips {
        out.extend(mip_sizes(w, h).into_iter().zip(1..).map(|((lw, lh), level)| entry(Texture::Mip(level), lw, lh)));
    }
    let scale = build.distance_field_scale;
    let (dw, dh) = if scale > 0 { (w.div_ceil(scale), h.div_ceil(scale)) } else { (0, 0) };
    out.push(entry(Texture::DistanceField, dw, dh));
    for t in [Texture::Visibility, Texture::Blur, Texture::Memory, Texture::Mapped, Texture::Compose] {
        out.push(entry(t, w, h));
    }
    for t in [Texture::Upscale, Texture::Start, Texture::Final] {
        out.push(entry(t, dims.out_width, dims.out_height));
    }
    out
}

/// The mip levels laid side by side, level 1 at the left, in one image as
/// tall as level 1 (how the `mips` stage is read and drawn).
pub fn mip_atlas(width: u32, height: u32, levels: &[Grid<u8>]) -> StageImage {
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
    StageImage { width: total_w, height: h1, data: StageData::U8(atlas) }
}

/// Side of the square tiles a rollback state keeps a texture in
/// ([`TiledImage`]), in texels.
pub const TILE: u32 = 32;

/// The texels of one tile, in one allocation that every state holding the
/// tile shares.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TileData {
    /// Coverage and mips.
    U8(Arc<[u8]>),
    /// Masks.
    U16(Arc<[u16]>),
    /// Heights.
    I32(Arc<[i32]>),
    /// Squared distances.
    U32(Arc<[u32]>),
}

impl TileData {
    /// The texel type it holds.
    pub fn kind(&self) -> TexelKind {
        match self {
            TileData::U8(_) => TexelKind::U8,
            TileData::U16(_) => TexelKind::U16,
            TileData::I32(_) => TexelKind::I32,
            TileData::U32(_) => TexelKind::U32,
        }
    }

    /// Number of texels.
    pub fn len(&self) -> usize {
        match self {
            TileData::U8(v) => v.len(),
            TileData::U16(v) => v.len(),
            TileData::I32(v) => v.len(),
            TileData::U32(v) => v.len(),
        }
    }

    /// Whether it holds no texel.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes of its texels.
    pub fn bytes(&self) -> usize {
        self.len() * self.kind().size()
    }

    /// The address of its texels: two tiles have one address when they
    /// share one allocation.
    pub fn address(&self) -> usize {
        match self {
            TileData::U8(v) => v.as_ptr() as usize,
            TileData::U16(v) => v.as_ptr() as usize,
            TileData::I32(v) => v.as_ptr() as usize,
            TileData::U32(v) => v.as_ptr() as usize,
        }
    }

    /// Whether the two are one allocation (shared, not equal copies).
    pub fn same(&self, other: &TileData) -> bool {
        match (self, other) {
            (TileData::U8(a), TileData::U8(b)) => Arc::ptr_eq(a, b),
            (TileData::U16(a), TileData::U16(b)) => Arc::ptr_eq(a, b),
            (TileData::I32(a), TileData::I32(b)) => Arc::ptr_eq(a, b),
            (TileData::U32(a), TileData::U32(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }
}

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

    /// The texels `x0..x1` by `y0..y1` of tile `i` of a `width x height`
    /// texture.
    pub fn tile_rect(width: u32, height: u32, i: usize) -> (u32, u32, u32, u32) {
        let across = Self::tiles_across(width) as usize;
        let (x0, y0) = ((i % across) as u32 * TILE, (i / across) as u32 * TILE);
        (x0, y0, (x0 + TILE).min(width), (y0 + TILE).min(height))
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
        let (x0, y0, x1, y1) = Self::tile_rect(width, height, i);
        let (w, x0, x1) = (width as usize, x0 as usize, x1 as usize);
        let rows = y0 as usize..y1 as usize;
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
    pub fn split(image: &StageImage) -> Self {
        let (w, h) = (image.width, image.height);
        let tile = |i| match &image.data {
            StageData::U8(v) => Self::copy_tile(v, w, h, i),
            StageData::U16(v) => Self::copy_tile(v, w, h, i),
            StageData::I32(v) => Self::copy_tile(v, w, h, i),
            StageData::U32(v) => Self::copy_tile(v, w, h, i),
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
            let (x0, y0, x1, _) = Self::tile_rect(self.width, self.height, i);
            let (x0, x1) = (x0 as usize, x1 as usize);
            for (k, row) in src.chunks_exact(x1 - x0).enumerate() {
                let at = (y0 as usize + k) * w;
                texels[at + x0..at + x1].copy_from_slice(row);
            }
        }
        true
    }

    /// Whether there is one tile and one version per place, each tile of its
    /// place's size and all of one texel type.
    pub fn fits(&self) -> bool {
        let kind = self.kind();
        self.tiles.len() == Self::tile_count(self.width, self.height)
            && self.versions.len() == self.tiles.len()
            && self.tiles.iter().enumerate().all(|(i, t)| {
                let (x0, y0, x1, y1) = Self::tile_rect(self.width, self.height, i);
                Some(t.kind()) == kind && t.len() == ((x1 - x0) * (y1 - y0)) as usize
            })
    }

    /// The texel type of its tiles (`None` when it has none).
    pub fn kind(&self) -> Option<TexelKind> {
        self.tiles.first().map(TileData::kind)
    }

    /// The whole image, the tiles put together.
    pub fn to_image(&self) -> StageImage {
        fn joined<T: Texel>(img: &TiledImage) -> StageData {
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
        StageImage { width: self.width, height: self.height, data }
    }

    /// Whether every tile is the same allocation as `other`'s at its place.
    pub fn shares_all(&self, other: &TiledImage) -> bool {
        Arc::ptr_eq(&self.tiles, &other.tiles)
            || self.tiles.len() == other.tiles.len() && self.tiles.iter().zip(other.tiles.iter()).all(|(a, b)| a.same(b))
    }
}

/// Every texture of one instance, checked against [`instance_textures`]:
/// what a backend is given to load (a restore, a resample, a rollback) and
/// what a snapshot saves. The images are shared: a set made from a kept
/// rollback state ([`TextureSet::tiled`]) copies none of them.
#[derive(Clone, Debug)]
pub struct TextureSet {
    build: Option<OcclusionBuild>,
    textures: Vec<(Texture, SetImage)>,
}

/// One texture of a [`TextureSet`]: a whole image, or the tiles of a
/// rollback state (put together only when a backend asks for the whole).
#[derive(Clone, Debug)]
enum SetImage {
    Whole(Arc<StageImage>),
    Tiled(Arc<TiledImage>, OnceLock<StageImage>),
}

impl SetImage {
    fn whole(&self) -> &StageImage {
        match self {
            SetImage::Whole(img) => img,
            SetImage::Tiled(tiles, whole) => whole.get_or_init(|| tiles.to_image()),
        }
    }

    fn size(&self) -> (u32, u32) {
        match self {
            SetImage::Whole(img) => (img.width, img.height),
            SetImage::Tiled(t, _) => (t.width, t.height),
        }
    }
}

impl TextureSet {
    /// Checks `textures` against the list of an instance of `dims` after
    /// `build`: every texture once, in order, of its size and type, and the
    /// occlusion within range (coverage and mips 0 or 1, heights within the
    /// height range). Errors name the texture under `prefix`.
    pub fn new(dims: InstanceDims, build: Option<OcclusionBuild>, textures: Vec<(Texture, StageImage)>, prefix: &str) -> Result<Self> {
        let textures = textures.into_iter().map(|(t, img)| (t, SetImage::Whole(Arc::new(img)))).collect();
        Self::checked(dims, build, textures, prefix)
    }

    /// [`TextureSet::new`] of textures held as tiles (a rollback state's),
    /// with the same checks; each tile must be of its place's size. The
    /// tiles' versions are taken on the backend's word, not checked: a set
    /// of tiles comes from [`crate::Backend::save_tiles`] of this process
    /// (a tile under a version the instance's tile has is not written).
    pub fn tiled(dims: InstanceDims, build: Option<OcclusionBuild>, textures: Vec<(Texture, Arc<TiledImage>)>, prefix: &str) -> Result<Self> {
        let textures = textures.into_iter().map(|(t, img)| (t, SetImage::Tiled(img, OnceLock::new()))).collect();
        Self::checked(dims, build, textures, prefix)
    }

    fn checked(dims: InstanceDims, build: Option<OcclusionBuild>, textures: Vec<(Texture, SetImage)>, prefix: &str) -> Result<Self> {
        let expected = instance_textures(dims, build);
        let listed: Vec<String> = textures.iter().map(|(t, _)| t.name()).collect();
        let wanted: Vec<String> = expected.iter().map(|s| s.texture.name()).collect();
        if listed != wanted {
            return Err(MurkError::invalid(
                format!("{prefix}.textures"),
                listed.join(", "),
                format!("must be exactly {} for its size and occlusion build", wanted.join(", ")),
            ));
        }
        for ((texture, img), entry) in textures.iter().zip(&expected) {
            let field = format!("{prefix}.textures.{}", texture.name());
            let want = texture.kind();
            let (size, found) = match img {
                SetImage::Whole(img) => {
                    let count_ok = img.data.len() as u64 == u64::from(img.width) * u64::from(img.height);
                    let found = format!("{}x{} of {} {} texels", img.width, img.height, img.data.len(), img.data.kind().name());
                    ((img.width, img.height, count_ok.then_some(img.data.kind())), found)
                }
                SetImage::Tiled(t, _) => {
                    let kind = if t.fits() { t.kind().or(Some(want)) } else { None };
                    let (tiles, versions, kind_name) = (t.tiles.len(), t.versions.len(), t.kind().map_or("no", TexelKind::name));
                    let found = format!("{}x{} in {tiles} tiles ({versions} versions) of {kind_name}", t.width, t.height);
                    ((t.width, t.height, kind), found)
                }
            };
            if size != (entry.width, entry.height, Some(want)) {
                return Err(MurkError::invalid(field, found, format!("must be {}x{} of {}", entry.width, entry.height, want.name())));
            }
            if let Some((at, v, range)) = out_of_range(img) {
                return Err(MurkError::invalid(format!("{field}[{at}]"), v, format!("must be {range}")));
            }
        }
        Ok(Self { build, textures })
    }

    /// The occlusion build the set was checked for.
    pub fn build(&self) -> Option<OcclusionBuild> {
        self.build
    }

    /// Every texture, in order (tiles put together).
    pub fn textures(&self) -> impl Iterator<Item = (Texture, &StageImage)> {
        self.textures.iter().map(|(t, img)| (*t, img.whole()))
    }

    /// Every texture, in order, with its width and height.
    pub fn sizes(&self) -> impl Iterator<Item = (Texture, (u32, u32))> + '_ {
        self.textures.iter().map(|(t, img)| (*t, img.size()))
    }

    /// One texture of the set (its tiles put together).
    pub fn get(&self, texture: Texture) -> Option<&StageImage> {
        self.textures().find(|(t, _)| *t == texture).map(|(_, img)| img)
    }

    /// The tiles of one texture, when the set was made of tiles.
    pub fn tiles(&self, texture: Texture) -> Option<&Arc<TiledImage>> {
        self.textures.iter().find(|(t, _)| *t == texture).and_then(|(_, img)| match img {
            SetImage::Tiled(tiles, _) => Some(tiles),
            SetImage::Whole(_) => None,
        })
    }

    /// One texture of the set as a grid of its type.
    pub fn grid<T: Texel>(&self, texture: Texture) -> Option<Grid<T>> {
        self.get(texture).and_then(Grid::from_image)
    }

    /// The pyramid levels, level 1 first (empty when none was built).
    pub fn mips(&self) -> Vec<Grid<u8>> {
        self.textures().filter(|(t, _)| matches!(t, Texture::Mip(_))).filter_map(|(_, img)| Grid::from_image(img)).collect()
    }
}

/// The first texel of an occlusion texture out of its range, as (index
/// in the whole texture, value, the range); masks have none.
fn out_of_range(img: &SetImage) -> Option<(usize, i64, String)> {
    let heights = || format!("-{HEIGHT_LIMIT}..={HEIGHT_WALL}");
    let coverage = |v: &[u8]| v.iter().position(|&x| x > 1).map(|i| (i, i64::from(v[i]), "0 or 1".to_string()));
    let height = |v: &[i32]| v.iter().position(|x| !(-HEIGHT_LIMIT..=HEIGHT_WALL).contains(x)).map(|i| (i, i64::from(v[i]), heights()));
    match img {
        SetImage::Whole(img) => match &img.data {
            StageData::U8(v) => coverage(v),
            StageData::I32(v) => height(v),
            _ => None,
        },
        SetImage::Tiled(t, _) => t.tiles.iter().enumerate().find_map(|(k, tile)| {
            let (i, v, range) = match tile {
                TileData::U8(v) => coverage(v),
                TileData::I32(v) => height(v),
                _ => None,
            }?;
            let (x0, y0, x1, _) = TiledImage::tile_rect(t.width, t.height, k);
            let (x, y) = (x0 as usize + i % (x1 - x0) as usize, y0 as usize + i / (x1 - x0) as usize);
            Some((y * t.width as usize + x, v, range))
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dims() -> InstanceDims {
        InstanceDims { width: 5, height: 3, out_width: 10, out_height: 6 }
    }

    #[test]
    fn names_round_trip_and_reject_what_no_texture_is_called() {
        for entry in instance_textures(dims(), Some(OcclusionBuild { mips: true, distance_field_scale: 2 })) {
            assert_eq!(Texture::parse(&entry.texture.name()), Some(entry.texture));
        }
        for bad in ["mip0", "mip01", "mip", "mips", "Final", ""] {
            assert_eq!(Texture::parse(bad), None, "{bad}");
        }
        for kind in [TexelKind::U8, TexelKind::U16, TexelKind::I32, TexelKind::U32] {
            assert_eq!(TexelKind::from_code(kind.code()), Some(kind));
        }
        assert_eq!(TexelKind::from_code(4), None);
    }

    #[test]
    fn the_list_follows_the_build() {
        let names = |build| instance_textures(dims(), build).iter().map(|s| s.texture.name()).collect::<Vec<_>>().join(" ");
        assert_eq!(names(None), "coverage height distance_field visibility blur memory mapped compose upscale start final");
        assert_eq!(
            names(Some(OcclusionBuild { mips: true, distance_field_scale: 0 })),
            "coverage height mip1 mip2 mip3 distance_field visibility blur memory mapped compose upscale start final"
        );
        let specs = instance_textures(dims(), Some(OcclusionBuild { mips: false, distance_field_scale: 2 }));
        let df = specs.iter().find(|s| s.texture == Texture::DistanceField).unwrap();
        assert_eq!((df.width, df.height), (3, 2));
        assert_eq!(mip_sizes(5, 3), vec![(3, 2), (2, 1), (1, 1)]);
    }

    fn full_set(build: Option<OcclusionBuild>) -> Vec<(Texture, StageImage)> {
        instance_textures(dims(), build)
            .into_iter()
            .map(|s| {
                let n = (s.width * s.height) as usize;
                let data = match s.texture.kind() {
                    TexelKind::U8 => StageData::U8(vec![0; n]),
                    TexelKind::U16 => StageData::U16(vec![0; n]),
                    TexelKind::I32 => StageData::I32(vec![0; n]),
                    TexelKind::U32 => StageData::U32(vec![0; n]),
                };
                (s.texture, StageImage { width: s.width, height: s.height, data })
            })
            .collect()
    }

    /// Tiles cut at the edges put back together give the image; a load
    /// writes all but the tiles it is told to skip; a set of tiles is
    /// checked as a set of images is, and names the texel out of range by
    /// its place in the whole texture.
    #[test]
    fn tiles_join_back_and_a_tiled_set_is_checked() {
        let (w, h) = (TILE * 2 + 3, TILE + 5);
        let texels: Vec<u16> = (0..w * h).map(|i| (i * 7) as u16).collect();
        let image = StageImage { width: w, height: h, data: StageData::U16(texels.clone()) };
        let tiled = TiledImage::split(&image);
        assert_eq!(tiled.tiles.len(), 6);
        assert!(tiled.fits());
        assert_eq!(tiled.to_image(), image);
        assert_eq!(tiled.tiles.iter().map(TileData::bytes).sum::<usize>(), texels.len() * 2);
        let mut out = vec![0u16; texels.len()];
        assert!(tiled.write_into(&mut out, |i| i == 4));
        for (i, (&got, &want)) in out.iter().zip(&texels).enumerate() {
            let (x, y) = (i as u32 % w, i as u32 / w);
            let skipped = (x / TILE, y / TILE) == (1, 1);
            assert_eq!(got, if skipped { 0 } else { want }, "texel ({x}, {y})");
        }
        assert!(!tiled.write_into(&mut vec![0u8; texels.len()], |_| false), "a grid of another type");
        let mut short = tiled.clone();
        Arc::make_mut(&mut short.tiles)[5] = TileData::U16(Arc::from(&[1u16][..]));
        assert!(!short.fits());
        let mut unversioned = tiled.clone();
        unversioned.versions.pop();
        assert!(!unversioned.fits(), "a tile without its version");

        let sets = |edit: &dyn Fn(&mut TiledImage)| {
            let images = full_set(None).into_iter().map(|(t, img)| {
                let mut tiles = TiledImage::split(&img);
                if t == Texture::Height {
                    edit(&mut tiles);
                }
                (t, Arc::new(tiles))
            });
            TextureSet::tiled(dims(), None, images.collect(), "s")
        };
        let set = sets(&|_| {}).unwrap();
        assert_eq!(set.get(Texture::Final).map(|i| (i.width, i.height)), Some((10, 6)));
        assert!(set.tiles(Texture::Final).is_some());
        let e = sets(&|t| (t.tiles, t.versions) = (Arc::from([]), Vec::new())).unwrap_err().to_string();
        assert!(e.contains("s.textures.height = 5x3 in 0 tiles (0 versions)"), "{e}");
        let e = sets(&|t| t.versions.push(0)).unwrap_err().to_string();
        assert!(e.contains("s.textures.height = 5x3 in 1 tiles (2 versions)"), "{e}");
        let e =
            sets(&|t| Arc::make_mut(&mut t.tiles)[0] = TileData::I32(Arc::from(&[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, HEIGHT_WALL + 1, 0, 0, 0, 0][..])))
                .unwrap_err()
                .to_string();
        assert!(e.contains("s.textures.height[10]"), "{e}");
    }

    #[test]
    fn a_set_is_checked_texture_by_texture() {
        let build = Some(OcclusionBuild { mips: true, distance_field_scale: 1 });
        let set = TextureSet::new(dims(), build, full_set(build), "t").unwrap();
        assert_eq!(set.mips().len(), 3);
        assert_eq!(set.grid::<u16>(Texture::Final).map(|g| (g.width, g.height)), Some((10, 6)));
        assert_eq!(set.grid::<u8>(Texture::Final), None);

        let e = TextureSet::new(dims(), None, full_set(build), "t").unwrap_err().to_string();
        assert!(e.contains("t.textures = coverage, height, mip1"), "{e}");

        let mut wrong_type = full_set(None);
        wrong_type[0].1.data = StageData::U16(vec![0; 15]);
        let e = TextureSet::new(dims(), None, wrong_type, "t").unwrap_err().to_string();
        assert!(e.contains("t.textures.coverage = 5x3 of 15 u16 texels: must be 5x3 of u8"), "{e}");

        let mut short = full_set(None);
        short[3].1.data = StageData::U16(vec![0; 14]);
        let e = TextureSet::new(dims(), None, short, "t").unwrap_err().to_string();
        assert!(e.contains("t.textures.visibility = 5x3 of 14 u16 texels"), "{e}");

        let mut tall = full_set(None);
        tall[1].1.data = StageData::I32(vec![HEIGHT_WALL + 1; 15]);
        let e = TextureSet::new(dims(), None, tall, "t").unwrap_err().to_string();
        assert!(e.contains("t.textures.height[0]"), "{e}");
    }

    #[test]
    fn the_atlas_puts_levels_side_by_side() {
        let levels = vec![Grid { width: 2, height: 2, texels: vec![1, 0, 0, 1] }, Grid { width: 1, height: 1, texels: vec![1] }];
        let atlas = mip_atlas(4, 4, &levels);
        assert_eq!((atlas.width, atlas.height), (3, 2));
        assert_eq!(atlas.data, StageData::U8(vec![1, 0, 1, 0, 1, 0]));
        let none = mip_atlas(4, 4, &[]);
        assert_eq!((none.width, none.height, none.data.len()), (2, 2, 4));
    }
}
