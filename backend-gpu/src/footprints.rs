//! Footprint judgments (`shaders/footprints.wgsl`): each footprint of a
//! batch reduced on the device to its one value, so a batch reads back
//! one word per footprint, whatever the footprints' sizes. A list that
//! several observers over one grid share is uploaded once.

use crate::context::{groups, Context};
use crate::error::unknown_key;
use crate::instance::Instance;
use crate::readback::InFlight;
use murk_core::{FootprintList, FootprintRequest, InstanceKey, MurkError, Result, Texture};
use std::collections::BTreeMap;
use std::sync::Arc;

/// `FootprintRange` of `shaders/footprints.wgsl`: the observers one
/// dispatch judges (up to [`FOOTPRINT_SLOTS`]).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct FootprintRange {
    /// Footprints judged by the dispatch.
    pub count: u32,
    /// Padding to 16 bytes.
    pub pad0: u32,
    /// Padding.
    pub pad1: u32,
    /// Padding.
    pub pad2: u32,
    /// Where each observer's footprints start in the dispatch (the unused
    /// slots, and the last, hold `count`).
    pub starts: [u32; 4],
    /// Where each observer's list keeps its footprints' ends in the lists.
    pub ends_at: [u32; 4],
    /// Where each observer's list keeps its texels' indices in the lists.
    pub texels_at: [u32; 4],
    /// Where each observer's values go in the results.
    pub out_at: [u32; 4],
    /// Each observer's cutoff.
    pub cutoffs: [u32; 4],
}

/// Observers one footprint dispatch judges: two planes each, six plane
/// bindings, which with the lists and the results are eight storage
/// buffers, WebGPU's default per stage.
const FOOTPRINT_SLOTS: usize = 3;

/// Workgroups in a row of a footprint dispatch.
const FOOTPRINT_ROW_GROUPS: u32 = 32768;

/// A batch's lists as the device reads them: each distinct list once, its
/// footprints' ends then its texels' indices in the planes.
pub(crate) struct Lists {
    words: Vec<u32>,
    /// Per request: where its list's ends and texel indices start.
    at: Vec<[u32; 2]>,
    /// Footprints in the batch: the values its readback holds.
    pub(crate) footprints: usize,
}

/// Lays out `batch` for the device; a malformed list, an unknown instance
/// or a texel outside its instance's grid is an error (before anything is
/// recorded: a bad batch changes nothing).
pub(crate) fn lay_out(instances: &BTreeMap<InstanceKey, Instance>, batch: &[FootprintRequest]) -> Result<Lists> {
    let mut lists = Lists { words: Vec::new(), at: Vec::with_capacity(batch.len()), footprints: 0 };
    // The lists laid out so far, by allocation and the grid they index.
    let mut laid: Vec<(*const FootprintList, u32, u32, [u32; 2])> = Vec::new();
    for r in batch {
        r.footprints.check()?;
        let d = instances.get(&r.key).ok_or_else(|| unknown_key(r.key))?.dims;
        let (w, h) = (d.width, d.height);
        lists.footprints += r.footprints.ends.len();
        let list = Arc::as_ptr(&r.footprints);
        if let Some(&(.., at)) = laid.iter().find(|l| l.0 == list && (l.1, l.2) == (w, h)) {
            lists.at.push(at);
            continue;
        }
        if let Some([x, y]) = r.footprints.texels.iter().copied().find(|&[x, y]| x >= w || y >= h) {
            return Err(MurkError::invalid("texel", format!("({x}, {y})"), format!("must lie inside {w}x{h}")));
        }
        let ends_at = word_index(lists.words.len())?;
        lists.words.extend_from_slice(&r.footprints.ends);
        let texels_at = word_index(lists.words.len())?;
        lists.words.extend(r.footprints.texels.iter().map(|&[x, y]| y * w + x));
        word_index(lists.words.len())?;
        laid.push((list, w, h, [ends_at, texels_at]));
        lists.at.push([ends_at, texels_at]);
    }
    word_index(lists.footprints)?;
    Ok(lists)
}

/// A position in a device list, which the shader indexes with 32 bits.
fn word_index(at: usize) -> Result<u32> {
    u32::try_from(at).map_err(|_| MurkError::invalid("footprints", at, "a batch must hold under 2^32 texels and footprints"))
}

/// Records the dispatches judging `batch` (laid out as `lists`) into
/// `enc`, one per three observers; returns the readback of the values
/// (one word per footprint, in batch order) and the buffers to recycle
/// once submitted.
pub(crate) fn record(
    ctx: &mut Context,
    enc: &mut wgpu::CommandEncoder,
    instances: &BTreeMap<InstanceKey, Instance>,
    batch: &[FootprintRequest],
    lists: &Lists,
) -> (InFlight, Vec<wgpu::Buffer>) {
    let words: &[u32] = if lists.words.is_empty() { &[0] } else { &lists.words };
    let list = ctx.upload(bytemuck::cast_slice(words));
    let bytes = lists.footprints.max(1) as u64 * 4;
    let results = ctx.take(bytes);
    let mut out = 0u32;
    for (group, ats) in batch.chunks(FOOTPRINT_SLOTS).zip(lists.at.chunks(FOOTPRINT_SLOTS)) {
        let mut range = FootprintRange::default();
        let mut planes = Vec::with_capacity(2 * FOOTPRINT_SLOTS);
        for (slot, (r, &[ends_at, texels_at])) in group.iter().zip(ats).enumerate() {
            range.starts[slot] = range.count;
            range.ends_at[slot] = ends_at;
            range.texels_at[slot] = texels_at;
            range.out_at[slot] = out + range.count;
            range.cutoffs[slot] = u32::from(r.cutoff);
            // Laid out above: the count fits in 32 bits.
            range.count += r.footprints.ends.len() as u32;
            let t = &instances[&r.key];
            planes.extend([&t.masks[Texture::Visibility], &t.reveal]);
        }
        for slot in group.len()..range.starts.len() {
            range.starts[slot] = range.count;
        }
        while planes.len() < 2 * FOOTPRINT_SLOTS {
            planes.extend([planes[0], planes[1]]);
        }
        if range.count > 0 {
            let uniform = ctx.uniform(bytemuck::bytes_of(&range));
            let buffers: Vec<&wgpu::Buffer> = [&list, &results, &uniform].into_iter().chain(planes).collect();
            let g = ctx.bind(&ctx.shaders.footprints, &buffers);
            let g64 = groups(range.count, 64);
            ctx.dispatch(enc, &ctx.shaders.footprints, &g, g64.min(FOOTPRINT_ROW_GROUPS), g64.div_ceil(FOOTPRINT_ROW_GROUPS));
        }
        out += range.count;
    }
    let readback = InFlight::new(ctx.staging(enc, &results, bytes), bytes);
    (readback, vec![list, results])
}
