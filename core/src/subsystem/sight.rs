//! Who sees what: the tracked entities each observer sees, for a server
//! that sends a client only what its team may know.
//!
//! An observer is an instance: an instance is already one team's view (the
//! teams it observes, its area, its profile). Each tick, after the
//! recompute, murk judges every tracked entity's footprint in every
//! instance's **sight signal**, in one batch over all instances: the raw
//! visibility (what the sources see under the ray rule, with anti-vision
//! applied) and the scripted sight reveals, the larger of the two, at the
//! internal resolution. Nothing of the presentation (blur, fade-in and
//! relax, explored memory, the mapped state, the upscale and the blend)
//! reaches it, so no profile can lift a hidden entity into a set.
//! [`READBACK_LATENCY_TICKS`] ticks later the largest value of each
//! footprint is compared with the instance's visibility cutoff, at least
//! one mask unit (`value >= max(cutoff, 1)` is seen); a stealth actor that
//! is hidden from the observer is then taken out, and the observer's set
//! and its entered/left events follow. The backend answers one value per
//! footprint ([`crate::backend::footprint_value`]: the cutoff when the
//! footprint's largest value reaches it, else 0), so only those values
//! come back. Integer throughout: the footprint is the circle blockers'
//! texel rule in Q3 texels, the values are the signal's.

use super::instance::Slot;
use super::naming::{entity_label, in_instance};
use crate::backend::{FootprintList, FootprintRequest, KeptFootprints, Readback};
use crate::components::{Position, Tracked};
use crate::error::{finite, MurkError, Result};
use crate::fixed::{Fnv64, TEXEL_ONE};
use crate::frame::READBACK_LATENCY_TICKS;
use crate::raster::centre_q;
use crate::stealth::StealthState;
use crate::transform::AreaTransform;
use hecs::{Entity, World};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// Most instances that observe tracked entities: a tick with tracked
/// entities and more instances is refused. Enough for a free-for-all of
/// 64 players (one instance each, [`crate::TeamMask::TEAMS`] teams) with as
/// many again for spectators, minimaps or allied views.
pub const MAX_OBSERVERS: usize = 128;

/// Largest footprint radius, in internal texels of an instance.
pub const MAX_FOOTPRINT_TEXELS: i32 = 64;

/// An observer gained or lost sight of a tracked entity.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "event")]
pub enum SightEvent {
    /// `observer` sees `entity` from this tick on.
    Entered {
        /// The observing instance.
        observer: String,
        /// The tracked entity.
        #[serde(serialize_with = "crate::serde_adapters::entity_bits")]
        entity: Entity,
    },
    /// `observer` no longer sees `entity` (out of sight, no longer tracked,
    /// or despawned).
    Left {
        /// The observing instance.
        observer: String,
        /// The tracked entity.
        #[serde(serialize_with = "crate::serde_adapters::entity_bits")]
        entity: Entity,
    },
}

/// Footprint judgments asked for after a tick and used a fixed number of
/// ticks later (kept in snapshots while in flight, landed).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SightBatch {
    /// The tick whose update uses them.
    pub due: u64,
    /// The observers when it was taken, in name order.
    pub observers: Vec<String>,
    /// Footprints, by observer (each once, ascending).
    pub groups: Vec<SightGroup>,
    /// One value per footprint ([`crate::backend::footprint_value`]: the
    /// cutoff when the footprint reached it, else 0), in the order of the
    /// groups and their entities.
    #[serde(with = "crate::serde_adapters::landed")]
    pub values: Readback<Vec<u16>>,
}

/// Footprints of one observer in a batch, judged against one cutoff: the
/// value of `entities[k]` is the batch's value `first + k`. Observers over
/// one grid share the entities.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SightGroup {
    /// The observing instance: its index in the batch's observers.
    pub observer: u32,
    /// The observer's visibility cutoff when the footprints were judged
    /// (at least 1: a signal of 0 is never seen).
    pub cutoff: u16,
    /// The value of the first entity.
    pub first: u32,
    /// The entities (bits, ascending).
    #[serde(with = "crate::serde_adapters::shared_slice")]
    pub entities: Arc<[u64]>,
}

/// What an instance's footprints depend on: its internal grid, and its slab
/// (centre and height, as bits) when Z layering filters the entities.
#[derive(Clone, PartialEq)]
pub(crate) struct FootprintGrid {
    out: AreaTransform,
    z_slab: Option<(u32, u32)>,
}

/// One instance's footprints of a tick: the entities whose footprint meets
/// the instance (bits, ascending) and their footprints, in that order.
/// Instances over one grid share them.
#[derive(Default)]
pub(crate) struct Footprints {
    pub(crate) entities: Arc<[u64]>,
    pub(crate) list: Arc<FootprintList>,
}

