//! The subsystem's gameplay queries: which instance answers for a point,
//! the immediate query, the mask queries batched over its instances, the
//! sight lines of an instance (the query types and rules are in
//! `crate::query`), and which tracked
//! entities each observer sees (the sight sets, kept by `sight.rs`).

use super::fog::FogSubsystem;
use super::instance::Slot;
use super::sources::{project_lines, Projecting};
use super::terrain::Terrain;
use crate::backend::{LineRequest, SampleRequest};
use crate::components::{Position, TeamMask};
use crate::error::{finite, in_range, MurkError, Result};
use crate::fixed::Fnv64;
use crate::frame::RayRule;
use crate::query::{
    immediate, texel_of, Blip, InFlightParts, MaskAnswer, PendingQuery, QueryAnswers, QueryHandle, QueryPart, SightAnswer, SightLine, MAX_SIGHT_LINES,
};
use crate::transform::AreaTransform;
use crate::zlayer::Slab;
use glam::Vec3;
use hecs::{Entity, World};
use rayon::prelude::*;
use std::collections::{BTreeMap, BTreeSet};

/// Sight lines one parallel job projects.
const LINES_PER_JOB: usize = 512;

/// The rule instance `name` judges sight lines by now: its profile's ray
/// method over the occlusion its last tick built (`None`: nothing is
/// occluded, by the profile's `see_through` or ray method `none`). An
/// instance whose occlusion is not built, or not for this method, is an
/// error.
pub(crate) fn line_rule(name: &str, slot: &Slot) -> Result<Option<RayRule>> {
    let profile = &slot.desc.profile;
    let built =
        slot.state.built_for.filter(|_| !slot.state.occlusion_dirty).ok_or_else(|| {
            MurkError::invalid("instance", name, "has no occlusion built yet: sight lines are judged over the one the last tick built")
        })?;
    let method = profile.ray_method;
    if (method.needs_mips() && !built.mips) || (method.needs_distance_field() && built.distance_field_scale != profile.df_scale) {
        return Err(MurkError::invalid(
            "instance",
            name,
            format!("runs ray method {method:?} since its last tick, which built no occlusion for it: tick once first"),
        ));
    }
    if profile.see_through || method == crate::RayMethod::None {
        return Ok(None);
    }
    Ok(Some(RayRule {
        method,
        target_height: slot.desc.target_height_units()?,
        df_scale: profile.df_scale,
        soft_shadow_k_q8: if profile.soft_shadows { slot.q.soft_shadow_k_q8 } else { 0 },
        df_jitter: slot.q.df_jitter,
    }))
}

/// The terrain a sight line's eye stands on in an instance: its last
/// capture, with a profile that puts eyes on the terrain.
pub(crate) fn line_terrain(slot: &Slot) -> Option<Terrain<'_>> {
    slot.state.capture.as_deref().filter(|_| slot.desc.profile.eyes_on_terrain).map(|last| Terrain {
        width: slot.dims.width,
        height: slot.dims.height,
        last: Some(last),
        redone: None,
    })
}

impl FogSubsystem {
    /// The instance answering for a world point: of the sight instances
    /// (sensor layer 0), one overlapping it in X/Y, the closest in Z (ties:
    /// the first by name); with its output texel. Instances of other layers
    /// never answer for a point: ask them by name.
    pub fn locate(&self, point: Vec3) -> Option<(String, [u32; 2])> {
        let mut best: Option<(f64, &String, [u32; 2])> = None;
        for (name, slot) in self.instances.iter().filter(|(_, s)| s.desc.profile.layer == 0) {
            let out = AreaTransform::new(&slot.desc.area, slot.dims.out_width, slot.dims.out_height);
            if let Some((texel, dz)) = texel_of(&out, slot.desc.area.center.z, point) {
                if best.as_ref().is_none_or(|(bz, _, _)| dz < *bz) {
                    best = Some((dz, name, texel));
                }
            }
        }
        best.map(|(_, n, t)| (n.clone(), t))
    }

    /// Answers mask queries now, waiting for the backend (what
    /// [`Self::submit_mask_query`] delivers later without waiting).
    pub fn mask_query_now(&mut self, points: &[Vec3], cutoff_override: Option<f32>) -> Result<Vec<MaskAnswer>> {
        let handle = self.submit_mask_query(points, cutoff_override)?;
        self.poll_mask(handle, true)?.ok_or_else(|| MurkError::ReadbackLost { backend: self.backend.name(), what: "query" })
    }

