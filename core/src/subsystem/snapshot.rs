//! Saving and restoring the whole fog state in the checksummed container of
//! [`crate::snapshot`], and the checks a restored body must pass before it
//! replaces anything.

use super::rules::PendingFlag;
use super::CaptureBytes;
use super::{FogSubsystem, Slot};
use crate::backend::{InstanceDims, InstanceKey, Readback};
use crate::components::{Ghost, GhostObserver, Position, TransientReveal};
use crate::error::{finite, MurkError, Result};
use crate::fixed::{HEIGHT_LIMIT, HEIGHT_WALL};
use crate::frame::CAPTURE_EMPTY;
use crate::query::{MaskAnswer, PendingQuery, QueryHandle};
use crate::snapshot::{FlagBody, FogBody, InstanceBody, SampleBatchBody, SightBatchBody, StealthBody, TextureBody};
use crate::stealth::{StealthBatch, StealthState};
use crate::texture::{instance_textures, Texture, TextureSet};
use hecs::{Entity, World};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::sync::Arc;

/// How far beyond the largest live entity index a restored ghost may keep
/// its saved id (farther ones are spawned as new entities).
const GHOST_ID_SLACK: u32 = 1 << 16;

impl FogSubsystem {
    /// Waits for every value still in flight on the backend (changed flags,
    /// stealth samples), so that the state can be written down.
    pub(crate) fn land_readbacks(&mut self) -> Result<()> {
        for slot in self.instances.values_mut() {
            for flag in &mut slot.flags {
                if let Readback::Ticket(t) = flag.changed {
                    let changed = self.backend.poll_changed(t, true)?;
                    flag.changed =
                        Readback::Ready(changed.ok_or_else(|| MurkError::ReadbackLost { backend: self.backend.name(), what: "changed flag" })?);
                }
            }
        }
        let backend = self.backend.as_mut();
        let stealth = self.stealth_batches.iter_mut().map(|b| (&mut b.values, "stealth readback"));
        let sight = self.sight_batches.iter_mut().map(|b| (&mut b.values, "sight readback"));
        for (values, what) in stealth.chain(sight) {
            if let Readback::Ticket(_) = values {
                let ticket = std::mem::replace(values, Readback::Ready(Vec::new()));
                *values = Readback::Ready(super::actors::landed_samples(backend, ticket, what)?);
            }
        }
        Ok(())
    }

    /// Saves the whole fog state: every instance (settings, cadence timers,
    /// dirty flags, counters, every texture), stealth states with their
    /// ghosts, pending query answers and the transient reveals of `world`,
    /// as a [`FogBody`] in the snapshot container.
    pub fn snapshot(&mut self, world: &World) -> Result<Vec<u8>> {
        self.save_body(world, None)?.encode()
    }

    /// The state as a rollback library keeps it every frame: the body of
    /// [`Self::snapshot`] held in memory, neither encoded, compressed nor
    /// checksummed ([`Self::load_state`] puts it back), its textures in
    /// tiles: a tile no tick wrote since the state saved or loaded before
    /// is that state's, shared, not copied. It belongs to this process
    /// only; send [`Self::snapshot`] across machines.
    pub fn save_state(&mut self, world: &World) -> Result<SaveState> {
        let mut kept = Vec::new();
        let body = self.save_body(world, Some(&mut kept))?;
        Ok(SaveState { body, kept })
    }

    /// Puts back a [`Self::save_state`], with the checks of
    /// [`Self::restore`] (a state of another subsystem whose instances or
    /// sizes differ is an error naming the field, and changes nothing). A
    /// backend that versions its tiles copies back only those that differ.
    pub fn load_state(&mut self, world: &mut World, state: &SaveState) -> Result<()> {
        self.restore_body(world, state.body.clone(), Some(state.kept.clone()))
    }

