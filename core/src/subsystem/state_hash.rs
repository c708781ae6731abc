//! The lockstep hash of the subsystem: of the state now (waiting for the
//! backend's values), or of the state after every tick, delivered
//! [`READBACK_LATENCY_TICKS`] ticks later in the tick report so that
//! hashing never waits on a device that keeps up.

use super::fog::FogSubsystem;
use super::lockstep::{HashPart, LandedHash, PendingHash, PendingHashes, HASHED};
use super::save::held;
use super::sight::hash_sets;
use crate::backend::{InstanceKey, Readback, ReadbackHold};
use crate::error::{MurkError, Result};
use crate::fixed::Fnv64;
use crate::frame::READBACK_LATENCY_TICKS;
use crate::hash;
use hecs::Entity;
use std::collections::BTreeMap;

impl FogSubsystem {
    /// With `true`, every tick hashes the state it leaves (on the device,
    /// for the GPU backend) and the report of the tick
    /// [`READBACK_LATENCY_TICKS`] later carries it as
    /// [`TickReport::lockstep`](crate::TickReport::lockstep): a lockstep game
    /// compares the hashes of every tick and never waits for one. A property
    /// of this running subsystem that snapshots do not save; the hashes in
    /// flight are saved, and a restored subsystem delivers them on the same
    /// ticks. Off by default.
    pub fn set_hash_every_tick(&mut self, on: bool) {
        self.hash_every_tick = on;
        if !on {
            self.forget_hashes();
        }
    }

    /// Whether every tick hashes its state (see [`Self::set_hash_every_tick`]).
    pub fn hashes_every_tick(&self) -> bool {
        self.hash_every_tick
    }

    /// Lockstep hash of everything: every instance's final mask, memory,
    /// mapped state and composed mask, and every stealth state, as `docs/determinism.md`
    /// defines it. Equal on every peer that ran the same inputs, whatever
    /// its backend or thread count. On the GPU this waits for the device;
    /// [`Self::set_hash_every_tick`] gets the same values without waiting.
    pub fn lockstep_hash(&mut self) -> Result<u64> {
        Ok(self.state_hashes()?.0)
    }

    /// The lockstep hash and each instance's [`Self::state_hash`].
    pub fn state_hashes(&mut self) -> Result<(u64, BTreeMap<String, u64>)> {
        let keys: Vec<(String, InstanceKey)> = self.instances.iter().map(|(n, s)| (n.clone(), s.key)).collect();
        let mut per_instance = BTreeMap::new();
        for (name, key) in keys {
            per_instance.insert(name, self.state_hash_now(key)?);
        }
        let lockstep = hash::lockstep_hash(per_instance.iter().map(|(n, h)| (n.as_str(), *h)), self.stealth_hash());
        Ok((lockstep, per_instance))
    }

    /// One instance's state hash: [`hash::state_hash`] of its final mask,
    /// explored memory, mapped state and composed mask (what a peer must agree on for
    /// that instance).
    pub fn state_hash(&mut self, name: &str) -> Result<u64> {
        let key = self.slot(name)?.key;
        self.state_hash_now(key)
    }

    /// The state hash of the instance of `key`, waiting for the backend.
    fn state_hash_now(&mut self, key: InstanceKey) -> Result<u64> {
        let values = self.backend.hash_textures(key, &HASHED)?;
        Ok(hash::state_hash(self.landed_hashes(values, false)?))
    }

    /// FNV-1a 64 over every stealth state, in actor order, then every
    /// per-observer state (actor order, then observer order, each after its
    /// observer's name), then every observer's set of tracked entities in
    /// sight, in observer order.
    fn stealth_hash(&self) -> u64 {
        let mut h = Fnv64::default();
        for (bits, state) in &self.stealth {
            if let Some(actor) = Entity::from_bits(*bits) {
                state.hash_into(actor, &mut h);
            }
        }
        for ((bits, observer), state) in &self.observer_stealth {
            if let Some(actor) = Entity::from_bits(*bits) {
                h.write(&(observer.len() as u64).to_le_bytes());
                h.write(observer.as_bytes());
                state.hash_into(actor, &mut h);
            }
        }
        hash_sets(&self.sight, &mut h);
        h.finish()
    }

