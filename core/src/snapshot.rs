//! The snapshot container: versioned, checksummed binary.
//!
//! ```text
//! offset  size  field
//! 0       8     magic (`MURKSNAP` for the fog state, `MURKRUN\0` for a scenario run)
//! 8       4     format version (little-endian u32)
//! 12      8     payload length in bytes (u64)
//! 20      n     payload
//! 20+n    8     FNV-1a 64 of the payload (u64)
//! ```
//!
//! Payloads are written with [`Writer`] and read back with [`Reader`]: fixed
//! little-endian integers, length-prefixed byte strings. Nothing is applied
//! until a whole snapshot has been read and checked.

use crate::backend::{StageData, StageImage};
use crate::error::{MurkError, Result};
use crate::fixed::Fnv64;

/// Current format version. 2: the blur's 8-bit weights, `reveal_walls` and
/// `resample_on_area_change` (both on when absent from a profile). 3: the
/// readbacks in flight (recompute flags with their input epoch, stealth
/// samples), which the rules use a fixed number of ticks after they were
/// asked for. Older snapshots would continue under other rules, so they are
/// refused by version.
pub const VERSION: u32 = 3;
/// Magic of a fog-state snapshot.
pub const FOG_MAGIC: &[u8; 8] = b"MURKSNAP";
/// Magic of a scenario-run snapshot (`murk run --snapshot-at`).
pub const RUN_MAGIC: &[u8; 8] = b"MURKRUN\0";

/// Wraps a payload in the container.
pub fn frame(magic: &[u8; 8], payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(payload.len() + 28);
    out.extend_from_slice(magic);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(payload);
    let mut h = Fnv64::default();
    h.write(payload);
    out.extend_from_slice(&h.finish().to_le_bytes());
    out
}

fn corrupt(message: impl Into<String>) -> MurkError {
    MurkError::Parse { what: "snapshot".into(), message: message.into() }
}

/// Checks the container and returns the payload.
pub fn unframe<'a>(magic: &[u8; 8], bytes: &'a [u8]) -> Result<&'a [u8]> {
    if bytes.len() < 28 {
        return Err(corrupt(format!("truncated: {} bytes, a snapshot has at least 28", bytes.len())));
    }
    if &bytes[..8] != magic {
        return Err(corrupt(format!("magic {:?} is not {:?}", String::from_utf8_lossy(&bytes[..8]), String::from_utf8_lossy(magic))));
    }
    let version = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes"));
    if version != VERSION {
        return Err(corrupt(format!("format version {version} is not supported (this build reads version {VERSION})")));
    }
    let len = u64::from_le_bytes(bytes[12..20].try_into().expect("8 bytes"));
    if len != (bytes.len() - 28) as u64 {
        return Err(corrupt(format!("truncated or padded: the header says {len} payload bytes, the file holds {}", bytes.len() - 28)));
    }
    let payload = &bytes[20..bytes.len() - 8];
    let stored = u64::from_le_bytes(bytes[bytes.len() - 8..].try_into().expect("8 bytes"));
    let mut h = Fnv64::default();
    h.write(payload);
    if h.finish() != stored {
        return Err(corrupt(format!("checksum {:016x} does not match the payload's {:016x}: the file is corrupted", stored, h.finish())));
    }
    Ok(payload)
}

/// Appends little-endian values to a payload.
#[derive(Default)]
pub struct Writer {
    /// The bytes so far.
    pub bytes: Vec<u8>,
}

impl Writer {
    /// A byte.
    pub fn u8(&mut self, v: u8) {
        self.bytes.push(v);
    }
    /// A bool as one byte.
    pub fn bool(&mut self, v: bool) {
        self.u8(u8::from(v));
    }
    /// A u16.
    pub fn u16(&mut self, v: u16) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }
    /// A u32.
    pub fn u32(&mut self, v: u32) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }
    /// A u64.
    pub fn u64(&mut self, v: u64) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }
    /// An optional u64.
    pub fn opt_u64(&mut self, v: Option<u64>) {
        self.bool(v.is_some());
        self.u64(v.unwrap_or(0));
    }
    /// A length-prefixed byte string.
    pub fn blob(&mut self, v: &[u8]) {
        self.u64(v.len() as u64);
        self.bytes.extend_from_slice(v);
    }
    /// A string.
    pub fn str(&mut self, v: &str) {
        self.blob(v.as_bytes());
    }
    /// A texture.
    pub fn image(&mut self, name: &str, img: &StageImage) {
        self.str(name);
        self.u32(img.width);
        self.u32(img.height);
        self.u8(match img.data {
            StageData::U8(_) => 0,
            StageData::U16(_) => 1,
            StageData::I32(_) => 2,
            StageData::U32(_) => 3,
        });
        self.blob(&img.bytes());
    }
}

