//! The subsystem's stealth actors: gathering them, sampling the final mask
//! where they stand, and applying the samples when they are due (the state,
//! events and rules are in `crate::stealth`).
//!
//! An actor has one state, decided by one instance (the one it names, or
//! the one it stands in), or, with `per_observer`, a state per instance:
//! each instance judges it on its own final mask, with its own events
//! (`TickReport::observer_events`) and its own ghost.

use super::fog::FogSubsystem;
use super::naming::entity_label;
use super::payload::{capture_payload, insert_payload, PayloadKind};
use super::queries::{line_rule, line_terrain};
use super::sources::{project_source, project_target, Projecting};
use crate::backend::{Backend, LineRequest, LineTexels, Readback, SampleRequest};
use crate::components::{Detection, Ghost, GhostObserver, HideMode, Position, StealthActor, VisibilityPolicy, VisionSource};
use crate::error::{finite, MurkError, Result};
use crate::fixed::TEXEL_FRAC_BITS;
use crate::frame::RayRule;
use crate::frame::READBACK_LATENCY_TICKS;
use crate::query::reaches;
use crate::query::texel_of;
use crate::stealth::{quantize, step_fade, Detect, DetectionLines, StealthBatch, StealthEvent, StealthQ, StealthSample, StealthState};
use crate::transform::AreaTransform;
use crate::zlayer::Slab;
use hecs::{Entity, World};
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// Stealth transitions of one tick: those of the actors' single states,
/// and those of per-observer states, with their observer.
#[derive(Default)]
pub(crate) struct StealthEvents {
    pub(crate) single: Vec<StealthEvent>,
    pub(crate) per_observer: Vec<(String, StealthEvent)>,
}

impl StealthEvents {
    fn push(&mut self, observer: &Option<String>, event: StealthEvent) {
        match observer {
            None => self.single.push(event),
            Some(o) => self.per_observer.push((o.clone(), event)),
        }
    }
}

/// The values of a sample readback, waiting for them if they are still
/// in flight (`what` names the readback if it was lost).
pub(crate) fn landed_samples(backend: &mut dyn Backend, values: Readback<Vec<u16>>, what: &'static str) -> Result<Vec<u16>> {
    match values {
        Readback::Ready(v) => Ok(v),
        Readback::Ticket(t) => backend.poll_samples(t, true)?.ok_or_else(|| MurkError::ReadbackLost { backend: backend.name(), what }),
    }
}

/// The detectors' sight lines of one stealth batch, gathered while its
/// samples are taken: by instance, the rule and the lines, and the samples
/// that wait for them.
#[derive(Default)]
struct DetectionWork {
    lines: BTreeMap<String, (RayRule, Vec<LineTexels>)>,
    waiting: BTreeMap<String, Vec<usize>>,
}

/// Who judges an actor (an observer, or `None` for its one state) and
/// where it stands in that judge's instance (`None`: outside it).
type Judge = (Option<String>, Option<(String, [u32; 2])>);

/// One sample's transition of `state` (the rule of `crate::stealth`).
#[allow(clippy::too_many_arguments, reason = "one transition and what it touches")]
fn transition(
    state: &mut StealthState,
    sample: StealthSample,
    actor: Entity,
    (value, detected): (u16, bool),
    dt: u64,
    world: &mut World,
    payloads: &[PayloadKind],
    events: &mut StealthEvents,
) {
    let visible = match sample.policy {
        VisibilityPolicy::FogDriven => sample.located.is_some() && value >= sample.cutoff && detected,
        VisibilityPolicy::AlwaysVisible => true,
        VisibilityPolicy::AlwaysHidden => false,
    };
    let observer = sample.observer.clone();
    if visible && !state.last_visible {
        if let Some(ghost) = state.ghost.take() {
            let _ = world.despawn(ghost);
            events.push(&observer, StealthEvent::GhostRemoved { actor, ghost });
        }
        events.push(&observer, StealthEvent::Revealed { actor });
    } else if !visible && state.last_visible {
        events.push(&observer, StealthEvent::Hidden { actor });
        if sample.hide_mode == HideMode::FreezeWithGhost {
            if let Some(at) = state.last_known_position() {
                let ghost = world.spawn((Position(at), Ghost { actor }));
                if let Some(o) = &observer {
                    let _ = world.insert_one(ghost, GhostObserver(o.clone()));
                }
                insert_payload(payloads, world, ghost, &state.payload);
                state.ghost = Some(ghost);
                events.push(&observer, StealthEvent::GhostSpawned { actor, ghost });
            }
        }
    }
    if visible {
        state.last_known = Some(sample.position);
        state.payload = sample.payload;
    }
    state.last_visible = visible;
    state.last_value = value;
    state.instance = sample.located.map(|(n, _)| n);
    state.fade = step_fade(state.fade, visible, sample.fade_us, dt);
}

