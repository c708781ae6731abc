//! The recompute rules: what one gathered tick does to an instance.
//!
//! [`apply`] decides, from the gathered inputs and the instance's hashes and
//! flags, whether the occlusion is rebuilt (or copied from an instance with
//! the same inputs this tick), whether visibility through upscale is
//! recomputed, and whether visibility and blur can be kept. The "changed"
//! flags a recompute returns come back [`READBACK_LATENCY_TICKS`] ticks later
//! ([`PendingFlag`]); [`resolve_flags`] uses them to mark an instance settled.

use super::capture::CaptureUpdate;
use super::gather::Gathered;
use super::instance::{PendingFlag, Slot};
use super::occlusion::{capture_change, local_plan};
use super::terrain::CaptureHeights;
use crate::backend::{Backend, InstanceKey, Readback, TexelRect};
use crate::binning::bin_sources;
use crate::error::{MurkError, Result};
use crate::frame::{BlurKernel, RecomputeInput, SourceTexel, READBACK_LATENCY_TICKS};
use crate::profile::ProfileQ;
use crate::texture::OcclusionBuild;
use std::collections::BTreeMap;
use std::sync::Arc;

/// What a tick does to an instance's occlusion.
#[derive(Debug, PartialEq, Eq)]
enum Rebuild {
    /// Nothing it is built from changed.
    Keep,
    /// Rebuilt over these rectangles (the texels that may differ).
    Local(Vec<TexelRect>),
    /// Built anew (or copied from an instance of the same inputs).
    Full,
}

/// Per-tick outcome of one instance.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InstanceTick {
    /// Occlusion rebuilt this tick (whole, or only where it changed).
    pub occlusion_built: bool,
    /// The rebuild was local: only the texels the tick's blocker and
    /// capture changes reach were rebuilt.
    pub occlusion_local: bool,
    /// Visibility recomputed this tick.
    pub recomputed: bool,
    /// The recompute kept visibility and blur from the last one (nothing
    /// they read changed) and ran memory, compose and upscale only.
    pub visibility_reused: bool,
}

/// The recompute inputs of an instance for its projected sources, with rate
/// steps for `elapsed_us` since the last recompute.
pub(crate) fn recompute_input(slot: &Slot, sources: Vec<SourceTexel>, elapsed_us: u64) -> Result<RecomputeInput> {
    // In 128 bits: per_s * elapsed fits for any elapsed time (a u64 product
    // wraps after about 7.8 hours at the highest rate); the step saturates
    // at u32::MAX, where it already moves any texel the whole range.
    let step = |per_s: u32| (u128::from(per_s) * u128::from(elapsed_us) / 1_000_000).min(u128::from(u32::MAX)) as u32;
    let p = &slot.desc.profile;
    let bins = bin_sources(&sources, slot.dims.width, slot.dims.height, p.tile_size);
    Ok(RecomputeInput {
        sources,
        bins,
        method: p.ray_method,
        target_height: slot.desc.target_height_units()?,
        df_scale: p.df_scale,
        soft_shadow_k_q8: if p.soft_shadows { slot.q.soft_shadow_k_q8 } else { 0 },
        df_jitter: slot.q.df_jitter,
        blur: BlurKernel::gaussian(p.blur_radius, p.blur_sigma, p.blur_iterations),
        forget_step: step(slot.q.forget_per_s),
        freeze_memory: p.freeze_memory,
        fade_in_step: step(slot.q.fade_in_per_s),
        relax_step: step(slot.q.relax_per_s),
        explored_value: slot.q.explored_value,
        mapped_value: slot.q.mapped_value,
        show_memory_alpha: slot.q.show_memory_alpha,
        reveal_walls: p.reveal_walls,
        reuse_visibility: false,
    })
}

/// Which configured rates (fade-in, relax, forget unless memory is frozen)
/// got a step of 0 from the elapsed time.
struct Starved {
    /// At least one.
    any: bool,
    /// Every one (false when no rate is configured).
    all: bool,
}

