//! The device-side state of the GPU backend: each instance's buffers and
//! mask textures, the encoder being recorded, and the readbacks in flight.
//!
//! Nothing here waits on the device inside a tick: a tick's occlusion
//! build, recompute, blend and presentation of an instance are one
//! submission, the recompute's "changed" flag and the stealth samples come
//! back through readbacks that core collects a fixed number of ticks later.
//! Only reading stages (pictures, hashes, snapshots) waits.
//!
//! (Longer than most files: the `Backend` methods all work on the encoder
//! and readback state declared here. Occlusion builds, copies and snapshot
//! writes are in `build.rs`.)

use crate::context::{unknown_key, Context, InFlight, Kernel, Wait, MASK_TEXTURE_FORMAT};
use crate::error::GpuError;
use crate::passes;
use murk_core::backend::{FootprintList, FootprintRequest, InstanceDims, InstanceKey, Readback, SampleRequest, Stage, StageData, StageImage};
use murk_core::{
    Backend, FrameParams, Grid, MurkError, OcclusionInput, Pass, RecomputeInput, RecomputeReport, Result, TexelRect, Texture, TextureSet,
};
use passes::distance_field::{DfRegion, FieldScratch};
use std::collections::BTreeMap;
use std::sync::Arc;

mod build;
use build::{build_occlusion, copy_occlusion, import_all};

/// The buffers of one instance.
pub struct Textures {
    pub(crate) dims: InstanceDims,
    pub(crate) frame: FrameParams,
    pub(crate) params: wgpu::Buffer,
    pub(crate) coverage: wgpu::Buffer,
    pub(crate) height: wgpu::Buffer,
    pub(crate) levels: wgpu::Buffer,
    pub(crate) level_table: wgpu::Buffer,
    pub(crate) mip_params: Vec<wgpu::Buffer>,
    pub(crate) field: wgpu::Buffer,
    pub(crate) field_scratch: Option<FieldScratch>,
    pub(crate) visibility: wgpu::Buffer,
    pub(crate) blurred: wgpu::Buffer,
    pub(crate) scratch: wgpu::Buffer,
    pub(crate) memory: wgpu::Buffer,
    pub(crate) mapped: wgpu::Buffer,
    /// Scripted reveals: sight | kept << 16 per texel.
    pub(crate) reveal: wgpu::Buffer,
    /// Scripted reveals: mapped knowledge to add per texel.
    pub(crate) reveal_map: wgpu::Buffer,
    pub(crate) composed: wgpu::Buffer,
    pub(crate) upscaled: wgpu::Buffer,
    pub(crate) start: wgpu::Buffer,
    pub(crate) final_mask: wgpu::Buffer,
    pub(crate) flags: wgpu::Buffer,
    pub(crate) blur_x: wgpu::Buffer,
    pub(crate) blur_y: wgpu::Buffer,
    /// The final mask for materials, at the output size.
    pub(crate) mask: wgpu::Texture,
    pub(crate) present: wgpu::BindGroup,
    /// On request: blurred visibility, memory and composed at the internal size.
    pub(crate) detail: Option<(wgpu::Texture, wgpu::BindGroup)>,
}

impl Textures {
    fn texels(&self) -> u64 {
        u64::from(self.dims.width * self.dims.height)
    }
    fn out_texels(&self) -> u64 {
        u64::from(self.dims.out_width * self.dims.out_height)
    }
    /// The pooled storage buffers, for returning them.
    fn storage(self) -> Vec<wgpu::Buffer> {
        let mut v = vec![
            self.coverage,
            self.height,
            self.levels,
            self.level_table,
            self.field,
            self.visibility,
            self.blurred,
            self.scratch,
            self.memory,
            self.mapped,
            self.reveal,
            self.reveal_map,
            self.composed,
            self.upscaled,
            self.start,
            self.final_mask,
            self.flags,
        ];
        if let Some(s) = self.field_scratch {
            v.extend(s);
        }
        v
    }
}

/// The GPU backend's state on one device (behind [`crate::GpuBackend`]).
pub(crate) struct Gpu {
    pub(crate) ctx: Context,
    instances: BTreeMap<InstanceKey, Textures>,
    samples: BTreeMap<u64, (InFlight, usize, Option<FootprintTicket>)>,
    changed: BTreeMap<u64, InFlight>,
    /// State hashes in flight: the readback and how many values it holds.
    hashes: BTreeMap<u64, (InFlight, usize)>,
    /// An instance each ticket in flight was asked for (device-wide key),
    /// so that a world counts only its own ([`Gpu::readbacks_held_in`]).
    asked_by: BTreeMap<u64, InstanceKey>,
    next_ticket: u64,
    /// Worlds opened on the device so far (each has its own key space).
    pub(crate) worlds: u32,
    /// Work recorded but not yet submitted (an occlusion build, a
    /// recompute): the blend that follows joins it, so an instance's tick is
    /// one submission.
    pending: Option<Pending>,
}

