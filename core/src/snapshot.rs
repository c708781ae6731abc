//! The snapshot container: versioned, compressed, checksummed binary.
//!
//! ```text
//! offset  size  field
//! 0       8     magic (`MURKSNAP` for the fog state, `MURKRUN\0` for a scenario run)
//! 8       4     format version (little-endian u32)
//! 12      8     payload length n in bytes (u64)
//! 20      8     body length in bytes (u64): the payload decompressed
//! 28      n     payload: the body as one LZ4 block
//! 28+n    8     checksum: `crate::hash::bytes_hash` of the payload (u64)
//! ```
//!
//! The body is a serde structure encoded with postcard (compact and
//! deterministic: the same state gives the same bytes): [`FogBody`] for the
//! fog state, the scenario runner's own body for a run. Textures travel as
//! raw little-endian bytes; LZ4 (`lz4_flex`, pure Rust) packs the masks'
//! long runs. Nothing is applied until a whole snapshot has been checked,
//! decompressed and decoded.

use crate::error::{MurkError, Result};
use crate::query::MaskAnswer;
use crate::stealth::StealthSample;
pub use crate::subsystem::HashBody;
use crate::subsystem::{ActiveReveal, InstanceDesc, InstanceState, SightSample};
use crate::texture::{TexelKind, Texture, TextureData, TextureImage};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Current format version. 2: the blur's 8-bit weights, `reveal_walls` and
/// `resample_on_area_change` (both on when absent from a profile). 3: the
/// readbacks in flight (recompute flags with their input epoch, stealth
/// samples), which the rules use a fixed number of ticks after they were
/// asked for. 4: the body is serde structs encoded with postcard instead of
/// fields written one by one. 5: the per-tick lockstep hashes in flight
/// (the hash itself became the block hash of `crate::hash`). Older
/// snapshots would continue under other rules or do not decode, so they are
/// refused by version. 5 also compresses the body
/// with LZ4 and checks the payload with `crate::hash::bytes_hash` instead of
/// FNV-1a 64. 6: the mapped texture, scripted reveals per instance and
/// the next reveal id (explored-memory blobs carry the mapped state too),
/// and each observer's set of tracked entities in sight with the footprint
/// samples in flight. 7: a profile's `eye_offset` and `see_through`.
/// 8: the texture hash reads its leaves as 16x16 squares instead of runs
/// of 256 texels, so the per-tick lockstep hashes in flight are another
/// function of the same state, and an instance state's source and blocker
/// hashes are word folds (`crate::hash::WordFold`) instead of FNV-1a (the
/// layout is 7's). 9: an instance state's blocker hash is the finished
/// sum of one word fold per shape, whatever their order, so that a tick
/// updates it by the shapes that changed (the layout is 7's). 10: an
/// explored-memory blob names the instance it was taken from.
pub const VERSION: u32 = 10;
/// Magic of a fog-state snapshot.
pub const FOG_MAGIC: &[u8; 8] = b"MURKSNAP";
/// Magic of a scenario-run snapshot (`murk run --snapshot-at`).
pub const RUN_MAGIC: &[u8; 8] = b"MURKRUN\0";

/// Bytes in the container around the payload.
const FRAMING: usize = 36;
/// The most bytes an LZ4 block of `n` bytes decompresses to (a match
/// extends by at most 255 bytes per byte of the block), with slack for
/// the last literals.
fn lz4_reach(n: u64) -> u64 {
    n.saturating_mul(255).saturating_add(64)
}

/// Compresses a body and wraps it in the container.
pub fn frame(magic: &[u8; 8], body: &[u8]) -> Vec<u8> {
    let payload = lz4_flex::block::compress(body);
    let mut out = Vec::with_capacity(payload.len() + FRAMING);
    out.extend_from_slice(magic);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(&(body.len() as u64).to_le_bytes());
    out.extend_from_slice(&payload);
    out.extend_from_slice(&crate::hash::bytes_hash(&payload).to_le_bytes());
    out
}