fn starved_rates(q: &ProfileQ, input: &RecomputeInput) -> Starved {
    let rates = [
        (q.fade_in_per_s, input.fade_in_step),
        (q.relax_per_s, input.relax_step),
        (if input.freeze_memory { 0 } else { q.forget_per_s }, input.forget_step),
    ];
    let active: Vec<bool> = rates.iter().filter(|(per_s, _)| *per_s > 0).map(|(_, step)| *step == 0).collect();
    Starved { any: active.iter().any(|s| *s), all: !active.is_empty() && active.iter().all(|s| *s) }
}

/// Uses the "changed" flags that are due at tick `now`: a recompute that
/// changed nothing, under the inputs the instance still has, proves a fixed
/// point, and the instance is settled until an input changes. "Nothing
/// changed" proves it only when every configured rate could move a texel:
/// after a pause (dt = 0) or a tick too short for a rate to take one mask
/// unit, an unfinished fade also changes nothing.
fn resolve_flags(backend: &mut dyn Backend, slot: &mut Slot, now: u64) -> Result<()> {
    while slot.state.flags.front().is_some_and(|f| f.due <= now) {
        let flag = slot.state.flags.pop_front().expect("checked above");
        let changed = match flag.changed {
            Readback::Ready(c) => c,
            Readback::Ticket(t) => {
                backend.poll_changed(t, true)?.ok_or_else(|| MurkError::ReadbackLost { backend: backend.name(), what: "changed flag" })?
            }
        };
        if flag.epoch == slot.state.epoch && !changed && !flag.starved {
            slot.state.settled = true;
        }
    }
    Ok(())
}