/// What a footprint ticket's samples become: per request, its cutoff and
/// footprints, whose texels the samples follow in order.
type FootprintTicket = Vec<(u16, Arc<FootprintList>)>;

/// `SampleRange` of `shaders/sample.wgsl`: the part of a sample batch that
/// one dispatch answers, for up to six requests (`SAMPLE_SLOTS`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct SampleRange {
    /// The first texel index of the dispatch in the batch.
    pub first: u32,
    /// How many texels it samples.
    pub count: u32,
    /// Padding to 16 bytes.
    pub pad: [u32; 2],
    /// Where each request's texels end, counted from `first` (the unused
    /// slots hold `count`).
    pub ends: [u32; 8],
}

/// Requests (final masks) one sample dispatch reads: six mask bindings,
/// with the texel list and the results eight storage buffers, WebGPU's
/// default per stage.
pub(crate) const SAMPLE_SLOTS: usize = 6;

/// Workgroups in a row of a sample dispatch (`shaders/sample.wgsl`).
const SAMPLE_ROW_GROUPS: u32 = 32768;

/// An encoder being recorded, the pooled buffers it frees when submitted,
/// and the readback tickets to map once it is on the queue.
struct Pending {
    encoder: wgpu::CommandEncoder,
    recycle: Vec<wgpu::Buffer>,
    maps: Vec<u64>,
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

/// The plane a sample request reads.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Plane {
    /// The final mask (output texels).
    Final,
    /// The raw visibility (internal texels).
    Visibility,
    /// The scripted sight reveal (internal texels; the low half of the
    /// packed reveal buffer, which the readback keeps).
    Sight,
}

impl Plane {
    fn buffer(self, t: &Textures) -> &wgpu::Buffer {
        match self {
            Plane::Final => &t.final_mask,
            Plane::Visibility => &t.visibility,
            Plane::Sight => &t.reveal,
        }
    }
}

impl Gpu {
    /// Samples `batch` (checked before anything is recorded: a bad texel
    /// changes nothing), each request in its plane, one dispatch per six
    /// requests; with `reduce`, the values are footprints' texels, reduced
    /// when they land.
    fn sample(&mut self, batch: &[(&SampleRequest, Plane)], reduce: Option<FootprintTicket>) -> Result<u64> {
        let mut indices = Vec::new();
        for &(request, plane) in batch {
            let d = self.textures(request.key)?.dims;
            let (w, h) = if plane == Plane::Final { (d.out_width, d.out_height) } else { (d.width, d.height) };
            for &[x, y] in &request.texels {
                if x >= w || y >= h {
                    return Err(MurkError::invalid("texel", format!("({x}, {y})"), format!("must lie inside {w}x{h}")));
                }
                indices.push(y * w + x);
            }
        }
        let count = indices.len();
        if indices.is_empty() {
            indices.push(0);
        }
        let ticket = self.ticket();
        self.pending();
        let (ctx, pending) = (&mut self.ctx, self.pending.as_mut().expect("made above"));
        let bytes = indices.len() as u64 * 4;
        let list = ctx.upload(bytemuck::cast_slice(&indices));
        let results = ctx.take(bytes);
        // One dispatch per six requests: a batch of up to six observers
        // (or instances queried) is one dispatch.
        let mut first = 0u32;
        for group in batch.chunks(SAMPLE_SLOTS) {
            let mut range = SampleRange { first, count: 0, pad: [0; 2], ends: [0; 8] };
            let mut masks = Vec::with_capacity(SAMPLE_SLOTS);
            for (slot, &(request, plane)) in group.iter().enumerate() {
                range.count += request.texels.len() as u32;
                range.ends[slot] = range.count;
                masks.push(plane.buffer(self.instances.get(&request.key).expect("checked above")));
            }
            for slot in group.len()..range.ends.len() {
                range.ends[slot] = range.count;
            }
            while masks.len() < SAMPLE_SLOTS {
                masks.push(masks[0]);
            }
            let uniform = ctx.uniform(bytemuck::bytes_of(&range));
            let buffers: Vec<&wgpu::Buffer> = [&list, &results, &uniform].into_iter().chain(masks).collect();
            let g = ctx.bind(Kernel::Sample, &buffers);
            let g64 = passes::groups(range.count, 64);
            ctx.dispatch(&mut pending.encoder, Kernel::Sample, &g, g64.min(SAMPLE_ROW_GROUPS), g64.div_ceil(SAMPLE_ROW_GROUPS));
            first += range.count;
        }
        let readback = InFlight::new(ctx.staging(&mut pending.encoder, &results, bytes), bytes);
        pending.recycle.extend([list, results]);
        pending.maps.push(ticket);
        self.samples.insert(ticket, (readback, count, reduce));
        if let Some(&(r, _)) = batch.first() {
            self.asked_by.insert(ticket, r.key);
        }
        self.flush()?;
        Ok(ticket)
    }

