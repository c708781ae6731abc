//! Drawing with the mask texture, as a game's renderer would: a render pass
//! whose fragment shader includes `include/murk_fog.wgsl` and samples an
//! instance's mask texture with a filtering sampler. Only the finished
//! picture comes back to the CPU, never a mask.

use crate::backend::GpuBackend;
use crate::error::GpuError;
use crate::shaders::FOG_INCLUDE as INCLUDE;
use murk_core::{InstanceKey, Result, ShaderParams};
use murk_looks::RgbaImage;

const TOP_VIEW: &str = include_str!("../shaders/render/top_view.wgsl");

/// The picture's format: 8-bit sRGB-free RGBA, what PNGs hold.
const TARGET: wgpu::TextureFormat = wgpu::TextureFormat::Rgba8Unorm;

/// The top view as a render pipeline for one colour format: a fullscreen
/// triangle whose fragments sample an instance's mask texture. A page draws
/// it into its canvas; [`GpuBackend::render_top_view`] into a picture.
pub struct TopView {
    pipeline: wgpu::RenderPipeline,
    sampler: wgpu::Sampler,
    uniform: wgpu::Buffer,
}

impl TopView {
    /// Compiles the pipeline on `device` for targets of `format`.
    pub fn new(device: &wgpu::Device, format: wgpu::TextureFormat) -> Self {
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("murk top view"),
            source: wgpu::ShaderSource::Wgsl(format!("{INCLUDE}\n{TOP_VIEW}").into()),
        });
        let pipeline = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: Some("murk top view"),
            layout: None,
            vertex: wgpu::VertexState { module: &module, entry_point: Some("vertex"), compilation_options: Default::default(), buffers: &[] },
            fragment: Some(wgpu::FragmentState {
                module: &module,
                entry_point: Some("fragment"),
                compilation_options: Default::default(),
                targets: &[Some(format.into())],
            }),
            primitive: wgpu::PrimitiveState::default(),
            depth_stencil: None,
            multisample: wgpu::MultisampleState::default(),
            multiview_mask: None,
            cache: None,
        });
        let sampler = device.create_sampler(&wgpu::SamplerDescriptor {
            label: Some("murk mask"),
            mag_filter: wgpu::FilterMode::Linear,
            min_filter: wgpu::FilterMode::Linear,
            ..Default::default()
        });
        let uniform = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("murk fog params"),
            size: size_of::<ShaderParams>() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        Self { pipeline, sampler, uniform }
    }

    /// Records the view of `mask` (an instance's mask texture, with its
    /// [`murk_core::FogSubsystem::shader_params`]) into `target`, the area
    /// filling it, row 0 at the area's local -Y edge.
    pub fn draw(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        encoder: &mut wgpu::CommandEncoder,
        target: &wgpu::TextureView,
        mask: &wgpu::Texture,
        params: &ShaderParams,
    ) {
        queue.write_buffer(&self.uniform, 0, bytemuck::bytes_of(params));
        let view = mask.create_view(&wgpu::TextureViewDescriptor::default());
        let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("murk top view"),
            layout: &self.pipeline.get_bind_group_layout(0),
            entries: &[
                wgpu::BindGroupEntry { binding: 0, resource: wgpu::BindingResource::TextureView(&view) },
                wgpu::BindGroupEntry { binding: 1, resource: wgpu::BindingResource::Sampler(&self.sampler) },
                wgpu::BindGroupEntry { binding: 2, resource: self.uniform.as_entire_binding() },
            ],
        });
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("murk top view"),
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                view: target,
                depth_slice: None,
                resolve_target: None,
                ops: wgpu::Operations { load: wgpu::LoadOp::Clear(wgpu::Color::BLACK), store: wgpu::StoreOp::Store },
            })],
            ..Default::default()
        });
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, &group, &[]);
        pass.draw(0..3, 0..1);
    }
}

impl GpuBackend {
    /// Draws the three-state overlay of an instance (key from
    /// [`murk_core::FogSubsystem::instance_key`], parameters from
    /// [`murk_core::FogSubsystem::shader_params`]) seen from above, its
    /// area filling `width` x `height` pixels, row 0 at the area's local -Y
    /// edge. The mask is read from its texture on the device.
    pub fn render_top_view(&self, key: InstanceKey, params: &ShaderParams, width: u32, height: u32) -> Result<RgbaImage> {
        if width == 0 || height == 0 {
            return Err(murk_core::MurkError::invalid("picture size", format!("{width}x{height}"), "must be at least 1x1"));
        }
        let mask = self.mask_texture(key)?;
        let (device, queue) = self.device();
        let view = TopView::new(&device, TARGET);
        let target = device.create_texture(&wgpu::TextureDescriptor {
            label: Some("murk top view"),
            size: wgpu::Extent3d { width, height, depth_or_array_layers: 1 },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: TARGET,
            usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
            view_formats: &[],
        });
        let target_view = target.create_view(&wgpu::TextureViewDescriptor::default());
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("murk top view") });
        view.draw(&device, &queue, &mut encoder, &target_view, &mask, params);
        // The mask's last blend may still be recorded: submit it first.
        self.lock().flush()?;
        queue.submit([encoder.finish()]);
        let mut gpu = self.lock();
        let pixels = gpu.ctx.read_texture(&target, 4).map_err(GpuError::Picture)?;
        Ok(RgbaImage { width, height, pixels })
    }
}