    /// The body of a snapshot; with `kept`, each instance's textures and
    /// captured heights are kept there, as they are, instead of in the body.
    fn save_body(&mut self, world: &World, mut kept: Option<&mut Vec<KeptInstance>>) -> Result<FogBody> {
        // Pending queries are waited for: a snapshot holds their answers.
        let handles: Vec<u64> = self.queries.keys().copied().collect();
        let mut queries: BTreeMap<u64, Vec<MaskAnswer>> = BTreeMap::new();
        for h in handles {
            if let Some(a) = self.poll_query(QueryHandle(h), true)? {
                queries.insert(h, a);
            }
        }
        for (h, a) in &queries {
            self.queries.insert(*h, PendingQuery { answers: a.clone(), in_flight: None });
        }
        self.land_readbacks()?;
        let mut instances = Vec::with_capacity(self.instances.len());
        let mut saved = BTreeMap::new();
        for slot in self.instances.values_mut() {
            let mut textures = Vec::new();
            let mut kept_images = Vec::new();
            let entries = instance_textures(slot.dims, slot.state.built_for);
            if kept.is_none() {
                for entry in &entries {
                    textures.push(TextureBody::of(entry.texture, &self.backend.read_texture(slot.key, entry.texture)?));
                }
            } else {
                // The tiles no pass wrote since the last state saved or
                // loaded here are that state's, shared.
                let bases: Vec<_> =
                    entries.iter().map(|e| (e.texture, self.saved_images.get(&(slot.key, e.texture)).and_then(std::sync::Weak::upgrade))).collect();
                let asked: Vec<_> = bases.iter().map(|(t, base)| (*t, base.as_deref())).collect();
                let read = self.backend.save_tiles(slot.key, &asked)?;
                if read.len() != asked.len() {
                    let message = format!("saved {} textures of the {} asked", read.len(), asked.len());
                    return Err(MurkError::Backend { backend: self.backend.name(), message });
                }
                for ((texture, base), tiles) in bases.into_iter().zip(read) {
                    let image = match (base, tiles) {
                        (Some(base), None) => base,
                        (Some(base), Some(tiles)) if tiles.shares_all(&base) => base,
                        (_, Some(tiles)) => Arc::new(tiles),
                        (None, None) => {
                            let message = format!("gave no tiles for texture `{}`, which has no base", texture.name());
                            return Err(MurkError::Backend { backend: self.backend.name(), message });
                        }
                    };
                    saved.insert((slot.key, texture), Arc::downgrade(&image));
                    kept_images.push((texture, image));
                }
            }
            let capture = match kept.as_deref_mut() {
                Some(kept) => {
                    let capture = match slot.saved_capture.as_ref().and_then(std::sync::Weak::upgrade) {
                        Some(held) => Some(held),
                        None => slot.state.capture.clone().map(Arc::new),
                    };
                    slot.saved_capture = capture.as_ref().map(Arc::downgrade);
                    kept.push(KeptInstance { images: kept_images, capture, built_shapes: slot.built_shapes.clone() });
                    None
                }
                None => slot.state.capture.as_ref().map(|c| CaptureBytes(c.iter().flat_map(|v| v.to_le_bytes()).collect())),
            };
            instances.push(InstanceBody {
                desc: slot.desc.clone(),
                state: super::InstanceState {
                    // A capture marked dirty over rectangles is redone
                    // whole after a restore: the same heights where the
                    // marks hold every edit.
                    capture_dirty: slot.state.capture_dirty || !slot.capture_marks.is_empty(),
                    ..slot.state.with_capture(capture)
                },
                flags: slot
                    .flags
                    .iter()
                    .map(|f| Ok(FlagBody { due: f.due, changed: landed(f.changed)?, starved: f.starved, epoch: f.epoch }))
                    .collect::<Result<_>>()?,
                textures,
                reveals: slot.reveals.clone(),
                reveal_signature: slot.reveal_uploaded,
            });
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
                    last_visible: st.last_visible,
                    last_value: st.last_value,
                    last_known: st.last_known,
                    fade: st.fade,
                    ghost: st.ghost.map(|g| g.to_bits().get()),
                    ghost_at: [ghost_at.x.to_bits(), ghost_at.y.to_bits(), ghost_at.z.to_bits()],
                    instance: st.instance.clone(),
                    observer,
                    payload: st.payload.clone(),
                }
            })
            .collect();
        let stealth_samples = self
            .stealth_batches
            .iter()
            .map(|b| Ok(SampleBatchBody { due: b.due, samples: b.samples.clone(), values: landed(b.values.clone())? }))
            .collect::<Result<_>>()?;
        let mut reveals: Vec<(u64, u32)> =
            world.query::<(Entity, &TransientReveal)>().iter().map(|(e, r)| (e.to_bits().get(), r.remaining_ticks)).collect();
        reveals.sort_unstable();
        let lockstep = self.land_pending_hashes()?;
        if kept.is_some() {
            self.saved_images = saved;
        }
        Ok(FogBody {
            tick: self.tick,
            next_query: self.next_query,
            queries,
            instances,
            stealth,
            stealth_samples,
            reveals,
            lockstep,
            next_reveal: self.next_reveal,
            sight: self.sight.iter().map(|(n, s)| (n.clone(), s.clone())).collect(),
            tracked: self.tracked.clone(),
            sight_samples: self
                .sight_batches
                .iter()
                .map(|b| {
                    let values = landed(b.values.clone())?;
                    Ok(SightBatchBody { due: b.due, observers: b.observers.clone(), samples: b.samples(), values })
                })
                .collect::<Result<_>>()?,
        })
    }

    /// Restores a snapshot written by [`Self::snapshot`], and its ghosts and
    /// transient-reveal counters into `world`.
    ///
    /// The whole body is read and checked against itself before anything is
    /// replaced: a truncated, corrupted or wrong-version snapshot, or one whose
    /// checksum is right but whose fields disagree (two instances with one
    /// name, textures missing or of the wrong size, type or range, a capture
    /// of the wrong length, query handles at or past the next handle, stealth
    /// states naming unknown instances or sharing a ghost) is an error naming
    /// the field, and changes nothing.
    ///
    /// Entities the game owns are never touched: a ghost keeps its saved id
    /// only when no live entity holds that index (and the index is not far
    /// beyond the world's largest); otherwise (the game reused the id after
    /// the ghost was removed) a new ghost entity is spawned and the stealth
    /// state names it. Transient-reveal countdowns are restored
    /// only on entities that hold a `TransientReveal` already.
    pub fn restore(&mut self, world: &mut World, bytes: &[u8]) -> Result<()> {
        self.restore_body(world, FogBody::decode(bytes)?, None)
    }

    /// Takes over the whole fog state of `previous` (a subsystem of the same
    /// world on another backend, say): a snapshot of it restored here. The
    /// restore spawns this subsystem's own ghosts, so the ghost entities of
    /// `previous` that nothing refers to now are despawned from `world`.
    /// This is a backend switch while a game runs; registrations
    /// (payloads, [`FogSubsystem::set_hash_every_tick`]) are the caller's to
    /// make first. On an error `world` may hold ghosts of both.
    pub fn take_over(&mut self, world: &mut World, previous: &mut FogSubsystem) -> Result<()> {
        let bytes = previous.snapshot(world)?;
        self.restore(world, &bytes)?;
        let orphans: Vec<Entity> = world
            .query::<(Entity, &Ghost, Option<&GhostObserver>)>()
            .iter()
            .filter(|(g, ghost, observer)| {
                let state = match observer {
                    None => self.stealth_state(ghost.actor),
                    Some(o) => self.stealth_state_for(ghost.actor, &o.0),
                };
                state.and_then(|s| s.ghost) != Some(*g)
            })
            .map(|(g, _, _)| g)
            .collect();
        for g in orphans {
            world.despawn(g).expect("queried above");
        }
        Ok(())
    }

    /// Restores a body; with `kept`, each instance's textures and captured
    /// heights come from there (in instance order) instead of from the body.
    fn restore_body(&mut self, world: &mut World, body: FogBody, kept: Option<Vec<KeptInstance>>) -> Result<()> {
        let mut kept = kept.map(Vec::into_iter);
        let FogBody {
            tick,
            next_query,
            queries,
            instances,
            stealth: saved_stealth,
            stealth_samples,
            reveals: saved_reveals,
            lockstep,
            next_reveal,
            sight,
            tracked,
            sight_samples,
        } = body;
        if let Some((&h, _)) = queries.range(next_query..).next() {
            return Err(MurkError::invalid("snapshot.queries", h, format!("is a pending handle at or past the next handle {next_query}")));
        }
        let mut slots: Vec<(Slot, TextureSet)> = Vec::new();
        let mut names = BTreeSet::new();
        for inst in instances {
            let desc = inst.desc;
            let prefix = format!("snapshot instance `{}`", desc.name);
            if !names.insert(desc.name.clone()) {
                return Err(MurkError::invalid("snapshot.instances.name", &desc.name, "is used by two instances"));
            }
            let (q, transform, dims) = Self::validate_desc(&desc, &prefix)?;
            let held = match kept.as_mut() {
                Some(kept) => Some(kept.next().ok_or_else(|| MurkError::invalid("state.kept", names.len(), "holds fewer instances than the body"))?),
                None => None,
            };
            // A kept capture is the subsystem's own, checked when it was
            // made; the next save shares it while no tick changes it.
            let saved_capture = held.as_ref().and_then(|h| h.capture.as_ref()).map(Arc::downgrade);
            // The loaded occlusion is the build of the kept blockers: a
            // blocker changed after the load updates it where it changed.
            let built_shapes = held.as_ref().and_then(|h| h.built_shapes.clone());
            let capture = match &held {
                Some(held) => held.capture.as_deref().cloned(),
                None => inst.state.capture.as_ref().map(|blob| read_capture(&blob.0, dims, &prefix)).transpose()?,
            };
            if let Some(build) = inst.state.built_for {
                if ![0, 1, 2, 4].contains(&build.distance_field_scale) {
                    return Err(MurkError::invalid(
                        format!("{prefix}.built_for.distance_field_scale"),
                        build.distance_field_scale,
                        "must be 0, 1, 2 or 4",
                    ));
                }
            }
            let textures = match held {
                Some(held) => TextureSet::tiled(dims, inst.state.built_for, held.images, &prefix)?,
                None => {
                    let images = inst.textures.iter().map(TextureBody::to_image).collect::<Result<Vec<_>>>()?;
                    TextureSet::new(dims, inst.state.built_for, images, &prefix)?
                }
            };
            let flags =
                inst.flags.iter().map(|f| PendingFlag { due: f.due, changed: Readback::Ready(f.changed), starved: f.starved, epoch: f.epoch });
            let state = inst.state.with_capture(capture);
            for (i, r) in inst.reveals.iter().enumerate() {
                let field = format!("{prefix}.reveals[{i}]");
                r.reveal.check(&field)?;
                if r.id.0 >= next_reveal {
                    return Err(MurkError::invalid(format!("{field}.id"), r.id.0, format!("must be below the next reveal id {next_reveal}")));
                }
                if inst.reveals[..i].iter().any(|o| o.id == r.id) {
                    return Err(MurkError::invalid(format!("{field}.id"), r.id.0, "is listed twice"));
                }
            }
            super::reveal::check_reveals(&inst.reveals, &transform).map_err(|e| super::prefix_error(e, &prefix))?;
            let slot = Slot {
                key: 0,
                desc,
                q,
                transform,
                dims,
                state,
                last_input: None,
                built_shapes,
                blocker_memo: super::project::BlockerMemo::default(),
                source_memo: super::project::SourceMemo::default(),
                capture_marks: Vec::new(),
                saved_capture,
                flags: flags.collect(),
                reveals: inst.reveals,
                reveal_uploaded: inst.reveal_signature,
                // The new backend instance holds no layer yet.
                reveal_stale: true,
            };
            slots.push((slot, textures));
        }
        for (h, answers) in &queries {
            for a in answers {
                if let MaskAnswer::Sampled { instance, .. } = a {
                    if !names.contains(instance) {
                        return Err(MurkError::invalid(format!("snapshot.queries[{h}].instance"), instance, "names no instance of the snapshot"));
                    }
                }
            }
        }
        let mut stealth = BTreeMap::new();
        let mut observer_stealth = BTreeMap::new();
        let mut ghosts = Vec::new();
        let mut ghost_ids = BTreeSet::new();
        for saved in saved_stealth {
            let bits = saved.actor;
            let actor = Entity::from_bits(bits)
                .ok_or_else(|| MurkError::Parse { what: "snapshot".into(), message: format!("actor id {bits} is invalid") })?;
            let field = format!("snapshot.stealth[{}]", actor.id());
            let twice = match &saved.observer {
                None => stealth.contains_key(&bits),
                Some(o) => observer_stealth.contains_key(&(bits, o.clone())),
            };
            if twice {
                return Err(MurkError::invalid(format!("{field}.actor"), bits, "has two stealth states for one observer"));
            }
            if let Some(o) = saved.observer.as_ref().filter(|o| !names.contains(*o)) {
                return Err(MurkError::invalid(format!("{field}.observer"), o, "names no instance of the snapshot"));
            }
            self.check_payload(&saved.payload, &field)?;
            if let Some(known) = saved.last_known.filter(|k| k.iter().any(|v| !f32::from_bits(*v).is_finite())) {
                return Err(MurkError::invalid(format!("{field}.last_known"), format!("{known:?}"), "must be finite numbers"));
            }
            if let Some(instance) = saved.instance.as_ref().filter(|i| !names.contains(*i)) {
                return Err(MurkError::invalid(format!("{field}.instance"), instance, "names no instance of the snapshot"));
            }
            let ghost = match saved.ghost {
                Some(g) => Some(
                    Entity::from_bits(g).ok_or_else(|| MurkError::Parse { what: "snapshot".into(), message: format!("ghost id {g} is invalid") })?,
                ),
                None => None,
            };
            if let Some(g) = ghost {
                if !ghost_ids.insert(g.id()) || g.id() == actor.id() {
                    return Err(MurkError::invalid(format!("{field}.ghost"), g.id(), "is shared with another ghost or actor"));
                }
                let at = saved.ghost_at.map(f32::from_bits);
                for (axis, v) in ["x", "y", "z"].into_iter().zip(at) {
                    finite(|| format!("{field}.ghost_position.{axis}"), v)?;
                }
                ghosts.push(((bits, saved.observer.clone()), g, glam::Vec3::from(at), actor, saved.payload.clone()));
            }
            let state = StealthState {
                last_visible: saved.last_visible,
                last_value: saved.last_value,
                last_known: saved.last_known,
                fade: saved.fade,
                ghost,
                instance: saved.instance,
                payload: saved.payload,
            };
            match saved.observer {
                None => stealth.insert(bits, state),
                Some(o) => observer_stealth.insert((bits, o), state),
            };
        }
        for bits in stealth.keys().chain(observer_stealth.keys().map(|(b, _)| b)) {
            if let Some(id) = Entity::from_bits(*bits).map(|e| e.id()) {
                if ghost_ids.contains(&id) {
                    return Err(MurkError::invalid("snapshot.stealth.ghost", id, "is also an actor"));
                }
            }
        }
        for (b, batch) in stealth_samples.iter().enumerate() {
            for sample in &batch.samples {
                if let Some(o) = sample.observer.as_ref().filter(|o| !names.contains(*o)) {
                    return Err(MurkError::invalid(format!("snapshot.stealth_samples[{b}].observer"), o, "names no instance of the snapshot"));
                }
                self.check_payload(&sample.payload, &format!("snapshot.stealth_samples[{b}]"))?;
                if let Some((name, i)) = &sample.located {
                    if !names.contains(name) || *i >= batch.values.len() {
                        return Err(MurkError::invalid(
                            format!("snapshot.stealth_samples[{b}].located"),
                            format!("({name}, {i})"),
                            format!("must name an instance of the snapshot and one of its {} values", batch.values.len()),
                        ));
                    }
                }
            }
        }
        let stealth_batches: VecDeque<StealthBatch> =
            stealth_samples.into_iter().map(|b| StealthBatch { due: b.due, samples: b.samples, values: Readback::Ready(b.values) }).collect();
        let mut reveals = BTreeMap::new();
        for (bits, remaining) in saved_reveals {
            let e = Entity::from_bits(bits)
                .ok_or_else(|| MurkError::Parse { what: "snapshot".into(), message: format!("reveal id {bits} is invalid") })?;
            if reveals.insert(e, remaining).is_some() {
                return Err(MurkError::invalid("snapshot.reveals", e.id(), "is listed twice"));
            }
        }
        let lockstep = Self::restored_hashes(lockstep, &names)?;
        let (sight, tracked, sight_batches) = restored_sight(sight, tracked, sight_samples, &names)?;
        let last_key = u64::from(self.next_key) + slots.len() as u64;
        if last_key > u64::from(u32::MAX) {
            return Err(MurkError::invalid("instance keys", self.next_key, "are used up: every key up to u32::MAX was given out"));
        }
        // Everything parsed and checked: load the textures. An instance of
        // the same name and size is loaded in place (a rollback writes into
        // the buffers it has, and the CPU keeps its occlusion tables and
        // source windows when the occlusion is the one it holds); the others
        // go into fresh backend instances. Those are made first: if one
        // fails, they are destroyed and nothing running has changed. The
        // loads in place come last, when nothing is left to check (a backend
        // checks a whole set against the instance before writing any of it).
        let (mut created, mut fresh, mut key) = (Vec::new(), BTreeMap::new(), self.next_key);
        let (backend, running) = (self.backend.as_mut(), &self.instances);
        // The tiles loaded from a save state are what the next save shares.
        let mut loaded_images = BTreeMap::new();
        let mut note = |key: InstanceKey, set: &TextureSet| {
            for (t, _) in set.sizes() {
                if let Some(tiles) = set.tiles(t) {
                    loaded_images.insert((key, t), Arc::downgrade(tiles));
                }
            }
        };
        let loaded = (|| {
            let mut in_place = Vec::new();
            for (mut slot, textures) in slots {
                if let Some(old) = running.get(&slot.desc.name).filter(|old| old.dims == slot.dims) {
                    slot.key = old.key;
                    in_place.push((slot, textures));
                    continue;
                }
                backend.create_instance(key, slot.dims)?;
                created.push(key);
                backend.write_textures(key, &textures)?;
                note(key, &textures);
                slot.key = key;
                key += 1;
                fresh.insert(slot.desc.name.clone(), slot);
            }
            for (slot, textures) in in_place {
                backend.write_textures(slot.key, &textures)?;
                note(slot.key, &textures);
                fresh.insert(slot.desc.name.clone(), slot);
            }
            Ok(())
        })();
        if let Err(e) = loaded {
            for k in created {
                self.backend.destroy_instance(k);
            }
            return Err(e);
        }
        let kept: BTreeSet<InstanceKey> = fresh.values().map(|slot| slot.key).collect();
        for old in std::mem::replace(&mut self.instances, fresh).into_values() {
            self.forget_flags(&old);
            if !kept.contains(&old.key) {
                self.backend.destroy_instance(old.key);
            }
        }
        for batch in &self.stealth_batches {
            if let Readback::Ticket(t) = batch.values {
                self.backend.forget_readback(t);
            }
        }
        self.adopt_hashes(lockstep);
        self.saved_images = loaded_images;
        self.next_key = key;
        self.next_reveal = next_reveal;
        self.tick = tick;
        self.next_query = next_query;
        // The queries in flight are replaced: their readbacks are dropped.
        for pending in self.queries.values() {
            if let Some((t, _)) = pending.in_flight {
                self.backend.forget_readback(t);
            }
        }
        self.queries = queries.into_iter().map(|(h, answers)| (h, PendingQuery { answers, in_flight: None })).collect();
        self.stealth_batches = stealth_batches;
        for batch in &self.sight_batches {
            if let Readback::Ticket(t) = batch.values {
                self.backend.forget_readback(t);
            }
        }
        self.sight = sight;
        self.tracked = tracked;
        self.sight_batches = sight_batches;
        // The old ghosts are murk's: despawn those that are still ghosts.
        for old in self.stealth.values().chain(self.observer_stealth.values()) {
            if let Some(g) = old.ghost {
                if world.get::<&Ghost>(g).is_ok() {
                    let _ = world.despawn(g);
                }
            }
        }
        self.stealth = stealth;
        self.observer_stealth = observer_stealth;
        let live: BTreeSet<u32> = world.iter().map(|e| e.entity().id()).collect();
        // hecs sizes its tables by the largest index: a saved id far beyond the
        // world's (a hostile 3 000 000 000) would allocate gigabytes.
        let reach = live.last().copied().unwrap_or(0).saturating_add(GHOST_ID_SLACK);
        for ((bits, observer), ghost, at, actor, payload) in ghosts {
            let components = (Position(at), Ghost { actor });
            let spawned = if live.contains(&ghost.id()) || ghost.id() > reach {
                let new = world.spawn(components);
                let state = match &observer {
                    None => self.stealth.get_mut(&bits),
                    Some(o) => self.observer_stealth.get_mut(&(bits, o.clone())),
                };
                if let Some(state) = state {
                    state.ghost = Some(new);
                }
                new
            } else {
                world.spawn_at(ghost, components);
                ghost
            };
            if let Some(o) = observer {
                let _ = world.insert_one(spawned, GhostObserver(o));
            }
            super::payload::insert_payload(&self.payloads, world, spawned, &payload);
        }
        for (e, remaining) in reveals {
            // The game restores its own entities; murk restores their countdown.
            if let Ok(mut reveal) = world.get::<&mut TransientReveal>(e) {
                reveal.remaining_ticks = remaining;
            }
        }
        Ok(())
    }
}

