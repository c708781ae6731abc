//! The device, the compiled pipelines, the buffer pool, uploads and readbacks.

use crate::error::GpuError;
use murk_core::{MurkError, PassTiming, Result};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;
use wgpu::util::DeviceExt;

const PENDING: u8 = 0;
const LANDED: u8 = 1;
const FAILED: u8 = 2;

/// A readback on its way to the CPU: a staging buffer that a submitted copy
/// fills, mapped once the copy is on the queue.
pub(crate) struct InFlight {
    staging: wgpu::Buffer,
    bytes: u64,
    state: Arc<AtomicU8>,
}

impl InFlight {
    /// A readback of the first `bytes` of `staging` (not mapped yet).
    pub(crate) fn new(staging: wgpu::Buffer, bytes: u64) -> Self {
        Self { staging, bytes, state: Arc::new(AtomicU8::new(PENDING)) }
    }

    /// Whether the mapping has landed (or failed): collecting it then never
    /// waits.
    pub(crate) fn landed(&self) -> bool {
        self.state.load(Ordering::Acquire) != PENDING
    }

    /// Asks for the mapping; call after the copy into the staging buffer
    /// was submitted (a buffer waiting to be mapped cannot be used by a
    /// later submission).
    pub(crate) fn map(&self) {
        let state = self.state.clone();
        self.staging.map_async(wgpu::MapMode::Read, .., move |r| state.store(if r.is_ok() { LANDED } else { FAILED }, Ordering::Release));
    }
}

/// Every WGSL module is `common.wgsl` followed by the pass's own file (the
/// looks put shared snippets in between).
const COMMON: &str = include_str!("../shaders/common.wgsl");

/// The engine include, prefixed to the looks that sample masks in world space.
use crate::FOG_INCLUDE as INCLUDE;
const NOISE: &str = include_str!("../shaders/looks/noise.wgsl");
const MASK: &str = include_str!("../shaders/looks/mask.wgsl");

/// `(module name, WGSL sources after common.wgsl)` of every compute
/// module: the passes, the sample batch, then the looks.
const MODULES: [(&str, &[&str]); 16] = [
    ("rasterize", &[include_str!("../shaders/rasterize.wgsl")]),
    ("mips", &[include_str!("../shaders/mips.wgsl")]),
    ("distance_field", &[include_str!("../shaders/distance_field.wgsl")]),
    ("visibility", &[include_str!("../shaders/visibility.wgsl")]),
    ("blur", &[include_str!("../shaders/blur.wgsl")]),
    ("memory", &[include_str!("../shaders/memory.wgsl")]),
    ("compose", &[include_str!("../shaders/compose.wgsl")]),
    ("upscale", &[include_str!("../shaders/upscale.wgsl")]),
    ("blend", &[include_str!("../shaders/blend.wgsl")]),
    ("sample", &[include_str!("../shaders/sample.wgsl")]),
    ("hash", &[include_str!("../shaders/hash.wgsl")]),
    ("present", &[include_str!("../shaders/present.wgsl")]),
    ("present_detail", &[include_str!("../shaders/present_detail.wgsl")]),
    ("overlay", &[NOISE, include_str!("../shaders/looks/overlay.wgsl")]),
    ("surface", &[INCLUDE, NOISE, MASK, include_str!("../shaders/looks/surface.wgsl")]),
    ("volume", &[INCLUDE, NOISE, MASK, include_str!("../shaders/looks/volume.wgsl")]),
];

