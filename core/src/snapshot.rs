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
//! deterministic: the same state gives the same bytes): the subsystem's
//! `FogBody` for the fog state, the scenario runner's own body for a run,
//! an explored-memory body for a memory blob. This module knows the frame,
//! the encoding and the checksum only, not what a body holds; LZ4
//! (`lz4_flex`, pure Rust) packs the masks' long runs. Nothing is applied
//! until a whole snapshot has been checked, decompressed and decoded. A
//! container of another format version is refused by version
//! ([`MurkError::SnapshotVersion`]), before its body is read.

use crate::error::{MurkError, Result};
use serde::de::DeserializeOwned;
use serde::Serialize;

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
/// explored-memory blob names the instance it was taken from. 11: the fog
/// body holds the subsystem's live types instead of copies of them field
/// by field: an instance's state carries its recompute flags in flight,
/// its scripted reveals and the signature of its reveal layer; a stealth
/// state, a batch of stealth samples and a per-tick hash in flight are
/// written as the subsystem holds them; a batch of footprint judgments
/// holds its groups (one value per footprint) instead of samples. 12: a
/// team mask is 64 bits (teams 0..=63), where it was 32; a profile holds
/// `eyes_on_terrain`. 13: a pending query's answers name their kind, a
/// mask query's or a sight-line batch's; a stealth sample carries whether
/// a cloaked actor is detected, and a batch the detectors' sight lines; a
/// profile holds its sensor `layer`, `blip_error` and `domains`. 14: a
/// profile holds `snap_sources`.
pub const VERSION: u32 = 14;
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

/// A container or body that does not parse, as an error.
pub(crate) fn corrupt(message: impl Into<String>) -> MurkError {
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
    if version != VERSION {
        let kind = String::from_utf8_lossy(magic).trim_end_matches('\0').to_string();
        return Err(MurkError::SnapshotVersion { kind, found: version, expected: VERSION });
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

#[cfg(test)]
mod tests {
    use super::*;

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
        assert!(unframe(FOG_MAGIC, b"short").is_err());
    }

    #[test]
    fn a_container_of_another_format_version_is_a_named_error() {
        let framed = frame(FOG_MAGIC, b"hello");
        let (older, newest) = (VERSION - 1, VERSION + 1);
        let mut old = framed.clone();
        old[8..12].copy_from_slice(&older.to_le_bytes());
        let e = unframe(FOG_MAGIC, &old).unwrap_err();
        assert_eq!(e, MurkError::SnapshotVersion { kind: "MURKSNAP".into(), found: older, expected: VERSION });
        let message = e.to_string();
        assert!(message.contains(&format!("format version {older} is older than this build's version {VERSION}")), "{message}");
        let mut newer = framed;
        newer[8..12].copy_from_slice(&newest.to_le_bytes());
        let e = unframe(FOG_MAGIC, &newer).unwrap_err();
        assert!(matches!(e, MurkError::SnapshotVersion { found, .. } if found == newest), "{e:?}");
        let message = e.to_string();
        assert!(message.contains(&format!("version {newest} is not supported (this build reads version {VERSION})")), "{message}");
        // Whatever the body holds: a version-10 run snapshot is refused
        // before its body is read.
        let mut run = frame(RUN_MAGIC, &[0xff; 40]);
        run[8..12].copy_from_slice(&10u32.to_le_bytes());
        assert_eq!(decode::<u64>(RUN_MAGIC, &run).unwrap_err(), MurkError::SnapshotVersion { kind: "MURKRUN".into(), found: 10, expected: VERSION });
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
