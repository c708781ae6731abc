//! What one instance needs from the world this tick, gathered and checked
//! before any state changes: the height capture, the blockers and the
//! sources, each projected into the instance's texel space (only what
//! changed since the last tick is projected again).

use super::blockers::{gather_blockers, BlockerMemoUpdate, GatheredBlockers};
use super::capture::{gather_capture, CaptureUpdate};
use super::instance::Slot;
use super::occlusion::BuiltShapes;
use super::sources::{gather_sources, GatheredSources, Projecting, SourceMemo, WorldSources};
use super::terrain::Terrain;
use crate::backend::TexelRect;
use crate::error::Result;
use crate::frame::{OcclusionInput, SourceTexel};
use crate::zlayer::Slab;
use hecs::World;
use std::sync::Arc;

/// What one instance needs from the world this tick, gathered before any state changes.
pub(crate) struct Gathered {
    /// The occlusion input but its shapes: a build takes them from the
    /// memo's ([`BuiltShapes::lend_to`]).
    pub(crate) occlusion: OcclusionInput,
    pub(crate) blocker_hash: u64,
    /// The blocker projections to keep for the next tick.
    pub(crate) blocker_memo: BlockerMemoUpdate,
    /// When the shapes were spliced from the last tick's: those shapes, and
    /// the rectangles of every shape taken out or put in (each shape on one
    /// side only is among them).
    pub(crate) shape_changes: Option<(Arc<BuiltShapes>, Vec<TexelRect>)>,
    pub(crate) capture: Option<CaptureUpdate>,
    /// The source projections to keep for the next tick.
    pub(crate) source_memo: SourceMemo,
    pub(crate) sources: Vec<SourceTexel>,
    pub(crate) source_hash: u64,
}

/// Gathers what `slot` needs from `world` this tick (`listed`: the
/// world's sources).
pub(crate) fn gather(slot: &Slot, world: &World, listed: &WorldSources) -> Result<Gathered> {
    let profile = &slot.desc.profile;
    let t = &slot.transform;
    let slab = Slab::logical(&slot.desc.area, profile.z_layering_area_scale);
    let capture = gather_capture(slot, world, &slab)?;
    let GatheredBlockers { hash: blocker_hash, memo: blocker_memo, changes: shape_changes } =
        gather_blockers(&slot.caches.blocker_memo, t, &slab, profile.z_layering, world)?;
    let occlusion = OcclusionInput {
        width: slot.dims.width,
        height: slot.dims.height,
        build_mips: profile.ray_method.needs_mips(),
        distance_field_scale: if profile.ray_method.needs_distance_field() { profile.df_scale } else { 0 },
        ..Default::default()
    };
    // The terrain under the eyes: only where a capture exists this tick.
    let terrain = capture.as_ref().map(|c| Terrain {
        width: slot.dims.width,
        height: slot.dims.height,
        last: slot.state.capture.as_deref(),
        redone: c.heights.as_ref(),
    });
    let GatheredSources { memo: source_memo, sources, hash: source_hash } =
        gather_sources(&slot.caches.source_memo, Projecting { t, profile, slab: &slab, teams: slot.desc.observed_teams, terrain }, listed)?;
    Ok(Gathered { occlusion, blocker_hash, blocker_memo, shape_changes, capture, source_memo, sources, source_hash })
}