/// A compute entry point. Every kernel is compiled when the context opens,
/// so a kernel named in code always has its pipeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kernel {
    /// Pass 1: blockers and captures into coverage and heights.
    Rasterize,
    /// Pass 2: one level of the coverage pyramid.
    Mips,
    /// Pass 3: coarse coverage at the distance-field scale.
    DistanceFieldCoarse,
    /// Pass 3: the column sweep.
    DistanceFieldColumns,
    /// Pass 3: the row sweep.
    DistanceFieldRows,
    /// Pass 4: sources painted and marched.
    Visibility,
    /// Pass 4: reveal and anti-vision applied.
    VisibilityFinish,
    /// Pass 5: one axis of the separable blur (the overlay look's too).
    Blur,
    /// Pass 6: explored memory.
    Memory,
    /// Pass 7: the composed mask.
    Compose,
    /// Pass 8: the composed mask at output resolution.
    Upscale,
    /// Pass 9: the blend towards the upscaled mask.
    Blend,
    /// Final-mask texels for a sample batch.
    Sample,
    /// The state hash: one leaf of 256 texels per invocation.
    HashLeaf,
    /// The state hash: the root fold over the leaves.
    HashRoot,
    /// The final mask into the texture materials sample.
    Present,
    /// The internal masks into the detail texture.
    PresentDetail,
    /// The overlay look's shading.
    Overlay,
    /// The surface look.
    Surface,
    /// The volume look's half-resolution march.
    VolumeMarch,
    /// The volume look's upsample to full resolution.
    VolumeUpsample,
}

impl Kernel {
    /// Every kernel, in declaration order (its index is `kernel as usize`).
    const ALL: [Kernel; 21] = [
        Kernel::Rasterize,
        Kernel::Mips,
        Kernel::DistanceFieldCoarse,
        Kernel::DistanceFieldColumns,
        Kernel::DistanceFieldRows,
        Kernel::Visibility,
        Kernel::VisibilityFinish,
        Kernel::Blur,
        Kernel::Memory,
        Kernel::Compose,
        Kernel::Upscale,
        Kernel::Blend,
        Kernel::Sample,
        Kernel::HashLeaf,
        Kernel::HashRoot,
        Kernel::Present,
        Kernel::PresentDetail,
        Kernel::Overlay,
        Kernel::Surface,
        Kernel::VolumeMarch,
        Kernel::VolumeUpsample,
    ];

    /// The WGSL module and entry point.
    fn entry(self) -> (&'static str, &'static str) {
        match self {
            Kernel::Rasterize => ("rasterize", "main"),
            Kernel::Mips => ("mips", "main"),
            Kernel::DistanceFieldCoarse => ("distance_field", "coarse_pass"),
            Kernel::DistanceFieldColumns => ("distance_field", "columns_pass"),
            Kernel::DistanceFieldRows => ("distance_field", "rows_pass"),
            Kernel::Visibility => ("visibility", "main"),
            Kernel::VisibilityFinish => ("visibility", "finish"),
            Kernel::Blur => ("blur", "main"),
            Kernel::Memory => ("memory", "main"),
            Kernel::Compose => ("compose", "main"),
            Kernel::Upscale => ("upscale", "main"),
            Kernel::Blend => ("blend", "main"),
            Kernel::Sample => ("sample", "main"),
            Kernel::HashLeaf => ("hash", "leaf"),
            Kernel::HashRoot => ("hash", "root"),
            Kernel::Present => ("present", "main"),
            Kernel::PresentDetail => ("present_detail", "main"),
            Kernel::Overlay => ("overlay", "shade"),
            Kernel::Surface => ("surface", "main"),
            Kernel::VolumeMarch => ("volume", "march"),
            Kernel::VolumeUpsample => ("volume", "upsample"),
        }
    }

    /// The pass it belongs to, as timings and labels name it.
    pub(crate) fn pass(self) -> &'static str {
        self.entry().0
    }
}

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
    MODULES.iter().find(|(n, _)| *n == pass).map(|(_, sources)| module_text(sources))
}

/// Names of the passes with a WGSL module.
pub fn module_names() -> Vec<&'static str> {
    MODULES.iter().map(|(n, _)| *n).collect()
}

/// The typed error of a key no instance has.
pub(crate) fn unknown_key(key: murk_core::backend::InstanceKey) -> MurkError {
    MurkError::UnknownKey { backend: "gpu".into(), key }
}

/// The environment variable that picks the wgpu backends murk's own device
/// may open (`vulkan`, `metal`, `dx12`, `gl`, comma-separated).
pub const BACKEND_VAR: &str = "MURK_WGPU_BACKEND";

/// The format of the mask textures materials sample: 16-bit floats are
/// filterable and writable from compute shaders on every adapter wgpu
/// supports (16-bit unorm is neither without optional features).
pub const MASK_TEXTURE_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rgba16Float;

