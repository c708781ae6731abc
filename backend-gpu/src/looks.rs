//! The premade fog looks on the GPU ([`murk_looks::Looks`]): the
//! overlay runs the mask through the blur and upscale pipelines of the fog
//! pipeline (integer, so the smoothed mask is exact) and shades it in
//! `shaders/looks/overlay.wgsl`; the surface and the volume are
//! `shaders/looks/surface.wgsl` and `volume.wgsl`, which sample the mask
//! through the engine include's `murk_fog_uv`. Floats: each agrees with the
//! CPU reference within the tolerance in `docs/looks.md`.

use crate::backend::GpuBackend;
use crate::context::{groups, Context};
use crate::passes::blur::BlurAxis;
use murk_core::{FrameParams, Result, ShaderParams};
use murk_looks::{
    half_size, validate_surface, validate_tint, Looks, MaskView, OverlayStyle, RgbaImage, SurfaceGrid, SurfaceParams, VolumeFrame, VolumeParams,
    VolumeScene,
};

/// `OverlayParams` of `shaders/looks/overlay.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct OverlayUniform {
    size: [u32; 4],
    shading: [f32; 8],
    unexplored: [f32; 4],
    haze: [f32; 4],
    mapped: [f32; 4],
}

/// `VolumeParams` of `shaders/looks/volume.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct VolumeUniform {
    vectors: [[f32; 4]; 7],
    medium: [f32; 8],
    sizes: [u32; 6],
    history: u32,
    temporal_blend: f32,
}

/// The mask's texels as a pooled buffer of u32 (one texel per entry).
fn upload_texels(ctx: &mut Context, mask: &MaskView) -> wgpu::Buffer {
    let texels: Vec<u32> = mask.texels.iter().map(|&v| u32::from(v)).collect();
    ctx.upload(bytemuck::cast_slice(&texels))
}

/// `MaskInfo` (size and explored value) and the texels.
fn mask_buffers(ctx: &mut Context, mask: &MaskView) -> (wgpu::Buffer, wgpu::Buffer) {
    let info: [u32; 4] = [mask.width, mask.height, mask.explored.to_bits(), 0];
    (ctx.uniform(bytemuck::cast_slice(&info)), upload_texels(ctx, mask))
}

