//! Pass 3, distance field: coarse block OR, column distances, row envelopes.
//! Twins: `shaders/distance_field.wgsl`, `backend-cpu/src/passes/distance_field.rs`.

use super::groups;
use crate::context::Context;
use crate::Textures;

/// Scratch and output buffers of the distance field.
pub struct FieldBuffers {
    /// Coarse coverage.
    pub coarse: wgpu::Buffer,
    /// Vertical distances.
    pub vertical: wgpu::Buffer,
    /// Envelope vertices per row.
    pub envelope_v: wgpu::Buffer,
    /// Envelope boundaries per row.
    pub envelope_z: wgpu::Buffer,
    /// Squared distances.
    pub field: wgpu::Buffer,
}

/// Records the three dispatches over a `dw x dh` field.
pub fn record(ctx: &mut Context, enc: &mut wgpu::CommandEncoder, t: &Textures, f: &FieldBuffers, dw: u32, dh: u32) {
    let buffers = [&t.params, &t.coverage, &f.coarse, &f.vertical, &f.envelope_v, &f.envelope_z, &f.field];
    let g = ctx.bind("distance_field.coarse_pass", &buffers);
    ctx.dispatch(enc, "distance_field.coarse_pass", &g, groups(dw, 8), groups(dh, 8));
    let g = ctx.bind("distance_field.columns_pass", &buffers);
    ctx.dispatch(enc, "distance_field.columns_pass", &g, groups(dw, 64), 1);
    let g = ctx.bind("distance_field.rows_pass", &buffers);
    ctx.dispatch(enc, "distance_field.rows_pass", &g, groups(dh, 64), 1);
}
