//! Pass 8, compose. Twins: `shaders/compose.wgsl`, `backend-cpu/src/passes/compose.rs`.

use super::groups;
use crate::context::{Context, Kernel};
use crate::Textures;

/// Records the compose dispatch.
pub fn record(ctx: &mut Context, enc: &mut wgpu::CommandEncoder, t: &Textures) {
    let g = ctx.bind(Kernel::Compose, &[&t.params, &t.blurred, &t.memory, &t.composed, &t.flags, &t.reveal, &t.mapped]);
    ctx.dispatch(enc, Kernel::Compose, &g, groups(t.dims.width, 8), groups(t.dims.height, 8));
}
