//! Sight-line batches (`shaders/lines.wgsl`): the light of each line over
//! an instance's occlusion, one dispatch and one readback of one value per
//! line.

use crate::context::{groups, Context};
use crate::instance::Instance;
use crate::readback::InFlight;
use murk_core::{FrameParams, LineRequest};

/// `LineRay` of `shaders/lines.wgsl`: one line in texels, with its eye.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
struct LineRay {
    sx: i32,
    sy: i32,
    tx: i32,
    ty: i32,
    eye: i32,
    pad: [i32; 3],
}

/// Workgroups in a row of a lines dispatch (`shaders/lines.wgsl`).
const LINE_ROW_GROUPS: u32 = 32768;

/// Records the dispatch tracing `request` over instance `t` (whose texels
/// the lines were checked to lie in) into `enc`; returns the readback of
/// the lights and the buffers to recycle once submitted.
pub(crate) fn record(ctx: &mut Context, enc: &mut wgpu::CommandEncoder, t: &Instance, request: &LineRequest) -> (InFlight, Vec<wgpu::Buffer>) {
    let mut rays: Vec<LineRay> = request
        .lines
        .iter()
        .map(|l| LineRay { sx: l.from[0] as i32, sy: l.from[1] as i32, tx: l.to[0] as i32, ty: l.to[1] as i32, eye: l.eye, pad: [0; 3] })
        .collect();
    let count = rays.len() as u32;
    if rays.is_empty() {
        rays.push(LineRay { sx: 0, sy: 0, tx: 0, ty: 0, eye: 0, pad: [0; 3] });
    }
    let bytes = rays.len() as u64 * 4;
    let list = ctx.upload(bytemuck::cast_slice(&rays));
    let results = ctx.take(bytes);
    // The instance's parameters as its builds left them (grid, pyramid and
    // field sizes), with the rule of the request.
    let rule = &request.rule;
    let frame = FrameParams {
        method: rule.method.code(),
        target_height: rule.target_height,
        soft_shadow_k_q8: rule.soft_shadow_k_q8,
        df_jitter: u32::from(rule.df_jitter),
        ..t.frame
    };
    let params = ctx.uniform(bytemuck::bytes_of(&frame));
    let counts = ctx.uniform(bytemuck::bytes_of(&[count, 0, 0, 0]));
    let o = &t.occlusion;
    let buffers = [&params, &list, &results, &counts, &o.coverage, &o.height, &o.mips, &o.mip_table, &o.distance_field];
    let group = ctx.bind(&ctx.shaders.lines, &buffers);
    let g64 = groups(count.max(1), 64);
    ctx.dispatch(enc, &ctx.shaders.lines, &group, g64.min(LINE_ROW_GROUPS), g64.div_ceil(LINE_ROW_GROUPS));
    let readback = InFlight::new(ctx.staging(enc, &results, bytes), bytes);
    (readback, vec![list, results])
}