fn overlay(ctx: &mut Context, mask: &MaskView, tint: Option<&[[u8; 3]]>, time_s: f32, style: &OverlayStyle) -> Result<RgbaImage> {
    mask.validate()?;
    style.validate()?;
    validate_tint(mask, tint)?;
    murk_core::error::finite("overlay time_s", time_s)?;
    let (w, h, s) = (mask.width, mask.height, style.upscale);
    let (ow, oh) = (w * s, h * s);
    let kernel = OverlayStyle::kernel();
    let frame = FrameParams {
        width: w,
        height: h,
        out_width: ow,
        out_height: oh,
        lod_scale: s,
        blur_radius: kernel.radius() as u32,
        ..bytemuck::Zeroable::zeroed()
    };
    let params = ctx.uniform(bytemuck::bytes_of(&frame));
    let (axis_x, axis_y) = (ctx.uniform(bytemuck::bytes_of(&BlurAxis::X)), ctx.uniform(bytemuck::bytes_of(&BlurAxis::Y)));
    let (a, b) = (upload_texels(ctx, mask), ctx.take(u64::from(w * h) * 4));
    let weights = ctx.upload(bytemuck::cast_slice(&kernel.weights));
    let big = ctx.take(u64::from(ow * oh) * 4);
    let tint_words: Vec<u32> = tint.map_or(vec![0], |t| t.iter().map(|c| u32::from(c[0]) | u32::from(c[1]) << 8 | u32::from(c[2]) << 16).collect());
    let tint_buf = ctx.upload(bytemuck::cast_slice(&tint_words));
    let out = ctx.take(u64::from(ow * oh) * 4);
    let shading = [mask.explored, time_s, style.haze_alpha, style.breathing, style.period_s, mask.mapped, style.mapped_alpha, 0.0];
    let uniform = OverlayUniform {
        size: [w, h, s, u32::from(tint.is_some())],
        shading,
        unexplored: [f32::from(style.unexplored[0]), f32::from(style.unexplored[1]), f32::from(style.unexplored[2]), 0.0],
        haze: [f32::from(style.haze[0]), f32::from(style.haze[1]), f32::from(style.haze[2]), 0.0],
        mapped: [f32::from(style.mapped[0]), f32::from(style.mapped[1]), f32::from(style.mapped[2]), 0.0],
    };
    let shade_params = ctx.uniform(bytemuck::bytes_of(&uniform));
    let mut enc = ctx.encoder();
    for _ in 0..kernel.iterations {
        let x = ctx.bind(&ctx.shaders.blur, &[&params, &axis_x, &weights, &a, &b]);
        ctx.dispatch(&mut enc, &ctx.shaders.blur, &x, groups(w, 8), groups(h, 8));
        let y = ctx.bind(&ctx.shaders.blur, &[&params, &axis_y, &weights, &b, &a]);
        ctx.dispatch(&mut enc, &ctx.shaders.blur, &y, groups(w, 8), groups(h, 8));
    }
    let up = ctx.bind(&ctx.shaders.upscale, &[&params, &a, &big]);
    ctx.dispatch(&mut enc, &ctx.shaders.upscale, &up, groups(ow, 8), groups(oh, 8));
    let shade = ctx.bind(&ctx.shaders.overlay, &[&shade_params, &big, &tint_buf, &out]);
    ctx.dispatch(&mut enc, &ctx.shaders.overlay, &shade, groups(ow, 8), groups(oh, 8));
    ctx.submit(enc)?;
    let pixels = ctx.read(&out, 0, u64::from(ow * oh) * 4);
    for buf in [a, b, weights, big, tint_buf, out] {
        ctx.give(buf);
    }
    Ok(RgbaImage { width: ow, height: oh, pixels: pixels? })
}

fn surface(ctx: &mut Context, mask: &MaskView, area: &ShaderParams, ground: &[f32], params: &SurfaceParams) -> Result<SurfaceGrid> {
    validate_surface(mask, ground, params)?;
    let uniform = ctx.uniform(bytemuck::bytes_of(params));
    let area_buf = ctx.uniform(bytemuck::bytes_of(area));
    let (info, texels) = mask_buffers(ctx, mask);
    let ground_buf = ctx.upload(bytemuck::cast_slice(ground));
    let n = ground.len() as u64;
    let out = ctx.take(n * 8);
    let mut enc = ctx.encoder();
    let group = ctx.bind(&ctx.shaders.surface, &[&uniform, &area_buf, &info, &texels, &ground_buf, &out]);
    ctx.dispatch(&mut enc, &ctx.shaders.surface, &group, groups(params.cols, 8), groups(params.rows, 8));
    ctx.submit(enc)?;
    let bytes = ctx.read(&out, 0, n * 8);
    for buf in [texels, ground_buf, out] {
        ctx.give(buf);
    }
    let pairs: Vec<[f32; 2]> = bytemuck::pod_collect_to_vec(&bytes?);
    Ok(SurfaceGrid { cols: params.cols, rows: params.rows, z: pairs.iter().map(|p| p[0]).collect(), drop: pairs.iter().map(|p| p[1]).collect() })
}