    /// The state on a device whose pipelines are compiled.
    pub(crate) fn new(ctx: Context) -> Self {
        Self {
            ctx,
            instances: BTreeMap::new(),
            samples: BTreeMap::new(),
            changed: BTreeMap::new(),
            hashes: BTreeMap::new(),
            asked_by: BTreeMap::new(),
            next_ticket: 0,
            worlds: 0,
            pending: None,
        }
    }

    /// Submits the recorded work, if any, and maps its readbacks.
    pub(crate) fn flush(&mut self) -> Result<()> {
        if let Some(p) = self.pending.take() {
            self.ctx.forget_staged();
            self.ctx.submit(p.encoder)?;
            for b in p.recycle {
                self.ctx.give(b);
            }
            for ticket in p.maps {
                let r = self
                    .changed
                    .get(&ticket)
                    .or_else(|| self.samples.get(&ticket).map(|(r, _, _)| r).or_else(|| self.hashes.get(&ticket).map(|(r, _)| r)));
                if let Some(r) = r {
                    r.map();
                }
            }
        }
        Ok(())
    }

    /// The pending work to record into (a fresh encoder when none).
    fn pending(&mut self) -> &mut Pending {
        let ctx = &self.ctx;
        self.pending.get_or_insert_with(|| Pending { encoder: ctx.encoder(), recycle: Vec::new(), maps: Vec::new() })
    }

    /// Readbacks held for instances whose device-wide keys lie in `keys`
    /// (one world's): those in flight and not yet delivered or forgotten.
    pub(crate) fn readbacks_held_in(&self, keys: std::ops::Range<InstanceKey>) -> usize {
        self.asked_by.values().filter(|k| keys.contains(k)).count()
    }

    fn ticket(&mut self) -> u64 {
        let t = self.next_ticket;
        self.next_ticket += 1;
        t
    }

    /// Readbacks issued and not yet collected or forgotten.
    pub(crate) fn readbacks_in_flight(&self) -> usize {
        self.changed.len() + self.samples.len() + self.hashes.len()
    }

    /// Whether every readback in flight (flags, samples, hashes and staged
    /// copies) has landed, so that collecting any of them waits for nothing.
    pub(crate) fn readbacks_landed(&self) -> bool {
        self.changed.values().all(InFlight::landed)
            && self.samples.values().all(|(r, _, _)| r.landed())
            && self.hashes.values().all(|(r, _)| r.landed())
            && self.ctx.staged_landed()
    }

    /// The final-mask texture of an instance (written after every blend).
    pub(crate) fn mask_texture(&self, key: InstanceKey) -> Result<wgpu::Texture> {
        Ok(self.textures(key)?.mask.clone())
    }

    /// The detail texture of an instance, once asked for with [`Gpu::set_detail`].
    pub(crate) fn detail_texture(&self, key: InstanceKey) -> Result<Option<wgpu::Texture>> {
        Ok(self.textures(key)?.detail.as_ref().map(|(t, _)| t.clone()))
    }

    /// Starts or stops writing the detail texture in each recompute.
    pub(crate) fn set_detail(&mut self, key: InstanceKey, on: bool) -> Result<()> {
        let ctx = &self.ctx;
        let t = self.instances.get_mut(&key).ok_or_else(|| unknown_key(key))?;
        if !on {
            t.detail = None;
        } else if t.detail.is_none() {
            let texture = mask_texture(&ctx.device, "murk detail", t.dims.width, t.dims.height);
            let view = texture.create_view(&wgpu::TextureViewDescriptor::default());
            let group = ctx.bind_resources(
                Kernel::PresentDetail,
                &[
                    t.params.as_entire_binding(),
                    t.blurred.as_entire_binding(),
                    t.memory.as_entire_binding(),
                    t.composed.as_entire_binding(),
                    wgpu::BindingResource::TextureView(&view),
                ],
            );
            t.detail = Some((texture, group));
        }
        Ok(())
    }

    fn textures(&self, key: InstanceKey) -> Result<&Textures> {
        self.instances.get(&key).ok_or_else(|| unknown_key(key))
    }

