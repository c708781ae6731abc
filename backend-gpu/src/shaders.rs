//! The WGSL of every compute pipeline and the pipelines compiled from it.
//!
//! A module is `common.wgsl` followed by its own files ([`Module`]); every
//! entry point is a field of [`Shaders`], compiled when the device opens,
//! so a dispatch names its pipeline by a field the compiler checks, never
//! by a string.

use crate::error::GpuError;
use murk_core::Result;

/// The format of the mask textures materials sample: 16-bit floats are
/// filterable and writable from compute shaders on every adapter wgpu
/// supports (16-bit unorm is neither without optional features).
pub const MASK_TEXTURE_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rgba16Float;

/// The WGSL include that engine materials use to sample a mask texture in
/// world space (`include/murk_fog.wgsl`).
pub const FOG_INCLUDE: &str = include_str!("../include/murk_fog.wgsl");

/// What every module starts with: the shared structs and integer helpers.
const COMMON: &str = include_str!("../shaders/common.wgsl");
const NOISE: &str = include_str!("../shaders/looks/noise.wgsl");
const MASK: &str = include_str!("../shaders/looks/mask.wgsl");

/// A WGSL module: its name (the pass's, for the passes) and its sources
/// after `common.wgsl`.
pub struct Module {
    /// The module's name, which labels its dispatches and timings.
    pub name: &'static str,
    sources: &'static [&'static str],
}

impl Module {
    /// Its full WGSL text.
    pub fn text(&self) -> String {
        let mut text = COMMON.to_string();
        for s in self.sources {
            text.push('\n');
            text.push_str(s);
        }
        text
    }
}

const RASTERIZE: Module = Module { name: "rasterize", sources: &[include_str!("../shaders/rasterize.wgsl")] };
const MIPS: Module = Module { name: "mips", sources: &[include_str!("../shaders/mips.wgsl")] };
const DISTANCE_FIELD: Module = Module { name: "distance_field", sources: &[include_str!("../shaders/distance_field.wgsl")] };
/// Step 5, the ray marches: what the visibility pass and the sight lines share.
const RAYS: &str = include_str!("../shaders/rays.wgsl");
const VISIBILITY: Module = Module { name: "visibility", sources: &[RAYS, include_str!("../shaders/visibility.wgsl")] };
const COUNT: Module = Module { name: "count", sources: &[include_str!("../shaders/count.wgsl")] };
const LINES: Module = Module { name: "lines", sources: &[RAYS, include_str!("../shaders/lines.wgsl")] };
const BLUR: Module = Module { name: "blur", sources: &[include_str!("../shaders/blur.wgsl")] };
const MEMORY: Module = Module { name: "memory", sources: &[include_str!("../shaders/memory.wgsl")] };
const COMPOSE: Module = Module { name: "compose", sources: &[include_str!("../shaders/compose.wgsl")] };
const UPSCALE: Module = Module { name: "upscale", sources: &[include_str!("../shaders/upscale.wgsl")] };
const BLEND: Module = Module { name: "blend", sources: &[include_str!("../shaders/blend.wgsl")] };
const SAMPLE: Module = Module { name: "sample", sources: &[include_str!("../shaders/sample.wgsl")] };
const FOOTPRINTS: Module = Module { name: "footprints", sources: &[include_str!("../shaders/footprints.wgsl")] };
const HASH: Module = Module { name: "hash", sources: &[include_str!("../shaders/hash.wgsl")] };
const PRESENT: Module = Module { name: "present", sources: &[include_str!("../shaders/present.wgsl")] };
const PRESENT_DETAIL: Module = Module { name: "present_detail", sources: &[include_str!("../shaders/present_detail.wgsl")] };
const OVERLAY: Module = Module { name: "overlay", sources: &[NOISE, include_str!("../shaders/looks/overlay.wgsl")] };
const SURFACE: Module = Module { name: "surface", sources: &[FOG_INCLUDE, NOISE, MASK, include_str!("../shaders/looks/surface.wgsl")] };
const VOLUME: Module = Module { name: "volume", sources: &[FOG_INCLUDE, NOISE, MASK, include_str!("../shaders/looks/volume.wgsl")] };