    /// Submits a batch of mask queries. Poll the handle each tick; it
    /// resolves when the backend's readback lands (the CPU backend: by the
    /// first poll) and never blocks the caller.
    pub fn submit_mask_query(&mut self, points: &[Vec3], cutoff_override: Option<f32>) -> Result<QueryHandle> {
        let cutoff = match cutoff_override {
            Some(c) => Some(crate::fixed::unit_to_mask(in_range("cutoff_override", c, 0.0, 1.0)?)),
            None => None,
        };
        for (i, p) in points.iter().enumerate() {
            for (axis, v) in [("x", p.x), ("y", p.y), ("z", p.z)] {
                finite(|| format!("points[{i}].{axis}"), v)?;
            }
        }
        let next_query = self.following_query()?;
        let mut by_instance: BTreeMap<String, (Vec<usize>, Vec<[u32; 2]>)> = BTreeMap::new();
        for (i, p) in points.iter().enumerate() {
            if let Some((name, texel)) = self.locate(*p) {
                let entry = by_instance.entry(name).or_default();
                entry.0.push(i);
                entry.1.push(texel);
            }
        }
        let mut requests = Vec::new();
        let mut parts = Vec::new();
        for (instance, (indices, texels)) in by_instance {
            let slot = self.slot(&instance)?;
            requests.push(SampleRequest { key: slot.key, texels });
            parts.push(QueryPart { instance, indices, cutoff: cutoff.unwrap_or(slot.q.visibility_cutoff) });
        }
        let in_flight = if requests.is_empty() { None } else { Some((self.backend.submit_samples(&requests)?, InFlightParts::Mask(parts))) };
        let answers = QueryAnswers::Mask(vec![MaskAnswer::NoInstance; points.len()]);
        Ok(self.pend(next_query, PendingQuery { answers, in_flight }))
    }

    /// Polls a submitted batch: `None` while its readback is in flight, then
    /// the answers once; polling a delivered or unknown handle, or the
    /// handle of a sight-line batch, is an error.
    pub fn poll_mask_query(&mut self, handle: QueryHandle) -> Result<Option<Vec<MaskAnswer>>> {
        self.poll_mask(handle, false)
    }

    fn poll_mask(&mut self, handle: QueryHandle, wait: bool) -> Result<Option<Vec<MaskAnswer>>> {
        let take = |answers| match answers {
            QueryAnswers::Mask(answers) => Some(answers),
            QueryAnswers::Lines(_) => None,
        };
        self.poll_as(handle, wait, "a mask query", take)
    }

    /// Traces sight lines in instance `instance` now, waiting for the
    /// backend (what [`Self::submit_sight_lines`] delivers later without
    /// waiting; the CPU backend never waits).
    pub fn sight_lines_now(&mut self, instance: &str, lines: &[SightLine]) -> Result<Vec<SightAnswer>> {
        let handle = self.submit_sight_lines(instance, lines)?;
        self.poll_lines(handle, true)?.ok_or_else(|| MurkError::ReadbackLost { backend: self.backend.name(), what: "sight lines" })
    }

    /// Whether, in instance `instance`, a looker at `line.from` sees the
    /// ground under `line.to` ([`SightLine`]), now.
    pub fn line_of_sight(&mut self, instance: &str, line: SightLine) -> Result<SightAnswer> {
        let answers = self.sight_lines_now(instance, &[line])?;
        answers.first().copied().ok_or_else(|| MurkError::ReadbackLost { backend: self.backend.name(), what: "sight lines" })
    }

    /// Submits a batch of sight lines in instance `instance` (see
    /// [`SightLine`] for what each asks), judged over the occlusion the
    /// instance's last tick built, by its profile's ray method. Poll the
    /// handle with [`Self::poll_sight_lines`]: the answers come with the
    /// readback latency of the backend (the CPU: by the first poll). Every
    /// line is checked before any is traced: a bad one (not finite, an end
    /// outside the instance's grid) is an error naming it, and nothing is
    /// submitted.
    pub fn submit_sight_lines(&mut self, instance: &str, lines: &[SightLine]) -> Result<QueryHandle> {
        if lines.len() > MAX_SIGHT_LINES {
            return Err(MurkError::invalid("lines", lines.len(), format!("is more than {MAX_SIGHT_LINES} lines in one batch: split it")));
        }
        let next_query = self.following_query()?;
        let slot = self.slot(instance)?;
        let rule = line_rule(instance, slot)?;
        let profile = &slot.desc.profile;
        let slab = Slab::logical(&slot.desc.area, profile.z_layering_area_scale);
        let into = Projecting { t: &slot.transform, profile, slab: &slab, teams: slot.desc.observed_teams, terrain: line_terrain(slot) };
        // Projected side by side (on the backend's threads, for the CPU);
        // when one fails, again in order, so the error names the first.
        let mut projected = None;
        self.backend.run_parallel(&mut || {
            let chunks = lines.par_chunks(LINES_PER_JOB).enumerate().map(|(c, chunk)| project_lines(chunk, c * LINES_PER_JOB, into));
            projected = Some(chunks.collect::<Result<Vec<_>>>());
        });
        let texels = match projected {
            Some(Ok(chunks)) => chunks.concat(),
            _ => project_lines(lines, 0, into)?,
        };
        let cutoff = slot.q.visibility_cutoff;
        let pending = match rule {
            Some(rule) if !lines.is_empty() => {
                let request = LineRequest { key: slot.key, rule, lines: texels };
                let ticket = self.backend.submit_lines(&request)?;
                let answers = vec![SightAnswer { light: 0, visible: false }; lines.len()];
                PendingQuery { answers: QueryAnswers::Lines(answers), in_flight: Some((ticket, InFlightParts::Lines { cutoff })) }
            }
            // Nothing is occluded (or nothing asked): every ray lets
            // everything through.
            _ => PendingQuery { answers: QueryAnswers::Lines(vec![SightAnswer { light: u16::MAX, visible: true }; lines.len()]), in_flight: None },
        };
        Ok(self.pend(next_query, pending))
    }