    /// Runs one pass of an instance alone, submitted and waited for: the GPU
    /// rows of the per-pass benches. The instance must have been built and
    /// recomputed once with the same inputs (and with mips and the distance
    /// field, to time those).
    pub(crate) fn run_pass(&mut self, key: InstanceKey, pass: Pass, occlusion: &OcclusionInput, input: &RecomputeInput) -> Result<()> {
        self.flush()?;
        let ctx = &mut self.ctx;
        let t = self.instances.get(&key).ok_or_else(|| unknown_key(key))?;
        let mut enc = ctx.encoder();
        let recycle = match pass {
            Pass::Rasterize => {
                let grid = TexelRect::grid(t.dims.width, t.dims.height);
                passes::rasterize::record(ctx, &mut enc, t, occlusion, occlusion.capture.as_deref(), &grid)
            }
            Pass::Mips if t.frame.mip_levels > 0 => {
                passes::mips::record(ctx, &mut enc, t, &t.levels, &t.mip_params, &TexelRect::grid(t.dims.width, t.dims.height));
                Vec::new()
            }
            Pass::DistanceField => match &t.field_scratch {
                Some(scratch) => {
                    passes::distance_field::record(ctx, &mut enc, t, scratch, &t.field, DfRegion::whole(t.frame.df_width, t.frame.df_height));
                    Vec::new()
                }
                None => return Err(GpuError::NotBuilt("the distance field was not built for this instance".into()).into()),
            },
            Pass::Visibility => passes::visibility::record(ctx, &mut enc, t, input),
            Pass::Blur => passes::blur::record(ctx, &mut enc, t, &input.blur),
            Pass::Memory => {
                passes::memory::record(ctx, &mut enc, t);
                Vec::new()
            }
            Pass::Compose => {
                passes::compose::record(ctx, &mut enc, t);
                Vec::new()
            }
            Pass::Upscale => {
                passes::upscale::record(ctx, &mut enc, t);
                Vec::new()
            }
            Pass::Blend => {
                passes::blend::record(ctx, &mut enc, t);
                Vec::new()
            }
            Pass::Mips => return Err(GpuError::NotBuilt("the mips pass runs alone only over a Hierarchical DDA build".into()).into()),
        };
        ctx.submit(enc)?;
        for b in recycle {
            ctx.give(b);
        }
        ctx.poll(true)
    }
}

/// The coverage pyramid's levels 1.. (none when it is not built).
fn read_mips(ctx: &mut Context, t: &Textures) -> Result<Vec<Grid<u8>>> {
    if t.frame.mip_levels == 0 {
        return Ok(Vec::new());
    }
    let table = passes::mips::layout(t.dims.width, t.dims.height);
    let (last_offset, lw, lh) = *table.last().expect("level 0 exists");
    let all = ctx.read_u32(&t.levels, (last_offset + lw * lh) as usize)?;
    Ok(table[1..]
        .iter()
        .map(|&(o, w, h)| Grid { width: w, height: h, texels: all[o as usize..(o + w * h) as usize].iter().map(|&v| v as u8).collect() })
        .collect())
}

fn zeroed(ctx: &mut Context, enc: &mut wgpu::CommandEncoder, bytes: u64) -> wgpu::Buffer {
    let b = ctx.take(bytes);
    enc.clear_buffer(&b, 0, None);
    b
}

fn read_u16(ctx: &mut Context, b: &wgpu::Buffer, n: u64) -> Result<Vec<u16>> {
    Ok(ctx.read_u32(b, n as usize)?.into_iter().map(|v| v as u16).collect())
}

/// Records the presentation of the final mask into its texture.
fn present(ctx: &Context, enc: &mut wgpu::CommandEncoder, t: &Textures) {
    ctx.dispatch(enc, Kernel::Present, &t.present, passes::groups(t.dims.out_width, 8), passes::groups(t.dims.out_height, 8));
}

impl Backend for Gpu {
    fn name(&self) -> String {
        // A browser does not name its adapter.
        let name = if self.ctx.adapter.name.is_empty() { "unnamed adapter" } else { &self.ctx.adapter.name };
        format!("gpu[{name}, {:?}]", self.ctx.adapter.backend)
    }

