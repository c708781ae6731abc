//! # murk-gpu
//!
//! The GPU backend of murk: every pass of the pipeline as a WGSL compute
//! shader (`shaders/<pass>.wgsl`, set up by `src/passes/<pass>.rs`), in the
//! integer arithmetic of the CPU reference, so both give the same bytes for
//! every pass, tick and case of the conformance suite.
//!
//! ```
//! use murk_core::glam::Vec3;
//! use murk_core::{Area, FogSubsystem, InstanceDesc, Position, Profile, TeamMask, VisionSource};
//!
//! fn final_mask(backend: Box<dyn murk_core::Backend>) -> murk_core::Result<Vec<u16>> {
//!     let mut fog = FogSubsystem::new(backend);
//!     let area = Area { center: Vec3::new(32.0, 32.0, 5.0), extents: Vec3::new(64.0, 64.0, 10.0), yaw_degrees: 0.0 };
//!     fog.create_instance(InstanceDesc { name: "main".into(), area, resolution: 64, lod: 0, observed_teams: TeamMask::ALL, profile: Profile::default() })?;
//!     let mut world = murk_core::hecs::World::new();
//!     world.spawn((Position(Vec3::new(32.0, 32.0, 0.0)), VisionSource::new(10.0)));
//!     for _ in 0..4 {
//!         fog.tick(&mut world, 33_333)?;
//!     }
//!     fog.final_mask("main")
//! }
//!
//! // murk's own device; `GpuBackend::from_device` takes a renderer's.
//! match murk_gpu::GpuBackend::new() {
//!     Ok(gpu) => assert_eq!(final_mask(Box::new(gpu))?, final_mask(Box::new(murk_cpu::CpuBackend::new(1)?))?),
//!     // No adapter (or one without what murk needs): the error says which.
//!     Err(e) => println!("no GPU backend here: {e}"),
//! }
//! # Ok::<(), murk_core::MurkError>(())
//! ```
//!
//! * Buffers for the simulation: every texel is a `u32` (masks) or `i32`
//!   (heights) in a storage buffer; buffers come from a pool by size and go
//!   back to it when an instance is destroyed.
//! * A texture for materials: after every blend the final mask is written
//!   into a filterable [`MASK_TEXTURE_FORMAT`] texture in the same
//!   submission ([`GpuBackend::mask_texture`]); `include/murk_fog.wgsl`
//!   samples it. On request a detail texture holds visibility, explored
//!   memory and the composed mask ([`GpuBackend::set_detail_texture`]).
//! * No waiting in a tick: an instance's occlusion build, recompute, blend
//!   and presentation are one submission; the recompute's "changed" flag
//!   and the stealth samples come back through readbacks that core uses
//!   [`murk_core::READBACK_LATENCY_TICKS`] ticks later. Only reading stages
//!   (pictures, hashes, snapshots) blocks, and [`Backend::blocking_waits`]
//!   counts each time it does.
//! * Any device: [`GpuBackend::new`] opens murk's own (any backend wgpu
//!   offers, chosen with `MURK_WGPU_BACKEND`), [`GpuBackend::from_device`]
//!   runs on the host's device and queue after checking their limits.
//!
//! See `docs/gpu.md` for embedding murk in a wgpu renderer.

mod context;
mod error;
mod gpu;
mod hash;
pub mod looks;
pub mod passes;
mod render;

pub use error::GpuError;
pub use render::TopView;
/// The wgpu this backend is built on, for hosts that hand it a device.
pub use wgpu;

/// The WGSL include that engine materials use to sample a mask texture in
/// world space (`include/murk_fog.wgsl`).
pub const FOG_INCLUDE: &str = include_str!("../include/murk_fog.wgsl");

pub use context::{limits_for, module_names, required_limits, wgsl_source, BACKEND_VAR, MASK_TEXTURE_FORMAT};

use context::Context;
use gpu::Gpu;
pub use gpu::SampleRange;
use gpu::Textures;
use murk_core::backend::{InstanceDims, InstanceKey, Readback, SampleRequest, Stage, StageImage};
use murk_core::{Backend, OcclusionInput, Pass, RecomputeInput, RecomputeReport, Result};
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// The GPU backend: a cheap handle on one device. Clones share the device
/// and the instances (a renderer keeps a clone to reach the mask textures
/// of the subsystem that owns the other); [`GpuBackend::another_world`]
/// gives a second subsystem its own instances on the same device.
#[derive(Clone)]
pub struct GpuBackend {
    gpu: Arc<Mutex<Gpu>>,
    world: Arc<World>,
}

