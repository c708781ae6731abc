//! One tick of the subsystem: it gathers the world's sources, blockers
//! and captures, applies the recompute rules and the cadence, and drives
//! the backend; then the stealth actors, the sight sets and the lockstep
//! hashes follow.
//!
//! Recompute rules (what triggers what; `docs/architecture.md` walks one
//! tick):
//!
//! ```text
//! capture dirty ──> recapture ──> occlusion dirty ──> rebuild occlusion ─┐
//! blockers changed ───────────────────^                                  v
//! sources changed / occlusion rebuilt / not settled ──> recompute visibility..upscale
//! every tick ──> blend(start, upscaled, t)
//! ```
//!
//! A tick validates every input of every instance before it touches any
//! state: a rejected input leaves all masks as they were.

use super::actors::landed_samples;
use super::fog::FogSubsystem;
use super::gather::{gather, Gathered};
use super::instance::Slot;
use super::lockstep::LandedHash;
use super::naming::in_instance;
use super::reveal::RevealKind;
use super::rules::{apply, InstanceTick};
use super::sight::{self, SightBatch, SightEvent};
use super::sources::WorldSources;
use super::timers;
use crate::backend::{InstanceKey, Readback};
use crate::components::TransientReveal;
use crate::error::{MurkError, Result};
use crate::frame::RevealLayer;
use crate::stealth::{StealthEvent, StealthQ};
use hecs::{Entity, World};
use rayon::prelude::*;
use std::collections::BTreeMap;

/// What one tick did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TickReport {
    /// Per instance, by name.
    pub instances: BTreeMap<String, InstanceTick>,
    /// Stealth transitions, in actor order.
    pub events: Vec<StealthEvent>,
    /// Transitions of per-observer stealth actors, each with its observer,
    /// in actor order, then observer order.
    pub observer_events: Vec<(String, StealthEvent)>,
    /// Tracked entities entering and leaving each observer's sight, in
    /// observer order, then entity order (see [`FogSubsystem::visible_to`]).
    pub sight: Vec<SightEvent>,
    /// With [`FogSubsystem::set_hash_every_tick`]: the lockstep hash of the
    /// state [`crate::frame::READBACK_LATENCY_TICKS`] ticks ago, landed this tick.
    pub lockstep: Option<LandedHash>,
}

impl FogSubsystem {
    /// Advances every instance by `dt_us` microseconds.
    ///
    /// Validates all inputs first: on error nothing changed (masks, memory,
    /// cadence and transient reveals are as before the call).
    pub fn tick(&mut self, world: &mut World, dt_us: u32) -> Result<TickReport> {
        match self.backend.tick_runner() {
            Some(runner) => {
                let mut report = None;
                runner.run(&mut || report = Some(self.tick_here(world, dt_us)));
                report.expect("the runner runs its work")
            }
            None => self.tick_here(world, dt_us),
        }
    }

    /// What a tick's first phase gathers beside the tracked entities,
    /// checked.
    fn gather_phase(&self, world: &World) -> Result<Gathering> {
        // The instances due a recompute gather side by side (each reads
        // the world and its own slot only); the first error in name order
        // is the one reported, as if they had gathered one after another.
        let due: Vec<(&String, &Slot)> = self
            .instances
            .iter()
            .filter(|(_, slot)| slot.desc.profile.enabled && !slot.desc.profile.freeze_state)
            .filter(|(_, slot)| !slot.state.has_recomputed || slot.state.rate_since_us >= slot.q.update_interval_us)
            .collect();
        let mut results = Vec::new();
        if !due.is_empty() {
            self.backend.run_parallel(&mut || {
                let listed = WorldSources::of(world);
                results = due.par_iter().map(|(_, slot)| gather(slot, world, &listed)).collect();
            });
        }
        if results.len() != due.len() {
            return Err(MurkError::backend_message(self.backend.name(), "run_parallel did not run the instances' gathering"));
        }
        let mut gathered: BTreeMap<String, Gathered> = BTreeMap::new();
        for ((name, _), g) in due.into_iter().zip(results) {
            gathered.insert(name.clone(), g.map_err(|e| in_instance(e, name))?);
        }
        // Scripted reveals whose layer changed (checked here: a reveal too
        // long for an instance fails before anything changes).
        let mut layers = BTreeMap::new();
        for (name, slot) in &self.instances {
            if slot.desc.profile.enabled {
                if let Some(update) = slot.reveal_update().map_err(|e| in_instance(e, name))? {
                    layers.insert(name.clone(), update);
                }
            }
        }
        let actors = self.gather_actors(world)?;
        Ok(Gathering { gathered, layers, actors })
    }