    /// Polls a submitted sight-line batch: `None` while its readback is in
    /// flight, then the answers once, in line order; polling a delivered or
    /// unknown handle, or the handle of a mask query, is an error.
    pub fn poll_sight_lines(&mut self, handle: QueryHandle) -> Result<Option<Vec<SightAnswer>>> {
        self.poll_lines(handle, false)
    }

    fn poll_lines(&mut self, handle: QueryHandle, wait: bool) -> Result<Option<Vec<SightAnswer>>> {
        let take = |answers| match answers {
            QueryAnswers::Lines(answers) => Some(answers),
            QueryAnswers::Mask(_) => None,
        };
        self.poll_as(handle, wait, "a sight-line batch", take)
    }

    /// The handle after the next one; handles are never reused: after
    /// u64::MAX handles, queries are refused.
    fn following_query(&self) -> Result<u64> {
        self.next_query
            .checked_add(1)
            .ok_or_else(|| MurkError::invalid("query handle", self.next_query, "is the last one: every handle below u64::MAX was given out"))
    }

    /// Gives out the next handle for `pending`.
    fn pend(&mut self, following: u64, pending: PendingQuery) -> QueryHandle {
        let id = self.next_query;
        self.next_query = following;
        self.queries.insert(id, pending);
        QueryHandle(id)
    }

    /// Polls a pending query of kind `kind` ([`QueryAnswers::kind`]),
    /// whose answers `take` unwraps; an unknown handle, or one of another
    /// kind, is an error (and the handle stays pending).
    fn poll_as<T>(&mut self, handle: QueryHandle, wait: bool, kind: &str, take: fn(QueryAnswers) -> Option<T>) -> Result<Option<T>> {
        let pending = self.queries.get(&handle.0).ok_or(MurkError::UnknownQuery(handle.0))?;
        if pending.answers.kind() != kind {
            return Err(MurkError::invalid("query handle", handle.0, format!("is {}, not {kind}", pending.answers.kind())));
        }
        Ok(self.poll_query(handle, wait)?.and_then(take))
    }

    /// Polls any pending query: `None` while its readback is in flight.
    pub(crate) fn poll_query(&mut self, handle: QueryHandle, wait: bool) -> Result<Option<QueryAnswers>> {
        let mut pending = self.queries.remove(&handle.0).ok_or(MurkError::UnknownQuery(handle.0))?;
        if let Some((ticket, parts)) = pending.in_flight.take() {
            let values = match self.backend.poll_samples(ticket, wait) {
                Ok(Some(values)) => values,
                // Still in flight, or the backend failed: the handle stays.
                polled => {
                    pending.in_flight = Some((ticket, parts));
                    self.queries.insert(handle.0, pending);
                    return polled.map(|_| None);
                }
            };
            match (&mut pending.answers, parts) {
                (QueryAnswers::Mask(answers), InFlightParts::Mask(parts)) => {
                    let mut values = values.into_iter();
                    for part in parts {
                        for (i, value) in part.indices.iter().zip(values.by_ref()) {
                            answers[*i] = MaskAnswer::Sampled { instance: part.instance.clone(), value, visible: value >= part.cutoff };
                        }
                    }
                }
                (QueryAnswers::Lines(answers), InFlightParts::Lines { cutoff }) => {
                    if values.len() != answers.len() {
                        let message = format!("traced {} sight lines of the {} asked", values.len(), answers.len());
                        return Err(MurkError::backend_message(self.backend.name(), message));
                    }
                    for (answer, light) in answers.iter_mut().zip(values) {
                        *answer = SightAnswer { light, visible: light >= cutoff };
                    }
                }
                _ => unreachable!("a query's parts are of its answers' kind"),
            }
        }
        Ok(Some(pending.answers))
    }

