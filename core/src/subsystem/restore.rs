//! Restoring the whole fog state from a snapshot or a save state, and the
//! checks a restored body must pass before it replaces anything: every
//! field against the rest (saving is in `save.rs`).

use super::body::{FogBody, StealthBody, TextureBody};
use super::fog::FogSubsystem;
use super::instance::{Caches, Slot};
use super::lockstep::{check_restored_hashes, PendingHashes};
use super::naming::prefix_error;
use super::payload::{check_payload, insert_payload};
use super::reveal::check_reveals;
use super::save::{KeptInstance, SaveState};
use super::sight::SightBatch;
use crate::backend::{Backend, InstanceDims, InstanceKey, Readback, ReadbackHold};
use crate::components::{Ghost, GhostObserver, Position, TransientReveal};
use crate::error::{finite, MurkError, Result};
use crate::fixed::{HEIGHT_LIMIT, HEIGHT_WALL};
use crate::frame::CAPTURE_EMPTY;
use crate::query::{MaskAnswer, PendingQuery, QueryAnswers};
use crate::stealth::Detect;
use crate::texture::{KeptTextures, TextureSet};
use hecs::{Entity, World};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::{Arc, Weak};

/// What a restored instance's textures are loaded from.
enum Textures {
    /// A checked set: a snapshot's images or a state's tiles.
    Set(TextureSet),
    /// Copies a backend kept on its device (checked by the backend).
    Kept(KeptTextures),
}

/// How far beyond the largest live entity index a restored ghost may keep
/// its saved id (farther ones are spawned as new entities).
const GHOST_ID_SLACK: u32 = 1 << 16;

