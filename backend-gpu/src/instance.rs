//! One instance on the device: its occlusion ([`OcclusionBuffers`]), its
//! masks (one buffer per mask of the texture table, in [`Masks`]), what the
//! passes share between dispatches, and the mask textures materials
//! sample. Every texel is one `u32` (or `i32`) of a storage buffer from the
//! pool.

use crate::context::{groups, Context};
use crate::kept::KeptOcclusion;
use crate::shaders::MASK_TEXTURE_FORMAT;
use murk_core::{FrameParams, InstanceDims, Masks, OcclusionBuild, RecomputeInput, Texture};
use std::sync::Weak;

/// The buffers of one instance.
pub(crate) struct Instance {
    pub(crate) dims: InstanceDims,
    /// The frame parameters every pass reads, as last uploaded to `params`.
    pub(crate) frame: FrameParams,
    pub(crate) params: wgpu::Buffer,
    /// Coverage, heights, the pyramid and the distance field.
    pub(crate) occlusion: OcclusionBuffers,
    /// Every mask, one texel per `u32`.
    pub(crate) masks: Masks<wgpu::Buffer>,
    /// Between the passes of a recompute: the visibility's painted reveal
    /// and anti-vision, then the blur's first axis.
    pub(crate) scratch: wgpu::Buffer,
    /// Scripted reveals: sight | kept << 16 per texel.
    pub(crate) reveal: wgpu::Buffer,
    /// Scripted reveals: mapped knowledge to add per texel.
    pub(crate) reveal_map: wgpu::Buffer,
    /// Whether the recompute moved memory or the fade (read back).
    pub(crate) flags: wgpu::Buffer,
    /// The blur's `BlurAxis` uniforms: along X, then along Y.
    pub(crate) blur_axes: [wgpu::Buffer; 2],
    /// The final mask for materials, at the output size.
    pub(crate) mask: wgpu::Texture,
    pub(crate) present: wgpu::BindGroup,
    /// On request: blurred visibility, memory and composed at the internal size.
    pub(crate) detail: Option<(wgpu::Texture, wgpu::BindGroup)>,
}

/// The occlusion of one instance.
pub(crate) struct OcclusionBuffers {
    /// 0/1 coverage.
    pub(crate) coverage: wgpu::Buffer,
    /// Heights, in height units.
    pub(crate) height: wgpu::Buffer,
    /// The coverage pyramid: level 0 (coverage) and every level above it,
    /// one after the other ([`mip_layout`]); empty when not built.
    pub(crate) mips: wgpu::Buffer,
    /// `(offset, width, height, 0)` of each level of `mips`.
    pub(crate) mip_table: wgpu::Buffer,
    /// One `MipStep` uniform per level built.
    pub(crate) mip_steps: Vec<wgpu::Buffer>,
    /// Squared distances at the distance-field scale (empty when not built).
    pub(crate) distance_field: wgpu::Buffer,
    /// What the field keeps between builds for a local update.
    pub(crate) field_scratch: Option<FieldScratch>,
    /// The copy a rollback state kept (or a load came from), while nothing
    /// wrote these buffers since: the next state shares it, and a load of
    /// it copies no occlusion. Every writer of the occlusion clears it.
    pub(crate) kept: Option<Weak<KeptOcclusion>>,
}

/// Scratch buffers the distance field keeps between builds (what a local
/// update reads): coarse coverage, column distances, the row envelopes
/// (vertices, boundaries) and the per-row change flags (zero between
/// builds).
pub(crate) type FieldScratch = [wgpu::Buffer; 5];

