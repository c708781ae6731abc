//! The state hash on the device (`shaders/hash.wgsl`): the leaves of a
//! texture in parallel, then its root, for each texture asked for, into one
//! small buffer that is read back with the submission. Core defines the
//! hash (`murk_core::hash`); the CPU computes the same values.

use crate::context::{groups, Context};

/// `HashParams` of `shaders/hash.wgsl`: one texture to hash.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct HashParams {
    /// Leaves in the texture.
    pub leaves: u32,
    /// Its width.
    pub width: u32,
    /// Its height.
    pub height: u32,
    /// Where its root goes in the roots buffer.
    pub slot: u32,
}

/// A texture buffer holding one 16-bit texel per `u32`, and its size.
pub struct Source<'a> {
    /// The texels.
    pub buffer: &'a wgpu::Buffer,
    /// Width.
    pub width: u32,
    /// Height.
    pub height: u32,
}

/// Records the hash of every source into `roots` (one `vec2<u32>` each, in
/// order); returns the buffers to recycle once the work is submitted.
pub(crate) fn record(ctx: &mut Context, enc: &mut wgpu::CommandEncoder, sources: &[Source], roots: &wgpu::Buffer) -> Vec<wgpu::Buffer> {
    let leaf_count = |s: &Source| (murk_core::hash::leaves_across(s.width) as u32) * s.height.div_ceil(murk_core::hash::LEAF_SIDE);
    let most = sources.iter().map(leaf_count).max().unwrap_or(0);
    let leaves = ctx.take(u64::from(most.max(1)) * 8);
    for (slot, s) in sources.iter().enumerate() {
        let params = ctx.uniform(bytemuck::bytes_of(&HashParams { leaves: leaf_count(s), width: s.width, height: s.height, slot: slot as u32 }));
        let buffers = [&params, s.buffer, &leaves, roots];
        let g = ctx.bind(&ctx.shaders.hash_leaf, &buffers);
        ctx.dispatch(enc, &ctx.shaders.hash_leaf, &g, groups(leaf_count(s), 64), 1);
        let g = ctx.bind(&ctx.shaders.hash_root, &buffers);
        ctx.dispatch(enc, &ctx.shaders.hash_root, &g, 1, 1);
    }
    vec![leaves]
}