    /// [`FogSubsystem::tick`] on the calling thread.
    fn tick_here(&mut self, world: &mut World, dt_us: u32) -> Result<TickReport> {
        let dt = u64::from(dt_us);
        // Phase 1: gather and validate everything. The tracked entities
        // are gathered on another worker while this thread lists the
        // world's sources once, gathers the instances' sources, blockers
        // and captures (side by side, on the workers free), then their
        // reveals and the actors.
        let world_now: &World = world;
        let (instances, memo) = (&self.instances, &self.footprint_memo);
        let mut tracked = None;
        let mut gather_own = timers::Elapsed::default();
        let (gathered_all, gather_wait) = rayon::in_place_scope(|s| {
            s.spawn(|_| {
                let started = timers::Started::now();
                tracked = Some(sight::gather_tracked(instances, memo, world_now));
                gather_own = started.elapsed();
            });
            let gathered = self.gather_phase(world_now);
            // What follows until the scope ends is the wait for the tracked
            // entities, the sight steps' share of this phase.
            (gathered, timers::Started::now())
        });
        self.sight_timers.gather.add(gather_own);
        self.sight_timers.gather_wait.add(gather_wait.elapsed());
        let Gathering { mut gathered, mut layers, actors } = gathered_all?;
        let tracked = tracked.expect("the scope ran the gathering of the tracked entities")?;
        // Phase 2: apply.
        let mut report = TickReport::default();
        let mut built: BTreeMap<u64, InstanceKey> = BTreeMap::new();
        let share = self.instances.len() > 1;
        for (name, slot) in &mut self.instances {
            if !slot.desc.profile.enabled {
                continue;
            }
            slot.state.stats.ticks = slot.state.stats.ticks.saturating_add(1);
            if let Some((signature, layer)) = layers.remove(name) {
                self.backend.set_reveals(slot.key, layer.as_ref())?;
                if slot.state.reveal_signature != signature {
                    slot.unsettle();
                }
                slot.state.reveal_signature = signature;
                slot.reveal_stale = false;
            }
            let mut outcome = InstanceTick::default();
            if let Some(g) = gathered.remove(name) {
                outcome = apply(self.backend.as_mut(), slot, g, dt, self.tick, &mut built, share)?;
            }
            if outcome.recomputed {
                for r in slot.state.reveals.iter_mut().filter(|r| r.reveal.kind == RevealKind::Map && r.strength() == crate::fixed::MASK_MAX) {
                    r.applied = true;
                }
            }
            // Counters and timers saturate: a snapshot may bring them near
            // u64::MAX, and a saturated timer means "due" and "blend done".
            slot.state.rate_since_us = slot.state.rate_since_us.saturating_add(dt);
            slot.state.blend_since_us = slot.state.blend_since_us.saturating_add(dt);
            // An interval of 0 recomputes every tick: the blend lands at once.
            let t = slot.state.blend_since_us.saturating_mul(65536).checked_div(slot.q.update_interval_us).map_or(65536, |t| t.min(65536) as u32);
            if slot.state.has_recomputed {
                self.backend.blend(slot.key, t)?;
            }
            report.instances.insert(name.clone(), outcome);
        }
        for slot in self.instances.values_mut() {
            slot.age_reveals();
        }
        let stealth = self.update_stealth(world, &actors, dt)?;
        (report.events, report.observer_events) = (stealth.single, stealth.per_observer);
        self.submit_stealth(world, &actors)?;
        let sight::TrackedTick { entities, domains, footprints, memo } = tracked;
        self.footprint_memo = memo;
        let started = self.sight_timers.update.start();
        let landed = self.landed_sight()?;
        let hidden = sight::Hidden::new(&self.stealth, &self.observer_stealth);
        // The sets follow the judgments that landed while the backend
        // judges this tick's footprints: neither reads what the other makes.
        let ((sets, events), submitted) = rayon::join(
            || sight::next_sets(&self.sight, &self.instances, &hidden, landed, (&entities, &domains)),
            || sight::submit_sight(self.backend.as_mut(), &self.instances, footprints, self.tick),
        );
        (self.sight, self.tracked, report.sight) = (sets, entities, events);
        self.sight_batches.extend(submitted?);
        self.sight_timers.update.stop(started);
        // Transient reveals count down after they revealed this tick.
        let mut expired = Vec::new();
        for (e, reveal) in world.query_mut::<(Entity, &mut TransientReveal)>() {
            reveal.remaining_ticks = reveal.remaining_ticks.saturating_sub(1);
            if reveal.remaining_ticks == 0 {
                expired.push(e);
            }
        }
        for e in expired {
            // The entity was just listed by the query, so it exists.
            let _ = world.despawn(e);
        }
        report.lockstep = self.step_lockstep_hashes()?;
        self.release_holds();
        self.tick = self.tick.saturating_add(1);
        Ok(report)
    }

    /// Takes the footprint judgments due this tick, each batch with its
    /// values (checked to hold every value its groups ask for).
    pub(crate) fn landed_sight(&mut self) -> Result<Vec<(SightBatch, Vec<u16>)>> {
        let mut landed = Vec::new();
        while self.sight_batches.front().is_some_and(|b| b.due <= self.tick) {
            let mut batch = self.sight_batches.pop_front().expect("checked above");
            let values = std::mem::replace(&mut batch.values, Readback::Ready(Vec::new()));
            let values = landed_samples(self.backend.as_mut(), values, "sight readback")?;
            // Every group's values lie in the readback (a restored batch is
            // made so), so one look at its length is enough.
            let wanted = batch.groups.iter().map(|g| g.first as usize + g.entities.len()).max().unwrap_or(0);
            if values.len() < wanted {
                return Err(MurkError::backend_message(
                    self.backend.name(),
                    format!("the sight readback holds {} values, {wanted} were asked for", values.len()),
                ));
            }
            landed.push((batch, values));
        }
        Ok(landed)
    }

    /// The time the ticks spent in each sight step since the last call
    /// (feature `timers`).
    #[cfg(feature = "timers")]
    pub fn take_sight_times(&mut self) -> timers::SightTimes {
        let t = &mut self.sight_timers;
        timers::SightTimes {
            gather: std::mem::take(&mut t.gather.spent),
            gather_wait: std::mem::take(&mut t.gather_wait.spent),
            update: std::mem::take(&mut t.update.spent),
        }
    }
}

/// What a tick's first phase gathers beside the tracked entities.
struct Gathering {
    /// The inputs of the instances due a recompute.
    gathered: BTreeMap<String, Gathered>,
    /// The instances whose reveal layer changed: its signature and the
    /// layer (`None`: no reveal).
    layers: BTreeMap<String, (Option<u64>, Option<RevealLayer>)>,
    /// The stealth actors.
    actors: Vec<(Entity, glam::Vec3, StealthQ)>,
}