/// Level sizes and offsets in the pyramid's buffer: `(offset, width,
/// height)`, level 0 (coverage) first, up to a 1x1 level.
pub(crate) fn mip_layout(width: u32, height: u32) -> Vec<(u32, u32, u32)> {
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

/// A 2D texture in the mask format that compute passes write and
/// materials sample (and tests copy back).
fn mask_texture(device: &wgpu::Device, label: &str, width: u32, height: u32) -> wgpu::Texture {
    device.create_texture(&wgpu::TextureDescriptor {
        label: Some(label),
        size: wgpu::Extent3d { width, height, depth_or_array_layers: 1 },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format: MASK_TEXTURE_FORMAT,
        usage: wgpu::TextureUsages::STORAGE_BINDING | wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_SRC,
        view_formats: &[],
    })
}

/// A pooled buffer of `bytes`, cleared by `enc`.
pub(crate) fn zeroed(ctx: &mut Context, enc: &mut wgpu::CommandEncoder, bytes: u64) -> wgpu::Buffer {
    let b = ctx.take(bytes);
    enc.clear_buffer(&b, 0, None);
    b
}

impl Instance {
    /// Every texture zero, recorded into `enc`, with `blur_axes` (the blur
    /// pass's two axis uniforms).
    pub(crate) fn new(ctx: &mut Context, enc: &mut wgpu::CommandEncoder, dims: InstanceDims, blur_axes: [wgpu::Buffer; 2]) -> Self {
        let n = u64::from(dims.width * dims.height) * 4;
        let frame = FrameParams {
            width: dims.width,
            height: dims.height,
            out_width: dims.out_width,
            out_height: dims.out_height,
            lod_scale: dims.out_width / dims.width,
            ..FrameParams::default()
        };
        let masks = Masks::from_fn(|mask| {
            let (w, h) = mask.size(dims, OcclusionBuild::default()).expect("a mask has a size");
            zeroed(ctx, enc, u64::from(w * h) * 4)
        });
        let params = ctx.uniform(bytemuck::bytes_of(&frame));
        let mask = mask_texture(&ctx.device, "murk mask", dims.out_width, dims.out_height);
        let view = mask.create_view(&wgpu::TextureViewDescriptor::default());
        let present = ctx.bind_resources(
            &ctx.shaders.present,
            &[params.as_entire_binding(), masks[Texture::Final].as_entire_binding(), wgpu::BindingResource::TextureView(&view)],
        );
        let occlusion = OcclusionBuffers {
            coverage: zeroed(ctx, enc, n),
            height: zeroed(ctx, enc, n),
            mips: zeroed(ctx, enc, 16),
            mip_table: zeroed(ctx, enc, 16),
            mip_steps: Vec::new(),
            distance_field: zeroed(ctx, enc, 16),
            field_scratch: None,
            kept: None,
        };
        Self {
            dims,
            frame,
            params,
            occlusion,
            masks,
            scratch: zeroed(ctx, enc, n),
            reveal: zeroed(ctx, enc, n),
            reveal_map: zeroed(ctx, enc, n),
            flags: zeroed(ctx, enc, 16),
            blur_axes,
            mask,
            present,
            detail: None,
        }
    }

    /// Texels of the internal grid.
    pub(crate) fn texels(&self) -> u64 {
        u64::from(self.dims.width * self.dims.height)
    }

    /// Texels of the output grid.
    pub(crate) fn out_texels(&self) -> u64 {
        u64::from(self.dims.out_width * self.dims.out_height)
    }

    /// Takes a recompute's settings into the frame parameters (uploaded by
    /// the caller).
    pub(crate) fn set_recompute(&mut self, input: &RecomputeInput) {
        let f = &mut self.frame;
        f.tile_size = input.bins.tile_size;
        f.tiles_x = input.bins.tiles_x;
        f.method = input.method.code();
        f.target_height = input.target_height;
        f.df_scale = input.df_scale;
        f.soft_shadow_k_q8 = input.soft_shadow_k_q8;
        f.df_jitter = u32::from(input.df_jitter);
        f.blur_radius = input.blur.radius() as u32;
        f.forget_step = input.forget_step;
        f.freeze_memory = u32::from(input.freeze_memory);
        f.fade_in_step = input.fade_in_step;
        f.relax_step = input.relax_step;
        f.explored_value = u32::from(input.explored_value);
        f.mapped_value = u32::from(input.mapped_value);
        f.show_memory_alpha = u32::from(input.show_memory_alpha);
        f.reveal_walls = u32::from(input.reveal_walls);
    }

    /// Uploads the frame parameters.
    pub(crate) fn upload_frame(&self, ctx: &Context) {
        ctx.queue.write_buffer(&self.params, 0, bytemuck::bytes_of(&self.frame));
    }

    /// Records the presentation of the final mask into its texture.
    pub(crate) fn present(&self, ctx: &Context, enc: &mut wgpu::CommandEncoder) {
        ctx.dispatch(enc, &ctx.shaders.present, &self.present, groups(self.dims.out_width, 8), groups(self.dims.out_height, 8));
    }

    /// Starts or stops writing the detail texture in each recompute.
    pub(crate) fn set_detail(&mut self, ctx: &Context, on: bool) {
        if !on {
            self.detail = None;
        } else if self.detail.is_none() {
            let texture = mask_texture(&ctx.device, "murk detail", self.dims.width, self.dims.height);
            let view = texture.create_view(&wgpu::TextureViewDescriptor::default());
            let group = ctx.bind_resources(
                &ctx.shaders.present_detail,
                &[
                    self.params.as_entire_binding(),
                    self.masks[Texture::Blur].as_entire_binding(),
                    self.masks[Texture::Memory].as_entire_binding(),
                    self.masks[Texture::Compose].as_entire_binding(),
                    wgpu::BindingResource::TextureView(&view),
                ],
            );
            self.detail = Some((texture, group));
        }
    }

    /// Forgets the distance field's scratch: the field was replaced by other
    /// means than a build (a copy, a load), so the next update builds it whole.
    pub(crate) fn forget_field_scratch(&mut self, ctx: &mut Context) {
        for b in self.occlusion.field_scratch.take().into_iter().flatten() {
            ctx.give(b);
        }
    }

    /// The pooled storage buffers, for returning them.
    pub(crate) fn storage(self) -> Vec<wgpu::Buffer> {
        let o = self.occlusion;
        let mut v = vec![o.coverage, o.height, o.mips, o.mip_table, o.distance_field, self.scratch, self.reveal, self.reveal_map, self.flags];
        v.extend(self.masks.into_iter().map(|(_, b)| b));
        v.extend(o.field_scratch.into_iter().flatten());
        v
    }
}