/// A value that must have landed before a snapshot is written
/// ([`FogSubsystem::land_readbacks`] waits for them all).
fn landed<T>(value: Readback<T>) -> Result<T> {
    match value {
        Readback::Ready(v) => Ok(v),
        Readback::Ticket(t) => Err(MurkError::invalid("snapshot readback", t, "is still in flight after every readback was waited for")),
    }
}

/// A snapshot's capture blob: `width * height` little-endian `i32` heights,
/// each empty or within the height range.
fn read_capture(blob: &[u8], dims: InstanceDims, prefix: &str) -> Result<Vec<i32>> {
    let n = u64::from(dims.width) * u64::from(dims.height);
    if blob.len() as u64 != n * 4 {
        return Err(MurkError::invalid(
            format!("{prefix}.capture"),
            format!("{} bytes", blob.len()),
            format!("must hold {}x{} heights of 4 bytes = {} bytes", dims.width, dims.height, n * 4),
        ));
    }
    let texels: Vec<i32> = blob.chunks_exact(4).map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
    if let Some((i, v)) = texels.iter().enumerate().find(|(_, &v)| v != CAPTURE_EMPTY && !(-HEIGHT_LIMIT..=HEIGHT_WALL).contains(&v)) {
        return Err(MurkError::invalid(format!("{prefix}.capture[{i}]"), v, format!("must be empty or within -{HEIGHT_LIMIT}..={HEIGHT_WALL}")));
    }
    Ok(texels)
}