fn corrupt(message: impl Into<String>) -> MurkError {
    MurkError::Parse { what: "snapshot".into(), message: message.into() }
}

/// Checks the container and returns the body, decompressed.
pub fn unframe(magic: &[u8; 8], bytes: &[u8]) -> Result<Vec<u8>> {
    unframe_within(magic, bytes, None)
}

/// [`unframe`], refusing before anything is decompressed a body longer
/// than `limit` (bytes, with the field the error names).
fn unframe_within(magic: &[u8; 8], bytes: &[u8], limit: Option<(u64, &str)>) -> Result<Vec<u8>> {
    if bytes.len() < 12 {
        return Err(corrupt(format!("truncated: {} bytes, a snapshot has at least {FRAMING}", bytes.len())));
    }
    if &bytes[..8] != magic {
        return Err(corrupt(format!("magic {:?} is not {:?}", String::from_utf8_lossy(&bytes[..8]), String::from_utf8_lossy(magic))));
    }
    let version = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes"));
    if version < VERSION {
        return Err(corrupt(format!(
            "format version {version} is older than this build's version {VERSION}: snapshots do not carry over between formats, start the run again from its scenario"
        )));
    }
    if version != VERSION {
        return Err(corrupt(format!("format version {version} is not supported (this build reads version {VERSION})")));
    }
    if bytes.len() < FRAMING {
        return Err(corrupt(format!("truncated: {} bytes, a snapshot has at least {FRAMING}", bytes.len())));
    }
    let len = u64::from_le_bytes(bytes[12..20].try_into().expect("8 bytes"));
    if len != (bytes.len() - FRAMING) as u64 {
        return Err(corrupt(format!("truncated or padded: the header says {len} payload bytes, the file holds {}", bytes.len() - FRAMING)));
    }
    let body_len = u64::from_le_bytes(bytes[20..28].try_into().expect("8 bytes"));
    let payload = &bytes[28..bytes.len() - 8];
    let stored = u64::from_le_bytes(bytes[bytes.len() - 8..].try_into().expect("8 bytes"));
    let actual = crate::hash::bytes_hash(payload);
    if actual != stored {
        return Err(corrupt(format!("checksum {stored:016x} does not match the payload's {actual:016x}: the file is corrupted")));
    }
    if body_len > lz4_reach(len) {
        return Err(corrupt(format!("the header says the body is {body_len} bytes, more than {len} compressed bytes can hold")));
    }
    if let Some((limit, field)) = limit.filter(|(limit, _)| body_len > *limit) {
        return Err(MurkError::invalid(field, body_len, format!("bytes of body are more than the {limit} this import may take")));
    }
    let body_len = usize::try_from(body_len).map_err(|_| corrupt(format!("a body of {body_len} bytes does not fit this machine")))?;
    lz4_flex::block::decompress(payload, body_len).map_err(|e| corrupt(format!("the payload does not decompress to {body_len} bytes: {e}")))
}

/// The body of a fog-state snapshot: the whole state of a
/// [`FogSubsystem`](crate::FogSubsystem), encoded with postcard inside the
/// container. Public so that tools and tests can read and edit a snapshot;
/// [`FogSubsystem::restore`](crate::FogSubsystem::restore) checks every
/// field against the rest.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FogBody {
    /// Ticks run.
    pub tick: u64,
    /// The next query handle to give out.
    pub next_query: u64,
    /// Answers of the queries not yet delivered, by handle.
    pub queries: BTreeMap<u64, Vec<MaskAnswer>>,
    /// Every instance, by name.
    pub instances: Vec<InstanceBody>,
    /// Every stealth state, by actor.
    pub stealth: Vec<StealthBody>,
    /// Stealth samples taken and not yet used, oldest first.
    pub stealth_samples: Vec<SampleBatchBody>,
    /// Transient-reveal countdowns: entity bits and ticks left.
    pub reveals: Vec<(u64, u32)>,
    /// Per-tick lockstep hashes not yet delivered, oldest first.
    pub lockstep: Vec<HashBody>,
    /// The id the next scripted reveal gets.
    pub next_reveal: u64,
    /// Each observer's tracked entities in sight (entity bits, ascending).
    pub sight: Vec<(String, Vec<u64>)>,
    /// The entities tracked at the last tick (bits, ascending).
    pub tracked: Vec<u64>,
    /// Footprint samples taken and not yet used, oldest first.
    pub sight_samples: Vec<SightBatchBody>,
}

