//! Pass 2, mips: the coverage max pyramid (Hierarchical DDA only).
//! Twins: `shaders/mips.wgsl`, `backend-cpu/src/passes/mips.rs`.

use crate::context::{groups, Context};
use crate::instance::{mip_layout, Instance};
use murk_core::TexelRect;

/// `MipStep` of `shaders/mips.wgsl`: the level one dispatch builds.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct MipStep {
    /// Offset of the source level in the levels buffer.
    pub source_offset: u32,
    /// Offset of the level built.
    pub target_offset: u32,
    /// Source level width.
    pub source_width: u32,
    /// Source level height.
    pub source_height: u32,
    /// First column of the texels of the level built that the dispatch redoes.
    pub region_x: u32,
    /// Their first row.
    pub region_y: u32,
    /// Their columns.
    pub region_width: u32,
    /// Their rows.
    pub region_rows: u32,
}

/// Bytes of a [`MipStep`] (each level's uniform buffer).
pub const STEP_BYTES: usize = size_of::<MipStep>();

/// Records the copy of coverage into level 0 and one dispatch per level,
/// over the texels above `region` of the coverage (the whole grid for a
/// build).
pub(crate) fn record(
    ctx: &mut Context,
    enc: &mut wgpu::CommandEncoder,
    t: &Instance,
    levels: &wgpu::Buffer,
    pass_params: &[wgpu::Buffer],
    region: &TexelRect,
) {
    let table = mip_layout(t.dims.width, t.dims.height);
    let row = u64::from(t.dims.width) * 4;
    enc.copy_buffer_to_buffer(
        &t.occlusion.coverage,
        u64::from(region.y0) * row,
        levels,
        u64::from(region.y0) * row,
        u64::from(region.y1 - region.y0) * row,
    );
    let mut r = *region;
    for (l, pair) in table.windows(2).enumerate() {
        let ((src, sw, sh), (_, dw, dh)) = (pair[0], pair[1]);
        r = TexelRect { x0: r.x0 / 2, y0: r.y0 / 2, x1: r.x1.div_ceil(2).min(dw), y1: r.y1.div_ceil(2).min(dh) };
        let step = MipStep {
            source_offset: src,
            target_offset: pair[1].0,
            source_width: sw,
            source_height: sh,
            region_x: r.x0,
            region_y: r.y0,
            region_width: r.x1 - r.x0,
            region_rows: r.y1 - r.y0,
        };
        ctx.queue.write_buffer(&pass_params[l], 0, bytemuck::bytes_of(&step));
        let group = ctx.bind(&ctx.shaders.mips, &[&pass_params[l], levels]);
        ctx.dispatch(enc, &ctx.shaders.mips, &group, groups(r.x1 - r.x0, 8), groups(r.y1 - r.y0, 8));
    }
}