/// The sight state of a snapshot, checked against the rest: sets and
/// batches name instances of the snapshot, sets hold tracked entities only,
/// in ascending order, and every sample's values lie in its batch.
#[allow(clippy::type_complexity, reason = "the three parts of the sight state")]
fn restored_sight(
    sight: Vec<(String, Vec<u64>)>,
    tracked: Vec<u64>,
    batches: Vec<SightBatchBody>,
    names: &BTreeSet<String>,
) -> Result<(BTreeMap<String, Vec<u64>>, Vec<u64>, VecDeque<super::sight::SightBatch>)> {
    let ascending = |v: &[u64]| v.windows(2).all(|w| w[0] < w[1]);
    if !ascending(&tracked) {
        return Err(MurkError::invalid("snapshot.tracked", tracked.len(), "must list entities once each, in ascending order"));
    }
    let mut sets = BTreeMap::new();
    for (name, set) in sight {
        if !names.contains(&name) {
            return Err(MurkError::invalid("snapshot.sight", name, "names no instance of the snapshot"));
        }
        if !ascending(&set) {
            return Err(MurkError::invalid(format!("snapshot.sight.{name}"), set.len(), "must list entities once each, in ascending order"));
        }
        if let Some(e) = set.iter().find(|e| tracked.binary_search(e).is_err()) {
            return Err(MurkError::invalid(format!("snapshot.sight.{name}"), e, "is not a tracked entity"));
        }
        if sets.insert(name.clone(), set).is_some() {
            return Err(MurkError::invalid("snapshot.sight", name, "is listed twice"));
        }
    }
    let mut out = VecDeque::new();
    for (b, batch) in batches.into_iter().enumerate() {
        let field = format!("snapshot.sight_samples[{b}]");
        if let Some(o) = batch.observers.iter().find(|o| !names.contains(*o)) {
            return Err(MurkError::invalid(format!("{field}.observers"), o, "names no instance of the snapshot"));
        }
        // The sight update walks the tracked entities beside each
        // observer's samples: they come by observer, then entity.
        if let Some(i) = batch.samples.windows(2).position(|w| (w[0].observer, w[0].entity) >= (w[1].observer, w[1].entity)) {
            return Err(MurkError::invalid(
                format!("{field}.samples[{}]", i + 1),
                batch.samples[i + 1].entity,
                "must come after the sample before it (by observer, then entity, each once)",
            ));
        }
        for (i, s) in batch.samples.iter().enumerate() {
            let end = u64::from(s.first) + u64::from(s.count);
            if s.observer as usize >= batch.observers.len() || s.count == 0 || end > batch.values.len() as u64 {
                return Err(MurkError::invalid(
                    format!("{field}.samples[{i}]"),
                    format!("{}: {}..{end}", s.observer, s.first),
                    format!("must name one of the batch's observers and lie within its {} values", batch.values.len()),
                ));
            }
            // A signal of 0 is never seen: a cutoff of 0 would let any entity in.
            if s.cutoff == 0 {
                return Err(MurkError::invalid(format!("{field}.samples[{i}].cutoff"), 0, "must be at least 1"));
            }
        }
        out.push_back(super::sight::SightBatch::from_samples(batch.due, batch.observers, &batch.samples, &batch.values));
    }
    Ok((sets, tracked, out))
}

/// One instance's textures as a backend gave them, and its captured
/// heights, kept beside a state's body (shared: loading a kept state copies
/// no texture).
#[derive(Clone, Debug)]
struct KeptInstance {
    images: Vec<(Texture, Arc<crate::texture::TiledImage>)>,
    capture: Option<Arc<Vec<i32>>>,
    /// The blockers the kept occlusion was built from.
    built_shapes: Option<Arc<super::occlusion::BuiltShapes>>,
}

/// A fog state saved in memory for rollback ([`FogSubsystem::save_state`]):
/// the snapshot's body, with the textures and captured heights kept as
/// they are.
#[derive(Clone, Debug)]
pub struct SaveState {
    body: FogBody,
    kept: Vec<KeptInstance>,
}

impl SaveState {
    /// The bytes of textures and captured heights the state holds, each
    /// allocation once (masks equal at a place share their tile there), and
    /// of those the bytes of the allocations `other` holds too (a save
    /// shares what no tick wrote since the state before was saved, and a
    /// blend start's tiles are the final mask's of the tick before). What a
    /// rollback buffer of states costs in memory is the first figure of the
    /// oldest plus the difference of each next.
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
