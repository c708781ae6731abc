//! Sample batches (`shaders/sample.wgsl`): texels of several instances'
//! final masks in one readback, six requests a dispatch; what stealth
//! actors and mask queries read.

use crate::context::{groups, Context};
use crate::error::unknown_key;
use crate::instance::Instance;
use crate::readback::InFlight;
use murk_core::{InstanceKey, MurkError, Result, SampleRequest, Texture};
use std::collections::BTreeMap;

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

/// Requests (final masks) one sample dispatch reads: six plane bindings, with
/// the texel list and the results eight storage buffers, WebGPU's default
/// per stage.
pub(crate) const SAMPLE_SLOTS: usize = 6;

/// Workgroups in a row of a sample dispatch (`shaders/sample.wgsl`).
const SAMPLE_ROW_GROUPS: u32 = 32768;

/// The index in its final mask of every texel of `batch`, in order; an
/// unknown instance or a texel outside its mask is an error (before anything is
/// recorded: a bad texel changes nothing).
pub(crate) fn texel_indices(instances: &BTreeMap<InstanceKey, Instance>, batch: &[SampleRequest]) -> Result<Vec<u32>> {
    let mut indices = Vec::new();
    for request in batch {
        let d = instances.get(&request.key).ok_or_else(|| unknown_key(request.key))?.dims;
        let (w, h) = (d.out_width, d.out_height);
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
    batch: &[SampleRequest],
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
        for (slot, request) in group.iter().enumerate() {
            range.count += request.texels.len() as u32;
            range.ends[slot] = range.count;
            planes.push(&instances[&request.key].masks[Texture::Final]);
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