impl FogSubsystem {
    /// Registers a component of the game that ghosts carry: whenever a
    /// stealth actor in `FreezeWithGhost` is seen, murk keeps a copy of its
    /// `T` (serialized, so snapshots hold it too), and the ghost it leaves
    /// when hidden gets that copy, unchanged until the actor is seen again
    /// (by that observer). `name` stands for `T` in snapshots; a name used
    /// twice is an error.
    pub fn register_ghost_payload<T: hecs::Component + Serialize + DeserializeOwned>(&mut self, name: &str) -> Result<()> {
        if self.payloads.iter().any(|p| p.name == name) {
            return Err(MurkError::invalid("ghost payload", name, "is registered already"));
        }
        self.payloads.push(PayloadKind::of::<T>(name));
        Ok(())
    }

    /// Stealth actors with their settings checked, sorted by entity.
    pub(crate) fn gather_actors(&self, world: &World) -> Result<Vec<(Entity, glam::Vec3, StealthQ)>> {
        let mut actors = Vec::new();
        for (e, pos, actor) in world.query::<(Entity, &Position, &StealthActor)>().iter() {
            let label = entity_label(e);
            for (axis, v) in [("x", pos.0.x), ("y", pos.0.y), ("z", pos.0.z)] {
                finite(|| format!("{label}.position.{axis}"), v)?;
            }
            let q = quantize(&label, actor)?;
            if let Some(name) = &q.instance {
                if !self.instances.contains_key(name) {
                    return Err(MurkError::UnknownInstance(format!("{name} (named by {label}.stealth.instance)")));
                }
            }
            actors.push((e, pos.0, q));
        }
        actors.sort_by_key(|(e, _, _)| e.to_bits());
        Ok(actors)
    }

    /// The stealth state of an actor (its one state; see
    /// [`Self::stealth_state_for`] for per-observer actors).
    pub fn stealth_state(&self, actor: Entity) -> Option<&StealthState> {
        self.stealth.get(&actor.to_bits().get())
    }

    /// The state of a per-observer stealth actor for one observer.
    pub fn stealth_state_for(&self, actor: Entity, observer: &str) -> Option<&StealthState> {
        self.observer_stealth.get(&(actor.to_bits().get(), observer.to_string()))
    }

