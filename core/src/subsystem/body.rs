//! The body of a fog-state snapshot ([`FogBody`]): the subsystem's live
//! types as they are, encoded with postcard inside the container of
//! [`crate::snapshot`] (frames, compression and checksums are that
//! module's; what goes in them is this one's).
//!
//! Every field is the type the subsystem runs with: the instance's
//! [`InstanceState`] (with its flags in flight and its reveals), the
//! stealth states, the stealth and footprint samples in flight and the
//! per-tick hashes in flight, each with its readbacks landed (serde
//! adapters write a landed readback as its value, an entity as its bits,
//! captured heights as bytes). Only the textures have a form of their own
//! ([`TextureBody`]: raw little-endian texels, which LZ4 packs).

use super::desc::InstanceDesc;
use super::instance::InstanceState;
use super::lockstep::PendingHash;
use super::sight::SightBatch;
use crate::error::Result;
use crate::query::QueryAnswers;
use crate::snapshot::{corrupt, decode, encode, FOG_MAGIC};
use crate::stealth::{StealthBatch, StealthState};
use crate::texture::{TexelKind, Texture, TextureData, TextureImage};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The body of a fog-state snapshot: the whole state of a
/// [`FogSubsystem`](crate::FogSubsystem). Public so that tools and tests
/// can read and edit a snapshot;
/// [`FogSubsystem::restore`](crate::FogSubsystem::restore) checks every
/// field against the rest.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FogBody {
    /// Ticks run.
    pub tick: u64,
    /// The next query handle to give out.
    pub next_query: u64,
    /// Answers of the queries not yet delivered, by handle.
    pub queries: BTreeMap<u64, QueryAnswers>,
    /// Every instance, by name.
    pub instances: Vec<InstanceBody>,
    /// Every stealth state, by actor (one-state actors first).
    pub stealth: Vec<StealthBody>,
    /// Stealth samples taken and not yet used, oldest first.
    pub stealth_samples: Vec<StealthBatch>,
    /// Transient-reveal countdowns: entity bits and ticks left.
    pub reveals: Vec<(u64, u32)>,
    /// Per-tick lockstep hashes not yet delivered, oldest first.
    pub lockstep: Vec<PendingHash>,
    /// The id the next scripted reveal gets.
    pub next_reveal: u64,
    /// Each observer's tracked entities in sight (entity bits, ascending).
    pub sight: BTreeMap<String, Vec<u64>>,
    /// The entities tracked at the last tick (bits, ascending).
    pub tracked: Vec<u64>,
    /// Footprint judgments asked for and not yet used, oldest first.
    pub sight_samples: Vec<SightBatch>,
}

/// One instance of a [`FogBody`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InstanceBody {
    /// Name, area, resolution, teams and profile.
    pub desc: InstanceDesc,
    /// What the rules decide from, with the flags in flight and the
    /// reveals (postcard writes its fields in line).
    pub state: InstanceState,
    /// Every texture, in the order of [`crate::texture::instance_textures`].
    pub textures: Vec<TextureBody>,
}

/// One stealth state of a [`FogBody`]: the actor's state, for one observer
/// or for all, and where its ghost stands.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StealthBody {
    /// The actor's entity bits.
    pub actor: u64,
    /// The observer of a per-observer state (`None`: the actor's one state).
    pub observer: Option<String>,
    /// The state.
    pub state: StealthState,
    /// Where its ghost stands (bit patterns of `f32`).
    pub ghost_at: [u32; 3],
}

/// One texture of an instance, as raw little-endian texels.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TextureBody {
    /// The texture's name (`coverage`, `mip1`, `final`, ...).
    pub name: String,
    /// Width in texels.
    pub width: u32,
    /// Height in texels.
    pub height: u32,
    /// Texel type: 0 u8, 1 u16, 2 i32, 3 u32.
    pub kind: u8,
    /// The texels, little-endian.
    #[serde(with = "serde_bytes")]
    pub bytes: Vec<u8>,
}

impl TextureBody {
    /// A texture of an instance as it is written in the body.
    pub fn of(texture: Texture, img: &TextureImage) -> Self {
        Self { name: texture.name(), width: img.width, height: img.height, kind: img.data.kind().code(), bytes: img.bytes() }
    }

    /// The texture it names and the image it holds; an unknown name or type,
    /// or a byte count that does not match the size, is an error naming the
    /// texture.
    pub fn to_image(&self) -> Result<(Texture, TextureImage)> {
        let (name, width, height, raw) = (&self.name, self.width, self.height, &self.bytes);
        let texture = Texture::parse(name).ok_or_else(|| corrupt(format!("texture `{name}` is not a texture of an instance")))?;
        let kind = TexelKind::from_code(self.kind).ok_or_else(|| corrupt(format!("texture `{name}` has unknown type {}", self.kind)))?;
        let n = u128::from(width) * u128::from(height);
        // In 128 bits: 4 * u32::MAX^2 does not fit 64.
        if raw.len() as u128 != n * kind.size() as u128 {
            return Err(corrupt(format!("texture `{name}` holds {} bytes, {width}x{height} needs {}", raw.len(), n * kind.size() as u128)));
        }
        let data = match kind {
            TexelKind::U8 => TextureData::U8(raw.clone()),
            TexelKind::U16 => TextureData::U16(raw.chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect()),
            TexelKind::I32 => TextureData::I32(raw.chunks_exact(4).map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()),
            TexelKind::U32 => TextureData::U32(raw.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()),
        };
        Ok((texture, TextureImage { width, height, data }))
    }
}

impl FogBody {
    /// Decodes a fog-state snapshot.
    pub fn decode(bytes: &[u8]) -> Result<Self> {
        decode(FOG_MAGIC, bytes)
    }

    /// Encodes it as a fog-state snapshot.
    pub fn encode(&self) -> Result<Vec<u8>> {
        encode(FOG_MAGIC, self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_texture_size_whose_byte_count_overflows_is_an_error() {
        // Found by the snapshot fuzz target: 4 bytes x u32::MAX^2 wrapped.
        let t = TextureBody { name: "final".into(), width: u32::MAX, height: u32::MAX, kind: 2, bytes: vec![0; 4] };
        // (`final` is u16; the type is checked against the texture after decoding.)
        let e = t.to_image().unwrap_err().to_string();
        assert!(e.contains("4294967295x4294967295 needs 73786976260478468100"), "{e}");
    }

    #[test]
    fn textures_round_trip_and_name_an_unknown_type() {
        let img = TextureImage { width: 2, height: 1, data: TextureData::I32(vec![-1, 7]) };
        let t = TextureBody::of(Texture::Height, &img);
        assert_eq!((t.name.as_str(), t.kind, t.bytes.len()), ("height", 2, 8));
        assert_eq!(t.to_image().unwrap(), (Texture::Height, img));
        let e = TextureBody { kind: 9, ..t.clone() }.to_image().unwrap_err().to_string();
        assert!(e.contains("texture `height` has unknown type 9"), "{e}");
        let e = TextureBody { name: "fog".into(), ..t }.to_image().unwrap_err().to_string();
        assert!(e.contains("texture `fog` is not a texture of an instance"), "{e}");
    }
}