impl FogSubsystem {
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
        self.restore_body(world, FogBody::decode(bytes)?, None, Vec::new())
    }

    /// Puts back a [`Self::save_state`], with the checks of
    /// [`Self::restore`]: a state that does not hold together is an error
    /// naming the field, and changes nothing. As a restore, it puts back
    /// the state's instances: one created since the save is destroyed, one
    /// destroyed since is made again, one resized is loaded at the state's
    /// size (a rollback past `create_instance`, `destroy_instance` or
    /// `set_area`). A state saved by another subsystem of this process
    /// loads too (tile versions are never given twice in a process). The
    /// sight sets, the query handles (the next one to give out included)
    /// and the pending answers after the load are the state's; readbacks
    /// in flight are dropped. A backend that versions its tiles copies
    /// back only those that differ.
    pub fn load_state(&mut self, world: &mut World, state: &SaveState) -> Result<()> {
        self.restore_body(world, state.body.clone(), Some(state.kept.clone()), state.holds.clone())
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
    /// A value may be in flight (a ticket) only where `holds` holds it:
    /// the backend keeps it for the polls after the load.
    fn restore_body(&mut self, world: &mut World, body: FogBody, kept: Option<Vec<KeptInstance>>, holds: Vec<(u64, ReadbackHold)>) -> Result<()> {
        let in_flight: BTreeSet<u64> = holds.iter().map(|(t, _)| *t).collect();
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
        let mut slots: Vec<(Slot, Textures)> = Vec::new();
        let mut names = BTreeSet::new();
        let mut moved_captures = BTreeSet::new();
        for inst in instances {
            let desc = inst.desc;
            let prefix = format!("snapshot instance `{}`", desc.name);
            if !names.insert(desc.name.clone()) {
                return Err(MurkError::invalid("snapshot.instances.name", &desc.name, "is used by two instances"));
            }
            let checked = desc.checked(&prefix)?;
            let (transform, dims) = (checked.transform, checked.dims);
            let held = match kept.as_mut() {
                Some(kept) => Some(kept.next().ok_or_else(|| MurkError::invalid("state.kept", names.len(), "holds fewer instances than the body"))?),
                None => None,
            };
            let mut state = inst.state;
            // A kept capture is the subsystem's own, checked when it was
            // made; the next save shares it while no tick changes it.
            let saved_capture = held.as_ref().and_then(|h| h.capture.as_ref()).map(Arc::downgrade);
            // The loaded occlusion is the build of the kept blockers: a
            // blocker changed after the load updates it where it changed.
            let built_shapes = held.as_ref().and_then(|h| h.built_shapes.clone());
            match &held {
                // The running instance's capture, when it is the kept one
                // (saved and not changed by a tick since), is moved over
                // once everything is loaded rather than copied.
                Some(held) if self.instances.get(&desc.name).is_some_and(|old| holds_capture(old, held)) => {
                    state.capture = None;
                    moved_captures.insert(desc.name.clone());
                }
                Some(held) => state.capture = held.capture.as_deref().cloned(),
                None => check_capture(state.capture.as_deref(), dims, &prefix)?,
            }
            if let Some(build) = state.built_for {
                if ![0, 1, 2, 4].contains(&build.distance_field_scale) {
                    return Err(MurkError::invalid(
                        format!("{prefix}.built_for.distance_field_scale"),
                        build.distance_field_scale,
                        "must be 0, 1, 2 or 4",
                    ));
                }
            }
            let textures = match held {
                Some(KeptInstance { on_device: Some(kept), .. }) => {
                    self.backend.check_kept(&kept, dims).map_err(|e| prefix_error(e, &prefix))?;
                    Textures::Kept(kept)
                }
                Some(held) => Textures::Set(TextureSet::tiled(dims, state.built_for, held.images, &prefix)?.with_notes(held.notes)),
                None => {
                    let images = inst.textures.iter().map(TextureBody::to_image).collect::<Result<Vec<_>>>()?;
                    Textures::Set(TextureSet::new(dims, state.built_for, images, &prefix)?)
                }
            };
            if let Some(i) = state.flags.iter().position(|f| matches!(f.changed, Readback::Ticket(t) if !in_flight.contains(&t))) {
                return Err(MurkError::invalid(format!("{prefix}.flags[{i}]"), "a ticket", "must have landed"));
            }
            for (i, r) in state.reveals.iter().enumerate() {
                let field = format!("{prefix}.reveals[{i}]");
                r.reveal.check(&field)?;
                if r.id.0 >= next_reveal {
                    return Err(MurkError::invalid(format!("{field}.id"), r.id.0, format!("must be below the next reveal id {next_reveal}")));
                }
                if state.reveals[..i].iter().any(|o| o.id == r.id) {
                    return Err(MurkError::invalid(format!("{field}.id"), r.id.0, "is listed twice"));
                }
            }
            check_reveals(&state.reveals, &transform).map_err(|e| prefix_error(e, &prefix))?;
            let mut slot = Slot::new(0, desc, checked);
            slot.state = state;
            slot.caches = Caches { built_shapes, saved_capture, ..Caches::default() };
            // The new backend instance holds no layer yet.
            slot.reveal_stale = true;
            slots.push((slot, textures));
        }
        for (h, answers) in &queries {
            let QueryAnswers::Mask(answers) = answers else { continue };
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
        for StealthBody { actor: bits, observer, state, ghost_at } in saved_stealth {
            let actor = Entity::from_bits(bits)
                .ok_or_else(|| MurkError::Parse { what: "snapshot".into(), message: format!("actor id {bits} is invalid") })?;
            let field = format!("snapshot.stealth[{}]", actor.id());
            let twice = match &observer {
                None => stealth.contains_key(&bits),
                Some(o) => observer_stealth.contains_key(&(bits, o.clone())),
            };
            if twice {
                return Err(MurkError::invalid(format!("{field}.actor"), bits, "has two stealth states for one observer"));
            }
            if let Some(o) = observer.as_ref().filter(|o| !names.contains(*o)) {
                return Err(MurkError::invalid(format!("{field}.observer"), o, "names no instance of the snapshot"));
            }
            check_payload(&self.payloads, &state.payload, &field)?;
            if let Some(known) = state.last_known.filter(|k| k.iter().any(|v| !f32::from_bits(*v).is_finite())) {
                return Err(MurkError::invalid(format!("{field}.last_known"), format!("{known:?}"), "must be finite numbers"));
            }
            if let Some(instance) = state.instance.as_ref().filter(|i| !names.contains(*i)) {
                return Err(MurkError::invalid(format!("{field}.instance"), instance, "names no instance of the snapshot"));
            }
            if let Some(g) = state.ghost {
                if !ghost_ids.insert(g.id()) || g.id() == actor.id() {
                    return Err(MurkError::invalid(format!("{field}.ghost"), g.id(), "is shared with another ghost or actor"));
                }
                let at = ghost_at.map(f32::from_bits);
                for (axis, v) in ["x", "y", "z"].into_iter().zip(at) {
                    finite(|| format!("{field}.ghost_position.{axis}"), v)?;
                }
                ghosts.push(((bits, observer.clone()), g, glam::Vec3::from(at), actor, state.payload.clone()));
            }
            match observer {
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
            let values = landed_len(&batch.values, &in_flight, || format!("snapshot.stealth_samples[{b}].values"))?;
            let lines = batch
                .detections
                .iter()
                .enumerate()
                .map(|(d, lines)| landed_len(&lines.lights, &in_flight, || format!("snapshot.stealth_samples[{b}].detections[{d}]")))
                .collect::<Result<Vec<Option<usize>>>>()?;
            for sample in &batch.samples {
                if let Some(o) = sample.observer.as_ref().filter(|o| !names.contains(*o)) {
                    return Err(MurkError::invalid(format!("snapshot.stealth_samples[{b}].observer"), o, "names no instance of the snapshot"));
                }
                check_payload(&self.payloads, &sample.payload, &format!("snapshot.stealth_samples[{b}]"))?;
                if let Some(Detect::Lines { batch, first, count, .. }) = &sample.detect {
                    // Lines still in flight (held) are the backend's own.
                    let fits =
                        lines.get(*batch).is_some_and(|&n| *count > 0 && first.checked_add(*count).is_some_and(|end| n.is_none_or(|n| end <= n)));
                    if !fits {
                        return Err(MurkError::invalid(
                            format!("snapshot.stealth_samples[{b}].detect"),
                            format!("lines {first}..+{count} of batch {batch}"),
                            format!("must lie in one of its {} detection batches", lines.len()),
                        ));
                    }
                }
                if let Some((name, i)) = &sample.located {
                    if !names.contains(name) || values.is_some_and(|n| *i >= n) {
                        return Err(MurkError::invalid(
                            format!("snapshot.stealth_samples[{b}].located"),
                            format!("({name}, {i})"),
                            format!("must name an instance of the snapshot and one of its {} values", values.unwrap_or(0)),
                        ));
                    }
                }
            }
        }
        let stealth_batches = VecDeque::from(stealth_samples);
        let mut reveals = BTreeMap::new();
        for (bits, remaining) in saved_reveals {
            let e = Entity::from_bits(bits)
                .ok_or_else(|| MurkError::Parse { what: "snapshot".into(), message: format!("reveal id {bits} is invalid") })?;
            if reveals.insert(e, remaining).is_some() {
                return Err(MurkError::invalid("snapshot.reveals", e.id(), "is listed twice"));
            }
        }
        check_restored_hashes(&lockstep, &names, &in_flight)?;
        let lockstep = PendingHashes::from(lockstep);
        let (sight, tracked, sight_batches) = restored_sight(sight, tracked, sight_samples, &names, &in_flight)?;
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
        let mut load = |backend: &mut dyn Backend, key: InstanceKey, textures: &Textures| match textures {
            Textures::Set(set) => {
                backend.write_textures(key, set)?;
                for (t, _) in set.sizes() {
                    if let Some(tiles) = set.tiles(t) {
                        loaded_images.insert((key, t), Arc::downgrade(tiles));
                    }
                }
                Ok(())
            }
            Textures::Kept(kept) => backend.load_kept(key, kept),
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
                load(&mut *backend, key, &textures)?;
                slot.key = key;
                key += 1;
                fresh.insert(slot.desc.name.clone(), slot);
            }
            for (slot, textures) in in_place {
                load(&mut *backend, slot.key, &textures)?;
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
        for (name, mut old) in std::mem::replace(&mut self.instances, fresh) {
            self.forget_flags(&old);
            if moved_captures.contains(&name) {
                if let Some(slot) = self.instances.get_mut(&name) {
                    slot.state.capture = old.state.capture.take();
                }
            }
            if !kept.contains(&old.key) {
                self.backend.destroy_instance(old.key);
            } else if let Some(slot) = self.instances.get_mut(&name) {
                // Loaded in place: the projections of the blockers and
                // sources are kept by what they were made from, so they
                // carry over (each is checked against its inputs), but for
                // eyes on the terrain, which the loaded capture may move.
                slot.caches.blocker_memo = old.caches.blocker_memo;
                if !slot.desc.profile.eyes_on_terrain {
                    slot.caches.source_memo = old.caches.source_memo;
                }
            }
        }
        for batch in &self.stealth_batches {
            for values in std::iter::once(&batch.values).chain(batch.detections.iter().map(|d| &d.lights)) {
                if let Readback::Ticket(t) = values {
                    self.backend.forget_readback(*t);
                }
            }
        }
        self.adopt_hashes(lockstep);
        self.saved_images = loaded_images;
        // The loaded tickets are polled from here on: their holds stay
        // until their values land here (`release_holds`), or the next load.
        self.holds = holds;
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
            insert_payload(&self.payloads, world, spawned, &payload);
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

/// The length of a landed readback of a body (`None`: a ticket the
/// backend holds for the state, the backend's own); another ticket is an
/// error naming `field`.
fn landed_len(values: &Readback<Vec<u16>>, held: &BTreeSet<u64>, field: impl Fn() -> String) -> Result<Option<usize>> {
    match values {
        Readback::Ready(v) => Ok(Some(v.len())),
        Readback::Ticket(t) if held.contains(t) => Ok(None),
        Readback::Ticket(t) => Err(MurkError::invalid(field(), format!("ticket {t}"), "must have landed")),
    }
}

/// Checks a snapshot's captured heights: `width * height` of them, each
/// empty or within the height range.
fn check_capture(heights: Option<&[i32]>, dims: InstanceDims, prefix: &str) -> Result<()> {
    let Some(heights) = heights else { return Ok(()) };
    let n = u64::from(dims.width) * u64::from(dims.height);
    if heights.len() as u64 != n {
        return Err(MurkError::invalid(
            format!("{prefix}.capture"),
            format!("{} heights", heights.len()),
            format!("must hold {}x{} heights = {n}", dims.width, dims.height),
        ));
    }
    if let Some((i, v)) = heights.iter().enumerate().find(|(_, &v)| v != CAPTURE_EMPTY && !(-HEIGHT_LIMIT..=HEIGHT_WALL).contains(&v)) {
        return Err(MurkError::invalid(format!("{prefix}.capture[{i}]"), v, format!("must be empty or within -{HEIGHT_LIMIT}..={HEIGHT_WALL}")));
    }
    Ok(())
}

/// The sight state of a snapshot, checked against the rest: sets and
/// batches name instances of the snapshot, sets hold tracked entities only,
/// in ascending order, and every group's values lie in its batch.
#[allow(clippy::type_complexity, reason = "the three parts of the sight state")]
fn restored_sight(
    sets: BTreeMap<String, Vec<u64>>,
    tracked: Vec<u64>,
    batches: Vec<SightBatch>,
    names: &BTreeSet<String>,
    held: &BTreeSet<u64>,
) -> Result<(BTreeMap<String, Vec<u64>>, Vec<u64>, VecDeque<SightBatch>)> {
    let ascending = |v: &[u64]| v.windows(2).all(|w| w[0] < w[1]);
    if !ascending(&tracked) {
        return Err(MurkError::invalid("snapshot.tracked", tracked.len(), "must list entities once each, in ascending order"));
    }
    for (name, set) in &sets {
        if !names.contains(name) {
            return Err(MurkError::invalid("snapshot.sight", name, "names no instance of the snapshot"));
        }
        if !ascending(set) {
            return Err(MurkError::invalid(format!("snapshot.sight.{name}"), set.len(), "must list entities once each, in ascending order"));
        }
        if let Some(e) = set.iter().find(|e| tracked.binary_search(e).is_err()) {
            return Err(MurkError::invalid(format!("snapshot.sight.{name}"), e, "is not a tracked entity"));
        }
    }
    for (b, batch) in batches.iter().enumerate() {
        let field = format!("snapshot.sight_samples[{b}]");
        if let Some(o) = batch.observers.iter().find(|o| !names.contains(*o)) {
            return Err(MurkError::invalid(format!("{field}.observers"), o, "names no instance of the snapshot"));
        }
        let values = landed_len(&batch.values, held, || format!("{field}.values"))?;
        // The sight update walks the tracked entities beside each group's
        // entities, and each observer's set is built from its one group.
        if let Some(i) = batch.groups.windows(2).position(|w| w[0].observer >= w[1].observer) {
            return Err(MurkError::invalid(
                format!("{field}.groups[{}].observer", i + 1),
                batch.groups[i + 1].observer,
                "must come after the group before it (by observer, each once)",
            ));
        }
        for (i, g) in batch.groups.iter().enumerate() {
            let end = u64::from(g.first) + g.entities.len() as u64;
            if g.observer as usize >= batch.observers.len() || values.is_some_and(|n| end > n as u64) {
                return Err(MurkError::invalid(
                    format!("{field}.groups[{i}]"),
                    format!("{}: {}..{end}", g.observer, g.first),
                    format!("must name one of the batch's observers and lie within its {} values", values.unwrap_or(0)),
                ));
            }
            if !ascending(&g.entities) {
                return Err(MurkError::invalid(
                    format!("{field}.groups[{i}].entities"),
                    g.entities.len(),
                    "must list entities once each, in ascending order",
                ));
            }
            // A signal of 0 is never seen: a cutoff of 0 would let any entity in.
            if g.cutoff == 0 {
                return Err(MurkError::invalid(format!("{field}.groups[{i}].cutoff"), 0, "must be at least 1"));
            }
        }
    }
    Ok((sets, tracked, VecDeque::from(batches)))
}

/// Whether `old` (a running instance) holds the captured heights `held`
/// keeps: its last save shared them, and no tick has changed them since.
fn holds_capture(old: &Slot, held: &KeptInstance) -> bool {
    let shared = old.caches.saved_capture.as_ref().and_then(Weak::upgrade);
    old.state.capture.is_some() && shared.zip(held.capture.as_ref()).is_some_and(|(a, b)| Arc::ptr_eq(&a, b))
}