/// The instance keys of one subsystem on a shared device, freed when the
/// last handle to it goes.
struct World {
    gpu: Arc<Mutex<Gpu>>,
    base: u32,
    keys: Mutex<BTreeSet<InstanceKey>>,
}

impl Drop for World {
    fn drop(&mut self) {
        let mut gpu = lock(&self.gpu);
        for k in lock(&self.keys).iter() {
            gpu.destroy_instance(self.base + k);
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding the lock leaves buffers in a valid state.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Key spaces of the worlds on one device: 4096 worlds of 2^20 instances.
const WORLD_KEYS: u32 = 1 << 20;

impl GpuBackend {
    /// Opens murk's own device (the first adapter of the backends that
    /// `MURK_WGPU_BACKEND` allows, else Vulkan, Metal or DX12, else GL) and
    /// compiles every pass; an error says why not.
    pub fn new() -> Result<Self> {
        Ok(Self::on(Context::open(false)?))
    }

    /// [`Self::new`] on a hardware adapter only: an adapter that runs on
    /// the CPU (lavapipe, llvmpipe, SwiftShader, WARP) is an error naming
    /// it, since murk's CPU backend is far faster there. What
    /// [`murk_core::BackendChoice::Auto`] opens.
    pub fn new_hardware() -> Result<Self> {
        Ok(Self::on(Context::open(true)?))
    }

    /// Whether this backend runs on an adapter that is itself a CPU
    /// (`wgpu::DeviceType::Cpu`).
    pub fn is_software(&self) -> bool {
        self.lock().ctx.adapter.device_type == wgpu::DeviceType::Cpu
    }

    /// Runs on a device and queue the host already has (a game's renderer),
    /// so that the mask textures live where its materials are. The
    /// device's limits are checked first: an error names each one below
    /// what murk needs (see [`required_limits`]). Timings need the device
    /// to have been opened with `TIMESTAMP_QUERY`.
    pub fn from_device(device: wgpu::Device, queue: wgpu::Queue, adapter: wgpu::AdapterInfo) -> Result<Self> {
        Ok(Self::on(Context::on_device(device, queue, adapter)?))
    }

    fn on(ctx: Context) -> Self {
        let gpu = Arc::new(Mutex::new(Gpu::new(ctx)));
        Self { world: Arc::new(World { gpu: gpu.clone(), base: 0, keys: Mutex::default() }), gpu }
    }

    /// A backend for another subsystem on the same device, with its own
    /// instances (freed when its last handle is dropped).
    pub fn another_world(&self) -> Self {
        let mut gpu = lock(&self.gpu);
        gpu.worlds = gpu.worlds.wrapping_add(1);
        let base = (gpu.worlds % 4096) * WORLD_KEYS;
        Self { gpu: self.gpu.clone(), world: Arc::new(World { gpu: self.gpu.clone(), base, keys: Mutex::default() }) }
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, Gpu> {
        lock(&self.gpu)
    }

    fn key(&self, key: InstanceKey) -> InstanceKey {
        self.world.base + key
    }

    /// The device's answer with the caller's keys: an unknown key is named
    /// as the caller gave it, not as the device-wide key of this world.
    fn in_world<T>(&self, r: Result<T>) -> Result<T> {
        r.map_err(|e| match e {
            murk_core::MurkError::UnknownKey { backend, key } => murk_core::MurkError::UnknownKey { backend, key: key.wrapping_sub(self.world.base) },
            other => other,
        })
    }

    /// Adapter name, driver and backend, e.g. `llvmpipe (LLVM 15.0.6, 256 bits) [Vulkan, Mesa 22.3.6]`.
    pub fn adapter(&self) -> String {
        let gpu = self.lock();
        let a = &gpu.ctx.adapter;
        format!("{} [{:?}, {} {}]", a.name, a.backend, a.driver, a.driver_info)
    }

    /// The device and queue murk runs on (to render with the mask textures
    /// on murk's own device).
    pub fn device(&self) -> (wgpu::Device, wgpu::Queue) {
        let gpu = self.lock();
        (gpu.ctx.device.clone(), gpu.ctx.queue.clone())
    }

    /// Storage buffers ever allocated (the pool reuses them; this stays flat
    /// when instances are created and destroyed over and over).
    pub fn allocated_buffers(&self) -> usize {
        self.lock().ctx.allocated
    }

    /// Readbacks issued and not yet collected or forgotten (changed flags,
    /// sample batches): stays small in a running game, whatever its length.
    pub fn readbacks_in_flight(&self) -> usize {
        self.lock().readbacks_in_flight()
    }

    /// Submits the work recorded so far and says whether every readback in
    /// flight has landed. A host that cannot block (a browser, where the
    /// device answers only while the page yields to its event loop) ticks
    /// only when this holds, so that no tick waits: see `docs/web.md`.
    pub fn readbacks_landed(&self) -> Result<bool> {
        let mut gpu = self.lock();
        gpu.flush()?;
        gpu.ctx.poll(false)?;
        Ok(gpu.readbacks_landed())
    }

    /// Times a call on this device blocked until the device was idle. Unlike
    /// [`Backend::blocking_waits`], a result asked for now that had already
    /// landed does not count: a host that cannot block (a browser) keeps
    /// this at zero by ticking only when [`GpuBackend::readbacks_landed`]
    /// holds.
    pub fn device_waits(&self) -> u64 {
        self.lock().ctx.blocked
    }

    /// Compute dispatches recorded on this device so far (every world on
    /// it): what a test counts to see how a batch was split.
    pub fn dispatches(&self) -> u64 {
        self.lock().ctx.dispatches.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Runs `reads` (a call that reads textures back, such as
    /// [`murk_core::FogSubsystem::snapshot`] on a subsystem on this device)
    /// as a rehearsal: each read it makes returns zeros at once and copies
    /// its buffer into a staging buffer, and the copies are submitted when
    /// it returns. Once [`GpuBackend::readbacks_landed`] holds, the same
    /// call made again finds every read landed and waits for nothing, so a
    /// host that cannot block can take a snapshot. What `reads` returns in
    /// the rehearsal is of no use beyond errors. The staged copies hold
    /// until new work is recorded on the device.
    pub fn rehearse_reads<R>(&self, reads: impl FnOnce() -> R) -> Result<R> {
        self.lock().ctx.begin_rehearsal();
        let out = reads();
        self.lock().ctx.end_rehearsal()?;
        Ok(out)
    }

    /// The texture holding an instance's final mask (key from
    /// [`murk_core::FogSubsystem::instance_key`]), rewritten after every
    /// blend in the same submission: `value / 65535` in the red, green and
    /// blue channels, row 0 at the area's local -Y edge. Sample it with a
    /// filtering sampler; it stays the same texture for the instance's life.
    pub fn mask_texture(&self, key: InstanceKey) -> Result<wgpu::Texture> {
        self.lock().mask_texture(self.key(key))
    }

    /// Starts (or stops) writing an instance's detail texture in each
    /// recompute: blurred visibility, explored memory and the composed mask
    /// in red, green and blue, at the internal resolution.
    pub fn set_detail_texture(&self, key: InstanceKey, on: bool) -> Result<()> {
        self.lock().set_detail(self.key(key), on)
    }

    /// The detail texture, when [`GpuBackend::set_detail_texture`] turned it on.
    pub fn detail_texture(&self, key: InstanceKey) -> Result<Option<wgpu::Texture>> {
        self.lock().detail_texture(self.key(key))
    }

    /// Reads a mask texture back (waits): each texel's red, green, blue and
    /// alpha as `f32`, row-major. For tests and tools; a renderer samples
    /// the texture instead.
    pub fn read_mask_texture(&self, texture: &wgpu::Texture) -> Result<Vec<[f32; 4]>> {
        if texture.format() != MASK_TEXTURE_FORMAT || texture.dimension() != wgpu::TextureDimension::D2 {
            return Err(murk_core::MurkError::invalid(
                "texture",
                format!("{:?} {:?}", texture.format(), texture.dimension()),
                format!("must be a 2D {MASK_TEXTURE_FORMAT:?} mask texture"),
            ));
        }
        let mut gpu = self.lock();
        gpu.flush()?;
        let bytes = gpu.ctx.read_texture(texture, 8)?;
        Ok(bytes.chunks_exact(8).map(|t| std::array::from_fn(|c| half::f16::from_le_bytes([t[2 * c], t[2 * c + 1]]).to_f32())).collect())
    }

    /// Runs one pass of an instance alone, submitted and waited for: the GPU
    /// rows of the per-pass benches. The instance must have been built and
    /// recomputed once with the same inputs (and with mips and the distance
    /// field, to time those).
    pub fn run_pass(&self, key: InstanceKey, pass: Pass, occlusion: &OcclusionInput, input: &RecomputeInput) -> Result<()> {
        self.lock().run_pass(self.key(key), pass, occlusion, input)
    }

    /// Submits recorded work and blocks until the device is idle (benches
    /// time whole ticks with it; counted in [`Backend::blocking_waits`]).
    pub fn finish(&self) -> Result<()> {
        let mut gpu = self.lock();
        gpu.flush()?;
        gpu.ctx.poll(true)
    }
}

impl Backend for GpuBackend {
    fn name(&self) -> String {
        self.lock().name()
    }
    fn create_instance(&mut self, key: InstanceKey, dims: InstanceDims) -> Result<()> {
        if key >= WORLD_KEYS {
            return Err(murk_core::MurkError::invalid("instance key", key, format!("must be below {WORLD_KEYS} on the GPU")));
        }
        lock(&self.world.keys).insert(key);
        let r = self.lock().create_instance(self.key(key), dims);
        self.in_world(r)
    }
    fn destroy_instance(&mut self, key: InstanceKey) {
        lock(&self.world.keys).remove(&key);
        self.lock().destroy_instance(self.key(key));
    }
    fn build_occlusion(&mut self, key: InstanceKey, input: &OcclusionInput) -> Result<()> {
        let r = self.lock().build_occlusion(self.key(key), input);
        self.in_world(r)
    }
    fn update_occlusion(&mut self, key: InstanceKey, input: &OcclusionInput, changed: &[murk_core::TexelRect]) -> Result<()> {
        let r = self.lock().update_occlusion(self.key(key), input, changed);
        self.in_world(r)
    }
    fn copy_occlusion(&mut self, from: InstanceKey, to: InstanceKey) -> Result<()> {
        let r = self.lock().copy_occlusion(self.key(from), self.key(to));
        self.in_world(r)
    }
    fn recompute(&mut self, key: InstanceKey, input: &RecomputeInput) -> Result<RecomputeReport> {
        let r = self.lock().recompute(self.key(key), input);
        self.in_world(r)
    }
    fn poll_changed(&mut self, ticket: u64, wait: bool) -> Result<Option<bool>> {
        self.lock().poll_changed(ticket, wait)
    }
    fn set_reveals(&mut self, key: InstanceKey, layer: Option<&murk_core::RevealLayer>) -> Result<()> {
        let r = self.lock().set_reveals(self.key(key), layer);
        self.in_world(r)
    }
    fn blend(&mut self, key: InstanceKey, t: u32) -> Result<()> {
        let r = self.lock().blend(self.key(key), t);
        self.in_world(r)
    }
    fn read_stage(&mut self, key: InstanceKey, stage: Stage) -> Result<StageImage> {
        let r = self.lock().read_stage(self.key(key), stage);
        self.in_world(r)
    }
    fn submit_samples(&mut self, batch: &[SampleRequest]) -> Result<u64> {
        let batch: Vec<SampleRequest> = batch.iter().map(|r| SampleRequest { key: self.key(r.key), texels: r.texels.clone() }).collect();
        let r = self.lock().submit_samples(&batch);
        self.in_world(r)
    }
    fn submit_footprints(&mut self, batch: &[murk_core::FootprintRequest]) -> Result<u64> {
        let batch: Vec<murk_core::FootprintRequest> =
            batch.iter().map(|r| murk_core::FootprintRequest { key: self.key(r.key), ..r.clone() }).collect();
        let r = self.lock().submit_footprints(&batch);
        self.in_world(r)
    }
    fn poll_samples(&mut self, ticket: u64, wait: bool) -> Result<Option<Vec<u16>>> {
        self.lock().poll_samples(ticket, wait)
    }
    fn blocking_waits(&self) -> u64 {
        self.lock().blocking_waits()
    }
    fn readbacks_held(&self) -> usize {
        // Only this world's: other subsystems share the device.
        self.lock().readbacks_held_in(self.world.base..self.world.base + WORLD_KEYS)
    }
    fn forget_readback(&mut self, ticket: u64) {
        self.lock().forget_readback(ticket)
    }
    fn enable_timings(&mut self) -> Result<()> {
        self.lock().enable_timings()
    }
    fn take_timings(&mut self) -> Result<Vec<murk_core::PassTiming>> {
        self.lock().take_timings()
    }
    fn hash_textures(&mut self, key: InstanceKey, textures: &[murk_core::Texture]) -> Result<Readback<Vec<u64>>> {
        let r = self.lock().hash_textures(self.key(key), textures);
        self.in_world(r)
    }
    fn poll_hashes(&mut self, ticket: u64, wait: bool) -> Result<Option<Vec<u64>>> {
        self.lock().poll_hashes(ticket, wait)
    }
    fn read_texture(&mut self, key: InstanceKey, texture: murk_core::Texture) -> Result<StageImage> {
        let r = self.lock().read_texture(self.key(key), texture);
        self.in_world(r)
    }
    fn write_textures(&mut self, key: InstanceKey, set: &murk_core::TextureSet) -> Result<()> {
        let r = self.lock().write_textures(self.key(key), set);
        self.in_world(r)
    }
}
