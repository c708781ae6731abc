//! Saving the whole fog state: as a snapshot (the body of `body.rs` in
//! the checksummed container of [`crate::snapshot`]) for another process
//! or machine, or as a [`SaveState`] held in memory for rollback, whose
//! textures are shared tiles (restoring is in `restore.rs`).

use super::actors::landed_samples;
use super::body::{FogBody, InstanceBody, StealthBody, TextureBody};
use super::fog::FogSubsystem;
use super::occlusion::BuiltShapes;
use crate::backend::{Backend, Readback, ReadbackHold};
use crate::components::{Position, TransientReveal};
use crate::error::{MurkError, Result};
use crate::query::{PendingQuery, QueryAnswers, QueryHandle};
use crate::texture::{instance_textures, BackendNotes, KeptTextures, Texture, TiledImage};
use hecs::{Entity, World};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Weak};

impl FogSubsystem {
    /// Waits for every value still in flight on the backend (changed flags,
    /// stealth and footprint samples, per-tick hashes), so that the state
    /// can be written down; with `holds`, a value the backend holds for
    /// the state ([`Backend::hold_readback`]) stays in flight, its hold
    /// pushed there.
    pub(crate) fn land_readbacks(&mut self, mut holds: Option<&mut Vec<(u64, ReadbackHold)>>) -> Result<()> {
        for slot in self.instances.values_mut() {
            for flag in &mut slot.state.flags {
                if let Readback::Ticket(t) = flag.changed {
                    if held(self.backend.as_mut(), &mut holds, t) {
                        continue;
                    }
                    let changed = self.backend.poll_changed(t, true)?;
                    flag.changed =
                        Readback::Ready(changed.ok_or_else(|| MurkError::ReadbackLost { backend: self.backend.name(), what: "changed flag" })?);
                }
            }
        }
        let backend = self.backend.as_mut();
        let stealth = self.stealth_batches.iter_mut().flat_map(|b| {
            std::iter::once((&mut b.values, "stealth readback")).chain(b.detections.iter_mut().map(|d| (&mut d.lights, "detection readback")))
        });
        let sight = self.sight_batches.iter_mut().map(|b| (&mut b.values, "sight readback"));
        for (values, what) in stealth.chain(sight) {
            if let Readback::Ticket(t) = *values {
                if held(backend, &mut holds, t) {
                    continue;
                }
                let ticket = std::mem::replace(values, Readback::Ready(Vec::new()));
                *values = Readback::Ready(landed_samples(backend, ticket, what)?);
            }
        }
        self.land_pending_hashes(holds)
    }

    /// Drops the holds of the state last loaded on the values that have
    /// landed here since: only those still in flight need them.
    pub(crate) fn release_holds(&mut self) {
        if self.holds.is_empty() {
            return;
        }
        let mut flying = HashSet::new();
        for slot in self.instances.values() {
            flying.extend(slot.state.flags.iter().filter_map(|f| f.changed.ticket()));
        }
        for b in &self.stealth_batches {
            flying.extend(std::iter::once(&b.values).chain(b.detections.iter().map(|d| &d.lights)).filter_map(Readback::ticket));
        }
        flying.extend(self.sight_batches.iter().filter_map(|b| b.values.ticket()));
        flying.extend(self.pending_hashes.iter().flat_map(|p| &p.parts).filter_map(|p| p.hashes.ticket()));
        self.holds.retain(|(t, _)| flying.contains(t));
    }

    /// Saves the whole fog state: every instance (settings, cadence timers,
    /// dirty flags, counters, every texture), stealth states with their
    /// ghosts, pending query answers and the transient reveals of `world`,
    /// as a [`FogBody`] in the snapshot container.
    pub fn snapshot(&mut self, world: &World) -> Result<Vec<u8>> {
        self.save_body(world, None, None)?.encode()
    }

    /// The state as a rollback library keeps it every frame: the body of
    /// [`Self::snapshot`] held in memory, neither encoded, compressed nor
    /// checksummed ([`Self::load_state`] puts it back), its textures in
    /// tiles: a tile no tick wrote since the state saved or loaded before
    /// is that state's, shared, not copied. A backend with a device (the
    /// GPU) keeps them there instead, copied on the device and never read
    /// back ([`crate::Backend::keep_textures`]), and holds the values the
    /// last ticks left in flight for the state rather than wait for them
    /// ([`crate::Backend::hold_readback`]); such a state loads only on
    /// that backend. It belongs to this process only; send
    /// [`Self::snapshot`] across machines.
    pub fn save_state(&mut self, world: &World) -> Result<SaveState> {
        let (mut kept, mut holds) = (Vec::new(), Vec::new());
        let body = self.save_body(world, Some(&mut kept), Some(&mut holds))?;
        Ok(SaveState { body, kept, holds })
    }