/// Reads what a [`Writer`] wrote; every read checks the remaining length.
pub struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    /// Reads `bytes` from the start.
    pub fn new(bytes: &'a [u8]) -> Self {
        Self { bytes, at: 0 }
    }
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if self.bytes.len() - self.at < n {
            return Err(corrupt(format!("payload ends at byte {} while reading {n} more", self.bytes.len())));
        }
        let s = &self.bytes[self.at..self.at + n];
        self.at += n;
        Ok(s)
    }
    /// A byte.
    pub fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }
    /// A bool.
    pub fn bool(&mut self) -> Result<bool> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            v => Err(corrupt(format!("byte {} is {v}, expected a bool", self.at - 1))),
        }
    }
    /// A u16.
    pub fn u16(&mut self) -> Result<u16> {
        Ok(u16::from_le_bytes(self.take(2)?.try_into().expect("2 bytes")))
    }
    /// A u32.
    pub fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().expect("4 bytes")))
    }
    /// A u64.
    pub fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().expect("8 bytes")))
    }
    /// An optional u64.
    pub fn opt_u64(&mut self) -> Result<Option<u64>> {
        let some = self.bool()?;
        let v = self.u64()?;
        Ok(some.then_some(v))
    }
    /// A byte string.
    pub fn blob(&mut self) -> Result<&'a [u8]> {
        let n = self.u64()?;
        let n = usize::try_from(n).map_err(|_| corrupt(format!("length {n} is too large")))?;
        self.take(n)
    }
    /// A string.
    pub fn str(&mut self) -> Result<String> {
        let b = self.blob()?;
        String::from_utf8(b.to_vec()).map_err(|e| corrupt(format!("invalid UTF-8: {e}")))
    }
    /// A texture.
    pub fn image(&mut self) -> Result<(String, StageImage)> {
        let name = self.str()?;
        let width = self.u32()?;
        let height = self.u32()?;
        let kind = self.u8()?;
        let raw = self.blob()?;
        let n = u128::from(width) * u128::from(height);
        let size: u128 = match kind {
            0 => 1,
            1 => 2,
            2 | 3 => 4,
            k => return Err(corrupt(format!("texture `{name}` has unknown type {k}"))),
        };
        // In 128 bits: 4 * u32::MAX^2 does not fit 64.
        if raw.len() as u128 != n * size {
            return Err(corrupt(format!("texture `{name}` holds {} bytes, {width}x{height} needs {}", raw.len(), n * size)));
        }
        let data = match kind {
            0 => StageData::U8(raw.to_vec()),
            1 => StageData::U16(raw.chunks(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect()),
            2 => StageData::I32(raw.chunks(4).map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()),
            _ => StageData::U32(raw.chunks(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()),
        };
        Ok((name, StageImage { width, height, data }))
    }
    /// Whether everything was read.
    pub fn finish(&self) -> Result<()> {
        if self.at != self.bytes.len() {
            return Err(corrupt(format!("{} bytes left over after the last field", self.bytes.len() - self.at)));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_texture_size_whose_byte_count_overflows_is_an_error() {
        // Found by the snapshot fuzz target: 4 bytes x u32::MAX^2 wrapped.
        let mut w = Writer::default();
        w.str("final");
        w.u32(u32::MAX);
        w.u32(u32::MAX);
        w.u8(2);
        w.blob(&[0; 4]);
        let e = Reader::new(&w.bytes).image().unwrap_err().to_string();
        assert!(e.contains("4294967295x4294967295 needs 73786976260478468100"), "{e}");
    }

    #[test]
    fn frames_round_trip_and_reject_damage() {
        let framed = frame(FOG_MAGIC, b"hello");
        assert_eq!(unframe(FOG_MAGIC, &framed).unwrap(), b"hello");
        assert!(unframe(RUN_MAGIC, &framed).unwrap_err().to_string().contains("magic"));
        assert!(unframe(FOG_MAGIC, &framed[..framed.len() - 1]).unwrap_err().to_string().contains("truncated"));
        let mut bad = framed.clone();
        bad[21] ^= 1;
        assert!(unframe(FOG_MAGIC, &bad).unwrap_err().to_string().contains("checksum"));
        // A snapshot of an older format (version 2) is refused by name.
        let mut old = framed;
        old[8] = 2;
        assert!(unframe(FOG_MAGIC, &old).unwrap_err().to_string().contains("version 2 is not supported (this build reads version 3)"));
        assert!(unframe(FOG_MAGIC, b"short").is_err());
    }
}
