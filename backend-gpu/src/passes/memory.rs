//! Pass 7, memory. Twins: `shaders/memory.wgsl`, `backend-cpu/src/passes/memory.rs`.

use super::groups;
use crate::context::{Context, Kernel};
use crate::Textures;

/// Records the memory dispatch.
pub fn record(ctx: &mut Context, enc: &mut wgpu::CommandEncoder, t: &Textures) {
    let g = ctx.bind(Kernel::Memory, &[&t.params, &t.blurred, &t.memory, &t.flags, &t.reveal, &t.reveal_map, &t.mapped]);
    ctx.dispatch(enc, Kernel::Memory, &g, groups(t.dims.width, 8), groups(t.dims.height, 8));
}