/// A tick's tracked entities with each instance's footprint texels,
/// gathered (and checked) before the tick changes anything.
pub(crate) struct TrackedTick {
    /// Tracked entities, by bits, ascending.
    pub(crate) entities: Vec<u64>,
    /// Their domains, in the same order.
    pub(crate) domains: Vec<u32>,
    /// Per instance, by name.
    pub(crate) footprints: BTreeMap<String, Arc<Footprints>>,
    /// The footprints to keep for the next tick.
    pub(crate) memo: FootprintMemo,
}

/// What a footprint's texels follow from: the entity's bits, its position
/// and its footprint, as bits.
type FootprintKey = (u64, [u32; 3], u32);

/// The footprints of the last tick per grid, so that an entity that stands
/// still in a grid is not measured again. A cache: it is not saved, and a
/// tick without it gives the same texels.
#[derive(Default)]
pub(crate) struct FootprintMemo {
    /// Per grid, the key of each entity in `Footprints::entities`, in order.
    grids: Vec<(FootprintGrid, Vec<FootprintKey>, Arc<Footprints>)>,
}

/// Appends to `texels` the internal texels of a footprint of radius `r`
/// (Q3 texels) at `pos` in the grid of `out`: the circle rule of the
/// rasterizer in Q3 texels, and the texel under the position. Nothing when
/// the footprint misses the grid.
fn footprint_texels(out: &AreaTransform, pos: glam::Vec3, r: i32, texels: &mut Vec<[u32; 2]>) {
    let (tx, ty) = out.world_to_texel(f64::from(pos.x), f64::from(pos.y));
    let (w, h) = (out.width(), out.height());
    let rt = f64::from(r) / f64::from(TEXEL_ONE);
    if tx + rt < 0.0 || ty + rt < 0.0 || tx - rt > f64::from(w) || ty - rt > f64::from(h) {
        return;
    }
    let [cx, cy] = AreaTransform::texel_q(tx, ty);
    let first = texels.len();
    if let (Some((x0, x1)), Some((y0, y1))) = (crate::binning::texel_span(cx, r, w), crate::binning::texel_span(cy, r, h)) {
        let r2 = i64::from(r) * i64::from(r);
        for y in y0..=y1 {
            let dy = centre_q(y) - i64::from(cy);
            for x in x0..=x1 {
                let dx = centre_q(x) - i64::from(cx);
                if dx * dx + dy * dy <= r2 {
                    texels.push([x, y]);
                }
            }
        }
    }
    // The texel under the point, as `query::texel_of` finds it.
    if (0.0..=f64::from(w)).contains(&tx) && (0.0..=f64::from(h)).contains(&ty) {
        let under = [(tx.floor() as u32).min(w - 1), (ty.floor() as u32).min(h - 1)];
        if !texels[first..].contains(&under) {
            texels.push(under);
        }
    }
}

/// A footprint's radius in Q3 internal texels of `out`, within the bound.
fn footprint_radius(out: &AreaTransform, footprint: f32, e: Entity) -> Result<i32> {
    let r = out.length_q(|| format!("{}.tracked.footprint", entity_label(e)), footprint)?;
    if r > MAX_FOOTPRINT_TEXELS * TEXEL_ONE {
        return Err(MurkError::invalid(
            format!("{}.tracked.footprint", entity_label(e)),
            footprint,
            format!("is {} internal texels of this instance; at most {MAX_FOOTPRINT_TEXELS}", f64::from(r) / f64::from(TEXEL_ONE)),
        ));
    }
    Ok(r)
}

/// What is in `old` and not in `new`, and what is in `new` and not in
/// `old`; both ascending.
fn differences(old: &[u64], new: &[u64]) -> (Vec<u64>, Vec<u64>) {
    let (mut only_old, mut only_new) = (Vec::new(), Vec::new());
    let (mut i, mut j) = (0, 0);
    loop {
        match (old.get(i), new.get(j)) {
            (None, None) => break,
            (Some(a), Some(b)) if a == b => (i, j) = (i + 1, j + 1),
            (Some(a), Some(b)) if a < b => {
                only_old.push(*a);
                i += 1;
            }
            (Some(a), None) => {
                only_old.push(*a);
                i += 1;
            }
            (_, Some(b)) => {
                only_new.push(*b);
                j += 1;
            }
        }
    }
    (only_old, only_new)
}

