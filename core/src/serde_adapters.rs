//! Serde adapters for the live types that snapshot bodies serialize as
//! they are, where a field cannot go into the format as it is held: a
//! readback (written once it has landed), an entity (as its bits),
//! captured heights (as little-endian bytes) and a shared slice.

use crate::frame::Readback;
use hecs::Entity;
use serde::de::Error as _;
use serde::ser::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A [`Readback`] that has landed, written as its value and read back as
/// [`Readback::Ready`]. A snapshot lands every readback before it writes
/// one: a ticket still in flight is an error.
pub(crate) mod landed {
    use super::*;

    pub(crate) fn serialize<T: Serialize, S: Serializer>(value: &Readback<T>, s: S) -> Result<S::Ok, S::Error> {
        match value {
            Readback::Ready(v) => v.serialize(s),
            Readback::Ticket(t) => Err(S::Error::custom(format!("readback ticket {t} is still in flight: land it before saving"))),
        }
    }

    pub(crate) fn deserialize<'de, T: Deserialize<'de>, D: Deserializer<'de>>(d: D) -> Result<Readback<T>, D::Error> {
        T::deserialize(d).map(Readback::Ready)
    }
}

/// An entity, written as its bits (`Entity::to_bits`).
pub(crate) fn entity_bits<S: Serializer>(e: &Entity, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(e.to_bits().get())
}

/// An optional entity, written as its bits; bits that name no entity do
/// not decode.
pub(crate) mod entity_or_none {
    use super::*;

    pub(crate) fn serialize<S: Serializer>(e: &Option<Entity>, s: S) -> Result<S::Ok, S::Error> {
        e.map(|e| e.to_bits().get()).serialize(s)
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Entity>, D::Error> {
        match Option::<u64>::deserialize(d)? {
            None => Ok(None),
            Some(bits) => Entity::from_bits(bits).map(Some).ok_or_else(|| D::Error::custom(format!("entity id {bits} is invalid"))),
        }
    }
}

/// Captured heights, one `i32` per texel, written as their little-endian
/// bytes (one byte string: the format packs it without a length per
/// height, and LZ4 packs its runs).
pub(crate) mod heights_as_bytes {
    use super::*;

    pub(crate) fn serialize<S: Serializer>(heights: &Option<Vec<i32>>, s: S) -> Result<S::Ok, S::Error> {
        let bytes = heights.as_ref().map(|h| serde_bytes::ByteBuf::from(h.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>()));
        bytes.serialize(s)
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<i32>>, D::Error> {
        let Some(bytes) = Option::<serde_bytes::ByteBuf>::deserialize(d)? else { return Ok(None) };
        if bytes.len() % 4 != 0 {
            return Err(D::Error::custom(format!("captured heights of {} bytes are not whole 4-byte heights", bytes.len())));
        }
        Ok(Some(bytes.chunks_exact(4).map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()))
    }
}

/// A shared slice, written as a sequence (read back into a new `Arc`).
pub(crate) mod shared_slice {
    use super::*;
    use std::sync::Arc;

    pub(crate) fn serialize<T: Serialize, S: Serializer>(items: &Arc<[T]>, s: S) -> Result<S::Ok, S::Error> {
        items[..].serialize(s)
    }

    pub(crate) fn deserialize<'de, T: Deserialize<'de>, D: Deserializer<'de>>(d: D) -> Result<Arc<[T]>, D::Error> {
        Vec::<T>::deserialize(d).map(Arc::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Held {
        #[serde(with = "landed")]
        flag: Readback<bool>,
        #[serde(with = "entity_or_none")]
        ghost: Option<Entity>,
        #[serde(with = "heights_as_bytes")]
        heights: Option<Vec<i32>>,
    }

    #[test]
    fn landed_values_entities_and_heights_round_trip() {
        let held = Held { flag: Readback::Ready(true), ghost: Entity::from_bits(1 << 32 | 7), heights: Some(vec![-1, 0, i32::MAX]) };
        let bytes = postcard::to_allocvec(&held).unwrap();
        assert_eq!(postcard::from_bytes::<Held>(&bytes).unwrap(), held);
        // The heights are one byte string: a tag, a length and 12 bytes.
        assert!(bytes.ends_with(&[1, 12, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0x7f]), "{bytes:?}");
    }

    #[test]
    fn a_ticket_in_flight_a_bad_entity_and_broken_heights_are_errors() {
        let held = Held { flag: Readback::Ticket(3), ghost: None, heights: None };
        assert!(postcard::to_allocvec(&held).is_err());
        // (postcard drops the messages of these errors; JSON keeps them.)
        let e = serde_json::to_string(&held).unwrap_err().to_string();
        assert!(e.contains("ticket 3 is still in flight"), "{e}");
        // Entity bits 0 name no entity; 5 bytes are no whole heights.
        let zero_ghost = [1, 1, 0, 0];
        assert!(postcard::from_bytes::<Held>(&zero_ghost).is_err());
        let odd = [1, 0, 1, 5, 1, 2, 3, 4, 5];
        assert!(postcard::from_bytes::<Held>(&odd).is_err());
    }
}
