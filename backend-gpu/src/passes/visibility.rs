//! Pass 5, visibility. Twins: `shaders/visibility.wgsl`,
//! `backend-cpu/src/passes/visibility.rs`.

use super::groups;
use crate::context::Context;
use crate::Textures;
use murk_core::RecomputeInput;

/// Records the visibility dispatch; returns the upload buffers to recycle.
pub fn record(ctx: &mut Context, enc: &mut wgpu::CommandEncoder, t: &Textures, input: &RecomputeInput) -> Vec<wgpu::Buffer> {
    let sources = ctx.upload(bytemuck::cast_slice(&input.sources));
    let offsets = ctx.upload(bytemuck::cast_slice(&input.bins.offsets));
    let indices = ctx.upload(bytemuck::cast_slice(&input.bins.indices));
    let group = ctx.bind(
        "visibility.main",
        &[&t.params, &sources, &offsets, &indices, &t.coverage, &t.height, &t.levels, &t.level_table, &t.field, &t.visibility],
    );
    ctx.dispatch(enc, "visibility.main", &group, groups(t.dims.width, 8), groups(t.dims.height, 8));
    vec![sources, offsets, indices]
}