    /// Applies the stealth samples that are due this tick (asked for
    /// [`READBACK_LATENCY_TICKS`] ticks ago) and removes the states of
    /// actors (and observers) that are gone, with their ghosts.
    pub(crate) fn update_stealth(&mut self, world: &mut World, actors: &[(Entity, glam::Vec3, StealthQ)], dt: u64) -> Result<StealthEvents> {
        let mut events = StealthEvents::default();
        let present: BTreeSet<u64> = actors.iter().map(|(e, _, _)| e.to_bits().get()).collect();
        let gone: Vec<u64> = self.stealth.keys().filter(|k| !present.contains(k)).copied().collect();
        for bits in gone {
            if let Some(state) = self.stealth.remove(&bits) {
                if let (Some(ghost), Some(actor)) = (state.ghost, Entity::from_bits(bits)) {
                    // The game may have removed the ghost itself.
                    let _ = world.despawn(ghost);
                    events.single.push(StealthEvent::GhostRemoved { actor, ghost });
                }
            }
        }
        let gone: Vec<(u64, String)> =
            self.observer_stealth.keys().filter(|(a, o)| !present.contains(a) || !self.instances.contains_key(o)).cloned().collect();
        for key in gone {
            if let Some(state) = self.observer_stealth.remove(&key) {
                if let (Some(ghost), Some(actor)) = (state.ghost, Entity::from_bits(key.0)) {
                    let _ = world.despawn(ghost);
                    events.per_observer.push((key.1, StealthEvent::GhostRemoved { actor, ghost }));
                }
            }
        }
        while self.stealth_batches.front().is_some_and(|b| b.due <= self.tick) {
            let batch = self.stealth_batches.pop_front().expect("checked above");
            let values = landed_samples(self.backend.as_mut(), batch.values, "stealth readback")?;
            let lights = batch
                .detections
                .into_iter()
                .map(|d| landed_samples(self.backend.as_mut(), d.lights, "detection readback"))
                .collect::<Result<Vec<_>>>()?;
            for sample in batch.samples {
                // An actor removed since its sample was taken has no state any more.
                let Some(actor) = Entity::from_bits(sample.actor).filter(|_| present.contains(&sample.actor)) else { continue };
                if sample.observer.as_ref().is_some_and(|o| !self.instances.contains_key(o)) {
                    continue;
                }
                let value = match &sample.located {
                    Some((_, i)) => values.get(*i).copied().ok_or_else(|| {
                        MurkError::backend_message(
                            self.backend.name(),
                            format!("the stealth readback holds {} values, sample {i} was asked for", values.len()),
                        )
                    })?,
                    None => 0,
                };
                let state = match &sample.observer {
                    None => self.stealth.entry(sample.actor).or_default(),
                    Some(o) => self.observer_stealth.entry((sample.actor, o.clone())).or_default(),
                };
                let detected = match &sample.detect {
                    None => true,
                    Some(Detect::Decided(d)) => *d,
                    Some(Detect::Lines { batch, first, count, cutoff }) => {
                        let (batch, first, count, cutoff) = (*batch, *first, *count, *cutoff);
                        let lines = lights.get(batch).and_then(|l| l.get(first..first.saturating_add(count))).ok_or_else(|| {
                            MurkError::backend_message(
                                self.backend.name(),
                                format!("the detection readback lacks lines {first}..+{count} of batch {batch}"),
                            )
                        })?;
                        lines.iter().any(|&light| light >= cutoff)
                    }
                };
                transition(state, sample, actor, (value, detected), dt, world, &self.payloads, &mut events);
            }
        }
        Ok(events)
    }