    /// The body of a snapshot; with `kept`, each instance's textures and
    /// captured heights are kept there, as they are, instead of in the body;
    /// with `holds`, values in flight the backend holds stay in flight
    /// ([`Self::land_readbacks`]).
    fn save_body(
        &mut self,
        world: &World,
        mut kept: Option<&mut Vec<KeptInstance>>,
        holds: Option<&mut Vec<(u64, ReadbackHold)>>,
    ) -> Result<FogBody> {
        // Pending queries are waited for: a snapshot holds their answers.
        let handles: Vec<u64> = self.queries.keys().copied().collect();
        let mut queries: BTreeMap<u64, QueryAnswers> = BTreeMap::new();
        for h in handles {
            if let Some(a) = self.poll_query(QueryHandle(h), true)? {
                queries.insert(h, a);
            }
        }
        for (h, a) in &queries {
            self.queries.insert(*h, PendingQuery { answers: a.clone(), in_flight: None });
        }
        self.land_readbacks(holds)?;
        let mut instances = Vec::with_capacity(self.instances.len());
        let mut saved = BTreeMap::new();
        for slot in self.instances.values_mut() {
            let mut textures = Vec::new();
            let mut kept_images = Vec::new();
            let mut on_device = None;
            let entries = instance_textures(slot.dims, slot.state.built_for);
            if kept.is_none() {
                for entry in &entries {
                    textures.push(TextureBody::of(entry.texture, &self.backend.read_texture(slot.key, entry.texture)?));
                }
            } else if let Some(device) = self.backend.keep_textures(slot.key)? {
                // Copied on the device, nothing read back.
                on_device = Some(device);
            } else {
                // The tiles no pass wrote since the last state saved or
                // loaded here are that state's, shared.
                let bases: Vec<_> =
                    entries.iter().map(|e| (e.texture, self.saved_images.get(&(slot.key, e.texture)).and_then(Weak::upgrade))).collect();
                let asked: Vec<_> = bases.iter().map(|(t, base)| (*t, base.as_deref())).collect();
                let read = self.backend.save_tiles(slot.key, &asked)?;
                if read.len() != asked.len() {
                    let message = format!("saved {} textures of the {} asked", read.len(), asked.len());
                    return Err(MurkError::backend_message(self.backend.name(), message));
                }
                for ((texture, base), tiles) in bases.into_iter().zip(read) {
                    let image = match (base, tiles) {
                        (Some(base), None) => base,
                        (Some(base), Some(tiles)) if tiles.shares_all(&base) => base,
                        (_, Some(tiles)) => Arc::new(tiles),
                        (None, None) => {
                            let message = format!("gave no tiles for texture `{}`, which has no base", texture.name());
                            return Err(MurkError::backend_message(self.backend.name(), message));
                        }
                    };
                    saved.insert((slot.key, texture), Arc::downgrade(&image));
                    kept_images.push((texture, image));
                }
            }
            // The state as it is, its capture written in the body or kept
            // beside it (taken out while the state is copied: a save state
            // shares it instead of copying it).
            let notes = if kept.is_some() { self.backend.save_notes(slot.key)? } else { None };
            let capture = slot.state.capture.take();
            let mut state = slot.state.clone();
            match kept.as_deref_mut() {
                Some(kept) => {
                    let held = match slot.caches.saved_capture.as_ref().and_then(Weak::upgrade) {
                        Some(held) => Some(held),
                        None => capture.clone().map(Arc::new),
                    };
                    slot.caches.saved_capture = held.as_ref().map(Arc::downgrade);
                    kept.push(KeptInstance { images: kept_images, on_device, capture: held, built_shapes: slot.caches.built_shapes.clone(), notes });
                }
                None => state.capture.clone_from(&capture),
            }
            slot.state.capture = capture;
            // A capture marked dirty over rectangles is redone whole after
            // a restore: the same heights where the marks hold every edit.
            state.capture_dirty |= !slot.capture_marks.is_empty();
            instances.push(InstanceBody { desc: slot.desc.clone(), state, textures });
        }
        let states = self.stealth.iter().map(|(bits, st)| (bits, None, st));
        let observed = self.observer_stealth.iter().map(|((bits, o), st)| (bits, Some(o.clone()), st));
        let stealth = states
            .chain(observed)
            .map(|(bits, observer, st)| {
                let ghost_at =
                    st.ghost.and_then(|g| world.get::<&Position>(g).ok().map(|p| p.0)).or_else(|| st.last_known_position()).unwrap_or_default();
                StealthBody {
                    actor: *bits,
                    observer,
                    state: st.clone(),
                    ghost_at: [ghost_at.x.to_bits(), ghost_at.y.to_bits(), ghost_at.z.to_bits()],
                }
            })
            .collect();
        let mut reveals: Vec<(u64, u32)> =
            world.query::<(Entity, &TransientReveal)>().iter().map(|(e, r)| (e.to_bits().get(), r.remaining_ticks)).collect();
        reveals.sort_unstable();
        if kept.is_some() {
            self.saved_images = saved;
        }
        Ok(FogBody {
            tick: self.tick,
            next_query: self.next_query,
            queries,
            instances,
            stealth,
            stealth_samples: self.stealth_batches.iter().cloned().collect(),
            reveals,
            lockstep: self.pending_hashes.iter().cloned().collect(),
            next_reveal: self.next_reveal,
            sight: self.sight.clone(),
            tracked: self.tracked.clone(),
            sight_samples: self.sight_batches.iter().cloned().collect(),
        })
    }
}