/// Footprint samples in flight, landed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SightBatchBody {
    /// The tick whose sight update uses them.
    pub due: u64,
    /// The observers when they were taken, in name order.
    pub observers: Vec<String>,
    /// One per footprint, by observer then entity.
    pub samples: Vec<SightSample>,
    /// The sampled values, in the order of the samples.
    pub values: Vec<u16>,
}

/// One instance of a [`FogBody`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InstanceBody {
    /// Name, area, resolution, teams and profile.
    pub desc: InstanceDesc,
    /// What the rules decide from (postcard writes its fields in line).
    pub state: InstanceState,
    /// "Changed" flags of recent recomputes, oldest first.
    pub flags: Vec<FlagBody>,
    /// Every texture, in the order of [`crate::texture::instance_textures`].
    pub textures: Vec<TextureBody>,
    /// Scripted reveals, oldest first.
    pub reveals: Vec<ActiveReveal>,
    /// The signature of the reveals the last recompute was set up for.
    pub reveal_signature: Option<u64>,
}

/// A recompute's "changed" flag, landed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FlagBody {
    /// The first tick whose rules use it.
    pub due: u64,
    /// Memory or composed changed in that recompute.
    pub changed: bool,
    /// A configured rate could not step in that recompute.
    pub starved: bool,
    /// The input epoch the recompute ran under.
    pub epoch: u64,
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

/// One stealth state of a [`FogBody`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StealthBody {
    /// The actor's entity bits.
    pub actor: u64,
    /// Visible at the last check.
    pub last_visible: bool,
    /// The final-mask value at the last check.
    pub last_value: u16,
    /// Where it was last seen (bit patterns of `f32`).
    pub last_known: Option<[u32; 3]>,
    /// The fade value.
    pub fade: u16,
    /// Its ghost's entity bits.
    pub ghost: Option<u64>,
    /// Where its ghost stands (bit patterns of `f32`).
    pub ghost_at: [u32; 3],
    /// The instance that answered for it.
    pub instance: Option<String>,
    /// The observer of a per-observer state (`None`: the actor's one state).
    pub observer: Option<String>,
    /// The payload its ghost carries (name, postcard bytes).
    pub payload: Vec<(String, Vec<u8>)>,
}

/// The stealth samples of one tick, landed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SampleBatchBody {
    /// The tick whose stealth update uses them.
    pub due: u64,
    /// One per actor, in actor order.
    pub samples: Vec<StealthSample>,
    /// The sampled final-mask values, in the order of the requests.
    pub values: Vec<u16>,
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

/// Encodes a body with postcard and wraps it in the container.
pub fn encode<T: Serialize>(magic: &[u8; 8], body: &T) -> Result<Vec<u8>> {
    let body = postcard::to_allocvec(body).map_err(|e| corrupt(format!("cannot encode: {e}")))?;
    Ok(frame(magic, &body))
}

/// Checks the container and decodes its body; bytes left over after the
/// body are an error.
pub fn decode<T: DeserializeOwned>(magic: &[u8; 8], bytes: &[u8]) -> Result<T> {
    decode_within(magic, bytes, None)
}

