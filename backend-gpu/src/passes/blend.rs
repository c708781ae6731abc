//! Pass 10, blend. Twins: `shaders/blend.wgsl`, `backend-cpu/src/passes/blend.rs`.

use crate::context::{groups, Context};
use crate::instance::Instance;
use murk_core::Texture;

/// Records the blend dispatch.
pub(crate) fn record(ctx: &mut Context, enc: &mut wgpu::CommandEncoder, t: &Instance) {
    let g = ctx.bind(&ctx.shaders.blend, &[&t.params, &t.masks[Texture::Start], &t.masks[Texture::Upscale], &t.masks[Texture::Final]]);
    ctx.dispatch(enc, &ctx.shaders.blend, &g, groups(t.dims.out_width, 8), groups(t.dims.out_height, 8));
}
