//! Pass 6, blur: X then Y per iteration, ping-ponging through scratch.
//! Twins: `shaders/blur.wgsl`, `backend-cpu/src/passes/blur.rs`.

use super::groups;
use crate::context::Context;
use crate::Textures;
use murk_core::BlurKernel;

/// Records the copy of visibility into `blurred` and the blur dispatches.
pub fn record(ctx: &mut Context, enc: &mut wgpu::CommandEncoder, t: &Textures, kernel: &BlurKernel) -> Vec<wgpu::Buffer> {
    let n = u64::from(t.dims.width * t.dims.height) * 4;
    enc.copy_buffer_to_buffer(&t.visibility, 0, &t.blurred, 0, n);
    let weights = ctx.upload(bytemuck::cast_slice(&kernel.weights));
    for _ in 0..kernel.iterations {
        let x = ctx.bind("blur.main", &[&t.params, &t.blur_x, &weights, &t.blurred, &t.scratch]);
        ctx.dispatch(enc, "blur.main", &x, groups(t.dims.width, 8), groups(t.dims.height, 8));
        let y = ctx.bind("blur.main", &[&t.params, &t.blur_y, &weights, &t.scratch, &t.blurred]);
        ctx.dispatch(enc, "blur.main", &y, groups(t.dims.width, 8), groups(t.dims.height, 8));
    }
    vec![weights]
}
