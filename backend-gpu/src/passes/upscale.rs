//! Pass 9, upscale. Twins: `shaders/upscale.wgsl`, `backend-cpu/src/passes/upscale.rs`.

use super::groups;
use crate::context::Context;
use crate::Textures;

/// Records the upscale dispatch.
pub fn record(ctx: &mut Context, enc: &mut wgpu::CommandEncoder, t: &Textures) {
    let g = ctx.bind("upscale.main", &[&t.params, &t.composed, &t.upscaled]);
    ctx.dispatch(enc, "upscale.main", &g, groups(t.dims.out_width, 8), groups(t.dims.out_height, 8));
}
