//! Pass 3, distance field: coarse block OR, column distances, row envelopes.
//! Twins: `shaders/distance_field.wgsl`, `backend-cpu/src/passes/distance_field.rs`.

use super::groups;
use crate::context::{Context, Kernel};
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
    dispatch(ctx, enc, &[&t.params, &t.coverage, &f.coarse, &f.vertical, &f.envelope_v, &f.envelope_z, &f.field], dw, dh);
}

/// The three dispatches over a `dw x dh` field on `buffers` (params,
/// coverage, coarse, vertical, the two envelopes, the field).
pub fn dispatch(ctx: &mut Context, enc: &mut wgpu::CommandEncoder, buffers: &[&wgpu::Buffer; 7], dw: u32, dh: u32) {
    let g = ctx.bind(Kernel::DistanceFieldCoarse, buffers);
    ctx.dispatch(enc, Kernel::DistanceFieldCoarse, &g, groups(dw, 8), groups(dh, 8));
    let g = ctx.bind(Kernel::DistanceFieldColumns, buffers);
    ctx.dispatch(enc, Kernel::DistanceFieldColumns, &g, groups(dw, 64), 1);
    let g = ctx.bind(Kernel::DistanceFieldRows, buffers);
    ctx.dispatch(enc, Kernel::DistanceFieldRows, &g, groups(dh, 64), 1);
}