/// The tracked entities of `world` with their footprints in every instance
/// of `instances` (`memo`: last tick's footprints), checked: a NaN
/// position, a negative or NaN footprint, one too wide for an instance's
/// texels, or more instances than [`MAX_OBSERVERS`] is an error naming it.
pub(crate) fn gather_tracked(instances: &BTreeMap<String, Slot>, memo_before: &FootprintMemo, world: &World) -> Result<TrackedTick> {
    let mut with_domains: Vec<(Entity, glam::Vec3, f32, u32)> =
        world.query::<(Entity, &Position, &Tracked)>().iter().map(|(e, p, t)| (e, p.0, t.footprint, t.domains)).collect();
    with_domains.sort_by_key(|(e, _, _, _)| e.to_bits());
    let domains: Vec<u32> = with_domains.iter().map(|t| t.3).collect();
    let tracked: Vec<(Entity, glam::Vec3, f32)> = with_domains.into_iter().map(|(e, p, f, _)| (e, p, f)).collect();
    if !tracked.is_empty() && instances.len() > MAX_OBSERVERS {
        return Err(MurkError::invalid("observers", instances.len(), format!("tracked entities are judged by at most {MAX_OBSERVERS} instances")));
    }
    for (e, pos, footprint) in &tracked {
        let label = entity_label(*e);
        for (axis, v) in [("x", pos.x), ("y", pos.y), ("z", pos.z)] {
            finite(|| format!("{label}.position.{axis}"), v)?;
        }
        let f = finite(|| format!("{label}.tracked.footprint"), *footprint)?;
        if f < 0.0 {
            return Err(MurkError::invalid(format!("{label}.tracked.footprint"), f, "must not be negative"));
        }
    }
    let mut footprints = BTreeMap::new();
    let mut memo = FootprintMemo::default();
    if tracked.is_empty() {
        return Ok(TrackedTick { entities: Vec::new(), domains: Vec::new(), footprints, memo });
    }
    for (name, slot) in instances {
        let profile = &slot.desc.profile;
        // A disabled or frozen instance does not recompute its
        // visibility: it judges nothing (no footprints), so its set
        // empties when the batch lands, even if no instance judges.
        if !profile.enabled || profile.freeze_state {
            footprints.insert(name.clone(), Arc::default());
            continue;
        }
        // Between recomputes the visibility would be stale: an observer
        // must recompute every tick.
        if slot.q.update_interval_us > 0 {
            return Err(MurkError::invalid(
                format!("instance `{name}`: profile.update_rate"),
                profile.update_rate,
                "must be 0 while entities are tracked: sight sets are judged on every tick's visibility",
            ));
        }
        let a = &slot.desc.area;
        let out = AreaTransform::new(a, slot.dims.width, slot.dims.height);
        let z_slab = slot.desc.profile.z_layering.then_some((a.center.z.to_bits(), a.extents.z.to_bits()));
        let grid = FootprintGrid { out, z_slab };
        // Instances over the same grid with the same slab rule (one per
        // team over one map) have the same footprints: measured once.
        if let Some((_, _, fp)) = memo.grids.iter().find(|(g, _, _)| *g == grid) {
            footprints.insert(name.clone(), Arc::clone(fp));
            continue;
        }
        let last = memo_before.grids.iter().find(|(g, _, _)| *g == grid);
        let capacity = last.map_or((0, 0), |(_, k, f)| (k.len(), f.list.texels.len()));
        let mut keys = Vec::with_capacity(capacity.0);
        let (mut entities, mut list) = (Vec::with_capacity(capacity.0), FootprintList::default());
        list.texels.reserve(capacity.1);
        list.ends.reserve(capacity.0);
        list.id = FootprintList::new_id();
        // Which footprints are last tick's, for a backend that keeps
        // its last judgment.
        let mut same = Vec::with_capacity(capacity.0);
        // Units share a few footprint sizes: each is measured once.
        let mut measured: Option<(f32, i32)> = None;
        let mut at = 0;
        // Texels of last tick's list to copy: those of entities standing
        // still one after the other are copied at once.
        let mut run = 0..0;
        for (e, pos, footprint) in &tracked {
            // With Z layering an instance sees only what stands in its slab.
            if slot.desc.profile.z_layering && (pos.z - a.center.z).abs() > a.extents.z / 2.0 {
                continue;
            }
            let key = (e.to_bits().get(), pos.to_array().map(f32::to_bits), footprint.to_bits());
            // Standing still: last tick's texels (both lists ascend by entity).
            if let Some((last_keys, last_fp)) = last.map(|(_, k, f)| (k, f)) {
                while last_keys.get(at).is_some_and(|k| k.0 < key.0) {
                    at += 1;
                }
                if last_keys.get(at) == Some(&key) {
                    let ends = &last_fp.list.ends;
                    let texels = if at == 0 { 0 } else { ends[at - 1] as usize }..ends[at] as usize;
                    if run.end != texels.start {
                        list.texels.extend_from_slice(&last_fp.list.texels[std::mem::replace(&mut run, texels.start..texels.start)]);
                    }
                    run.end = texels.end;
                    list.ends.push((list.texels.len() + run.len()) as u32);
                    entities.push(key.0);
                    keys.push(key);
                    same.push(at as u32);
                    continue;
                }
            }
            if let Some((_, _, last_fp)) = last {
                list.texels.extend_from_slice(&last_fp.list.texels[std::mem::replace(&mut run, 0..0)]);
            }
            let first = list.texels.len();
            let r = match measured {
                Some((f, r)) if f.to_bits() == footprint.to_bits() => r,
                _ => footprint_radius(&out, *footprint, *e).map_err(|err| in_instance(err, name))?,
            };
            measured = Some((*footprint, r));
            footprint_texels(&out, *pos, r, &mut list.texels);
            if list.texels.len() > first {
                list.ends.push(list.texels.len() as u32);
                entities.push(key.0);
                keys.push(key);
                same.push(KeptFootprints::NONE);
            }
        }
        if let Some((_, _, last_fp)) = last {
            list.texels.extend_from_slice(&last_fp.list.texels[run]);
            list.kept = Some(KeptFootprints { from: last_fp.list.id, same });
        }
        let fp = Arc::new(Footprints { entities: entities.into(), list: Arc::new(list) });
        footprints.insert(name.clone(), Arc::clone(&fp));
        memo.grids.push((grid, keys, fp));
    }
    Ok(TrackedTick { entities: tracked.iter().map(|(e, _, _)| e.to_bits().get()).collect(), domains, footprints, memo })
}