/// One instance's textures as a backend gave them, and its captured
/// heights, kept beside a state's body (shared: loading a kept state copies
/// no texture).
#[derive(Clone, Debug)]
pub(crate) struct KeptInstance {
    pub(crate) images: Vec<(Texture, Arc<TiledImage>)>,
    /// The textures copied on the backend's device instead (`images` is
    /// then empty).
    pub(crate) on_device: Option<KeptTextures>,
    pub(crate) capture: Option<Arc<Vec<i32>>>,
    /// The blockers the kept occlusion was built from.
    pub(crate) built_shapes: Option<Arc<BuiltShapes>>,
    /// What the backend knows of the kept textures beyond their texels.
    pub(crate) notes: Option<BackendNotes>,
}

/// A fog state saved in memory for rollback ([`FogSubsystem::save_state`]):
/// the snapshot's body, with the textures and captured heights kept as
/// they are.
#[derive(Clone, Debug)]
pub struct SaveState {
    pub(crate) body: FogBody,
    pub(crate) kept: Vec<KeptInstance>,
    /// The backend's holds on the values the body has in flight (tickets).
    pub(crate) holds: Vec<(u64, ReadbackHold)>,
}

impl SaveState {
    /// The bytes of textures and captured heights the state holds, each
    /// allocation once (masks equal at a place share their tile there), and
    /// of those the bytes of the allocations `other` holds too (a save
    /// shares what no tick wrote since the state before was saved, and a
    /// blend start's tiles are the final mask's of the tick before). What a
    /// rollback buffer of states costs in memory is the first figure of the
    /// oldest plus the difference of each next. Textures a backend kept on
    /// its device are not in host memory and not counted.
    pub fn texture_bytes(&self, other: &SaveState) -> (usize, usize) {
        let theirs: HashSet<usize> = other.allocations().map(|(at, _)| at).collect();
        let mine: HashMap<usize, usize> = self.allocations().collect();
        (mine.values().sum(), mine.iter().filter(|(at, _)| theirs.contains(at)).map(|(_, bytes)| bytes).sum())
    }

    /// Each allocation of texels the state holds, by address, with its
    /// bytes (once per holder: a caller keeps one of each address).
    fn allocations(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.kept.iter().flat_map(|inst| {
            let tiles = inst.images.iter().flat_map(|(_, image)| image.tiles.iter()).map(|t| (t.address(), t.bytes()));
            let capture = inst.capture.iter().map(|c| (Arc::as_ptr(c) as usize, c.len() * size_of::<i32>()));
            tiles.chain(capture)
        })
    }
}

/// Whether the backend holds ticket `t` for the state being saved (its
/// hold pushed into `holds`, once): it then stays in flight in the state.
pub(crate) fn held(backend: &mut dyn Backend, holds: &mut Option<&mut Vec<(u64, ReadbackHold)>>, t: u64) -> bool {
    let Some(holds) = holds.as_deref_mut() else { return false };
    if holds.iter().any(|(h, _)| *h == t) {
        return true;
    }
    backend.hold_readback(t).map(|hold| holds.push((t, hold))).is_some()
}