    /// The immediate query: is `point` inside the radius or cone of a source
    /// of `teams`? No occlusion, no fade, no latency.
    pub fn query_immediate(&self, world: &World, point: Vec3, teams: TeamMask) -> Result<bool> {
        immediate(world, point, teams)
    }
}

impl FogSubsystem {
    /// The tracked entities instance `observer` sees, in entity order (as
    /// of the last tick's sight update).
    pub fn visible_to(&self, observer: &str) -> Result<Vec<Entity>> {
        self.slot(observer)?;
        Ok(self.sight.get(observer).map_or_else(Vec::new, |s| s.iter().filter_map(|b| Entity::from_bits(*b)).collect()))
    }

    /// Whether instance `observer` sees tracked entity `entity`. An unknown
    /// observer, or an entity that was not tracked at the last tick, is an
    /// error.
    pub fn sees(&self, observer: &str, entity: Entity) -> Result<bool> {
        self.slot(observer)?;
        let bits = self.tracked_bits(entity)?;
        Ok(self.sight.get(observer).is_some_and(|s| s.binary_search(&bits).is_ok()))
    }

    /// The sight instances (sensor layer 0) that see tracked entity
    /// `entity`, in name order: whom a server may tell about it (what other
    /// layers sense goes out as [`Self::blips`]); an entity that was not
    /// tracked at the last tick is an error.
    pub fn observers_of(&self, entity: Entity) -> Result<Vec<String>> {
        let bits = self.tracked_bits(entity)?;
        let sight = |name: &String| self.instances.get(name).is_some_and(|slot| slot.desc.profile.layer == 0);
        Ok(self.sight.iter().filter(|(n, s)| sight(n) && s.binary_search(&bits).is_ok()).map(|(n, _)| n.clone()).collect())
    }

    /// The blips of instance `instance`, an instance of a sensor layer
    /// other than sight (`Profile::layer`): the tracked entities in its set
    /// (as of the last tick's sight update) that no sight instance
    /// observing the same teams sees, each at its position in `world` now
    /// moved by up to the profile's `blip_error` on each ground axis (a
    /// hash of the entity, the instance's name and the tick, in 1/256
    /// world units: the same on every machine and backend), ordered by
    /// position, so that neither the order nor the answer names an entity.
    /// An entity despawned since gives none. A sight instance is an error
    /// (its set is [`Self::visible_to`]).
    pub fn blips(&self, world: &World, instance: &str) -> Result<Vec<Blip>> {
        let slot = self.slot(instance)?;
        if slot.desc.profile.layer == 0 {
            return Err(MurkError::invalid("instance", instance, "senses sight (layer 0): blips come from the instances of other layers"));
        }
        let teams = slot.desc.observed_teams;
        let sighted: BTreeSet<u64> = self
            .instances
            .iter()
            .filter(|(_, s)| s.desc.profile.layer == 0 && s.desc.observed_teams == teams)
            .flat_map(|(name, _)| self.sight.get(name).into_iter().flatten().copied())
            .collect();
        // |error| <= 1e6 world units: 2^28 in 1/256 units, times 2^16 fits i64.
        let error_q = (f64::from(slot.desc.profile.blip_error) * 256.0).round() as i64;
        let mut named = Fnv64::default();
        named.write(instance.as_bytes());
        let named = named.finish();
        let mut blips = Vec::new();
        for &bits in self.sight.get(instance).into_iter().flatten().filter(|b| !sighted.contains(b)) {
            let Some(position) = Entity::from_bits(bits).and_then(|e| world.get::<&Position>(e).ok().map(|p| p.0)) else { continue };
            let mut h = Fnv64::default();
            for word in [bits, named, self.tick] {
                h.write(&word.to_le_bytes());
            }
            let h = h.finish();
            let off = |bits: u64| ((bits & 0xffff) as i64 * 2 - 65535) * error_q / 65535;
            let (dx, dy) = (off(h), off(h >> 16));
            let moved = |v: f32, d: i64| (f64::from(v) + d as f64 / 256.0) as f32;
            blips.push(Blip { position: Vec3::new(moved(position.x, dx), moved(position.y, dy), position.z) });
        }
        blips.sort_by(|a, b| a.position.x.total_cmp(&b.position.x).then(a.position.y.total_cmp(&b.position.y)));
        Ok(blips)
    }

    fn tracked_bits(&self, entity: Entity) -> Result<u64> {
        let bits = entity.to_bits().get();
        if self.tracked.binary_search(&bits).is_ok() {
            Ok(bits)
        } else {
            Err(MurkError::invalid("entity", entity.id(), "was not tracked at the last tick (it has no Position and Tracked)"))
        }
    }
}
