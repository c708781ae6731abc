//! The device, the compiled pipelines, the buffer pool, uploads and readbacks.

use murk_core::{MurkError, Result};
use std::collections::BTreeMap;
use wgpu::util::DeviceExt;

/// Every WGSL module is `common.wgsl` followed by the pass's own file (the
/// looks put shared snippets in between).
const COMMON: &str = include_str!("../shaders/common.wgsl");

/// The engine include, prefixed to the looks that sample masks in world space.
const INCLUDE: &str = include_str!("../include/murk_fog.wgsl");
const NOISE: &str = include_str!("../shaders/looks/noise.wgsl");
const MASK: &str = include_str!("../shaders/looks/mask.wgsl");

/// `(module name, WGSL sources after common.wgsl, entry points)` of every
/// compute pipeline: the passes, the sample batch, then the looks.
const MODULES: [(&str, &[&str], &[&str]); 13] = [
    ("rasterize", &[include_str!("../shaders/rasterize.wgsl")], &["main"]),
    ("mips", &[include_str!("../shaders/mips.wgsl")], &["main"]),
    ("distance_field", &[include_str!("../shaders/distance_field.wgsl")], &["coarse_pass", "columns_pass", "rows_pass"]),
    ("visibility", &[include_str!("../shaders/visibility.wgsl")], &["main", "finish"]),
    ("blur", &[include_str!("../shaders/blur.wgsl")], &["main"]),
    ("memory", &[include_str!("../shaders/memory.wgsl")], &["main"]),
    ("compose", &[include_str!("../shaders/compose.wgsl")], &["main"]),
    ("upscale", &[include_str!("../shaders/upscale.wgsl")], &["main"]),
    ("blend", &[include_str!("../shaders/blend.wgsl")], &["main"]),
    ("sample", &[include_str!("../shaders/sample.wgsl")], &["main"]),
    ("overlay", &[NOISE, include_str!("../shaders/looks/overlay.wgsl")], &["shade"]),
    ("surface", &[INCLUDE, NOISE, MASK, include_str!("../shaders/looks/surface.wgsl")], &["main"]),
    ("volume", &[INCLUDE, NOISE, MASK, include_str!("../shaders/looks/volume.wgsl")], &["march", "upsample"]),
];

fn module_text(sources: &[&str]) -> String {
    let mut text = COMMON.to_string();
    for s in sources {
        text.push('\n');
        text.push_str(s);
    }
    text
}

/// The full WGSL text of a pass (for validation in tests).
pub fn wgsl_source(pass: &str) -> Option<String> {
    MODULES.iter().find(|(n, _, _)| *n == pass).map(|(_, sources, _)| module_text(sources))
}

/// Names of the passes with a WGSL module.
pub fn module_names() -> Vec<&'static str> {
    MODULES.iter().map(|(n, _, _)| *n).collect()
}

pub(crate) fn gpu_error(message: impl Into<String>) -> MurkError {
    MurkError::Backend { backend: "gpu".into(), message: message.into() }
}

/// One pipeline layout for all entry points of a module, with every binding
/// the module declares (read from the WGSL with naga), so an entry point
/// that uses fewer bindings still takes the module's bind group.
fn module_layout(device: &wgpu::Device, name: &str, text: &str) -> Result<wgpu::PipelineLayout> {
    use wgpu::naga;
    let module = naga::front::wgsl::parse_str(text).map_err(|e| gpu_error(format!("{name}.wgsl: {}", e.emit_to_string(text))))?;
    let mut entries = Vec::new();
    for (_, var) in module.global_variables.iter() {
        let Some(binding) = &var.binding else { continue };
        let ty = match var.space {
            naga::AddressSpace::Uniform => wgpu::BufferBindingType::Uniform,
            naga::AddressSpace::Storage { access } => wgpu::BufferBindingType::Storage { read_only: !access.contains(naga::StorageAccess::STORE) },
            _ => continue,
        };
        entries.push(wgpu::BindGroupLayoutEntry {
            binding: binding.binding,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer { ty, has_dynamic_offset: false, min_binding_size: None },
            count: None,
        });
    }
    entries.sort_by_key(|e| e.binding);
    let group = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor { label: Some(name), entries: &entries });
    Ok(device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor { label: Some(name), bind_group_layouts: &[Some(&group)], immediate_size: 0 }))
}

/// Device, queue, pipelines and pools.
pub struct Context {
    pub(crate) device: wgpu::Device,
    pub(crate) queue: wgpu::Queue,
    pub(crate) adapter: wgpu::AdapterInfo,
    pipelines: BTreeMap<String, wgpu::ComputePipeline>,
    pool: BTreeMap<u64, Vec<wgpu::Buffer>>,
    pub(crate) allocated: usize,
}

