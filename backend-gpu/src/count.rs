//! The explored count (`shaders/count.wgsl`): the texels of an instance's
//! memory above 0, summed on the device, one readback of one value.

use crate::context::{groups, Context};
use crate::instance::Instance;
use crate::readback::InFlight;
use murk_core::Texture;

/// Workgroups in a row of a count dispatch (`shaders/count.wgsl`).
const COUNT_ROW_GROUPS: u32 = 32768;

/// Records the count of instance `t`'s explored texels into `enc`; returns
/// the readback of the count (a little-endian `u64`) and the buffers to
/// recycle once submitted.
pub(crate) fn record(ctx: &mut Context, enc: &mut wgpu::CommandEncoder, t: &Instance) -> (InFlight, Vec<wgpu::Buffer>) {
    let texels = t.dims.width * t.dims.height;
    // Two words, both cleared: the count in the low one, 0 above it.
    let total = ctx.take(8);
    enc.clear_buffer(&total, 0, Some(8));
    let grid = ctx.uniform(bytemuck::bytes_of(&[texels, 0, 0, 0]));
    let group = ctx.bind(&ctx.shaders.count, &[&grid, &t.masks[Texture::Memory], &total]);
    let g = groups(texels.max(1), 256);
    ctx.dispatch(enc, &ctx.shaders.count, &group, g.min(COUNT_ROW_GROUPS), g.div_ceil(COUNT_ROW_GROUPS));
    let readback = InFlight::new(ctx.staging(enc, &total, 8), 8);
    (readback, vec![total])
}