    fn create_instance(&mut self, key: InstanceKey, dims: InstanceDims) -> Result<()> {
        // One encoder with dispatches at a time (pass timings rely on it).
        self.flush()?;
        let ctx = &mut self.ctx;
        let side = ctx.device.limits().max_texture_dimension_2d;
        if dims.out_width.max(dims.out_height) > side {
            return Err(GpuError::TooLarge { width: dims.out_width, height: dims.out_height, side }.into());
        }
        let n = u64::from(dims.width * dims.height) * 4;
        let on = u64::from(dims.out_width * dims.out_height) * 4;
        let mut enc = ctx.encoder();
        let frame = FrameParams {
            width: dims.width,
            height: dims.height,
            out_width: dims.out_width,
            out_height: dims.out_height,
            lod_scale: dims.out_width / dims.width,
            ..FrameParams::default()
        };
        let final_mask = zeroed(ctx, &mut enc, on);
        let params = ctx.uniform(bytemuck::bytes_of(&frame));
        let mask = mask_texture(&ctx.device, "murk mask", dims.out_width, dims.out_height);
        let view = mask.create_view(&wgpu::TextureViewDescriptor::default());
        let present_group = ctx.bind_resources(
            Kernel::Present,
            &[params.as_entire_binding(), final_mask.as_entire_binding(), wgpu::BindingResource::TextureView(&view)],
        );
        let t = Textures {
            dims,
            frame,
            params,
            coverage: zeroed(ctx, &mut enc, n),
            height: zeroed(ctx, &mut enc, n),
            levels: zeroed(ctx, &mut enc, 16),
            level_table: zeroed(ctx, &mut enc, 16),
            mip_params: Vec::new(),
            field: zeroed(ctx, &mut enc, 16),
            field_scratch: None,
            visibility: zeroed(ctx, &mut enc, n),
            blurred: zeroed(ctx, &mut enc, n),
            scratch: zeroed(ctx, &mut enc, n),
            memory: zeroed(ctx, &mut enc, n),
            mapped: zeroed(ctx, &mut enc, n),
            reveal: zeroed(ctx, &mut enc, n),
            reveal_map: zeroed(ctx, &mut enc, n),
            composed: zeroed(ctx, &mut enc, n),
            upscaled: zeroed(ctx, &mut enc, on),
            start: zeroed(ctx, &mut enc, on),
            final_mask,
            flags: zeroed(ctx, &mut enc, 16),
            blur_x: ctx.uniform(bytemuck::bytes_of(&passes::blur::BlurAxis::X)),
            blur_y: ctx.uniform(bytemuck::bytes_of(&passes::blur::BlurAxis::Y)),
            mask,
            present: present_group,
            detail: None,
        };
        // A new instance shows fog everywhere until its first blend.
        present(ctx, &mut enc, &t);
        ctx.submit(enc)?;
        if let Some(old) = self.instances.insert(key, t) {
            for b in old.storage() {
                self.ctx.give(b);
            }
        }
        Ok(())
    }

    fn destroy_instance(&mut self, key: InstanceKey) {
        // A pending build may use this instance's buffers: submit it first. A
        // device error here surfaces on the next call that reads results.
        let _ = self.flush();
        if let Some(t) = self.instances.remove(&key) {
            for b in t.storage() {
                self.ctx.give(b);
            }
        }
    }

    fn build_occlusion(&mut self, key: InstanceKey, input: &OcclusionInput) -> Result<()> {
        // One pending build at a time (another instance's build is submitted first).
        self.flush()?;
        let mut t = self.instances.remove(&key).ok_or_else(|| unknown_key(key))?;
        let mut enc = self.ctx.encoder();
        let result = build_occlusion(&mut self.ctx, &mut enc, &mut t, input, None);
        self.instances.insert(key, t);
        self.pending = Some(Pending { encoder: enc, recycle: result?, maps: Vec::new() });
        Ok(())
    }

    fn update_occlusion(&mut self, key: InstanceKey, input: &OcclusionInput, changed: &[TexelRect]) -> Result<()> {
        self.flush()?;
        let mut t = self.instances.remove(&key).ok_or_else(|| unknown_key(key))?;
        let mut enc = self.ctx.encoder();
        let result = build_occlusion(&mut self.ctx, &mut enc, &mut t, input, Some(changed));
        self.instances.insert(key, t);
        self.pending = Some(Pending { encoder: enc, recycle: result?, maps: Vec::new() });
        Ok(())
    }

    fn copy_occlusion(&mut self, from: InstanceKey, to: InstanceKey) -> Result<()> {
        self.flush()?;
        let mut dst = self.instances.remove(&to).ok_or_else(|| unknown_key(to))?;
        let result = match self.instances.get(&from) {
            Some(src) => copy_occlusion(&mut self.ctx, src, &mut dst),
            None => Err(unknown_key(from)),
        };
        self.instances.insert(to, dst);
        result
    }

