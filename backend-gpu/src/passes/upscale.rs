//! Pass 9, upscale. Twins: `shaders/upscale.wgsl`, `backend-cpu/src/passes/upscale.rs`.

use crate::context::{groups, Context};
use crate::instance::Instance;
use murk_core::Texture;

/// Records the upscale dispatch.
pub(crate) fn record(ctx: &mut Context, enc: &mut wgpu::CommandEncoder, t: &Instance) {
    let g = ctx.bind(&ctx.shaders.upscale, &[&t.params, &t.masks[Texture::Compose], &t.masks[Texture::Upscale]]);
    ctx.dispatch(enc, &ctx.shaders.upscale, &g, groups(t.dims.out_width, 8), groups(t.dims.out_height, 8));
}
