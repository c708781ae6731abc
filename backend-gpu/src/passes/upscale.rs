//! Pass 9, upscale. Twins: `shaders/upscale.wgsl`, `backend-cpu/src/passes/upscale.rs`.

use super::groups;
use crate::context::{Context, Kernel};
use crate::Textures;

/// Records the upscale dispatch.
pub fn record(ctx: &mut Context, enc: &mut wgpu::CommandEncoder, t: &Textures) {
    let g = ctx.bind(Kernel::Upscale, &[&t.params, &t.composed, &t.upscaled]);
    ctx.dispatch(enc, Kernel::Upscale, &g, groups(t.dims.out_width, 8), groups(t.dims.out_height, 8));
}