/// The limits murk's pipelines need beyond WebGPU's downlevel defaults:
/// ten storage buffers in one compute stage, and buffers as large as the
/// adapter allows (checked per instance when it is created).
pub fn required_limits(adapter: &wgpu::Limits) -> wgpu::Limits {
    wgpu::Limits {
        max_storage_buffers_per_shader_stage: 10,
        max_storage_buffer_binding_size: adapter.max_storage_buffer_binding_size,
        max_buffer_size: adapter.max_buffer_size,
        max_texture_dimension_2d: adapter.max_texture_dimension_2d,
        ..wgpu::Limits::downlevel_defaults()
    }
}

/// The limits to open a device with on an adapter that has `have`
/// ([`required_limits`]), or an error naming each limit of the adapter
/// below what murk needs (in a browser, WebGPU's defaults give 8 storage
/// buffers per stage where murk needs 10: ask the adapter for its own).
pub fn limits_for(have: &wgpu::Limits, adapter: &wgpu::AdapterInfo) -> Result<wgpu::Limits> {
    // Buffer and texture sizes are checked per instance, against what the device has.
    let need = required_limits(&wgpu::Limits { max_texture_dimension_2d: 0, ..have.clone() });
    let mut short = Vec::new();
    need.check_limits_with_fail_fn(have, false, |name, wanted, got| short.push(format!("{name} is {got}, murk needs {wanted}")));
    if !short.is_empty() {
        return Err(MurkError::DeviceTooWeak { adapter: format!("{} ({:?})", adapter.name, adapter.backend), missing: short.join("; ") });
    }
    Ok(required_limits(have))
}

/// The wgpu backends to try for murk's own device: those named by
/// [`BACKEND_VAR`], else Vulkan, Metal and DX12 first and GL when none of
/// those has an adapter.
fn backends_to_try() -> Result<Vec<wgpu::Backends>> {
    match std::env::var(BACKEND_VAR) {
        Ok(list) => {
            let chosen = wgpu::Backends::from_comma_list(&list);
            if chosen.is_empty() {
                return Err(MurkError::invalid(BACKEND_VAR, &list, "names no wgpu backend (vulkan, metal, dx12, gl)"));
            }
            Ok(vec![chosen])
        }
        Err(_) => Ok(vec![wgpu::Backends::PRIMARY, wgpu::Backends::SECONDARY]),
    }
}

/// One pipeline layout for all entry points of a module, with every binding
/// the module declares (read from the WGSL with naga), so an entry point
/// that uses fewer bindings still takes the module's bind group.
fn module_layout(device: &wgpu::Device, name: &str, text: &str) -> Result<wgpu::PipelineLayout> {
    let module = naga::front::wgsl::parse_str(text).map_err(|e| GpuError::Shader { module: name.into(), report: e.emit_to_string(text) })?;
    let mut entries = Vec::new();
    for (_, var) in module.global_variables.iter() {
        let Some(binding) = &var.binding else { continue };
        let buffer = |ty| wgpu::BindingType::Buffer { ty, has_dynamic_offset: false, min_binding_size: None };
        let ty = match var.space {
            naga::AddressSpace::Uniform => buffer(wgpu::BufferBindingType::Uniform),
            naga::AddressSpace::Storage { access } => {
                buffer(wgpu::BufferBindingType::Storage { read_only: !access.contains(naga::StorageAccess::STORE) })
            }
            // The presentation passes write the mask textures.
            naga::AddressSpace::Handle
                if matches!(module.types[var.ty].inner, naga::TypeInner::Image { class: naga::ImageClass::Storage { .. }, .. }) =>
            {
                wgpu::BindingType::StorageTexture {
                    access: wgpu::StorageTextureAccess::WriteOnly,
                    format: MASK_TEXTURE_FORMAT,
                    view_dimension: wgpu::TextureViewDimension::D2,
                }
            }
            _ => continue,
        };
        entries.push(wgpu::BindGroupLayoutEntry { binding: binding.binding, visibility: wgpu::ShaderStages::COMPUTE, ty, count: None });
    }
    entries.sort_by_key(|e| e.binding);
    let group = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor { label: Some(name), entries: &entries });
    Ok(device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor { label: Some(name), bind_group_layouts: &[Some(&group)], immediate_size: 0 }))
}