/// The sets after applying the judgments `landed` (see
/// `FogSubsystem::landed_sight`) to the sets `old` of the observers
/// `observers` (the instances), with `present` the entities tracked this
/// tick (bits, ascending), and the differences as events (observers in
/// name order, then entities; those that left before those that entered):
/// each judged observer's set becomes the entities whose footprint reached
/// its cutoff, less the stealth actors hidden from it; observers without a
/// judgment keep their sets, less what is no longer tracked; an observer
/// keeps only the entities in a domain of its profile's `domains`
/// (`domains` are those of `present`, in order).
pub(crate) fn next_sets(
    old: &BTreeMap<String, Vec<u64>>,
    observers: &BTreeMap<String, Slot>,
    hidden: &Hidden,
    landed: Vec<(SightBatch, Vec<u16>)>,
    (present, domains): (&[u64], &[u32]),
) -> (BTreeMap<String, Vec<u64>>, Vec<SightEvent>) {
    let tracked = |e: &u64| present.binary_search(e).is_ok();
    let mut next: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for (batch, values) in landed {
        // Groups come by observer, then entity: each set is built in
        // order, and whether an entity is still tracked is found by
        // walking `present` beside them.
        let mut seen: Vec<Vec<u64>> = vec![Vec::new(); batch.observers.len()];
        for g in &batch.groups {
            let Some(set) = seen.get_mut(g.observer as usize) else { continue };
            let values = &values[g.first as usize..][..g.entities.len()];
            if *g.entities == *present {
                // Every entity judged is still tracked (the usual tick):
                // each is written, and kept when seen, without a branch.
                let mut n = set.len();
                set.resize(n + g.entities.len(), 0);
                for (&entity, &value) in g.entities.iter().zip(values) {
                    set[n] = entity;
                    n += usize::from(value >= g.cutoff);
                }
                set.truncate(n);
                continue;
            }
            let mut at = 0;
            for (&entity, &value) in g.entities.iter().zip(values) {
                if value < g.cutoff {
                    continue;
                }
                while present.get(at).is_some_and(|p| *p < entity) {
                    at += 1;
                }
                if present.get(at) == Some(&entity) {
                    set.push(entity);
                }
            }
        }
        next.extend(batch.observers.into_iter().zip(seen));
    }
    // Observers without a batch keep their sets, less what is gone.
    for (name, set) in old {
        if !next.contains_key(name) {
            next.insert(name.clone(), set.iter().filter(|e| tracked(e)).copied().collect());
        }
    }
    next.retain(|name, _| observers.contains_key(name));
    hidden.drop_from(&mut next);
    // An observer takes only the entities of its domains (as they are
    // this tick).
    for (name, set) in &mut next {
        let mask = observers[name].desc.profile.domains;
        if mask != u32::MAX {
            set.retain(|e| present.binary_search(e).is_ok_and(|i| domains[i] & mask != 0));
        }
    }
    let mut events = Vec::new();
    let names: BTreeSet<&String> = next.keys().chain(old.keys()).collect();
    for name in names {
        let (old, new) = (old.get(name).map_or(&[][..], Vec::as_slice), next.get(name).map_or(&[][..], Vec::as_slice));
        let (left, entered) = differences(old, new);
        let entity = |bits: u64| Entity::from_bits(bits);
        events.extend(left.into_iter().filter_map(entity).map(|e| SightEvent::Left { observer: name.clone(), entity: e }));
        events.extend(entered.into_iter().filter_map(entity).map(|e| SightEvent::Entered { observer: name.clone(), entity: e }));
    }
    next.retain(|_, set| !set.is_empty());
    (next, events)
}