    /// The texture hashes of a readback, one per [`HASHED`] texture. Asked for now (`due` false),
    /// a ticket is waited for: a sync point with the device. Fallen due in a
    /// tick (`due` true), it is first polled without waiting, so a device
    /// that kept up costs no wait.
    fn landed_hashes(&mut self, values: Readback<Vec<u64>>, due: bool) -> Result<[u64; HASHED.len()]> {
        let values = match values {
            Readback::Ready(v) => Some(v),
            Readback::Ticket(t) if due => match self.backend.poll_hashes(t, false)? {
                Some(v) => Some(v),
                None => self.backend.poll_hashes(t, true)?,
            },
            Readback::Ticket(t) => self.backend.poll_hashes(t, true)?,
        };
        let lost = || MurkError::ReadbackLost { backend: self.backend.name(), what: "state hash" };
        values.and_then(|v| <[u64; HASHED.len()]>::try_from(v).ok()).ok_or_else(lost)
    }

    /// At the end of a tick: delivers the hash that falls due now, and
    /// hashes the state this tick leaves when hashing every tick.
    pub(crate) fn step_lockstep_hashes(&mut self) -> Result<Option<LandedHash>> {
        let now = self.tick;
        let mut landed = None;
        while self.pending_hashes.front().is_some_and(|p| p.due <= now) {
            let p = self.pending_hashes.pop_front().expect("checked above");
            let mut per_instance = Vec::with_capacity(p.parts.len());
            for part in p.parts {
                per_instance.push((part.instance, hash::state_hash(self.landed_hashes(part.hashes, true)?)));
            }
            let hash = hash::lockstep_hash(per_instance.iter().map(|(n, h)| (n.as_str(), *h)), p.stealth);
            landed = Some(LandedHash { ticks: p.ticks, hash });
        }
        if self.hash_every_tick {
            let keys: Vec<(String, InstanceKey)> = self.instances.iter().map(|(n, s)| (n.clone(), s.key)).collect();
            let mut parts = Vec::with_capacity(keys.len());
            for (instance, key) in keys {
                parts.push(HashPart { instance, hashes: self.backend.hash_textures(key, &HASHED)? });
            }
            let stealth = self.stealth_hash();
            self.pending_hashes.push_back(PendingHash { ticks: now + 1, due: now + READBACK_LATENCY_TICKS, parts, stealth });
        }
        Ok(landed)
    }

    /// Waits for every per-tick hash in flight, so that a snapshot can
    /// write them down; with `holds`, a hash the backend holds for a
    /// rollback state stays in flight (its hold pushed there).
    pub(crate) fn land_pending_hashes(&mut self, mut holds: Option<&mut Vec<(u64, ReadbackHold)>>) -> Result<()> {
        let mut pending = std::mem::take(&mut self.pending_hashes);
        let mut result = Ok(());
        for part in pending.iter_mut().flat_map(|p| p.parts.iter_mut()) {
            if let Readback::Ticket(t) = part.hashes {
                if held(self.backend.as_mut(), &mut holds, t) {
                    continue;
                }
            }
            match self.landed_hashes(std::mem::replace(&mut part.hashes, Readback::Ready(Vec::new())), false) {
                Ok(v) => part.hashes = Readback::Ready(v.to_vec()),
                Err(e) => result = result.and(Err(e)),
            }
        }
        self.pending_hashes = pending;
        result
    }

    /// Replaces the hashes in flight with restored ones.
    pub(crate) fn adopt_hashes(&mut self, hashes: PendingHashes) {
        self.forget_hashes();
        self.pending_hashes = hashes;
    }

    /// Drops the hashes in flight (hashing turned off, a restore).
    pub(crate) fn forget_hashes(&mut self) {
        for p in std::mem::take(&mut self.pending_hashes) {
            for part in p.parts {
                if let Readback::Ticket(t) = part.hashes {
                    self.backend.forget_readback(t);
                }
            }
        }
    }
}
