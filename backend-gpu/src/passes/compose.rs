//! Pass 8, compose. Twins: `shaders/compose.wgsl`, `backend-cpu/src/passes/compose.rs`.

use crate::context::{groups, Context};
use crate::instance::Instance;
use murk_core::Texture;

/// Records the compose dispatch.
pub(crate) fn record(ctx: &mut Context, enc: &mut wgpu::CommandEncoder, t: &Instance) {
    let m = &t.masks;
    let g = ctx.bind(
        &ctx.shaders.compose,
        &[&t.params, &m[Texture::Blur], &m[Texture::Memory], &m[Texture::Compose], &t.flags, &t.reveal, &m[Texture::Mapped]],
    );
    ctx.dispatch(enc, &ctx.shaders.compose, &g, groups(t.dims.width, 8), groups(t.dims.height, 8));
}