/// The stealth actors hidden from observers, which leave their sets:
/// stealth can only remove an entity from a set, never add one.
pub(crate) struct Hidden {
    /// Actors hidden by their one state (from every observer), ascending.
    from_all: Vec<u64>,
    /// Per observer, the per-observer actors hidden from it, ascending.
    from: BTreeMap<String, Vec<u64>>,
}

impl Hidden {
    /// The actors hidden now, by their one state or their state for an
    /// observer.
    pub(crate) fn new(stealth: &BTreeMap<u64, StealthState>, observer_stealth: &BTreeMap<(u64, String), StealthState>) -> Self {
        let from_all = stealth.iter().filter(|(_, s)| !s.last_visible).map(|(b, _)| *b).collect();
        let mut from: BTreeMap<String, Vec<u64>> = BTreeMap::new();
        for ((bits, observer), state) in observer_stealth {
            if !state.last_visible {
                from.entry(observer.clone()).or_default().push(*bits);
            }
        }
        Self { from_all, from }
    }

    /// Takes out of each set the actors hidden from its observer.
    fn drop_from(&self, sets: &mut BTreeMap<String, Vec<u64>>) {
        if self.from_all.is_empty() && self.from.is_empty() {
            return;
        }
        for (name, set) in sets.iter_mut() {
            let own = self.from.get(name).map_or(&[][..], Vec::as_slice);
            if own.is_empty() && self.from_all.is_empty() {
                continue;
            }
            // Both lists ascend (the states are kept by entity first).
            set.retain(|b| self.from_all.binary_search(b).is_err() && own.binary_search(b).is_err());
        }
    }
}

/// Judges every tracked entity's footprint in every judging instance's
/// sight signal after this tick's recompute, in one batch (one readback)
/// on `backend`, due [`READBACK_LATENCY_TICKS`] ticks after `tick`; `None`
/// when no instance judges.
pub(crate) fn submit_sight(
    backend: &mut dyn crate::backend::Backend,
    instances: &BTreeMap<String, Slot>,
    footprints: BTreeMap<String, Arc<Footprints>>,
    tick: u64,
) -> Result<Option<SightBatch>> {
    if footprints.is_empty() {
        return Ok(None);
    }
    let mut groups = Vec::new();
    let mut requests = Vec::new();
    let mut first = 0u32;
    let observers: Vec<String> = instances.keys().cloned().collect();
    for (name, fp) in footprints {
        if fp.entities.is_empty() {
            continue;
        }
        let index = observers.iter().position(|o| *o == name).expect("footprints are gathered per instance") as u32;
        let slot = instances.get(&name).ok_or_else(|| MurkError::UnknownInstance(name.clone()))?;
        // A signal of 0 is never seen, whatever the cutoff.
        let (key, cutoff) = (slot.key, slot.q.visibility_cutoff.max(1));
        groups.push(SightGroup { observer: index, cutoff, first, entities: Arc::clone(&fp.entities) });
        first += fp.entities.len() as u32;
        requests.push(FootprintRequest { key, cutoff, footprints: Arc::clone(&fp.list) });
    }
    let values = if requests.is_empty() { Readback::Ready(Vec::new()) } else { Readback::Ticket(backend.submit_footprints(&requests)?) };
    Ok(Some(SightBatch { due: tick.saturating_add(READBACK_LATENCY_TICKS), observers, groups, values }))
}

/// Feeds the sight sets into the lockstep hash: each observer with a
/// set, in name order, its name and its entities.
pub(crate) fn hash_sets(sets: &BTreeMap<String, Vec<u64>>, h: &mut Fnv64) {
    for (name, set) in sets {
        h.write(&(name.len() as u64).to_le_bytes());
        h.write(name.as_bytes());
        h.write(&(set.len() as u64).to_le_bytes());
        for bits in set {
            h.write(&bits.to_le_bytes());
        }
    }
}
