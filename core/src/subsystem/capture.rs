//! Height captures: the signature that says whether a capture must be redone,
//! and the resample of the captured cells onto the instance's texel grid.

use super::instance::Slot;
use super::naming::entity_label;
use super::terrain::CaptureHeights;
use crate::backend::TexelRect;
use crate::components::{CaptureMode, HeightCapture, Pose, Position};
use crate::error::{finite, MurkError, Result};
use crate::fixed::Fnv64;
use crate::transform::AreaTransform;
use crate::zlayer::Slab;
use hecs::{Entity, World};
use std::ops::Range;

/// What a tick's capture gave.
pub(crate) struct CaptureUpdate {
    /// The signature of the capture inputs (`None`: redone every recompute).
    pub(crate) signature: Option<u64>,
    /// The heights on the instance's grid, when the capture was redone.
    pub(crate) heights: Option<CaptureHeights>,
}

/// The height capture an instance needs this tick: `None` without capture
/// components; otherwise the signature of the capture inputs and, when the
/// capture is dirty, the captured heights resampled onto the instance's grid
/// (only the rows of the rectangles marked dirty, when only those are).
pub(crate) fn gather_capture(slot: &Slot, world: &World, slab: &Slab) -> Result<Option<CaptureUpdate>> {
    let (t, profile, w, h) = (&slot.transform, &slot.desc.profile, slot.dims.width, slot.dims.height);
    let mut capture_query = world.query::<(Entity, &HeightCapture)>();
    let mut captures: Vec<(Entity, &HeightCapture)> = capture_query.iter().filter(|(_, c)| c.enabled).collect();
    captures.sort_by_key(|(e, _)| e.to_bits());
    if captures.is_empty() {
        return Ok(None);
    }
    let signature = capture_signature(world, &captures)?;
    let dirty = slot.state.capture_dirty || signature.is_none() || signature != slot.state.capture_signature || slot.state.capture.is_none();
    let marked = slot.capture_marks.iter().fold(TexelRect::default(), |acc, r| acc.union(r));
    let heights = if dirty {
        Some(CaptureHeights::Whole(resample_captures(&captures, t, slab, profile.z_layering, w, 0..h)?))
    } else if !marked.is_empty() {
        let texels = resample_captures(&captures, t, slab, profile.z_layering, w, marked.y0..marked.y1)?;
        Some(CaptureHeights::Rows { first: marked.y0, texels })
    } else {
        None
    };
    Ok(Some(CaptureUpdate { signature, heights }))
}

/// Signature of the capture inputs for the show-only transform rule, or
/// `None` when the capture must be redone every recompute.
fn capture_signature(world: &World, captures: &[(Entity, &HeightCapture)]) -> Result<Option<u64>> {
    let mut h = Fnv64::default();
    for (e, c) in captures {
        match &c.mode {
            CaptureMode::FullScene | CaptureMode::ShowOnly { update_only_if_transform_changed: false, .. } => return Ok(None),
            CaptureMode::ShowOnly { members, update_only_if_transform_changed: true } => {
                h.write(&e.to_bits().get().to_le_bytes());
                for f in [c.origin.x, c.origin.y, c.cell_size] {
                    h.write(&f.to_bits().to_le_bytes());
                }
                h.write(&c.width.to_le_bytes());
                h.write(&c.height.to_le_bytes());
                for m in members {
                    h.write(&m.to_bits().get().to_le_bytes());
                    let pos = world
                        .get::<&Position>(*m)
                        .map_err(|_| MurkError::UnknownEntity(format!("{} (capture member of {})", entity_label(*m), entity_label(*e))))?;
                    for f in [pos.0.x, pos.0.y, pos.0.z] {
                        h.write(&f.to_bits().to_le_bytes());
                    }
                    // A member that turns or is scaled changes the capture too.
                    match world.get::<&Pose>(*m) {
                        Ok(pose) => {
                            h.write(&[1]);
                            for f in pose.rotation.to_array().into_iter().chain(pose.scale.to_array()) {
                                h.write(&f.to_bits().to_le_bytes());
                            }
                        }
                        Err(_) => h.write(&[0]),
                    }
                }
            }
        }
    }
    Ok(Some(h.finish()))
}

/// Rows `rows` of the captured heights on the instance's grid: each texel centre takes the
/// highest cell of any capture under it (`+inf` a wall, NaN nothing), in
/// height units; cells outside the slab are left out under Z layering.
fn resample_captures(
    captures: &[(Entity, &HeightCapture)],
    t: &AreaTransform,
    slab: &Slab,
    z_layering: bool,
    w: u32,
    rows: Range<u32>,
) -> Result<Vec<i32>> {
    for (e, c) in captures {
        let label = entity_label(*e);
        let cell = finite(|| format!("{label}.capture.cell_size"), c.cell_size)?;
        if cell <= 0.0 {
            return Err(MurkError::invalid(format!("{label}.capture.cell_size"), cell, "must be positive"));
        }
        finite(|| format!("{label}.capture.origin.x"), c.origin.x)?;
        finite(|| format!("{label}.capture.origin.y"), c.origin.y)?;
        let expected = u64::from(c.width) * u64::from(c.height);
        if c.cells.len() as u64 != expected {
            return Err(MurkError::invalid(format!("{label}.capture.cells"), c.cells.len(), format!("must hold width * height = {expected} cells")));
        }
    }
    let labeled: Vec<crate::resample::LabeledCapture> = captures.iter().map(|(e, c)| (entity_label(*e).to_string(), *c)).collect();
    crate::resample::resample_captures(&labeled, t, slab, z_layering, w, rows)
}
