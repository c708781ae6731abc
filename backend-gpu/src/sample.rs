//! Sample batches (`shaders/sample.wgsl`): texels of several instances'
//! planes in one readback, six requests a dispatch; what stealth actors,
//! mask queries and footprint judgments read. A footprint batch samples
//! each footprint's texels in the visibility and the sight reveal and
//! reduces them to one value per footprint when the readback lands.

use crate::context::{groups, Context};
use crate::error::unknown_key;
use crate::instance::Instance;
use crate::readback::InFlight;
use murk_core::{FootprintList, InstanceKey, MurkError, Result, SampleRequest, Texture};
use std::collections::BTreeMap;
use std::sync::Arc;

/// `SampleRange` of `shaders/sample.wgsl`: the part of a sample batch that
/// one dispatch answers, for up to six requests (`SAMPLE_SLOTS`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct SampleRange {
    /// The first texel index of the dispatch in the batch.
    pub first: u32,
    /// How many texels it samples.
    pub count: u32,
    /// Padding to 16 bytes.
    pub pad: [u32; 2],
    /// Where each request's texels end, counted from `first` (the unused
    /// slots hold `count`).
    pub ends: [u32; 8],
}

/// Requests (planes) one sample dispatch reads: six plane bindings, with
/// the texel list and the results eight storage buffers, WebGPU's default
/// per stage.
pub(crate) const SAMPLE_SLOTS: usize = 6;

/// Workgroups in a row of a sample dispatch (`shaders/sample.wgsl`).
const SAMPLE_ROW_GROUPS: u32 = 32768;

/// The plane a sample request reads.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Plane {
    /// The final mask (output texels).
    Final,
    /// The raw visibility (internal texels).
    Visibility,
    /// The scripted sight reveal (internal texels; the low half of the
    /// packed reveal buffer, which the readback keeps).
    Sight,
}

impl Plane {
    fn buffer(self, t: &Instance) -> &wgpu::Buffer {
        match self {
            Plane::Final => &t.masks[Texture::Final],
            Plane::Visibility => &t.masks[Texture::Visibility],
            Plane::Sight => &t.reveal,
        }
    }
}

/// What a footprint ticket's samples become: per request, its cutoff and
/// footprints, whose texels the samples follow in order.
pub(crate) type FootprintTicket = Vec<(u16, Arc<FootprintList>)>;

/// The index in its plane of every texel of `batch`, in order; an unknown
/// instance or a texel outside its plane is an error (before anything is
/// recorded: a bad texel changes nothing).
pub(crate) fn texel_indices(instances: &BTreeMap<InstanceKey, Instance>, batch: &[(&SampleRequest, Plane)]) -> Result<Vec<u32>> {
    let mut indices = Vec::new();
    for &(request, plane) in batch {
        let d = instances.get(&request.key).ok_or_else(|| unknown_key(request.key))?.dims;
        let (w, h) = if plane == Plane::Final { (d.out_width, d.out_height) } else { (d.width, d.height) };
        for &[x, y] in &request.texels {
            if x >= w || y >= h {
                return Err(MurkError::invalid("texel", format!("({x}, {y})"), format!("must lie inside {w}x{h}")));
            }
            indices.push(y * w + x);
        }
    }
    Ok(indices)
}

/// Records the dispatches sampling `batch` at `indices` (its
/// [`texel_indices`]) into `enc`, one per six requests; returns the
/// readback of the values and the buffers to recycle once submitted.
pub(crate) fn record(
    ctx: &mut Context,
    enc: &mut wgpu::CommandEncoder,
    instances: &BTreeMap<InstanceKey, Instance>,
    batch: &[(&SampleRequest, Plane)],
    mut indices: Vec<u32>,
) -> (InFlight, Vec<wgpu::Buffer>) {
    if indices.is_empty() {
        indices.push(0);
    }
    let bytes = indices.len() as u64 * 4;
    let list = ctx.upload(bytemuck::cast_slice(&indices));
    let results = ctx.take(bytes);
    // One dispatch per six requests: a batch of up to six observers
    // (or instances queried) is one dispatch.
    let mut first = 0u32;
    for group in batch.chunks(SAMPLE_SLOTS) {
        let mut range = SampleRange { first, count: 0, pad: [0; 2], ends: [0; 8] };
        let mut planes = Vec::with_capacity(SAMPLE_SLOTS);
        for (slot, &(request, plane)) in group.iter().enumerate() {
            range.count += request.texels.len() as u32;
            range.ends[slot] = range.count;
            planes.push(plane.buffer(&instances[&request.key]));
        }
        for slot in group.len()..range.ends.len() {
            range.ends[slot] = range.count;
        }
        while planes.len() < SAMPLE_SLOTS {
            planes.push(planes[0]);
        }
        let uniform = ctx.uniform(bytemuck::bytes_of(&range));
        let buffers: Vec<&wgpu::Buffer> = [&list, &results, &uniform].into_iter().chain(planes).collect();
        let g = ctx.bind(&ctx.shaders.sample, &buffers);
        let g64 = groups(range.count, 64);
        ctx.dispatch(enc, &ctx.shaders.sample, &g, g64.min(SAMPLE_ROW_GROUPS), g64.div_ceil(SAMPLE_ROW_GROUPS));
        first += range.count;
    }
    let readback = InFlight::new(ctx.staging(enc, &results, bytes), bytes);
    (readback, vec![list, results])
}

/// The footprints' values of a landed footprint batch: each request's
/// texels were sampled in the visibility, then in the sight reveal; a
/// footprint's value is the larger of both, judged against its cutoff.
pub(crate) fn reduce_footprints(values: &[u16], requests: FootprintTicket) -> Vec<u16> {
    let mut out = Vec::with_capacity(requests.iter().map(|(_, list)| list.ends.len()).sum());
    let mut at = 0;
    for (cutoff, list) in requests {
        let (visibility, sight) = values[at..at + 2 * list.texels.len()].split_at(list.texels.len());
        let mut first = 0;
        for &end in &list.ends {
            let span = first..end as usize;
            let top = visibility[span.clone()].iter().chain(&sight[span]).copied().max().unwrap_or(0);
            out.push(murk_core::backend::footprint_value(top, cutoff));
            first = end as usize;
        }
        at += 2 * list.texels.len();
    }
    out
}
