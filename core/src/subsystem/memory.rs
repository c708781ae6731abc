//! Explored memory as save data: one instance's memory in a small,
//! versioned, compressed blob that names the instance, area and resolution
//! it was taken at, and its import into an instance's current area in world
//! space.

use super::area::resample_mask;
use super::fog::FogSubsystem;
use crate::error::{MurkError, Result};
use crate::snapshot::{decode_within, encode};
use crate::texture::{Grid, Texture};
use crate::transform::{Area, AreaTransform};
use serde::{Deserialize, Serialize};

/// Magic of an explored-memory blob (in the snapshot container, so
/// versioned, compressed and checksummed like a snapshot).
pub const MEMORY_MAGIC: &[u8; 8] = b"MURKMEM\0";

/// Most texels a side of a memory blob may have: twice the largest
/// resolution.
const MAX_SIDE: u32 = 8192;

/// How many times an instance's texels a memory blob it imports may hold
/// (twice its resolution on each side).
const MAX_TEXELS_PER_TEXEL: u64 = 4;

/// Bytes of a memory body beside its planes (the area and the lengths).
const BODY_SLACK: u64 = 256;

/// The body of an explored-memory blob.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MemoryBody {
    /// The instance it was taken from: [`FogSubsystem::import_memory`]
    /// puts it back into that instance only.
    pub instance: String,
    /// The area the memory covered.
    pub area: Area,
    /// Its width in texels.
    pub width: u32,
    /// Its height in texels.
    pub height: u32,
    /// The explored memory, little-endian `u16`, row by row.
    #[serde(with = "serde_bytes")]
    pub memory: Vec<u8>,
    /// The mapped state (known from a map), the same way.
    #[serde(with = "serde_bytes")]
    pub mapped: Vec<u8>,
}

impl FogSubsystem {
    /// The explored memory of instance `name` as save data: what a save
    /// game keeps per player (the full fog state is [`Self::snapshot`]).
    /// The blob names the instance, area and internal resolution it was
    /// taken at;
    /// the masks LZ4 packs small (mostly unexplored or explored areas).
    pub fn export_memory(&mut self, name: &str) -> Result<Vec<u8>> {
        let (key, area, dims) = {
            let slot = self.slot(name)?;
            (slot.key, slot.desc.area, slot.dims)
        };
        let mut planes = Vec::new();
        for texture in [Texture::Memory, Texture::Mapped] {
            let grid = Grid::<u16>::from_image(&self.backend.read_texture(key, texture)?)
                .ok_or_else(|| MurkError::backend_message(self.backend.name(), format!("the {} texture is not a u16 grid", texture.name())))?;
            planes.push(grid.texels.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>());
        }
        let mapped = planes.pop().expect("two planes");
        let memory = planes.pop().expect("two planes");
        encode(MEMORY_MAGIC, &MemoryBody { instance: name.to_string(), area, width: dims.width, height: dims.height, memory, mapped })
    }

    /// Replaces the explored memory and the mapped state of instance `name`
    /// with a blob of [`Self::export_memory`], resampled into the
    /// instance's current area in world space as [`Self::set_area`]
    /// resamples (each texel takes the saved texel under its centre; texels
    /// the saved area did not cover are unexplored). Everything else is
    /// kept; the instance recomputes on its next tick. A damaged blob, one
    /// whose area or size is wrong, one whose area covers none of the
    /// instance's, or one taken from another instance (a player's memory
    /// goes back to that player; an ally's is
    /// [`Self::import_memory_as_map`]) is an error naming the field, and
    /// changes nothing.
    pub fn import_memory(&mut self, name: &str, blob: &[u8]) -> Result<()> {
        let [memory, mapped] = self.resampled_memory(name, blob, true)?;
        self.rewrite_masks(name, &[Texture::Memory, Texture::Mapped], |texture, texels| {
            *texels = if texture == Texture::Memory { memory.clone() } else { mapped.clone() };
        })
    }

    /// Adds what a blob of [`Self::export_memory`] knew (explored or mapped)
    /// to the mapped state of instance `name`, resampled as
    /// [`Self::import_memory`] resamples: an ally's map, bought or shared.
    /// Each texel's mapped state becomes the largest of its own and the
    /// blob's memory and mapped state there; explored memory is kept. The
    /// same checks as [`Self::import_memory`], except that the blob may come
    /// from any instance; an error changes nothing.
    pub fn import_memory_as_map(&mut self, name: &str, blob: &[u8]) -> Result<()> {
        let [memory, mapped] = self.resampled_memory(name, blob, false)?;
        self.rewrite_masks(name, &[Texture::Mapped], |_, texels| {
            for (i, v) in texels.iter_mut().enumerate() {
                *v = (*v).max(memory[i]).max(mapped[i]);
            }
        })
    }

    /// A blob's explored memory and mapped state, checked and resampled into
    /// instance `name`'s grid (`own`: the blob must come from `name`).
    /// The blob may hold at most [`MAX_TEXELS_PER_TEXEL`] times the
    /// instance's texels, and its body is refused before it is
    /// decompressed when it is longer than such a memory takes: a small blob
    /// that claims a huge memory allocates nothing.
    fn resampled_memory(&self, name: &str, blob: &[u8], own: bool) -> Result<[Vec<u16>; 2]> {
        let slot = self.slot(name)?;
        let most = MAX_TEXELS_PER_TEXEL * u64::from(slot.dims.width) * u64::from(slot.dims.height);
        let limit = most * 4 + BODY_SLACK;
        let MemoryBody { instance, area, width, height, memory, mapped } = decode_within(MEMORY_MAGIC, blob, Some((limit, "memory.body")))?;
        if own && instance != name {
            return Err(MurkError::invalid(
                "memory.instance",
                &instance,
                format!("is another instance's memory than `{name}`'s: import it as a map to share what it knew"),
            ));
        }
        area.validate("memory.area")?;
        for (field, side) in [("memory.width", width), ("memory.height", height)] {
            if side == 0 || side > MAX_SIDE {
                return Err(MurkError::invalid(field, side, format!("must be within 1..={MAX_SIDE}")));
            }
        }
        let texels = u64::from(width) * u64::from(height);
        if texels > most {
            return Err(MurkError::invalid(
                "memory.width x memory.height",
                format!("{width}x{height}"),
                format!("is more than {MAX_TEXELS_PER_TEXEL} times the {}x{} texels of instance `{name}`", slot.dims.width, slot.dims.height),
            ));
        }
        let from = AreaTransform::new(&area, width, height);
        let to = slot.transform;
        if !resample_mask(&vec![1; texels as usize], &from, &to).contains(&1) {
            return Err(MurkError::invalid(
                "memory.area",
                format!("centre ({}, {}), extents ({}, {})", area.center.x, area.center.y, area.extents.x, area.extents.y),
                format!("covers no texel of instance `{name}`'s area: it is memory of another place"),
            ));
        }
        let mut resampled = Vec::new();
        for (field, plane) in [("memory.memory", &memory), ("memory.mapped", &mapped)] {
            if plane.len() as u64 != texels * 2 {
                return Err(MurkError::invalid(
                    field,
                    format!("{} bytes", plane.len()),
                    format!("must hold {width}x{height} texels of 2 bytes = {} bytes", texels * 2),
                ));
            }
            let saved: Vec<u16> = plane.chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect();
            resampled.push(resample_mask(&saved, &from, &to));
        }
        let mapped = resampled.pop().expect("two planes");
        let memory = resampled.pop().expect("two planes");
        Ok([memory, mapped])
    }
}