    fn recompute(&mut self, key: InstanceKey, input: &RecomputeInput) -> Result<RecomputeReport> {
        if !self.instances.contains_key(&key) {
            return Err(unknown_key(key));
        }
        let ticket = self.ticket();
        let Pending { mut encoder, mut recycle, mut maps } =
            self.pending.take().unwrap_or_else(|| Pending { encoder: self.ctx.encoder(), recycle: Vec::new(), maps: Vec::new() });
        let enc = &mut encoder;
        let ctx = &mut self.ctx;
        let t = self.instances.get_mut(&key).expect("checked above");
        let f = &mut t.frame;
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
        ctx.queue.write_buffer(&t.params, 0, bytemuck::bytes_of(&t.frame));
        enc.clear_buffer(&t.flags, 0, None);
        if !input.reuse_visibility {
            recycle.extend(passes::visibility::record(ctx, enc, t, input));
            recycle.extend(passes::blur::record(ctx, enc, t, &input.blur));
        }
        passes::memory::record(ctx, enc, t);
        passes::compose::record(ctx, enc, t);
        passes::upscale::record(ctx, enc, t);
        if let Some((_, group)) = &t.detail {
            ctx.dispatch(enc, Kernel::PresentDetail, group, passes::groups(t.dims.width, 8), passes::groups(t.dims.height, 8));
        }
        enc.copy_buffer_to_buffer(&t.final_mask, 0, &t.start, 0, t.out_texels() * 4);
        // The flag comes back with the submission (the blend's, or the next
        // flush); core asks for it a fixed number of ticks later.
        let flag = InFlight::new(ctx.staging(enc, &t.flags, 4), 4);
        self.changed.insert(ticket, flag);
        self.asked_by.insert(ticket, key);
        maps.push(ticket);
        self.pending = Some(Pending { encoder, recycle, maps });
        Ok(RecomputeReport { changed: Readback::Ticket(ticket) })
    }

    fn poll_changed(&mut self, ticket: u64, wait: bool) -> Result<Option<bool>> {
        if !self.changed.contains_key(&ticket) {
            return Err(MurkError::UnknownTicket { backend: "gpu".into(), what: "changed-flag", ticket });
        }
        self.flush()?;
        let bytes = self.ctx.collect(&self.changed[&ticket], if wait { Wait::IfPending } else { Wait::No })?;
        Ok(bytes.map(|b| {
            self.changed.remove(&ticket);
            self.asked_by.remove(&ticket);
            b.iter().any(|&x| x != 0)
        }))
    }

    fn set_reveals(&mut self, key: InstanceKey, layer: Option<&murk_core::RevealLayer>) -> Result<()> {
        // Work already recorded reads the reveals it was recorded with.
        self.flush()?;
        let t = self.instances.get(&key).ok_or_else(|| unknown_key(key))?;
        let n = t.texels() as usize;
        match layer {
            Some(l) => {
                for (name, plane) in [("sight", &l.sight), ("kept", &l.kept), ("map", &l.map)] {
                    if plane.len() != n {
                        return Err(GpuError::size(format!("reveal plane `{name}`"), format!("{} texels", plane.len()), format!("{n} texels")).into());
                    }
                }
                let packed: Vec<u32> = l.sight.iter().zip(&l.kept).map(|(&s, &k)| u32::from(s) | u32::from(k) << 16).collect();
                let map: Vec<u32> = l.map.iter().map(|&v| u32::from(v)).collect();
                self.ctx.queue.write_buffer(&t.reveal, 0, bytemuck::cast_slice(&packed));
                self.ctx.queue.write_buffer(&t.reveal_map, 0, bytemuck::cast_slice(&map));
            }
            None => {
                let zeros = vec![0u32; n];
                self.ctx.queue.write_buffer(&t.reveal, 0, bytemuck::cast_slice(&zeros));
                self.ctx.queue.write_buffer(&t.reveal_map, 0, bytemuck::cast_slice(&zeros));
            }
        }
        Ok(())
    }

    fn blend(&mut self, key: InstanceKey, t_q16: u32) -> Result<()> {
        if !self.instances.contains_key(&key) {
            return Err(unknown_key(key));
        }
        self.pending();
        let (ctx, pending) = (&mut self.ctx, self.pending.as_mut().expect("made above"));
        let t = self.instances.get_mut(&key).expect("checked above");
        t.frame.blend_t = t_q16;
        ctx.queue.write_buffer(&t.params, 0, bytemuck::bytes_of(&t.frame));
        passes::blend::record(ctx, &mut pending.encoder, t);
        present(ctx, &mut pending.encoder, t);
        self.flush()
    }