    /// Asks the backend for every actor's final-mask value after this
    /// tick's blend, in one batch over all instances (a per-observer actor
    /// in every instance); the answers are used [`READBACK_LATENCY_TICKS`]
    /// ticks later. Actors that leave ghosts carry their registered payload.
    pub(crate) fn submit_stealth(&mut self, world: &World, actors: &[(Entity, glam::Vec3, StealthQ)]) -> Result<()> {
        if actors.is_empty() {
            return Ok(());
        }
        let mut per_instance: BTreeMap<String, Vec<(usize, [u32; 2])>> = BTreeMap::new();
        let mut samples = Vec::with_capacity(actors.len());
        // The detectors, in entity order, when an actor is cloaked.
        let mut detectors: Vec<(Entity, Position, VisionSource)> = Vec::new();
        if actors.iter().any(|(_, _, q)| q.cloaked) {
            detectors = world
                .query::<(Entity, &Position, &VisionSource)>()
                .iter()
                .filter(|(_, _, s)| s.detects != Detection::None)
                .map(|(e, p, s)| (e, *p, *s))
                .collect();
            detectors.sort_by_key(|(e, _, _)| e.to_bits());
        }
        let mut detection = DetectionWork::default();
        for (actor, pos, q) in actors {
            let payload = if q.hide_mode == HideMode::FreezeWithGhost { capture_payload(&self.payloads, world, *actor) } else { Vec::new() };
            let judges: Vec<Judge> = if q.per_observer {
                // Every sight instance: other sensor layers judge no actor.
                self.instances
                    .iter()
                    .filter(|(_, slot)| slot.desc.profile.layer == 0)
                    .map(|(name, slot)| {
                        let a = &slot.desc.area;
                        let in_slab = !slot.desc.profile.z_layering || (pos.z - a.center.z).abs() <= a.extents.z / 2.0;
                        let out = AreaTransform::new(a, slot.dims.out_width, slot.dims.out_height);
                        let located = texel_of(&out, a.center.z, *pos).filter(|_| in_slab).map(|(t, _)| (name.clone(), t));
                        (Some(name.clone()), located)
                    })
                    .collect()
            } else {
                let located = match &q.instance {
                    Some(name) => {
                        let slot = self.slot(name)?;
                        let out = AreaTransform::new(&slot.desc.area, slot.dims.out_width, slot.dims.out_height);
                        texel_of(&out, slot.desc.area.center.z, *pos).map(|(t, _)| (name.clone(), t))
                    }
                    None => self.locate(*pos),
                };
                vec![(None, located)]
            };
            for (observer, located) in judges {
                let cutoff = match &located {
                    Some((name, texel)) => {
                        per_instance.entry(name.clone()).or_default().push((samples.len(), *texel));
                        q.cutoff.unwrap_or(self.slot(name)?.q.visibility_cutoff)
                    }
                    None => u16::MAX,
                };
                let detect = match &located {
                    Some((name, _)) if q.cloaked => Some(self.detect(&detectors, *pos, name, cutoff, samples.len(), &mut detection)?),
                    _ if q.cloaked => Some(Detect::Decided(false)),
                    _ => None,
                };
                samples.push(StealthSample {
                    actor: actor.to_bits().get(),
                    position: [pos.x.to_bits(), pos.y.to_bits(), pos.z.to_bits()],
                    located: located.map(|(n, _)| (n, 0)),
                    cutoff,
                    policy: q.policy,
                    hide_mode: q.hide_mode,
                    fade_us: q.fade_us,
                    observer,
                    payload: payload.clone(),
                    detect,
                });
            }
        }
        let mut requests = Vec::with_capacity(per_instance.len());
        let mut next = 0;
        for (name, texels) in per_instance {
            for (index, (i, _)) in texels.iter().enumerate() {
                if let Some((_, at)) = &mut samples[*i].located {
                    *at = next + index;
                }
            }
            next += texels.len();
            requests.push(SampleRequest { key: self.slot(&name)?.key, texels: texels.into_iter().map(|(_, t)| t).collect() });
        }
        let values = if requests.is_empty() { Readback::Ready(Vec::new()) } else { Readback::Ticket(self.backend.submit_samples(&requests)?) };
        // One line batch per instance, in name order.
        let mut detections = Vec::with_capacity(detection.lines.len());
        for (batch, (name, (rule, lines))) in detection.lines.into_iter().enumerate() {
            for &i in &detection.waiting[&name] {
                if let Some(Detect::Lines { batch: b, .. }) = &mut samples[i].detect {
                    *b = batch;
                }
            }
            let submitted = self.slot(&name).map(|slot| LineRequest { key: slot.key, rule, lines }).and_then(|r| self.backend.submit_lines(&r));
            match submitted {
                Ok(ticket) => detections.push(DetectionLines { lights: Readback::Ticket(ticket) }),
                Err(e) => {
                    // Nothing of this batch is kept: its readbacks go too.
                    for values in std::iter::once(&values).chain(detections.iter().map(|d| &d.lights)) {
                        if let Readback::Ticket(t) = values {
                            self.backend.forget_readback(*t);
                        }
                    }
                    return Err(e);
                }
            }
        }
        self.stealth_batches.push_back(StealthBatch { due: self.tick.saturating_add(READBACK_LATENCY_TICKS), samples, values, detections });
        Ok(())
    }

