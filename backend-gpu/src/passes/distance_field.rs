//! Pass 3, distance field: coarse block OR, column distances, row envelopes,
//! whole or over a changed region.
//! Twins: `shaders/distance_field.wgsl`, `backend-cpu/src/passes/distance_field.rs`.

use crate::context::{groups, Context};
use crate::instance::{FieldScratch, Instance};
use murk_core::TexelRect;
use std::num::NonZeroU32;

/// `DfRegion` of `shaders/distance_field.wgsl`: the field texels whose
/// coarse coverage is redone (`x0..x1` by `y0..y1`; their columns are
/// redone whole), and whether every row is redone (`full`) or only those
/// whose column distances changed.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct DfRegion {
    /// First field column.
    pub x0: u32,
    /// First field row.
    pub y0: u32,
    /// One past the last field column.
    pub x1: u32,
    /// One past the last field row.
    pub y1: u32,
    /// 1: every row is redone (a build); 0: the flagged rows (an update).
    pub full: u32,
    /// Padding to 32 bytes.
    pub pad0: u32,
    /// Padding.
    pub pad1: u32,
    /// Padding.
    pub pad2: u32,
}

impl DfRegion {
    /// The field texels under the grid texels `bounds` at `scale` grid
    /// texels a field texel: an update there.
    pub fn covering(bounds: &TexelRect, scale: NonZeroU32) -> Self {
        let s = scale.get();
        Self {
            x0: bounds.x0 / scale,
            y0: bounds.y0 / scale,
            x1: bounds.x1.div_ceil(s),
            y1: bounds.y1.div_ceil(s),
            full: 0,
            pad0: 0,
            pad1: 0,
            pad2: 0,
        }
    }

    /// The whole `dw x dh` field.
    pub fn whole(dw: u32, dh: u32) -> Self {
        Self { x0: 0, y0: 0, x1: dw, y1: dh, full: 1, pad0: 0, pad1: 0, pad2: 0 }
    }
}

/// Records the three dispatches over `region` of the `dw x dh` field of
/// `t` into `field`, with `scratch` (coarse, vertical, the two envelopes,
/// the row flags).
pub(crate) fn record(
    ctx: &mut Context,
    enc: &mut wgpu::CommandEncoder,
    t: &Instance,
    scratch: &FieldScratch,
    field: &wgpu::Buffer,
    region: DfRegion,
) {
    let region_buffer = ctx.uniform(bytemuck::bytes_of(&region));
    let [coarse, vertical, envelope_v, envelope_z, flags] = scratch;
    let buffers = [&t.params, &t.occlusion.coverage, coarse, vertical, envelope_v, envelope_z, field, flags, &region_buffer];
    let (w, h) = (region.x1 - region.x0, region.y1 - region.y0);
    let g = ctx.bind(&ctx.shaders.distance_field_coarse, &buffers);
    ctx.dispatch(enc, &ctx.shaders.distance_field_coarse, &g, groups(w, 8), groups(h, 8));
    let g = ctx.bind(&ctx.shaders.distance_field_columns, &buffers);
    ctx.dispatch(enc, &ctx.shaders.distance_field_columns, &g, groups(w, 64), 1);
    let g = ctx.bind(&ctx.shaders.distance_field_rows, &buffers);
    ctx.dispatch(enc, &ctx.shaders.distance_field_rows, &g, groups(t.frame.df_height, 64), 1);
}
