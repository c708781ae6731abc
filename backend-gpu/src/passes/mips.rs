//! Pass 2, mips: the coverage max pyramid (Hierarchical DDA only).
//! Twins: `shaders/mips.wgsl`, `backend-cpu/src/passes/mips.rs`.

use super::groups;
use crate::context::{Context, Kernel};
use crate::Textures;

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
}

/// Level sizes and offsets in the levels buffer: `(offset, width, height)`,
/// level 0 (coverage) first, up to a 1x1 level.
pub fn layout(width: u32, height: u32) -> Vec<(u32, u32, u32)> {
    let mut out = vec![(0, width, height)];
    let (mut w, mut h, mut offset) = (width, height, width * height);
    while w > 1 || h > 1 {
        w = w.div_ceil(2);
        h = h.div_ceil(2);
        out.push((offset, w, h));
        offset += w * h;
    }
    out
}

/// Records the copy of coverage into level 0 and one dispatch per level.
pub fn record(ctx: &mut Context, enc: &mut wgpu::CommandEncoder, t: &Textures, levels: &wgpu::Buffer, pass_params: &[wgpu::Buffer]) {
    let table = layout(t.dims.width, t.dims.height);
    enc.copy_buffer_to_buffer(&t.coverage, 0, levels, 0, u64::from(t.dims.width * t.dims.height) * 4);
    for (l, pair) in table.windows(2).enumerate() {
        let ((src, sw, sh), (_, dw, dh)) = (pair[0], pair[1]);
        let step = MipStep { source_offset: src, target_offset: pair[1].0, source_width: sw, source_height: sh };
        ctx.queue.write_buffer(&pass_params[l], 0, bytemuck::bytes_of(&step));
        let group = ctx.bind(Kernel::Mips, &[&pass_params[l], levels]);
        ctx.dispatch(enc, Kernel::Mips, &group, groups(dw, 8), groups(dh, 8));
    }
}
