//! The subsystem's gameplay queries: which instance answers for a point,
//! the immediate query, the mask queries batched over its instances (the
//! query types and rules are in `crate::query`), and which tracked
//! entities each observer sees (the sight sets, kept by `sight.rs`).

use super::fog::FogSubsystem;
use crate::backend::SampleRequest;
use crate::components::TeamMask;
use crate::error::{finite, in_range, MurkError, Result};
use crate::query::{immediate, texel_of, MaskAnswer, PendingQuery, QueryHandle, QueryPart};
use crate::transform::AreaTransform;
use glam::Vec3;
use hecs::{Entity, World};
use std::collections::BTreeMap;

impl FogSubsystem {
    /// The instance answering for a world point: overlapping it in X/Y, the
    /// closest in Z (ties: the first by name); with its output texel.
    pub fn locate(&self, point: Vec3) -> Option<(String, [u32; 2])> {
        let mut best: Option<(f64, &String, [u32; 2])> = None;
        for (name, slot) in &self.instances {
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
        self.poll_query(handle, true)?.ok_or_else(|| MurkError::ReadbackLost { backend: self.backend.name(), what: "query" })
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
        // Handles are never reused: after u64::MAX handles, queries are refused.
        let next_query = self
            .next_query
            .checked_add(1)
            .ok_or_else(|| MurkError::invalid("query handle", self.next_query, "is the last one: every handle below u64::MAX was given out"))?;
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
        let in_flight = if requests.is_empty() { None } else { Some((self.backend.submit_samples(&requests)?, parts)) };
        let id = self.next_query;
        self.next_query = next_query;
        self.queries.insert(id, PendingQuery { answers: vec![MaskAnswer::NoInstance; points.len()], in_flight });
        Ok(QueryHandle(id))
    }

    /// Polls a submitted batch: `None` while its readback is in flight, then
    /// the answers once; polling a delivered or unknown handle is an error.
    pub fn poll_mask_query(&mut self, handle: QueryHandle) -> Result<Option<Vec<MaskAnswer>>> {
        self.poll_query(handle, false)
    }

    pub(crate) fn poll_query(&mut self, handle: QueryHandle, wait: bool) -> Result<Option<Vec<MaskAnswer>>> {
        let mut pending = self.queries.remove(&handle.0).ok_or(MurkError::UnknownQuery(handle.0))?;
        if let Some((ticket, parts)) = pending.in_flight.take() {
            let Some(values) = self.backend.poll_samples(ticket, wait)? else {
                pending.in_flight = Some((ticket, parts));
                self.queries.insert(handle.0, pending);
                return Ok(None);
            };
            let mut values = values.into_iter();
            for part in parts {
                for (i, value) in part.indices.iter().zip(values.by_ref()) {
                    pending.answers[*i] = MaskAnswer::Sampled { instance: part.instance.clone(), value, visible: value >= part.cutoff };
                }
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

    /// The instances that see tracked entity `entity`, in name order; an
    /// entity that was not tracked at the last tick is an error.
    pub fn observers_of(&self, entity: Entity) -> Result<Vec<String>> {
        let bits = self.tracked_bits(entity)?;
        Ok(self.sight.iter().filter(|(_, s)| s.binary_search(&bits).is_ok()).map(|(n, _)| n.clone()).collect())
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