/// How a readback is collected, and what [`Context::waits`] counts.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Wait {
    /// Return `None` while it is in flight.
    No,
    /// Block only if it has not landed (a tick whose flag or sample fell
    /// due): counted only when it had to block, so a device that keeps up
    /// costs a tick no waits.
    IfPending,
    /// The caller asked for results now (masks, hashes, snapshots): a sync
    /// point, counted every time, whether or not the device had finished.
    Sync,
}

/// Device, queue, pipelines and pools.
pub struct Context {
    pub(crate) device: wgpu::Device,
    pub(crate) queue: wgpu::Queue,
    pub(crate) adapter: wgpu::AdapterInfo,
    /// One per kernel, at `kernel as usize`.
    pipelines: Vec<wgpu::ComputePipeline>,
    pool: BTreeMap<u64, Vec<wgpu::Buffer>>,
    pub(crate) allocated: usize,
    /// Sync points with the device: see [`Wait`].
    pub(crate) waits: u64,
    /// Times a call blocked until the device was idle (the sync points
    /// that found a readback still in flight, and the explicit waits).
    pub(crate) blocked: u64,
    /// Compute dispatches recorded so far.
    pub(crate) dispatches: std::sync::atomic::AtomicU64,
    /// Pass timestamps, once asked for (needs `TIMESTAMP_QUERY`).
    timing: std::sync::Mutex<Option<Timing>>,
    /// Reads being rehearsed: see [`Context::begin_rehearsal`].
    rehearsal: Option<Rehearsal>,
    /// Copies made by the last rehearsal, served to the reads that match
    /// them until new work is recorded ([`Context::forget_staged`]).
    staged: Vec<Staged>,
}

/// Reads recorded instead of made: one copy each into a staging buffer.
struct Rehearsal {
    encoder: wgpu::CommandEncoder,
    staged: Vec<Staged>,
}

/// A copy of a buffer's first bytes on its way to the CPU.
struct Staged {
    source: wgpu::Buffer,
    bytes: u64,
    readback: InFlight,
}

/// Timestamp queries around each dispatch of a submission, resolved with it.
struct Timing {
    set: wgpu::QuerySet,
    /// Labels of the dispatches recorded since the last submission (each
    /// owns queries `2i` and `2i + 1`).
    recorded: Vec<String>,
    /// Dispatches recorded after the set was full (not timed).
    untimed: u64,
    /// Submitted readbacks of resolved timestamps, with their labels.
    in_flight: Vec<(InFlight, Vec<String>)>,
    /// Nanoseconds per timestamp tick.
    period_ns: f64,
}

/// Dispatches timed in one submission at most.
const TIMED_PER_SUBMISSION: u32 = 256;

