//! The textures of an instance, named and typed in one place.
//!
//! Every instance holds the same list of textures, fixed by its size and by
//! what its last occlusion build made: coverage and heights, the coverage
//! pyramid when the ray method needs it, the distance field (empty unless
//! built) and the masks. One table ([`TEXTURES`]) names each texture, its
//! texel type, its resolution and the pass that writes it, and
//! [`instance_textures`] lists what an instance holds from it; snapshot
//! export, the restore checks, the world-space resample and both backends
//! read that list. Backends hand textures over as [`TextureImage`]s, keep
//! them as [`Grid`]s and their masks in [`Masks`]; a rollback state keeps
//! them as [`TiledImage`]s, whose tiles it shares with the states before it.
//!
//! | file | what |
//! |---|---|
//! | `table.rs` | the vocabulary: [`Texture`], [`TEXTURES`], sizes, [`instance_textures`] |
//! | `masks.rs` | [`Masks`]: one value per mask, indexed by [`Texture`] |
//! | `texel.rs` | the texel types and their containers ([`TextureData`], [`TileData`]) |
//! | `image.rs` | whole images: [`TextureImage`], [`Grid`], [`mip_atlas`] |
//! | `rect.rs` | [`TexelRect`] |
//! | `tiles.rs` | [`TiledImage`] and its [`TILE`]-sided tiles |
//! | `set.rs` | [`TextureSet`], every texture of an instance, checked |

mod image;
mod masks;
mod rect;
mod set;
mod table;
mod texel;
mod tiles;

pub use image::{mip_atlas, Grid, TextureImage};
pub use masks::{Masks, MASKS, MASK_COUNT};
pub use rect::TexelRect;
pub use set::{BackendNotes, KeptTextures, TextureSet};
pub use table::{instance_textures, mip_sizes, pass_outputs, InstanceDims, OcclusionBuild, Resolution, Texture, TextureRow, TextureSpec, TEXTURES};
pub use texel::{Texel, TexelKind, TextureData, TileData};
pub use tiles::{TiledImage, TILE};