/// Every module: the passes, the sight lines and explored count, the
/// sample and footprint batches, the hash, the presentation, then the looks.
const MODULES: [&Module; 19] = [
    &RASTERIZE,
    &MIPS,
    &DISTANCE_FIELD,
    &VISIBILITY,
    &LINES,
    &COUNT,
    &BLUR,
    &MEMORY,
    &COMPOSE,
    &UPSCALE,
    &BLEND,
    &SAMPLE,
    &FOOTPRINTS,
    &HASH,
    &PRESENT,
    &PRESENT_DETAIL,
    &OVERLAY,
    &SURFACE,
    &VOLUME,
];

/// The full WGSL text of a module (for validation in tests).
pub fn wgsl_source(module: &str) -> Option<String> {
    MODULES.iter().find(|m| m.name == module).map(|m| m.text())
}

/// Names of the modules.
pub fn module_names() -> Vec<&'static str> {
    MODULES.iter().map(|m| m.name).collect()
}

/// One compute pipeline: an entry point of a module, with the module's
/// bind group layout.
pub(crate) struct Shader {
    pipeline: wgpu::ComputePipeline,
    /// Its module's name: the label of its dispatches and timings.
    pub(crate) pass: &'static str,
}

impl Shader {
    /// The pipeline to dispatch.
    pub(crate) fn pipeline(&self) -> &wgpu::ComputePipeline {
        &self.pipeline
    }

    /// The layout of its bind group 0.
    pub(crate) fn layout(&self) -> wgpu::BindGroupLayout {
        self.pipeline.get_bind_group_layout(0)
    }
}

/// Every compute pipeline, one field per entry point (the pass number is
/// the pipeline's, see `docs/architecture.md`).
pub(crate) struct Shaders {
    /// Pass 1: blockers and captures into coverage and heights.
    pub(crate) rasterize: Shader,
    /// Pass 2: one level of the coverage pyramid.
    pub(crate) mips: Shader,
    /// Pass 3: coarse coverage at the distance-field scale.
    pub(crate) distance_field_coarse: Shader,
    /// Pass 3: the column sweep.
    pub(crate) distance_field_columns: Shader,
    /// Pass 3: the row sweep.
    pub(crate) distance_field_rows: Shader,
    /// Pass 5: sources painted and marched.
    pub(crate) visibility: Shader,
    /// Pass 5: walls lit and anti-vision applied.
    pub(crate) visibility_finish: Shader,
    /// Pass 6: one axis of the separable blur (the overlay look's too).
    pub(crate) blur: Shader,
    /// Pass 7: explored memory.
    pub(crate) memory: Shader,
    /// Pass 8: the composed mask.
    pub(crate) compose: Shader,
    /// Pass 9: the composed mask at output resolution.
    pub(crate) upscale: Shader,
    /// Pass 10: the blend towards the upscaled mask.
    pub(crate) blend: Shader,
    /// Mask texels for a sample batch.
    pub(crate) sample: Shader,
    /// One value per footprint of a footprint batch.
    pub(crate) footprints: Shader,
    /// The light of each line of a sight-line batch.
    pub(crate) lines: Shader,
    /// The explored count of an instance's memory.
    pub(crate) count: Shader,
    /// The state hash: one leaf per invocation.
    pub(crate) hash_leaf: Shader,
    /// The state hash: the root fold over the leaves.
    pub(crate) hash_root: Shader,
    /// The final mask into the texture materials sample.
    pub(crate) present: Shader,
    /// The internal masks into the detail texture.
    pub(crate) present_detail: Shader,
    /// The overlay look's shading.
    pub(crate) overlay: Shader,
    /// The surface look.
    pub(crate) surface: Shader,
    /// The volume look's half-resolution march.
    pub(crate) volume_march: Shader,
    /// The volume look's upsample to full resolution.
    pub(crate) volume_upsample: Shader,
}