impl Context {
    /// Opens murk's own device on the first adapter of the backends allowed
    /// (see [`BACKEND_VAR`]), or says why it cannot. With `hardware`, an
    /// adapter that runs on the CPU (`DeviceType::Cpu`: lavapipe,
    /// llvmpipe, SwiftShader, WARP) is passed over.
    pub fn open(hardware: bool) -> Result<Self> {
        let mut last_error = String::from("no wgpu backend was tried");
        let mut software = Vec::new();
        for backends in backends_to_try()? {
            let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
            desc.backends = backends;
            let instance = wgpu::Instance::new(desc);
            let options = wgpu::RequestAdapterOptions { power_preference: wgpu::PowerPreference::HighPerformance, ..Default::default() };
            let adapter = match pollster::block_on(instance.request_adapter(&options)) {
                Ok(a) => a,
                Err(e) => {
                    last_error = format!("none among {backends:?}: {e}");
                    continue;
                }
            };
            let info = adapter.get_info();
            if hardware && info.device_type == wgpu::DeviceType::Cpu {
                software.push(format!("{} ({:?})", info.name, info.backend));
                last_error = format!("only software adapters, which run on the CPU: {}", software.join(", "));
                continue;
            }
            let features = adapter.features() & wgpu::Features::TIMESTAMP_QUERY;
            let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
                label: Some("murk"),
                required_limits: required_limits(&adapter.limits()),
                required_features: features,
                ..Default::default()
            }))
            .map_err(|source| GpuError::Device { adapter: format!("{} ({:?})", info.name, info.backend), source })?;
            return Self::on_device(device, queue, info);
        }
        Err(MurkError::NoAdapter(last_error))
    }

    /// Uses a device the host opened: checks that its limits hold what the
    /// pipelines need (naming each one that falls short), then compiles the
    /// pipelines on it.
    pub fn on_device(device: wgpu::Device, queue: wgpu::Queue, adapter: wgpu::AdapterInfo) -> Result<Self> {
        limits_for(&device.limits(), &adapter)?;
        let mut modules = BTreeMap::new();
        for (name, src) in MODULES {
            let text = module_text(src);
            let layout = module_layout(&device, name, &text)?;
            let module =
                device.create_shader_module(wgpu::ShaderModuleDescriptor { label: Some(name), source: wgpu::ShaderSource::Wgsl(text.into()) });
            modules.insert(name, (module, layout));
        }
        let mut pipelines = Vec::with_capacity(Kernel::ALL.len());
        for kernel in Kernel::ALL {
            let (name, entry) = kernel.entry();
            let (module, layout) = modules.get(name).ok_or_else(|| GpuError::Pipeline { kernel: format!("{kernel:?}"), module: (*name).into() })?;
            pipelines.push(device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(entry),
                layout: Some(layout),
                module,
                entry_point: Some(entry),
                compilation_options: Default::default(),
                cache: None,
            }));
        }
        Ok(Self {
            device,
            queue,
            adapter,
            pipelines,
            pool: BTreeMap::new(),
            allocated: 0,
            waits: 0,
            blocked: 0,
            dispatches: Default::default(),
            timing: Default::default(),
            rehearsal: None,
            staged: Vec::new(),
        })
    }

    /// Starts timing every dispatch with timestamp queries; an error names
    /// the feature when the device was opened without it.
    pub(crate) fn enable_timings(&mut self) -> Result<()> {
        if !self.device.features().contains(wgpu::Features::TIMESTAMP_QUERY) {
            return Err(MurkError::DeviceTooWeak {
                adapter: format!("{} ({:?})", self.adapter.name, self.adapter.backend),
                missing: "the TIMESTAMP_QUERY feature, which pass timings need".into(),
            });
        }
        let mut timing = self.timing.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if timing.is_none() {
            let set = self.device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("murk pass timestamps"),
                ty: wgpu::QueryType::Timestamp,
                count: 2 * TIMED_PER_SUBMISSION,
            });
            let period_ns = f64::from(self.queue.get_timestamp_period());
            *timing = Some(Timing { set, recorded: Vec::new(), untimed: 0, in_flight: Vec::new(), period_ns });
        }
        Ok(())
    }

    /// Device time per pass since timings were enabled or last taken (and a
    /// row counting the dispatches a full query set left untimed); waits for
    /// the work in flight.
    pub(crate) fn take_timings(&mut self) -> Result<Vec<PassTiming>> {
        let Some((in_flight, period_ns, untimed)) = self
            .timing
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .as_mut()
            .map(|t| (std::mem::take(&mut t.in_flight), t.period_ns, std::mem::take(&mut t.untimed)))
        else {
            return Ok(Vec::new());
        };
        let mut totals: BTreeMap<String, (u64, f64)> = BTreeMap::new();
        for (readback, labels) in in_flight {
            let bytes = self.collect(&readback, Wait::IfPending)?.ok_or(GpuError::ReadbackLost("a waited-for timestamp readback did not land"))?;
            let stamps: Vec<u64> = bytes.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes"))).collect();
            for (i, label) in labels.into_iter().enumerate() {
                let ticks = stamps[2 * i + 1].saturating_sub(stamps[2 * i]);
                let entry = totals.entry(label).or_default();
                entry.0 += 1;
                entry.1 += ticks as f64 * period_ns;
            }
        }
        let mut out: Vec<PassTiming> =
            totals.into_iter().map(|(pass, (dispatches, nanos))| PassTiming { pass, dispatches, nanos, untimed: 0 }).collect();
        if untimed > 0 {
            out.push(PassTiming { pass: "(untimed)".into(), dispatches: 0, nanos: 0.0, untimed });
        }
        Ok(out)
    }

    fn pipeline(&self, kernel: Kernel) -> &wgpu::ComputePipeline {
        &self.pipelines[kernel as usize]
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

    /// A bind group of `buffers` at bindings 0.. for `kernel`.
    pub(crate) fn bind(&self, kernel: Kernel, buffers: &[&wgpu::Buffer]) -> wgpu::BindGroup {
        let layout = self.pipeline(kernel).get_bind_group_layout(0);
        let entries: Vec<wgpu::BindGroupEntry> =
            buffers.iter().enumerate().map(|(i, b)| wgpu::BindGroupEntry { binding: i as u32, resource: b.as_entire_binding() }).collect();
        self.device.create_bind_group(&wgpu::BindGroupDescriptor { label: Some(kernel.pass()), layout: &layout, entries: &entries })
    }

    /// A bind group of `resources` at bindings 0.. for `kernel`.
    pub(crate) fn bind_resources(&self, kernel: Kernel, resources: &[wgpu::BindingResource]) -> wgpu::BindGroup {
        let layout = self.pipeline(kernel).get_bind_group_layout(0);
        let entries: Vec<wgpu::BindGroupEntry> =
            resources.iter().enumerate().map(|(i, r)| wgpu::BindGroupEntry { binding: i as u32, resource: r.clone() }).collect();
        self.device.create_bind_group(&wgpu::BindGroupDescriptor { label: Some(kernel.pass()), layout: &layout, entries: &entries })
    }

    /// Records one dispatch.
    pub(crate) fn dispatch(&self, encoder: &mut wgpu::CommandEncoder, kernel: Kernel, group: &wgpu::BindGroup, x: u32, y: u32) {
        let mut timing = self.timing.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let writes = match timing.as_mut() {
            Some(t) if t.recorded.len() < TIMED_PER_SUBMISSION as usize => {
                let first = 2 * t.recorded.len() as u32;
                t.recorded.push(kernel.pass().to_string());
                Some(wgpu::ComputePassTimestampWrites {
                    query_set: &t.set,
                    beginning_of_pass_write_index: Some(first),
                    end_of_pass_write_index: Some(first + 1),
                })
            }
            Some(t) => {
                t.untimed += 1;
                None
            }
            None => None,
        };
        self.dispatches.fetch_add(1, Ordering::Relaxed);
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some(kernel.pass()), timestamp_writes: writes });
        pass.set_pipeline(self.pipeline(kernel));
        pass.set_bind_group(0, group, &[]);
        pass.dispatch_workgroups(x.max(1), y.max(1), 1);
    }

    pub(crate) fn encoder(&self) -> wgpu::CommandEncoder {
        self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("murk frame") })
    }

    /// Submits without waiting: the queue runs submissions in order, so
    /// later uploads and passes see this one's results.
    ///
    /// With timings on, the timestamps of the dispatches recorded since the
    /// last submission are resolved at its end and read back later (only
    /// one encoder with dispatches is open at a time, so they are its own).
    pub(crate) fn submit(&self, encoder: wgpu::CommandEncoder) -> Result<()> {
        let mut encoder = encoder;
        let mut timing = self.timing.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let resolved = match timing.as_mut().filter(|t| !t.recorded.is_empty()) {
            Some(t) => {
                let bytes = 16 * t.recorded.len() as u64;
                let target = self.device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("murk timestamps"),
                    size: bytes,
                    usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                    mapped_at_creation: false,
                });
                encoder.resolve_query_set(&t.set, 0..2 * t.recorded.len() as u32, &target, 0);
                let readback = InFlight::new(self.staging(&mut encoder, &target, bytes), bytes);
                Some((readback, std::mem::take(&mut t.recorded)))
            }
            None => None,
        };
        self.queue.submit([encoder.finish()]);
        if let (Some((readback, labels)), Some(t)) = (resolved, timing.as_mut()) {
            readback.map();
            t.in_flight.push((readback, labels));
        }
        Ok(())
    }

    /// Lets finished work call its callbacks; blocks until the queue is idle
    /// when `wait` (counted in [`Context::waits`]).
    pub(crate) fn poll(&mut self, wait: bool) -> Result<()> {
        let poll = if wait {
            self.waits += 1;
            self.blocked += 1;
            wgpu::PollType::wait_indefinitely()
        } else {
            wgpu::PollType::Poll
        };
        self.device.poll(poll).map(|_| ()).map_err(|e| GpuError::Poll(e).into())
    }

    /// A mappable buffer of `bytes` that `src`'s first bytes are copied into
    /// by `encoder` (map it after the encoder is submitted).
    pub(crate) fn staging(&self, encoder: &mut wgpu::CommandEncoder, src: &wgpu::Buffer, bytes: u64) -> wgpu::Buffer {
        let size = bytes.next_multiple_of(4).max(4);
        let staging = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("murk readback"),
            size,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        encoder.copy_buffer_to_buffer(src, 0, &staging, 0, size);
        staging
    }

    /// From now on reads are recorded, not made: each returns zeros and
    /// copies its source into a staging buffer, and
    /// [`Context::end_rehearsal`] submits the copies. A host that cannot
    /// block (a browser) runs a reading call (a snapshot) once this way,
    /// lets the copies land while it yields, and runs it again: every read
    /// then finds its bytes landed and nothing waits.
    pub(crate) fn begin_rehearsal(&mut self) {
        self.rehearsal = Some(Rehearsal { encoder: self.encoder(), staged: Vec::new() });
    }

    /// Submits the copies the rehearsal recorded and asks for their mappings.
    pub(crate) fn end_rehearsal(&mut self) -> Result<()> {
        let Some(Rehearsal { encoder, staged }) = self.rehearsal.take() else { return Ok(()) };
        self.submit(encoder)?;
        for s in &staged {
            s.readback.map();
        }
        self.staged = staged;
        Ok(())
    }

    /// Drops the staged copies: work recorded since may have changed their
    /// sources.
    pub(crate) fn forget_staged(&mut self) {
        self.staged.clear();
    }

    /// Whether every staged copy has landed.
    pub(crate) fn staged_landed(&self) -> bool {
        self.staged.iter().all(|s| s.readback.landed())
    }

    /// Copies the first `bytes` of `src` back to the CPU: from a landed
    /// staged copy of it if there is one, else submitted and waited for.
    pub(crate) fn read(&mut self, src: &wgpu::Buffer, bytes: u64) -> Result<Vec<u8>> {
        if bytes == 0 {
            return Ok(Vec::new());
        }
        if let Some(mut rehearsal) = self.rehearsal.take() {
            let copy = self.staging(&mut rehearsal.encoder, src, bytes);
            rehearsal.staged.push(Staged { source: src.clone(), bytes, readback: InFlight::new(copy, bytes) });
            self.rehearsal = Some(rehearsal);
            return Ok(vec![0; bytes as usize]);
        }
        if let Some(i) = self.staged.iter().position(|s| s.source == *src && s.bytes == bytes && s.readback.landed()) {
            let staged = self.staged.swap_remove(i);
            return self.collect(&staged.readback, Wait::No)?.ok_or_else(|| GpuError::ReadbackLost("a landed readback was pending").into());
        }
        let mut encoder = self.encoder();
        let readback = InFlight::new(self.staging(&mut encoder, src, bytes), bytes);
        self.submit(encoder)?;
        readback.map();
        self.collect(&readback, Wait::Sync)?.ok_or_else(|| GpuError::ReadbackLost("a waited-for readback did not land").into())
    }

    /// Copies a 2D texture back to the CPU (waits): rows of `width *
    /// bytes_per_texel` bytes, without the padding copies need.
    pub(crate) fn read_texture(&mut self, texture: &wgpu::Texture, bytes_per_texel: u32) -> Result<Vec<u8>> {
        let (w, h) = (texture.width(), texture.height());
        let row = w * bytes_per_texel;
        let padded = row.next_multiple_of(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT);
        let buffer = self.take(u64::from(padded * h));
        let mut encoder = self.encoder();
        encoder.copy_texture_to_buffer(
            texture.as_image_copy(),
            wgpu::TexelCopyBufferInfo {
                buffer: &buffer,
                layout: wgpu::TexelCopyBufferLayout { offset: 0, bytes_per_row: Some(padded), rows_per_image: Some(h) },
            },
            texture.size(),
        );
        self.submit(encoder)?;
        let bytes = self.read(&buffer, u64::from(padded * h));
        self.give(buffer);
        Ok(bytes?.chunks(padded as usize).flat_map(|r| r[..row as usize].to_vec()).collect())
    }

    /// The bytes of a readback once it has landed: `None` while it is in
    /// flight with [`Wait::No`]; otherwise blocks until it lands. See
    /// [`Wait`] for what [`Context::waits`] counts.
    pub(crate) fn collect(&mut self, readback: &InFlight, wait: Wait) -> Result<Option<Vec<u8>>> {
        self.poll(false)?;
        if readback.state.load(Ordering::Acquire) == PENDING {
            if wait == Wait::No {
                return Ok(None);
            }
            self.poll(true)?;
        } else if wait == Wait::Sync {
            // The device happened to finish first; the caller still asked
            // for a result now, which is a sync point whatever its speed.
            self.waits += 1;
        }
        match readback.state.load(Ordering::Acquire) {
            LANDED => {
                let view = readback.staging.get_mapped_range(..).map_err(GpuError::Mapped)?;
                let out = view[..readback.bytes as usize].to_vec();
                drop(view);
                readback.staging.unmap();
                Ok(Some(out))
            }
            FAILED => Err(GpuError::ReadbackLost("a readback failed to map").into()),
            _ => Err(GpuError::ReadbackLost("a readback did not land after the device went idle").into()),
        }
    }

    /// Reads `count` u32 values.
    pub(crate) fn read_u32(&mut self, src: &wgpu::Buffer, count: usize) -> Result<Vec<u32>> {
        Ok(self.read(src, count as u64 * 4)?.chunks(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
    }
}

#[cfg(test)]
mod kernel_tests {
    use super::*;

    /// An adapter with WebGPU's default of 8 storage buffers per stage is
    /// refused, naming the limit; asked for 10 it opens with them.
    #[test]
    fn limits_name_what_an_adapter_lacks() {
        let adapter =
            wgpu::AdapterInfo { name: "test adapter".into(), ..wgpu::AdapterInfo::new(wgpu::DeviceType::Other, wgpu::Backend::BrowserWebGpu) };
        let webgpu = wgpu::Limits::defaults();
        let error = limits_for(&webgpu, &adapter).expect_err("8 storage buffers are too few").to_string();
        assert!(error.contains("max_storage_buffers_per_shader_stage is 8, murk needs 10") && error.contains("test adapter"), "{error}");
        let asked = wgpu::Limits { max_storage_buffers_per_shader_stage: 10, ..webgpu };
        let got = limits_for(&asked, &adapter).expect("10 are enough");
        assert_eq!(got.max_storage_buffers_per_shader_stage, 10);
        assert_eq!(got.max_storage_buffer_binding_size, asked.max_storage_buffer_binding_size);
    }

    #[test]
    fn every_kernel_sits_at_its_index_and_names_a_module_entry() {
        for (i, kernel) in Kernel::ALL.into_iter().enumerate() {
            assert_eq!(kernel as usize, i, "{kernel:?}");
            let (module, entry) = kernel.entry();
            let text = wgsl_source(module).unwrap_or_else(|| panic!("{kernel:?}: no module `{module}`"));
            assert!(text.contains(&format!("fn {entry}(")), "{kernel:?}: `{module}` has no entry `{entry}`");
        }
        // The last variant ends the list: none is left out of `ALL`.
        assert_eq!(Kernel::ALL.len(), Kernel::VolumeUpsample as usize + 1);
        // Every module is used by some kernel.
        for (module, _) in MODULES {
            assert!(Kernel::ALL.iter().any(|k| k.pass() == module), "module `{module}` has no kernel");
        }
    }
}