    fn read_stage(&mut self, key: InstanceKey, stage: Stage) -> Result<StageImage> {
        match stage.texture() {
            Some(texture) => self.read_texture(key, texture),
            None => {
                self.flush()?;
                let t = self.instances.get(&key).ok_or_else(|| unknown_key(key))?;
                let levels = read_mips(&mut self.ctx, t)?;
                Ok(murk_core::mip_atlas(t.dims.width, t.dims.height, &levels))
            }
        }
    }

    fn submit_samples(&mut self, batch: &[SampleRequest]) -> Result<u64> {
        let planes: Vec<(&SampleRequest, Plane)> = batch.iter().map(|r| (r, Plane::Final)).collect();
        self.sample(&planes, None)
    }

    fn submit_footprints(&mut self, batch: &[FootprintRequest]) -> Result<u64> {
        // The footprints' texels are sampled in the visibility and in the
        // sight reveal, in the same one dispatch per six planes, and each
        // footprint's values are reduced to its one value when the
        // readback lands.
        for r in batch {
            r.footprints.check()?;
        }
        let requests: Vec<SampleRequest> = batch.iter().map(|r| SampleRequest { key: r.key, texels: r.footprints.texels.clone() }).collect();
        let planes: Vec<(&SampleRequest, Plane)> = requests.iter().flat_map(|r| [(r, Plane::Visibility), (r, Plane::Sight)]).collect();
        self.sample(&planes, Some(batch.iter().map(|r| (r.cutoff, Arc::clone(&r.footprints))).collect()))
    }