impl Shaders {
    /// Compiles every module and every pipeline on `device`; an error
    /// names the module, or the entry point it lacks.
    pub(crate) fn compile(device: &wgpu::Device) -> Result<Self> {
        let one = |module: &Module, entry| Compiled::new(device, module)?.entry(device, entry);
        let (df, vis, hash, volume) = (
            Compiled::new(device, &DISTANCE_FIELD)?,
            Compiled::new(device, &VISIBILITY)?,
            Compiled::new(device, &HASH)?,
            Compiled::new(device, &VOLUME)?,
        );
        Ok(Self {
            rasterize: one(&RASTERIZE, "main")?,
            mips: one(&MIPS, "main")?,
            distance_field_coarse: df.entry(device, "coarse_pass")?,
            distance_field_columns: df.entry(device, "columns_pass")?,
            distance_field_rows: df.entry(device, "rows_pass")?,
            visibility: vis.entry(device, "main")?,
            visibility_finish: vis.entry(device, "finish")?,
            blur: one(&BLUR, "main")?,
            memory: one(&MEMORY, "main")?,
            compose: one(&COMPOSE, "main")?,
            upscale: one(&UPSCALE, "main")?,
            blend: one(&BLEND, "main")?,
            sample: one(&SAMPLE, "main")?,
            footprints: one(&FOOTPRINTS, "main")?,
            lines: one(&LINES, "main")?,
            count: one(&COUNT, "main")?,
            hash_leaf: hash.entry(device, "leaf")?,
            hash_root: hash.entry(device, "root")?,
            present: one(&PRESENT, "main")?,
            present_detail: one(&PRESENT_DETAIL, "main")?,
            overlay: one(&OVERLAY, "shade")?,
            surface: one(&SURFACE, "main")?,
            volume_march: volume.entry(device, "march")?,
            volume_upsample: volume.entry(device, "upsample")?,
        })
    }
}

/// A module compiled, with one pipeline layout for all its entry points.
struct Compiled {
    name: &'static str,
    module: wgpu::ShaderModule,
    layout: wgpu::PipelineLayout,
    /// The names of its compute entry points.
    entries: Vec<String>,
}

impl Compiled {
    fn new(device: &wgpu::Device, module: &Module) -> Result<Self> {
        let text = module.text();
        let parsed =
            naga::front::wgsl::parse_str(&text).map_err(|e| GpuError::Shader { module: module.name.into(), report: e.emit_to_string(&text) })?;
        let layout = module_layout(device, module.name, &parsed);
        let entries = parsed.entry_points.iter().map(|e| e.name.clone()).collect();
        let shader =
            device.create_shader_module(wgpu::ShaderModuleDescriptor { label: Some(module.name), source: wgpu::ShaderSource::Wgsl(text.into()) });
        Ok(Self { name: module.name, module: shader, layout, entries })
    }

    /// The pipeline of entry point `entry`.
    fn entry(&self, device: &wgpu::Device, entry: &'static str) -> Result<Shader> {
        if !self.entries.iter().any(|e| e == entry) {
            return Err(GpuError::Pipeline { module: self.name.into(), entry: entry.into() }.into());
        }
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(entry),
            layout: Some(&self.layout),
            module: &self.module,
            entry_point: Some(entry),
            compilation_options: Default::default(),
            cache: None,
        });
        Ok(Shader { pipeline, pass: self.name })
    }
}

/// One pipeline layout for all entry points of a module, with every binding
/// the module declares (read from the WGSL with naga), so an entry point
/// that uses fewer bindings still takes the module's bind group.
fn module_layout(device: &wgpu::Device, name: &str, module: &naga::Module) -> wgpu::PipelineLayout {
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
    device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor { label: Some(name), bind_group_layouts: &[Some(&group)], immediate_size: 0 })
}
