//! Pass 5, visibility: `main` paints, `finish` lights walls and applies
//! anti-vision (see the shader's header). Twins: `shaders/visibility.wgsl`,
//! `backend-cpu/src/passes/visibility/`.

use crate::context::{groups, Context};
use crate::instance::Instance;
use murk_core::{RecomputeInput, Texture};

/// Records the visibility dispatch; returns the upload buffers to recycle.
pub(crate) fn record(ctx: &mut Context, enc: &mut wgpu::CommandEncoder, t: &Instance, input: &RecomputeInput) -> Vec<wgpu::Buffer> {
    let sources = ctx.upload(bytemuck::cast_slice(&input.sources));
    let offsets = ctx.upload(bytemuck::cast_slice(&input.bins.offsets));
    let indices = ctx.upload(bytemuck::cast_slice(&input.bins.indices));
    // `scratch` holds the painted reveal and anti-vision between the two
    // entry points; the blur that uses it next runs after both.
    let o = &t.occlusion;
    let visibility = &t.masks[Texture::Visibility];
    let buffers = [&t.params, &sources, &offsets, &indices, &o.coverage, &o.height, &o.mips, &o.mip_table, &o.distance_field, visibility, &t.scratch];
    for entry in [&ctx.shaders.visibility, &ctx.shaders.visibility_finish] {
        let group = ctx.bind(entry, &buffers);
        ctx.dispatch(enc, entry, &group, groups(t.dims.width, 8), groups(t.dims.height, 8));
    }
    vec![sources, offsets, indices]
}