fn volume(ctx: &mut Context, mask: &MaskView, area: &ShaderParams, scene: &VolumeScene, v: &VolumeParams) -> Result<(VolumeFrame, VolumeFrame)> {
    mask.validate()?;
    scene.validate()?;
    v.validate()?;
    let cam = scene.camera;
    let [f, r, u] = cam.basis();
    let (hw, hh) = half_size(cam.width, cam.height);
    let v4 = |a: [f32; 3]| [a[0], a[1], a[2], 0.0];
    let uniform = VolumeUniform {
        vectors: [v4(cam.eye), v4(f), v4(r), v4(u), v4(v.light_dir), v4(v.light_colour), v4(v.ambient_colour)],
        medium: [v.density, v.falloff, v.anisotropy, v.range, v.wind[0], v.wind[1], v.noise_frequency, v.time_s],
        sizes: [cam.width, cam.height, hw, hh, v.steps, v.frame],
        history: u32::from(scene.history.is_some()),
        temporal_blend: v.temporal_blend,
    };
    let params = ctx.uniform(bytemuck::bytes_of(&uniform));
    let area_buf = ctx.uniform(bytemuck::bytes_of(area));
    let (info, texels) = mask_buffers(ctx, mask);
    let depth = ctx.upload(bytemuck::cast_slice(scene.depth));
    let history = match scene.history {
        Some(h) => ctx.upload(bytemuck::cast_slice(&h.texels)),
        None => ctx.take(16),
    };
    let (half_n, full_n) = (u64::from(hw * hh), u64::from(cam.width * cam.height));
    let (half, full) = (ctx.take(half_n * 16), ctx.take(full_n * 16));
    let mut enc = ctx.encoder();
    let buffers = [&params, &area_buf, &info, &texels, &depth, &history, &half, &full];
    let march = ctx.bind(&ctx.shaders.volume_march, &buffers);
    ctx.dispatch(&mut enc, &ctx.shaders.volume_march, &march, groups(hw, 8), groups(hh, 8));
    let upsample = ctx.bind(&ctx.shaders.volume_upsample, &buffers);
    ctx.dispatch(&mut enc, &ctx.shaders.volume_upsample, &upsample, groups(cam.width, 8), groups(cam.height, 8));
    ctx.submit(enc)?;
    let (half_bytes, full_bytes) = (ctx.read(&half, 0, half_n * 16), ctx.read(&full, 0, full_n * 16));
    for buf in [texels, depth, history, half, full] {
        ctx.give(buf);
    }
    let frame = |w: u32, h: u32, bytes: Vec<u8>| VolumeFrame { width: w, height: h, texels: bytemuck::pod_collect_to_vec(&bytes) };
    Ok((frame(hw, hh, half_bytes?), frame(cam.width, cam.height, full_bytes?)))
}

impl Looks for GpuBackend {
    fn overlay(&mut self, mask: &MaskView, tint: Option<&[[u8; 3]]>, time_s: f32, style: &OverlayStyle) -> Result<RgbaImage> {
        let mut gpu = self.lock();
        gpu.flush()?;
        overlay(&mut gpu.ctx, mask, tint, time_s, style)
    }
    fn surface(&mut self, mask: &MaskView, area: &ShaderParams, ground: &[f32], params: &SurfaceParams) -> Result<SurfaceGrid> {
        let mut gpu = self.lock();
        gpu.flush()?;
        surface(&mut gpu.ctx, mask, area, ground, params)
    }
    fn volume(&mut self, mask: &MaskView, area: &ShaderParams, scene: &VolumeScene, params: &VolumeParams) -> Result<(VolumeFrame, VolumeFrame)> {
        let mut gpu = self.lock();
        gpu.flush()?;
        volume(&mut gpu.ctx, mask, area, scene, params)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wgpu::naga;

    fn span(module: &str, name: &str) -> usize {
        let src = crate::shaders::wgsl_source(module).unwrap();
        let parsed = naga::front::wgsl::parse_str(&src).unwrap();
        for (_, ty) in parsed.types.iter() {
            if ty.name.as_deref() == Some(name) {
                if let naga::TypeInner::Struct { span, .. } = &ty.inner {
                    return *span as usize;
                }
            }
        }
        panic!("struct {name} not in {module}");
    }

    #[test]
    fn uniforms_have_the_size_of_their_wgsl_structs() {
        assert_eq!(span("overlay", "OverlayParams"), size_of::<OverlayUniform>());
        assert_eq!(span("volume", "VolumeParams"), size_of::<VolumeUniform>());
        assert_eq!(span("volume", "MaskInfo"), 16);
        // The temporal blend weight is the last member in both.
        assert_eq!(std::mem::offset_of!(VolumeUniform, temporal_blend), size_of::<VolumeUniform>() - 4);
    }
}
