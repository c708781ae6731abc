//! Pass 10, blend. Twins: `shaders/blend.wgsl`, `backend-cpu/src/passes/blend.rs`.

use super::groups;
use crate::context::{Context, Kernel};
use crate::Textures;

/// Records the blend dispatch.
pub fn record(ctx: &mut Context, enc: &mut wgpu::CommandEncoder, t: &Textures) {
    let g = ctx.bind(Kernel::Blend, &[&t.params, &t.start, &t.upscaled, &t.final_mask]);
    ctx.dispatch(enc, Kernel::Blend, &g, groups(t.dims.out_width, 8), groups(t.dims.out_height, 8));
}