    fn poll_samples(&mut self, ticket: u64, wait: bool) -> Result<Option<Vec<u16>>> {
        let Some((readback, count, _)) = self.samples.get(&ticket) else {
            return Err(MurkError::UnknownTicket { backend: "gpu".into(), what: "sample", ticket });
        };
        let count = *count;
        let Some(bytes) = self.ctx.collect(readback, if wait { Wait::IfPending } else { Wait::No })? else { return Ok(None) };
        let (_, _, reduce) = self.samples.remove(&ticket).expect("found above");
        self.asked_by.remove(&ticket);
        let values: Vec<u16> = bytes.chunks(4).take(count).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]) as u16).collect();
        Ok(Some(match reduce {
            None => values,
            Some(requests) => {
                // Each request's texels in the visibility, then in the
                // sight reveal: one value per footprint, the larger of both.
                let mut out = Vec::with_capacity(requests.iter().map(|(_, list)| list.ends.len()).sum());
                let mut at = 0;
                for (cutoff, list) in requests {
                    let (visibility, sight) = values[at..at + 2 * list.texels.len()].split_at(list.texels.len());
                    let mut first = 0;
                    for &end in &list.ends {
                        let span = first..end as usize;
                        let top = visibility[span.clone()].iter().chain(&sight[span]).copied().max().unwrap_or(0);
                        out.push(murk_core::backend::footprint_value(top, cutoff));
                        first = end as usize;
                    }
                    at += 2 * list.texels.len();
                }
                out
            }
        }))
    }

    fn blocking_waits(&self) -> u64 {
        self.ctx.waits
    }

    fn readbacks_held(&self) -> usize {
        self.samples.len() + self.changed.len() + self.hashes.len()
    }

    fn forget_readback(&mut self, ticket: u64) {
        self.changed.remove(&ticket);
        self.samples.remove(&ticket);
        self.hashes.remove(&ticket);
        self.asked_by.remove(&ticket);
    }

    fn hash_textures(&mut self, key: InstanceKey, textures: &[Texture]) -> Result<Readback<Vec<u64>>> {
        let t = self.instances.get(&key).ok_or_else(|| unknown_key(key))?;
        let d = t.dims;
        let mut sources = Vec::with_capacity(textures.len());
        for &texture in textures {
            let (buffer, (width, height)) = match texture {
                Texture::Visibility => (&t.visibility, (d.width, d.height)),
                Texture::Blur => (&t.blurred, (d.width, d.height)),
                Texture::Memory => (&t.memory, (d.width, d.height)),
                Texture::Mapped => (&t.mapped, (d.width, d.height)),
                Texture::Compose => (&t.composed, (d.width, d.height)),
                Texture::Upscale => (&t.upscaled, (d.out_width, d.out_height)),
                Texture::Start => (&t.start, (d.out_width, d.out_height)),
                Texture::Final => (&t.final_mask, (d.out_width, d.out_height)),
                other => {
                    return Err(GpuError::TexelType { texture: other.name(), kind: other.kind().name(), needs: "the state hash takes u16" }.into())
                }
            };
            sources.push(crate::hash::Source { buffer, width, height });
        }
        let ticket = self.next_ticket;
        self.next_ticket += 1;
        let ctx = &mut self.ctx;
        let pending = self.pending.get_or_insert_with(|| Pending { encoder: ctx.encoder(), recycle: Vec::new(), maps: Vec::new() });
        let bytes = (textures.len().max(1) * 8) as u64;
        let roots = ctx.take(bytes);
        pending.recycle.extend(crate::hash::record(ctx, &mut pending.encoder, &sources, &roots));
        let readback = InFlight::new(ctx.staging(&mut pending.encoder, &roots, bytes), bytes);
        pending.recycle.push(roots);
        pending.maps.push(ticket);
        self.hashes.insert(ticket, (readback, textures.len()));
        self.asked_by.insert(ticket, key);
        // Submitted now: the values come back while the game goes on.
        self.flush()?;
        Ok(Readback::Ticket(ticket))
    }

    fn poll_hashes(&mut self, ticket: u64, wait: bool) -> Result<Option<Vec<u64>>> {
        if !self.hashes.contains_key(&ticket) {
            return Err(MurkError::UnknownTicket { backend: "gpu".into(), what: "hash", ticket });
        }
        self.flush()?;
        let (readback, count) = &self.hashes[&ticket];
        let count = *count;
        // Waiting is asking for the values now: a sync point, counted even
        // when the device had finished (core polls a due hash without
        // waiting first).
        let Some(bytes) = self.ctx.collect(readback, if wait { Wait::Sync } else { Wait::No })? else { return Ok(None) };
        self.hashes.remove(&ticket);
        self.asked_by.remove(&ticket);
        Ok(Some(bytes.chunks_exact(8).take(count).map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes"))).collect()))
    }

    fn enable_timings(&mut self) -> Result<()> {
        self.ctx.enable_timings()
    }

    fn take_timings(&mut self) -> Result<Vec<murk_core::PassTiming>> {
        self.flush()?;
        self.ctx.take_timings()
    }

    fn read_texture(&mut self, key: InstanceKey, texture: Texture) -> Result<StageImage> {
        self.flush()?;
        let t = self.instances.get(&key).ok_or_else(|| unknown_key(key))?;
        let ctx = &mut self.ctx;
        let d = t.dims;
        let (n, on) = (t.texels(), t.out_texels());
        let internal = |v: Vec<u16>| StageImage { width: d.width, height: d.height, data: StageData::U16(v) };
        let output = |v: Vec<u16>| StageImage { width: d.out_width, height: d.out_height, data: StageData::U16(v) };
        Ok(match texture {
            Texture::Coverage => StageImage {
                width: d.width,
                height: d.height,
                data: StageData::U8(ctx.read_u32(&t.coverage, n as usize)?.into_iter().map(|v| v as u8).collect()),
            },
            Texture::Height => StageImage {
                width: d.width,
                height: d.height,
                data: StageData::I32(ctx.read_u32(&t.height, n as usize)?.into_iter().map(|v| v as i32).collect()),
            },
            Texture::Mip(level) => {
                let levels = read_mips(ctx, t)?;
                let built = levels.len();
                match level.checked_sub(1).and_then(|i| levels.into_iter().nth(i as usize)) {
                    Some(grid) => grid.image(),
                    None => return Err(GpuError::NotBuilt(format!("mip level {level} is not built ({built} levels are)")).into()),
                }
            }
            Texture::DistanceField => {
                let (dw, dh) = (t.frame.df_width, t.frame.df_height);
                let texels = if dw * dh == 0 { Vec::new() } else { ctx.read_u32(&t.field, (dw * dh) as usize)? };
                StageImage { width: dw, height: dh, data: StageData::U32(texels) }
            }
            Texture::Visibility => internal(read_u16(ctx, &t.visibility, n)?),
            Texture::Blur => internal(read_u16(ctx, &t.blurred, n)?),
            Texture::Memory => internal(read_u16(ctx, &t.memory, n)?),
            Texture::Mapped => internal(read_u16(ctx, &t.mapped, n)?),
            Texture::Compose => internal(read_u16(ctx, &t.composed, n)?),
            Texture::Upscale => output(read_u16(ctx, &t.upscaled, on)?),
            Texture::Start => output(read_u16(ctx, &t.start, on)?),
            Texture::Final => output(read_u16(ctx, &t.final_mask, on)?),
        })
    }

    fn write_textures(&mut self, key: InstanceKey, set: &TextureSet) -> Result<()> {
        self.flush()?;
        self.ctx.forget_staged();
        let mut t = self.instances.remove(&key).ok_or_else(|| unknown_key(key))?;
        let result = import_all(&mut self.ctx, &mut t, set);
        self.instances.insert(key, t);
        result
    }
}
