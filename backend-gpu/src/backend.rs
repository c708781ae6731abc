//! [`GpuBackend`]: a cheap handle on one device's state, the `Backend`
//! that a `FogSubsystem` owns. Clones share the device and the instances;
//! each world ([`GpuBackend::another_world`]) has its own key space on the
//! device.

use crate::context::Context;
use crate::gpu::Gpu;
use crate::shaders::MASK_TEXTURE_FORMAT;
use murk_core::{
    Backend, FootprintRequest, InstanceDims, InstanceKey, KeptTextures, LineRequest, MurkError, OcclusionInput, Pass, PassTiming, Readback,
    ReadbackHold, RecomputeInput, RecomputeReport, Result, RevealLayer, SampleRequest, TexelRect, Texture, TextureImage, TextureSet,
};
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

    /// The device-wide key of this world's instance `key`.
    fn key(&self, key: InstanceKey) -> InstanceKey {
        self.world.base + key
    }

    /// Runs `call` on the device state and names an unknown key in its
    /// answer as this world's caller gave it: the one way every `Backend`
    /// call with an answer reaches [`Gpu`], whose keys span every world on
    /// the device (`call` maps the caller's keys with [`GpuBackend::key`]).
    fn in_world<T>(&self, call: impl FnOnce(&mut Gpu) -> Result<T>) -> Result<T> {
        let answer = call(&mut self.lock());
        answer.map_err(|e| match e {
            MurkError::UnknownKey { backend, key } => MurkError::UnknownKey { backend, key: key.wrapping_sub(self.world.base) },
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

    /// Bytes copied for reading back on this device so far (every world on
    /// it, each readback rounded up to whole words): what a test counts to
    /// see that a batch reads back its answers and not the texels behind
    /// them.
    pub fn bytes_read_back(&self) -> u64 {
        self.lock().ctx.read_back.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Bytes copied on this device to keep rollback states there and to
    /// load them back (every world on it): what a test counts to see that
    /// states share the occlusion no tick rebuilt, and that a load skips
    /// the occlusion the instance holds already.
    pub fn bytes_kept_on_device(&self) -> u64 {
        self.lock().ctx.kept_copies.load(std::sync::atomic::Ordering::Relaxed)
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
            return Err(MurkError::invalid(
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

/// Every call runs on the device state (`Gpu`, which implements the
/// trait over device-wide keys), with this world's keys mapped to the
/// device's: calls with an answer through [`GpuBackend::in_world`].
impl Backend for GpuBackend {
    fn name(&self) -> String {
        self.lock().name()
    }
    fn create_instance(&mut self, key: InstanceKey, dims: InstanceDims) -> Result<()> {
        if key >= WORLD_KEYS {
            return Err(MurkError::invalid("instance key", key, format!("must be below {WORLD_KEYS} on the GPU")));
        }
        lock(&self.world.keys).insert(key);
        self.in_world(|gpu| gpu.create_instance(self.key(key), dims))
    }
    fn destroy_instance(&mut self, key: InstanceKey) {
        lock(&self.world.keys).remove(&key);
        self.lock().destroy_instance(self.key(key));
    }
    fn build_occlusion(&mut self, key: InstanceKey, input: &OcclusionInput) -> Result<()> {
        self.in_world(|gpu| gpu.build_occlusion(self.key(key), input))
    }
    fn update_occlusion(&mut self, key: InstanceKey, input: &OcclusionInput, changed: &[TexelRect]) -> Result<()> {
        self.in_world(|gpu| gpu.update_occlusion(self.key(key), input, changed))
    }
    fn copy_occlusion(&mut self, from: InstanceKey, to: InstanceKey) -> Result<()> {
        self.in_world(|gpu| gpu.copy_occlusion(self.key(from), self.key(to)))
    }
    fn recompute(&mut self, key: InstanceKey, input: &RecomputeInput) -> Result<RecomputeReport> {
        self.in_world(|gpu| gpu.recompute(self.key(key), input))
    }
    fn poll_changed(&mut self, ticket: u64, wait: bool) -> Result<Option<bool>> {
        self.in_world(|gpu| gpu.poll_changed(ticket, wait))
    }
    fn set_reveals(&mut self, key: InstanceKey, layer: Option<&RevealLayer>) -> Result<()> {
        self.in_world(|gpu| gpu.set_reveals(self.key(key), layer))
    }
    fn blend(&mut self, key: InstanceKey, t: u32) -> Result<()> {
        self.in_world(|gpu| gpu.blend(self.key(key), t))
    }
    fn submit_samples(&mut self, batch: &[SampleRequest]) -> Result<u64> {
        let batch: Vec<SampleRequest> = batch.iter().map(|r| SampleRequest { key: self.key(r.key), texels: r.texels.clone() }).collect();
        self.in_world(|gpu| gpu.submit_samples(&batch))
    }
    fn submit_footprints(&mut self, batch: &[FootprintRequest]) -> Result<u64> {
        let batch: Vec<FootprintRequest> = batch.iter().map(|r| FootprintRequest { key: self.key(r.key), ..r.clone() }).collect();
        self.in_world(|gpu| gpu.submit_footprints(&batch))
    }
    fn submit_lines(&mut self, request: &LineRequest) -> Result<u64> {
        let request = LineRequest { key: self.key(request.key), ..request.clone() };
        self.in_world(|gpu| gpu.submit_lines(&request))
    }
    fn poll_samples(&mut self, ticket: u64, wait: bool) -> Result<Option<Vec<u16>>> {
        self.in_world(|gpu| gpu.poll_samples(ticket, wait))
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
    fn hold_readback(&mut self, ticket: u64) -> Option<ReadbackHold> {
        self.lock().hold(ticket)
    }
    fn enable_timings(&mut self) -> Result<()> {
        self.in_world(|gpu| gpu.enable_timings())
    }
    fn take_timings(&mut self) -> Result<Vec<PassTiming>> {
        self.in_world(|gpu| gpu.take_timings())
    }
    fn hash_textures(&mut self, key: InstanceKey, textures: &[Texture]) -> Result<Readback<Vec<u64>>> {
        self.in_world(|gpu| gpu.hash_textures(self.key(key), textures))
    }
    fn poll_hashes(&mut self, ticket: u64, wait: bool) -> Result<Option<Vec<u64>>> {
        self.in_world(|gpu| gpu.poll_hashes(ticket, wait))
    }
    fn count_explored(&mut self, key: InstanceKey) -> Result<Readback<u64>> {
        self.in_world(|gpu| gpu.count_explored(self.key(key)))
    }
    fn read_texture(&mut self, key: InstanceKey, texture: Texture) -> Result<TextureImage> {
        self.in_world(|gpu| gpu.read_texture(self.key(key), texture))
    }
    fn keep_textures(&mut self, key: InstanceKey) -> Result<Option<KeptTextures>> {
        self.in_world(|gpu| gpu.keep_textures(self.key(key)))
    }
    fn check_kept(&self, kept: &KeptTextures, dims: InstanceDims) -> Result<()> {
        self.lock().check_kept(kept, dims)
    }
    fn load_kept(&mut self, key: InstanceKey, kept: &KeptTextures) -> Result<()> {
        self.in_world(|gpu| gpu.load_kept(self.key(key), kept))
    }
    fn write_textures(&mut self, key: InstanceKey, set: &TextureSet) -> Result<()> {
        self.in_world(|gpu| gpu.write_textures(self.key(key), set))
    }
}
