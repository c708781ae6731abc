//! Pass 6, blur: X then Y per iteration, ping-ponging through scratch.
//! Twins: `shaders/blur.wgsl`, `backend-cpu/src/passes/blur.rs`.

use crate::context::{groups, Context};
use crate::instance::Instance;
use murk_core::{BlurKernel, Texture};

/// `BlurAxis` of `shaders/blur.wgsl`: which axis a dispatch blurs.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct BlurAxis {
    /// 0: along X into the scratch (unrounded); 1: along Y, rounded once.
    pub along_y: u32,
    /// Padding to 16 bytes.
    pub pad0: u32,
    /// Padding.
    pub pad1: u32,
    /// Padding.
    pub pad2: u32,
}

impl BlurAxis {
    /// The X dispatch.
    pub const X: BlurAxis = BlurAxis { along_y: 0, pad0: 0, pad1: 0, pad2: 0 };
    /// The Y dispatch.
    pub const Y: BlurAxis = BlurAxis { along_y: 1, pad0: 0, pad1: 0, pad2: 0 };
}

/// Records the copy of visibility into the blurred mask and the blur
/// dispatches.
pub(crate) fn record(ctx: &mut Context, enc: &mut wgpu::CommandEncoder, t: &Instance, kernel: &BlurKernel) -> Vec<wgpu::Buffer> {
    let n = u64::from(t.dims.width * t.dims.height) * 4;
    let (visibility, blurred) = (&t.masks[Texture::Visibility], &t.masks[Texture::Blur]);
    enc.copy_buffer_to_buffer(visibility, 0, blurred, 0, n);
    let weights = ctx.upload(bytemuck::cast_slice(&kernel.weights));
    for _ in 0..kernel.iterations {
        let x = ctx.bind(&ctx.shaders.blur, &[&t.params, &t.blur_axes[0], &weights, blurred, &t.scratch]);
        ctx.dispatch(enc, &ctx.shaders.blur, &x, groups(t.dims.width, 8), groups(t.dims.height, 8));
        let y = ctx.bind(&ctx.shaders.blur, &[&t.params, &t.blur_axes[1], &weights, &t.scratch, blurred]);
        ctx.dispatch(enc, &ctx.shaders.blur, &y, groups(t.dims.width, 8), groups(t.dims.height, 8));
    }
    vec![weights]
}