/// [`decode`], refusing before anything is decompressed a body longer than
/// `limit` bytes, with the field the error names: what a blob from another
/// player may make murk allocate is then bounded by the caller.
pub fn decode_within<T: DeserializeOwned>(magic: &[u8; 8], bytes: &[u8], limit: Option<(u64, &str)>) -> Result<T> {
    let payload = unframe_within(magic, bytes, limit)?;
    let (body, rest) = postcard::take_from_bytes(&payload).map_err(|e| corrupt(format!("cannot decode the body: {e}")))?;
    if !rest.is_empty() {
        return Err(corrupt(format!("{} bytes left over after the last field", rest.len())));
    }
    Ok(body)
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

    #[test]
    fn bodies_round_trip_and_reject_left_over_bytes() {
        let body = (7u64, "x".to_string(), vec![1u16, 2]);
        let bytes = encode(RUN_MAGIC, &body).unwrap();
        assert_eq!(decode::<(u64, String, Vec<u16>)>(RUN_MAGIC, &bytes).unwrap(), body);
        let mut encoded = postcard::to_allocvec(&body).unwrap();
        encoded.push(0);
        let e = decode::<(u64, String, Vec<u16>)>(RUN_MAGIC, &frame(RUN_MAGIC, &encoded)).unwrap_err().to_string();
        assert!(e.contains("1 bytes left over"), "{e}");
    }

    #[test]
    fn frames_round_trip_and_reject_damage() {
        let framed = frame(FOG_MAGIC, b"hello");
        assert_eq!(unframe(FOG_MAGIC, &framed).unwrap(), b"hello");
        assert!(unframe(RUN_MAGIC, &framed).unwrap_err().to_string().contains("magic"));
        assert!(unframe(FOG_MAGIC, &framed[..framed.len() - 1]).unwrap_err().to_string().contains("truncated"));
        let mut bad = framed.clone();
        bad[29] ^= 1;
        assert!(unframe(FOG_MAGIC, &bad).unwrap_err().to_string().contains("checksum"));
        // Long runs compress: a mask of zeros is a few bytes.
        let zeros = vec![0u8; 1 << 20];
        let packed = frame(FOG_MAGIC, &zeros);
        assert!(packed.len() < 8 << 10, "{} bytes", packed.len());
        assert_eq!(unframe(FOG_MAGIC, &packed).unwrap(), zeros);
        // A snapshot of an older or newer format is refused by name.
        let (older, newest) = (VERSION - 1, VERSION + 1);
        let mut old = framed.clone();
        old[8] = older as u8;
        let message = unframe(FOG_MAGIC, &old).unwrap_err().to_string();
        assert!(message.contains(&format!("format version {older} is older than this build's version {VERSION}")), "{message}");
        let mut newer = framed;
        newer[8] = newest as u8;
        let message = unframe(FOG_MAGIC, &newer).unwrap_err().to_string();
        assert!(message.contains(&format!("version {newest} is not supported (this build reads version {VERSION})")), "{message}");
        assert!(unframe(FOG_MAGIC, b"short").is_err());
    }

    /// Rewrites a container's header field and its checksum stays right:
    /// what a hostile file can do.
    fn with_body_len(framed: &[u8], body_len: u64) -> Vec<u8> {
        let mut out = framed.to_vec();
        out[20..28].copy_from_slice(&body_len.to_le_bytes());
        out
    }

    #[test]
    fn a_body_length_the_payload_cannot_hold_is_refused_before_any_allocation() {
        let framed = frame(FOG_MAGIC, &vec![7u8; 4096]);
        let e = unframe(FOG_MAGIC, &with_body_len(&framed, u64::MAX)).unwrap_err().to_string();
        assert!(e.contains("more than") && e.contains("compressed bytes can hold"), "{e}");
        let e = unframe(FOG_MAGIC, &with_body_len(&framed, 4095)).unwrap_err().to_string();
        assert!(e.contains("does not decompress to 4095 bytes"), "{e}");
        // A payload that is not LZ4 at all, with a right checksum.
        let mut junk = framed[..28].to_vec();
        junk[12..20].copy_from_slice(&5u64.to_le_bytes());
        junk[20..28].copy_from_slice(&100u64.to_le_bytes());
        junk.extend_from_slice(&[0xff; 5]);
        junk.extend_from_slice(&crate::hash::bytes_hash(&[0xff; 5]).to_le_bytes());
        assert!(unframe(FOG_MAGIC, &junk).unwrap_err().to_string().contains("does not decompress"), "corrupt LZ4 is an error");
    }
}
