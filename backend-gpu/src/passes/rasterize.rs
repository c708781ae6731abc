//! Pass 1, rasterize: blockers and the capture -> coverage + height.
//! Twins: `shaders/rasterize.wgsl`, `backend-cpu/src/passes/rasterize.rs`.

use crate::context::{groups, Context};
use crate::instance::Instance;
use murk_core::{OcclusionInput, TexelRect};

/// Records the rasterize dispatch over `region` of the grid, with the
/// shapes of `shapes` (every one that may cover a texel of it) and the
/// captured heights of `capture` (the whole grid's); returns the upload
/// buffers to recycle.
pub(crate) fn record(
    ctx: &mut Context,
    enc: &mut wgpu::CommandEncoder,
    t: &Instance,
    shapes: &OcclusionInput,
    capture: Option<&[i32]>,
    region: &TexelRect,
) -> Vec<wgpu::Buffer> {
    let circles = ctx.upload(bytemuck::cast_slice(&shapes.circles));
    let polygons = ctx.upload(bytemuck::cast_slice(&shapes.polygons));
    let vertices = ctx.upload(bytemuck::cast_slice(&shapes.vertices));
    let (w, rw, rows) = (t.dims.width as usize, (region.x1 - region.x0) as usize, region.y1 - region.y0);
    // The region's captured heights, row by row (the whole capture as it is
    // for the whole grid).
    let capture = match capture {
        Some(all) if rw == w => ctx.upload(bytemuck::cast_slice(&all[region.y0 as usize * w..region.y1 as usize * w])),
        Some(all) => {
            let part: Vec<i32> = (region.y0 as usize..region.y1 as usize).flat_map(|y| &all[y * w + region.x0 as usize..][..rw]).copied().collect();
            ctx.upload(bytemuck::cast_slice(&part))
        }
        None => ctx.upload(&[]),
    };
    let bounds =
        ctx.upload(bytemuck::cast_slice(&[region.x0, region.y0, rw as u32, rows, shapes.circles.len() as u32, shapes.polygons.len() as u32]));
    let group =
        ctx.bind(&ctx.shaders.rasterize, &[&t.params, &circles, &polygons, &vertices, &capture, &t.occlusion.coverage, &t.occlusion.height, &bounds]);
    ctx.dispatch(enc, &ctx.shaders.rasterize, &group, groups(rw as u32, 8), groups(rows, 8));
    vec![circles, polygons, vertices, capture, bounds]
}