/// Applies a gathered tick to one instance.
pub(crate) fn apply(
    backend: &mut dyn Backend,
    slot: &mut Slot,
    g: Gathered,
    dt: u64,
    now: u64,
    built: &mut BTreeMap<u64, InstanceKey>,
    share: bool,
) -> Result<InstanceTick> {
    let mut outcome = InstanceTick::default();
    let Gathered { occlusion, blocker_hash, blocker_memo, shape_changes, capture, source_memo, sources, source_hash } = g;
    // This tick's shapes, which the memo keeps from here on.
    let shapes = Arc::clone(blocker_memo.shapes());
    slot.caches.blocker_memo.commit(blocker_memo);
    slot.caches.source_memo = source_memo;
    let (w, h) = (slot.dims.width, slot.dims.height);
    // What the last build left must be rebuilt whole (a new instance, a new
    // grid, an invalidation): no local update.
    let mut full = slot.state.occlusion_dirty;
    let mut changed: Vec<TexelRect> = Vec::new();
    if let Some(CaptureUpdate { signature, heights }) = capture {
        if heights.is_some() {
            slot.state.stats.recaptures = slot.state.stats.recaptures.saturating_add(1);
        }
        slot.capture_marks.clear();
        if heights.is_some() {
            slot.caches.saved_capture = None;
        }
        match (heights, slot.state.capture.as_mut()) {
            (None, _) => {}
            (Some(CaptureHeights::Whole(texels)), old) => {
                match old {
                    Some(old) if old.len() == texels.len() => changed.extend(capture_change(old, &texels, w)),
                    _ => full = true,
                }
                slot.state.capture = Some(texels);
            }
            (Some(CaptureHeights::Rows { first, texels }), Some(old)) => {
                let at = first as usize * w as usize;
                let rows = &mut old[at..at + texels.len()];
                if let Some(mut r) = capture_change(rows, &texels, w) {
                    (r.y0, r.y1) = (r.y0 + first, r.y1 + first);
                    changed.push(r);
                }
                rows.copy_from_slice(&texels);
            }
            // `gather_capture` redoes rows over a kept capture only.
            (Some(CaptureHeights::Rows { .. }), None) => {
                return Err(MurkError::backend_message("core", "capture rows were redone with no capture kept"))
            }
        }
        slot.state.capture_signature = signature;
        slot.state.capture_dirty = false;
    } else if slot.state.capture.take().is_some() {
        slot.caches.saved_capture = None;
        full = true;
    }
    if slot.state.blocker_hash != Some(blocker_hash) {
        match (&slot.caches.built_shapes, &shape_changes) {
            // Built from the shapes this tick's were spliced from: what the
            // splice took out and put in.
            (Some(built), Some((from, rects))) if Arc::ptr_eq(built, from) => changed.extend_from_slice(rects),
            (Some(built), _) => built.changes(&shapes, w, h, &mut changed),
            (None, _) => full = true,
        }
    }
    let needs = OcclusionBuild { mips: occlusion.build_mips, distance_field_scale: occlusion.distance_field_scale };
    if slot.state.built_for != Some(needs) {
        full = true;
    }
    let rebuild = if full {
        Rebuild::Full
    } else if changed.is_empty() {
        Rebuild::Keep
    } else {
        local_plan(&changed, w, h).map_or(Rebuild::Full, Rebuild::Local)
    };
    if rebuild != Rebuild::Keep {
        slot.state.occlusion_dirty = true;
        // Until the build lands, nothing is known of what the backend holds.
        slot.caches.built_shapes = None;
        let mut input = occlusion;
        shapes.lend_to(&mut input);
        // Lend the capture to the build rather than copying it.
        input.capture = slot.state.capture.take();
        let result = match &rebuild {
            Rebuild::Local(rects) => backend.update_occlusion(slot.key, &input, rects).map(|()| {
                outcome.occlusion_local = true;
                slot.state.stats.occlusion_builds = slot.state.stats.occlusion_builds.saturating_add(1);
            }),
            _ => {
                // Only instances of one tick can share a build; with one
                // instance, skip hashing.
                let content = if share { input.content_hash() } else { 0 };
                match share.then(|| built.get(&content).copied()).flatten() {
                    Some(from) => backend
                        .copy_occlusion(from, slot.key)
                        .map(|()| slot.state.stats.occlusion_shared = slot.state.stats.occlusion_shared.saturating_add(1)),
                    None => backend.build_occlusion(slot.key, &input).map(|()| {
                        if share {
                            built.insert(content, slot.key);
                        }
                        slot.state.stats.occlusion_builds = slot.state.stats.occlusion_builds.saturating_add(1);
                    }),
                }
            }
        };
        slot.state.capture = input.capture.take();
        result?;
        // The gather's shapes are the memo's, committed above.
        slot.caches.built_shapes = Some(shapes);
        outcome.occlusion_built = true;
    } else if slot.caches.built_shapes.is_none() {
        // The backend holds the build of these shapes (their hash says so).
        slot.caches.built_shapes = Some(shapes);
    }
    slot.state.blocker_hash = Some(blocker_hash);
    slot.state.built_for = Some(needs);
    slot.state.occlusion_dirty = false;
    resolve_flags(backend, slot, now)?;
    let same_inputs = !outcome.occlusion_built
        && slot.state.source_hash == Some(source_hash)
        && slot.state.recomputed_profile == Some(slot.q)
        && slot.state.has_recomputed;
    if same_inputs && slot.state.settled {
        slot.state.stats.skipped_recomputes = slot.state.stats.skipped_recomputes.saturating_add(1);
        slot.state.rate_since_us = 0;
        return Ok(outcome);
    }
    if !same_inputs {
        slot.unsettle();
    }
    let elapsed = if slot.state.has_recomputed { slot.state.rate_since_us } else { dt };
    let mut input = recompute_input(slot, sources, elapsed)?;
    if outcome.occlusion_built {
        slot.caches.last_input = None;
    }
    input.reuse_visibility = slot.caches.last_input.as_ref().is_some_and(|last| last.same_visibility_inputs(&input));
    let report = backend.recompute(slot.key, &input);
    // A failed recompute may have left the textures half written.
    slot.caches.last_input = None;
    let report = report?;
    let starved = starved_rates(&slot.q, &input);
    slot.state.flags.push_back(PendingFlag {
        due: now.saturating_add(READBACK_LATENCY_TICKS),
        changed: report.changed,
        starved: starved.any,
        epoch: slot.state.epoch,
    });
    outcome.visibility_reused = input.reuse_visibility;
    slot.caches.last_input = Some(input);
    slot.state.source_hash = Some(source_hash);
    slot.state.recomputed_profile = Some(slot.q);
    slot.state.has_recomputed = true;
    // When no rate could step, the elapsed time is still owed to them: keep
    // it for the next recompute instead of dropping it.
    if !starved.all {
        slot.state.rate_since_us = 0;
    }
    slot.state.blend_since_us = 0;
    slot.state.stats.recomputes = slot.state.stats.recomputes.saturating_add(1);
    outcome.recomputed = true;
    Ok(outcome)
}
