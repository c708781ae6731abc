//! Pass 1, rasterize: blockers and the capture -> coverage + height.
//! Twins: `shaders/rasterize.wgsl`, `backend-cpu/src/passes/rasterize.rs`.

use super::groups;
use crate::context::{Context, Kernel};
use crate::Textures;
use murk_core::OcclusionInput;

/// Records the rasterize dispatch; returns the upload buffers to recycle.
pub fn record(ctx: &mut Context, enc: &mut wgpu::CommandEncoder, t: &Textures, input: &OcclusionInput) -> Vec<wgpu::Buffer> {
    let circles = ctx.upload(bytemuck::cast_slice(&input.circles));
    let polygons = ctx.upload(bytemuck::cast_slice(&input.polygons));
    let vertices = ctx.upload(bytemuck::cast_slice(&input.vertices));
    let capture = ctx.upload(bytemuck::cast_slice(input.capture.as_deref().unwrap_or(&[])));
    let group = ctx.bind(Kernel::Rasterize, &[&t.params, &circles, &polygons, &vertices, &capture, &t.coverage, &t.height]);
    ctx.dispatch(enc, Kernel::Rasterize, &group, groups(t.dims.width, 8), groups(t.dims.height, 8));
    vec![circles, polygons, vertices, capture]
}
