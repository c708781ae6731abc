//! The subsystem's stealth actors: gathering them, sampling the final mask
//! where they stand, and applying the samples when they are due (the state,
//! events and rules are in `crate::stealth`).

use super::entity_label;
use super::FogSubsystem;
use crate::backend::{Readback, SampleRequest};
use crate::components::{Ghost, HideMode, Position, StealthActor, VisibilityPolicy};
use crate::error::{finite, MurkError, Result};
use crate::frame::READBACK_LATENCY_TICKS;
use crate::query::texel_of;
use crate::stealth::{quantize, step_fade, StealthBatch, StealthEvent, StealthQ, StealthSample, StealthState};
use crate::transform::AreaTransform;
use hecs::{Entity, World};
use std::collections::{BTreeMap, BTreeSet};

impl FogSubsystem {
    /// Stealth actors with their settings checked, sorted by entity.
    pub(crate) fn gather_actors(&self, world: &World) -> Result<Vec<(Entity, glam::Vec3, StealthQ)>> {
        let mut actors = Vec::new();
        for (e, (pos, actor)) in world.query::<(&Position, &StealthActor)>().iter() {
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

    /// The stealth state of an actor.
    pub fn stealth_state(&self, actor: Entity) -> Option<&StealthState> {
        self.stealth.get(&actor.to_bits().get())
    }

    /// Applies the stealth samples that are due this tick (asked for
    /// [`READBACK_LATENCY_TICKS`] ticks ago) and removes the states of
    /// actors that are gone.
    pub(crate) fn update_stealth(&mut self, world: &mut World, actors: &[(Entity, glam::Vec3, StealthQ)], dt: u64) -> Result<Vec<StealthEvent>> {
        let mut events = Vec::new();
        // Actors that are gone take their ghosts with them.
        let present: BTreeSet<u64> = actors.iter().map(|(e, _, _)| e.to_bits().get()).collect();
        let gone: Vec<u64> = self.stealth.keys().filter(|k| !present.contains(k)).copied().collect();
        for bits in gone {
            if let Some(state) = self.stealth.remove(&bits) {
                if let (Some(ghost), Some(actor)) = (state.ghost, Entity::from_bits(bits)) {
                    // The game may have removed the ghost itself.
                    let _ = world.despawn(ghost);
                    events.push(StealthEvent::GhostRemoved { actor, ghost });
                }
            }
        }
        while self.stealth_batches.front().is_some_and(|b| b.due <= self.tick) {
            let batch = self.stealth_batches.pop_front().expect("checked above");
            let values = match batch.values {
                Readback::Ready(v) => v,
                Readback::Ticket(t) => self
                    .backend
                    .poll_samples(t, true)?
                    .ok_or_else(|| MurkError::ReadbackLost { backend: self.backend.name(), what: "stealth readback" })?,
            };
            for sample in batch.samples {
                // An actor removed since its sample was taken has no state any more.
                let Some(actor) = Entity::from_bits(sample.actor).filter(|_| present.contains(&sample.actor)) else { continue };
                let value = match &sample.located {
                    Some((_, i)) => values.get(*i).copied().ok_or_else(|| MurkError::Backend {
                        backend: self.backend.name(),
                        message: format!("the stealth readback holds {} values, sample {i} was asked for", values.len()),
                    })?,
                    None => 0,
                };
                let visible = match sample.policy {
                    VisibilityPolicy::FogDriven => sample.located.is_some() && value >= sample.cutoff,
                    VisibilityPolicy::AlwaysVisible => true,
                    VisibilityPolicy::AlwaysHidden => false,
                };
                let state = self.stealth.entry(sample.actor).or_default();
                if visible && !state.last_visible {
                    if let Some(ghost) = state.ghost.take() {
                        let _ = world.despawn(ghost);
                        events.push(StealthEvent::GhostRemoved { actor, ghost });
                    }
                    events.push(StealthEvent::Revealed { actor });
                } else if !visible && state.last_visible {
                    events.push(StealthEvent::Hidden { actor });
                    if sample.hide_mode == HideMode::FreezeWithGhost {
                        if let Some(at) = state.last_known_position() {
                            let ghost = world.spawn((Position(at), Ghost { actor }));
                            state.ghost = Some(ghost);
                            events.push(StealthEvent::GhostSpawned { actor, ghost });
                        }
                    }
                }
                if visible {
                    state.last_known = Some(sample.position);
                }
                state.last_visible = visible;
                state.last_value = value;
                state.instance = sample.located.map(|(n, _)| n);
                state.fade = step_fade(state.fade, visible, sample.fade_us, dt);
            }
        }
        Ok(events)
    }

    /// Asks the backend for every actor's final-mask value after this
    /// tick's blend, in one batch over all instances; the answers are used
    /// [`READBACK_LATENCY_TICKS`] ticks later.
    pub(crate) fn submit_stealth(&mut self, actors: &[(Entity, glam::Vec3, StealthQ)]) -> Result<()> {
        if actors.is_empty() {
            return Ok(());
        }
        let mut per_instance: BTreeMap<String, Vec<(usize, [u32; 2])>> = BTreeMap::new();
        let mut samples = Vec::with_capacity(actors.len());
        for (i, (actor, pos, q)) in actors.iter().enumerate() {
            let located = match &q.instance {
                Some(name) => {
                    let slot = self.slot(name)?;
                    let out = AreaTransform::new(&slot.desc.area, slot.dims.out_width, slot.dims.out_height);
                    texel_of(&out, slot.desc.area.center.z, *pos).map(|(t, _)| (name.clone(), t))
                }
                None => self.locate(*pos),
            };
            let cutoff = match &located {
                Some((name, texel)) => {
                    per_instance.entry(name.clone()).or_default().push((i, *texel));
                    q.cutoff.unwrap_or(self.slot(name)?.q.visibility_cutoff)
                }
                None => u16::MAX,
            };
            samples.push(StealthSample {
                actor: actor.to_bits().get(),
                position: [pos.x.to_bits(), pos.y.to_bits(), pos.z.to_bits()],
                located: located.map(|(n, _)| (n, 0)),
                cutoff,
                policy: q.policy,
                hide_mode: q.hide_mode,
                fade_us: q.fade_us,
            });
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
        self.stealth_batches.push_back(StealthBatch { due: self.tick.saturating_add(READBACK_LATENCY_TICKS), samples, values });
        Ok(())
    }
}