    /// Whether the detectors of instance `name`'s teams detect a cloaked
    /// actor at `pos` (sample `sample` of the batch): decided now by a
    /// detector in range, or left to the sight lines from the detectors in
    /// sight, added to `work` (their batch set once every line is in).
    fn detect(
        &self,
        detectors: &[(Entity, Position, VisionSource)],
        pos: glam::Vec3,
        name: &str,
        cutoff: u16,
        sample: usize,
        work: &mut DetectionWork,
    ) -> Result<Detect> {
        let slot = self.slot(name)?;
        let profile = &slot.desc.profile;
        let mut in_sight = Vec::new();
        // A detector of the instance's layer and teams, as the instance
        // sees it (its profile's eye offset and see-through applied).
        for (e, p, s) in detectors.iter().filter(|(_, _, s)| s.layer == profile.layer && slot.desc.observed_teams.contains(s.team)) {
            let s = profile.source_in_instance(s);
            // With `snap_sources`, the range is measured from the centre of
            // the texel under the eye, where the instance stands it.
            let snapped = profile.snap_sources.then(|| snapped_eye(&slot.transform, p, &s));
            let (at, eye) = snapped.as_ref().map_or((p, &s), |(at, eye)| (at, eye));
            if !reaches(*e, at, eye, pos)? {
                continue;
            }
            match s.detects {
                Detection::InRange => return Ok(Detect::Decided(true)),
                // A detector that sees through walls needs no line.
                Detection::InSight if s.see_through => return Ok(Detect::Decided(true)),
                Detection::InSight => in_sight.push((*e, *p, s)),
                Detection::None => {}
            }
        }
        if in_sight.is_empty() {
            return Ok(Detect::Decided(false));
        }
        // An instance with no occlusion to judge by (not built) detects
        // nothing in sight; one that sees through walls, everything in range.
        let Ok(rule) = line_rule(name, slot) else { return Ok(Detect::Decided(false)) };
        let Some(rule) = rule else { return Ok(Detect::Decided(true)) };
        let slab = Slab::logical(&slot.desc.area, profile.z_layering_area_scale);
        let into = Projecting { t: &slot.transform, profile, slab: &slab, teams: slot.desc.observed_teams, terrain: line_terrain(slot) };
        let Ok(to) = project_target(|| "the cloaked actor".to_string(), pos, into) else { return Ok(Detect::Decided(false)) };
        let mut lines = Vec::with_capacity(in_sight.len());
        for (e, p, s) in &in_sight {
            // Projected as the tick projected it (the same checks, which
            // this tick's gather passed); a detector the instance does not
            // take, or whose eye stands outside its grid, sees no line.
            let Some(src) = project_source(&entity_label(*e), p, s, into)? else { continue };
            let (w, h) = (i64::from(slot.dims.width), i64::from(slot.dims.height));
            let (x, y) = (i64::from(src.x >> TEXEL_FRAC_BITS), i64::from(src.y >> TEXEL_FRAC_BITS));
            if (0..w).contains(&x) && (0..h).contains(&y) {
                lines.push(LineTexels { from: [x as u32, y as u32], eye: src.eye, to });
            }
        }
        if lines.is_empty() {
            return Ok(Detect::Decided(false));
        }
        let (_, kept) = work.lines.entry(name.to_string()).or_insert_with(|| (rule, Vec::new()));
        let (first, count) = (kept.len(), lines.len());
        kept.extend(lines);
        work.waiting.entry(name.to_string()).or_default().push(sample);
        Ok(Detect::Lines { batch: 0, first, count, cutoff })
    }
}

/// A source's eye moved to the centre of the instance texel under it, as
/// a profile with `snap_sources` stands it: the position there, and the
/// source with no ground offset left (its height offsets kept).
fn snapped_eye(t: &AreaTransform, p: &Position, s: &VisionSource) -> (Position, VisionSource) {
    let (ex, ey) = s.eye_ground(p.0);
    let (tx, ty) = t.world_to_texel(ex, ey);
    let (x, y) = t.texel_to_world(tx.floor() + 0.5, ty.floor() + 0.5);
    let eye_offset = glam::Vec3::new(0.0, 0.0, s.eye_offset.z);
    (Position(glam::Vec3::new(x as f32, y as f32, p.0.z)), VisionSource { eye_offset, ..*s })
}
