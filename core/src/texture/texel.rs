//! The four texel types of the textures, and the containers of each:
//! a whole texture's texels ([`TextureData`]) and a shared tile's
//! ([`TileData`]). [`Texel`] moves texels of one Rust type in and out of
//! both.

use std::sync::Arc;

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
    /// Every kind, in code order.
    pub const ALL: [TexelKind; 4] = [TexelKind::U8, TexelKind::U16, TexelKind::I32, TexelKind::U32];

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
        Self::ALL.into_iter().find(|k| k.code() == code)
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

/// The texels of a whole texture, row-major.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TextureData {
    /// Coverage and mips.
    U8(Vec<u8>),
    /// Masks.
    U16(Vec<u16>),
    /// Heights.
    I32(Vec<i32>),
    /// Squared distances.
    U32(Vec<u32>),
}

impl TextureData {
    /// The texel type it holds.
    pub fn kind(&self) -> TexelKind {
        match self {
            TextureData::U8(_) => TexelKind::U8,
            TextureData::U16(_) => TexelKind::U16,
            TextureData::I32(_) => TexelKind::I32,
            TextureData::U32(_) => TexelKind::U32,
        }
    }

    /// Number of texels.
    pub fn len(&self) -> usize {
        match self {
            TextureData::U8(v) => v.len(),
            TextureData::U16(v) => v.len(),
            TextureData::I32(v) => v.len(),
            TextureData::U32(v) => v.len(),
        }
    }

    /// Whether it holds no texel.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `count` zero texels of `kind`.
    pub fn zeros(kind: TexelKind, count: usize) -> Self {
        match kind {
            TexelKind::U8 => TextureData::U8(vec![0; count]),
            TexelKind::U16 => TextureData::U16(vec![0; count]),
            TexelKind::I32 => TextureData::I32(vec![0; count]),
            TexelKind::U32 => TextureData::U32(vec![0; count]),
        }
    }

    /// Little-endian bytes of the texels (what goldens and snapshots use).
    pub fn bytes(&self) -> Vec<u8> {
        // On a little-endian machine the texels are their bytes already.
        #[cfg(target_endian = "little")]
        return match self {
            TextureData::U8(v) => v.clone(),
            TextureData::U16(v) => bytemuck::cast_slice(v).to_vec(),
            TextureData::I32(v) => bytemuck::cast_slice(v).to_vec(),
            TextureData::U32(v) => bytemuck::cast_slice(v).to_vec(),
        };
        #[cfg(target_endian = "big")]
        match self {
            TextureData::U8(v) => v.clone(),
            TextureData::U16(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            TextureData::I32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            TextureData::U32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        }
    }
}

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

/// A texel type a texture can hold: one of the four of [`TexelKind`].
pub trait Texel: Copy + Default + PartialEq + Send + Sync + 'static {
    /// Its kind.
    const KIND: TexelKind;
    /// Texels as a texture's data.
    fn wrap(texels: Vec<Self>) -> TextureData;
    /// The texels of texture data of this type, `None` for another type.
    fn unwrap(data: &TextureData) -> Option<&[Self]>;
    /// Texels as the data of a tile.
    fn wrap_tile(texels: Arc<[Self]>) -> TileData;
    /// The texels of a tile of this type, `None` for another type.
    fn unwrap_tile(data: &TileData) -> Option<&[Self]>;
}

macro_rules! texel {
    ($t:ty, $kind:ident) => {
        impl Texel for $t {
            const KIND: TexelKind = TexelKind::$kind;
            fn wrap(texels: Vec<Self>) -> TextureData {
                TextureData::$kind(texels)
            }
            fn unwrap(data: &TextureData) -> Option<&[Self]> {
                match data {
                    TextureData::$kind(v) => Some(v),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_round_trip_through_their_snapshot_codes() {
        for kind in TexelKind::ALL {
            assert_eq!(TexelKind::from_code(kind.code()), Some(kind));
            assert_eq!(TextureData::zeros(kind, 3).kind(), kind);
            assert_eq!(TextureData::zeros(kind, 3).bytes().len(), 3 * kind.size());
        }
        assert_eq!(TexelKind::from_code(4), None);
    }
}
