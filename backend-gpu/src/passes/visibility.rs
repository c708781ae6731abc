//! Pass 5, visibility: `main` paints, `finish` lights walls and applies
//! anti-vision (see the shader's header). Twins: `shaders/visibility.wgsl`,
//! `backend-cpu/src/passes/visibility/`.

use super::groups;
use crate::context::{Context, Kernel};
use crate::Textures;
use murk_core::RecomputeInput;

/// Records the visibility dispatch; returns the upload buffers to recycle.
pub fn record(ctx: &mut Context, enc: &mut wgpu::CommandEncoder, t: &Textures, input: &RecomputeInput) -> Vec<wgpu::Buffer> {
    let sources = ctx.upload(bytemuck::cast_slice(&input.sources));
    let offsets = ctx.upload(bytemuck::cast_slice(&input.bins.offsets));
    let indices = ctx.upload(bytemuck::cast_slice(&input.bins.indices));
    // `scratch` holds the painted reveal and anti-vision between the two
    // entry points; the blur that uses it next runs after both.
    let buffers = [&t.params, &sources, &offsets, &indices, &t.coverage, &t.height, &t.levels, &t.level_table, &t.field, &t.visibility, &t.scratch];
    for entry in [Kernel::Visibility, Kernel::VisibilityFinish] {
        let group = ctx.bind(entry, &buffers);
        ctx.dispatch(enc, entry, &group, groups(t.dims.width, 8), groups(t.dims.height, 8));
    }
    vec![sources, offsets, indices]
}
