//! Pass 7, memory. Twins: `shaders/memory.wgsl`, `backend-cpu/src/passes/memory.rs`.

use crate::context::{groups, Context};
use crate::instance::Instance;
use murk_core::Texture;

/// Records the memory dispatch.
pub(crate) fn record(ctx: &mut Context, enc: &mut wgpu::CommandEncoder, t: &Instance) {
    let m = &t.masks;
    let g =
        ctx.bind(&ctx.shaders.memory, &[&t.params, &m[Texture::Blur], &m[Texture::Memory], &t.flags, &t.reveal, &t.reveal_map, &m[Texture::Mapped]]);
    ctx.dispatch(enc, &ctx.shaders.memory, &g, groups(t.dims.width, 8), groups(t.dims.height, 8));
}