impl Context {
    /// Opens the first adapter wgpu finds (Vulkan), or says why it cannot.
    pub fn new() -> Result<Self> {
        let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
        desc.backends = wgpu::Backends::VULKAN;
        let instance = wgpu::Instance::new(desc);
        let adapter = pollster::block_on(
            instance.request_adapter(&wgpu::RequestAdapterOptions { power_preference: wgpu::PowerPreference::HighPerformance, ..Default::default() }),
        )
        .map_err(|e| gpu_error(format!("no GPU adapter: {e}")))?;
        let info = adapter.get_info();
        let limits = adapter.limits();
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("murk"),
            required_limits: wgpu::Limits {
                max_storage_buffers_per_shader_stage: 10,
                max_storage_buffer_binding_size: limits.max_storage_buffer_binding_size,
                max_buffer_size: limits.max_buffer_size,
                ..wgpu::Limits::downlevel_defaults()
            },
            ..Default::default()
        }))
        .map_err(|e| gpu_error(format!("cannot open {} ({:?}): {e}", info.name, info.backend)))?;
        let mut pipelines = BTreeMap::new();
        for (name, src, entries) in MODULES {
            let text = module_text(src);
            let layout = module_layout(&device, name, &text)?;
            let module =
                device.create_shader_module(wgpu::ShaderModuleDescriptor { label: Some(name), source: wgpu::ShaderSource::Wgsl(text.into()) });
            for entry in entries {
                let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                    label: Some(entry),
                    layout: Some(&layout),
                    module: &module,
                    entry_point: Some(entry),
                    compilation_options: Default::default(),
                    cache: None,
                });
                pipelines.insert(format!("{name}.{entry}"), pipeline);
            }
        }
        Ok(Self { device, queue, adapter: info, pipelines, pool: BTreeMap::new(), allocated: 0 })
    }

    pub(crate) fn pipeline(&self, name: &str) -> &wgpu::ComputePipeline {
        self.pipelines.get(name).unwrap_or_else(|| panic!("pipeline `{name}` is compiled at start-up"))
    }

    /// A storage buffer of at least `bytes` (rounded up to a power of two,
    /// 64 at least, which holds one of any element), from the pool when one is free.
    pub(crate) fn take(&mut self, bytes: u64) -> wgpu::Buffer {
        let size = bytes.max(64).next_power_of_two();
        if let Some(b) = self.pool.get_mut(&size).and_then(Vec::pop) {
            return b;
        }
        self.allocated += 1;
        self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("murk storage"),
            size,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        })
    }

    /// Returns a buffer to the pool.
    pub(crate) fn give(&mut self, b: wgpu::Buffer) {
        self.pool.entry(b.size()).or_default().push(b);
    }

    /// A pooled buffer holding `data` (zero-padded).
    pub(crate) fn upload(&mut self, data: &[u8]) -> wgpu::Buffer {
        let b = self.take(data.len() as u64);
        if !data.is_empty() {
            self.queue.write_buffer(&b, 0, data);
        }
        b
    }

    /// A small uniform buffer.
    pub(crate) fn uniform(&self, data: &[u8]) -> wgpu::Buffer {
        self.device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("murk uniform"),
            contents: data,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
        })
    }

    /// A bind group of `buffers` at bindings 0.. for `pipeline`.
    pub(crate) fn bind(&self, pipeline: &str, buffers: &[&wgpu::Buffer]) -> wgpu::BindGroup {
        let layout = self.pipeline(pipeline).get_bind_group_layout(0);
        let entries: Vec<wgpu::BindGroupEntry> =
            buffers.iter().enumerate().map(|(i, b)| wgpu::BindGroupEntry { binding: i as u32, resource: b.as_entire_binding() }).collect();
        self.device.create_bind_group(&wgpu::BindGroupDescriptor { label: Some(pipeline), layout: &layout, entries: &entries })
    }

    /// Records one dispatch.
    pub(crate) fn dispatch(&self, encoder: &mut wgpu::CommandEncoder, pipeline: &str, group: &wgpu::BindGroup, x: u32, y: u32) {
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some(pipeline), timestamp_writes: None });
        pass.set_pipeline(self.pipeline(pipeline));
        pass.set_bind_group(0, group, &[]);
        pass.dispatch_workgroups(x.max(1), y.max(1), 1);
    }

    pub(crate) fn encoder(&self) -> wgpu::CommandEncoder {
        self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("murk frame") })
    }

    /// Submits and waits.
    pub(crate) fn submit(&self, encoder: wgpu::CommandEncoder) -> Result<()> {
        self.queue.submit([encoder.finish()]);
        self.device.poll(wgpu::PollType::wait_indefinitely()).map_err(|e| gpu_error(format!("device poll: {e}")))?;
        Ok(())
    }

    /// Copies the first `bytes` of `src` back to the CPU (waits).
    pub(crate) fn read(&self, src: &wgpu::Buffer, bytes: u64) -> Result<Vec<u8>> {
        if bytes == 0 {
            return Ok(Vec::new());
        }
        let staging = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("murk readback"),
            size: bytes.next_multiple_of(4),
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut encoder = self.encoder();
        encoder.copy_buffer_to_buffer(src, 0, &staging, 0, bytes.next_multiple_of(4));
        self.queue.submit([encoder.finish()]);
        let (tx, rx) = std::sync::mpsc::channel();
        staging.map_async(wgpu::MapMode::Read, .., move |r| {
            // The receiver waits below; a closed channel only means it gave up.
            let _ = tx.send(r);
        });
        self.device.poll(wgpu::PollType::wait_indefinitely()).map_err(|e| gpu_error(format!("device poll: {e}")))?;
        rx.recv().map_err(|e| gpu_error(format!("readback: {e}")))?.map_err(|e| gpu_error(format!("readback: {e}")))?;
        let view = staging.get_mapped_range(..).map_err(|e| gpu_error(format!("readback: {e:?}")))?;
        let out = view[..bytes as usize].to_vec();
        drop(view);
        staging.unmap();
        Ok(out)
    }

    /// Reads `count` u32 values.
    pub(crate) fn read_u32(&self, src: &wgpu::Buffer, count: usize) -> Result<Vec<u32>> {
        Ok(self.read(src, count as u64 * 4)?.chunks(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
    }
}
