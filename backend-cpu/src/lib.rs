//! # murk-cpu
//!
//! The CPU reference backend of murk: every pass of the pipeline in
//! plain integer Rust, parallel over rows with rayon; the painting of
//! source windows, blur, memory, compose, upscale and blend run `wide` SIMD
//! kernels, each beside the scalar twin it is tested equal to. Visibility
//! keeps each source's window across recomputes, and their combination, so
//! a recompute redoes only what the sources that changed touch; the passes
//! after it redo only the blocks of texels that changed or have not settled
//! (see `docs/determinism.md`).
//! It is the backend that
//! writes the conformance goldens; every other backend must match its bytes.
//!
//! ```
//! use murk_core::{Area, FogSubsystem, InstanceDesc, Position, Profile, TeamMask, VisionSource};
//! use murk_core::glam::Vec3;
//!
//! // Two threads; any thread count gives the same bytes.
//! let mut fog = FogSubsystem::new(Box::new(murk_cpu::CpuBackend::new(2)?));
//! assert_eq!(fog.backend_name(), "cpu[threads=2]");
//! let area = Area { center: Vec3::new(32.0, 32.0, 5.0), extents: Vec3::new(64.0, 64.0, 10.0), yaw_degrees: 0.0 };
//! let desc = InstanceDesc { name: "main".into(), area, resolution: 64, lod: 0, observed_teams: TeamMask::ALL, profile: Profile::default() };
//! fog.create_instance(desc)?;
//! let mut world = hecs::World::new();
//! world.spawn((Position(Vec3::new(32.0, 32.0, 0.0)), VisionSource::new(10.0)));
//! fog.tick(&mut world, 33_333)?;
//! assert_eq!(fog.final_mask("main")?.len(), 64 * 64);
//! # Ok::<(), murk_core::MurkError>(())
//! ```
//!
//! Results do not depend on the thread count: every pass writes each texel
//! from inputs that no other thread writes, and the only reductions are
//! order-free (`max`, `or`).

mod error;
pub mod looks;
pub mod passes;
pub mod tiles;

pub use error::CpuError;

use murk_core::backend::{
    FootprintList, FootprintRequest, InstanceDims, InstanceKey, Readback, SampleRequest, Stage, StageData, StageImage, TickRunner,
};
use murk_core::fixed::HEIGHT_FLOOR;
use murk_core::{
    Backend, Grid, MurkError, OcclusionInput, RecomputeInput, RecomputeReport, Result, TexelRect, Texture, TextureSet, TileData, TiledImage,
};
use passes::compose::ComposeParams;
use passes::dirty::Blocks;
use passes::footprints::{Judge, Plan, Signal};
use passes::settle::SettleKey;
use passes::visibility::Occlusion;
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The last version given to texture bytes, by any CPU backend of the
/// process (the versions of the tiles of [`Backend::save_tiles`]): versions
/// are never given twice.
static VERSIONS: AtomicU64 = AtomicU64::new(0);

/// A version not given before.
fn next_version() -> u64 {
    VERSIONS.fetch_add(1, Ordering::Relaxed) + 1
}

fn unknown_key(key: InstanceKey) -> MurkError {
    MurkError::UnknownKey { backend: "cpu".into(), key }
}

/// Textures of one instance.
struct CpuInstance {
    dims: InstanceDims,
    coverage: Vec<u8>,
    height: Vec<i32>,
    mips: Vec<Grid<u8>>,
    distance_field: Grid<u32>,
    /// The distance field's column pass (empty: not known, an update
    /// builds the field whole).
    df_columns: Vec<u32>,
    accel: passes::visibility::Accel,
    /// Source windows over the current occlusion (cleared with `accel`).
    windows: passes::visibility::WindowCache,
    visibility: Vec<u16>,
    blurred: Vec<u16>,
    memory: Vec<u16>,
    mapped: Vec<u16>,
    /// The scripted reveals memory and compose read (`None`: none).
    reveals: Option<murk_core::RevealLayer>,
    composed: Vec<u16>,
    upscaled: Vec<u16>,
    start: Vec<u16>,
    final_mask: Vec<u16>,
    /// Blocks of the internal grid whose memory or composed may still move
    /// with their blurred visibility unchanged, under `settled_under`
    /// (`None`: not known, every block is recomputed).
    unsettled: Blocks,
    settled_under: Option<SettleKey>,
    /// Blocks of the output grid where the blend start, the upscaled and the
    /// final mask may differ.
    out_unsettled: Blocks,
    /// A recompute made the final mask the start of the next blend over
    /// `out_unsettled`, and the copy is not made yet: the next blend makes
    /// it block by block as it goes, anything else that reaches the
    /// instance first (through [`CpuBackend::parts`]) makes it whole.
    start_pending: bool,
    /// The kernel `blurred` was last blurred with (`None`: not known).
    blurred_with: Option<murk_core::BlurKernel>,
    /// The last footprint judgment and the tiles of the sight signal
    /// written since (`None`: no footprint judged since the signal was made,
    /// loaded or given a new sight reveal).
    judge: Option<Judge>,
    /// The version of the occlusion (coverage, heights, pyramid and
    /// field, every tile), taken anew by whatever may write it.
    occlusion_version: u64,
    /// The version of each tile of each mask, in the order of
    /// [`tiles::MASKS`]; `None` until a save state is first taken from the
    /// instance or loaded into it, or a mask of it is first hashed: a game
    /// that does neither pays nothing for the versions.
    mask_tiles: Option<Vec<tiles::TileVersions>>,
    /// The hash last taken of each mask, in the order of [`tiles::MASKS`],
    /// with the tile versions it was taken at.
    hashes: [Option<tiles::KeptHash>; tiles::MASKS.len()],
    /// What a save may share without reading: which masks are known to hold
    /// another's bytes.
    copies: tiles::Copies,
}

impl CpuInstance {
    fn new(dims: InstanceDims) -> Self {
        let mut inst = Self::blank(dims);
        inst.accel = passes::visibility::Accel::new(&inst.coverage, &inst.height, dims.width, dims.height);
        inst
    }

    /// Every texture zero (heights at the floor), and no tables yet.
    fn blank(dims: InstanceDims) -> Self {
        let n = (dims.width * dims.height) as usize;
        let on = (dims.out_width * dims.out_height) as usize;
        let (unsettled, settled_under, out_unsettled, blurred_with) = Self::blank_caches(dims);
        Self {
            dims,
            coverage: vec![0; n],
            height: vec![HEIGHT_FLOOR; n],
            mips: Vec::new(),
            distance_field: Grid::default(),
            df_columns: Vec::new(),
            accel: passes::visibility::Accel::default(),
            windows: passes::visibility::WindowCache::default(),
            visibility: vec![0; n],
            blurred: vec![0; n],
            memory: vec![0; n],
            mapped: vec![0; n],
            reveals: None,
            composed: vec![0; n],
            upscaled: vec![0; on],
            start: vec![0; on],
            final_mask: vec![0; on],
            unsettled,
            settled_under,
            out_unsettled,
            start_pending: false,
            blurred_with,
            judge: None,
            occlusion_version: next_version(),
            mask_tiles: None,
            hashes: Default::default(),
            copies: tiles::Copies::default(),
        }
    }

    /// The tiles of every mask at `version`.
    fn blank_tiles(dims: InstanceDims, version: u64) -> Vec<tiles::TileVersions> {
        let size = |t: Texture| {
            if matches!(t, Texture::Upscale | Texture::Start | Texture::Final) {
                (dims.out_width, dims.out_height)
            } else {
                (dims.width, dims.height)
            }
        };
        tiles::MASKS.iter().map(|&t| tiles::TileVersions::new(size(t).0, size(t).1, version)).collect()
    }

    /// What [`CpuInstance::blank`] knows of its masks (nothing settled,
    /// nothing blurred): `(unsettled, settled_under, out_unsettled, blurred_with)`.
    fn blank_caches(dims: InstanceDims) -> (Blocks, Option<SettleKey>, Blocks, Option<murk_core::BlurKernel>) {
        let unsettled = Blocks::new(dims.width as usize, dims.height as usize, true);
        (unsettled, None, Blocks::new(dims.out_width as usize, dims.out_height as usize, true), None)
    }
}

/// Where the backend's rows run: its own rayon pool, or, where no thread can
/// be spawned (wasm32 without threads, as in a browser), the calling thread
/// (rayon's work inside then runs on its global pool, which falls back to
/// the calling thread there). The bytes are the same either way.
#[derive(Clone)]
enum Workers {
    Pool(Arc<rayon::ThreadPool>),
    CallingThread,
}

impl TickRunner for Workers {
    fn run(&self, work: &mut (dyn FnMut() + Send)) {
        self.install(work);
    }
}

impl Workers {
    /// `threads` workers (at least 1).
    fn new(threads: usize) -> Result<Self> {
        if cfg!(all(target_family = "wasm", not(target_feature = "atomics"))) {
            return match threads {
                1 => Ok(Workers::CallingThread),
                _ => Err(MurkError::invalid("threads", threads, "must be 1 on a target without threads (wasm32 without atomics)")),
            };
        }
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).thread_name(|i| format!("murk-cpu-{i}")).build().map_err(CpuError::from)?;
        Ok(Workers::Pool(Arc::new(pool)))
    }

    /// Runs `work` on the pool. With more than one worker, the others stay
    /// awake until `work` returns, taking each piece of parallel work as
    /// soon as it is split off: a worker that fell asleep between two
    /// parallel loops is woken by a system call and starts tens of
    /// microseconds late, and a tick runs many short loops.
    fn install<R: Send>(&self, work: impl FnOnce() -> R + Send) -> R {
        match self {
            Workers::Pool(pool) if pool.current_num_threads() > 1 => pool.install(|| {
                let done = AtomicBool::new(false);
                let caller = rayon::current_thread_index();
                rayon::scope(|s| {
                    for _ in 1..rayon::current_num_threads() {
                        s.spawn(|_| help_until(&done, caller));
                    }
                    // (When `work` panics, the helpers end once idle for
                    // their patience.)
                    let result = work();
                    done.store(true, Ordering::Release);
                    result
                })
            }),
            Workers::Pool(pool) => pool.install(work),
            Workers::CallingThread => work(),
        }
    }
}

/// How long a helper waits for work before it leaves the worker to the
/// pool's own idling (which sleeps): far longer than the serial steps
/// between a tick's parallel loops, short enough not to hold a core while
/// the work runs long on one thread, or while cores are oversubscribed.
const HELPER_PATIENCE: Duration = Duration::from_micros(250);

/// Runs the pool's pending work until `done` is set, or until no work came
/// for [`HELPER_PATIENCE`]. A helper taken up by the thread running the
/// work itself (while that thread waits inside the work) returns at once:
/// it would wait on a flag only that thread sets.
fn help_until(done: &AtomicBool, caller: Option<usize>) {
    if rayon::current_thread_index() == caller {
        return;
    }
    let mut idle_since = None;
    while !done.load(Ordering::Acquire) {
        if rayon::yield_now() == Some(rayon::Yield::Executed) {
            idle_since = None;
            continue;
        }
        let since = *idle_since.get_or_insert_with(Instant::now);
        if since.elapsed() > HELPER_PATIENCE {
            return;
        }
        std::thread::yield_now();
    }
}

/// The CPU reference backend.
pub struct CpuBackend {
    pool: Workers,
    threads: usize,
    instances: BTreeMap<InstanceKey, CpuInstance>,
    samples: BTreeMap<u64, Vec<u16>>,
    next_ticket: u64,
}

impl CpuBackend {
    /// A backend running on `threads` worker threads (at least 1).
    pub fn new(threads: usize) -> Result<Self> {
        if threads == 0 {
            return Err(MurkError::invalid("threads", 0, "must be at least 1"));
        }
        Ok(Self { pool: Workers::new(threads)?, threads, instances: BTreeMap::new(), samples: BTreeMap::new(), next_ticket: 0 })
    }

    /// Splits the backend into its pool and one instance's textures, with
    /// the blend start a recompute left pending copied.
    fn parts(&mut self, key: InstanceKey) -> Result<(&Workers, &mut CpuInstance)> {
        let (pool, inst) = self.parts_pending(key)?;
        if std::mem::take(&mut inst.start_pending) {
            pool.install(|| passes::settle::copy_marked(&inst.final_mask, &mut inst.start, &inst.out_unsettled));
            inst.copies.start_made(&inst.mask_tiles);
        }
        Ok((pool, inst))
    }

    /// [`CpuBackend::parts`] with the blend start left as it is (the
    /// blend's own way in).
    fn parts_pending(&mut self, key: InstanceKey) -> Result<(&Workers, &mut CpuInstance)> {
        let inst = self.instances.get_mut(&key).ok_or_else(|| unknown_key(key))?;
        Ok((&self.pool, inst))
    }
}

impl Backend for CpuBackend {
    fn name(&self) -> String {
        format!("cpu[threads={}]", self.threads)
    }

    fn run_parallel(&self, work: &mut (dyn FnMut() + Send)) {
        self.pool.install(work);
    }

    fn tick_runner(&self) -> Option<Arc<dyn TickRunner>> {
        match &self.pool {
            Workers::Pool(_) => Some(Arc::new(self.pool.clone())),
            Workers::CallingThread => None,
        }
    }

    fn create_instance(&mut self, key: InstanceKey, dims: InstanceDims) -> Result<()> {
        self.instances.insert(key, CpuInstance::new(dims));
        Ok(())
    }

    fn destroy_instance(&mut self, key: InstanceKey) {
        self.instances.remove(&key);
    }

    fn build_occlusion(&mut self, key: InstanceKey, input: &OcclusionInput) -> Result<()> {
        let (pool, inst) = self.parts(key)?;
        inst.occlusion_version = next_version();
        if (input.width, input.height) != (inst.dims.width, inst.dims.height) {
            return Err(CpuError::size("occlusion input", (input.width, input.height), (inst.dims.width, inst.dims.height)).into());
        }
        pool.install(|| {
            // Rasterized row by row into the tables' first pass.
            inst.accel.fill_and_rebuild(&mut inst.coverage, &mut inst.height, input.width, input.height, |row, cov, hgt| {
                passes::rasterize::rasterize_row(input, row, cov, hgt)
            });
            inst.windows.clear();
            inst.mips = if input.build_mips { passes::mips::build_mips(&inst.coverage, input.width, input.height) } else { Vec::new() };
            (inst.distance_field, inst.df_columns) = if input.distance_field_scale > 0 {
                passes::distance_field::distance_field_kept(&inst.coverage, input.width, input.height, input.distance_field_scale)
            } else {
                (Grid::default(), Vec::new())
            };
        });
        Ok(())
    }

    fn update_occlusion(&mut self, key: InstanceKey, input: &OcclusionInput, changed: &[TexelRect]) -> Result<()> {
        let (pool, inst) = self.parts(key)?;
        let (w, h) = (inst.dims.width, inst.dims.height);
        if (input.width, input.height) != (w, h) {
            return Err(CpuError::size("occlusion input", (input.width, input.height), (w, h)).into());
        }
        if let Some(r) = changed.iter().find(|r| r.is_empty() || r.x1 > w || r.y1 > h) {
            return Err(MurkError::invalid("changed rectangle", format!("{r:?}"), format!("must be a non-empty part of the {w}x{h} grid")));
        }
        let mips_built = !inst.mips.is_empty() || (w, h) == (1, 1);
        if input.build_mips != mips_built || (input.distance_field_scale > 0) != (inst.distance_field.width > 0) {
            // What is built differs from what is asked: built whole.
            return self.build_occlusion(key, input);
        }
        inst.occlusion_version = next_version();
        pool.install(|| {
            let capture = input.capture.as_deref();
            for r in changed {
                let shapes = murk_core::raster::shapes_meeting(input, r);
                let (x0, x1, wu) = (r.x0 as usize, r.x1 as usize, w as usize);
                let rows = r.y0 as usize * wu..r.y1 as usize * wu;
                inst.coverage[rows.clone()].par_chunks_mut(wu).zip(inst.height[rows].par_chunks_mut(wu)).enumerate().for_each(|(k, (cov, hgt))| {
                    passes::rasterize::rasterize_span(&shapes, capture, r.y0 + k as u32, r.x0, &mut cov[x0..x1], &mut hgt[x0..x1]);
                });
            }
            let same_classes = inst.accel.update(&inst.coverage, &inst.height, w, h, changed);
            let mut forget: Vec<TexelRect> = changed.to_vec();
            for r in changed {
                passes::mips::update_mips(&mut inst.mips, &inst.coverage, w, h, r);
            }
            let scale = input.distance_field_scale;
            if scale > 0 {
                if inst.df_columns.len() == inst.distance_field.texels.len() {
                    let moved = passes::distance_field::update_distance_field(
                        &inst.coverage,
                        w,
                        h,
                        scale,
                        changed,
                        &mut inst.distance_field,
                        &mut inst.df_columns,
                    );
                    // A window reads the field inside its box: where the
                    // field moved, windows go too.
                    forget.extend((!moved.is_empty()).then_some(moved));
                } else {
                    (inst.distance_field, inst.df_columns) = passes::distance_field::distance_field_kept(&inst.coverage, w, h, scale);
                    forget = vec![TexelRect::grid(w, h)];
                }
            }
            inst.windows.forget(&forget, !same_classes);
        });
        Ok(())
    }

    fn copy_occlusion(&mut self, from: InstanceKey, to: InstanceKey) -> Result<()> {
        let src = self.instances.get(&from).ok_or_else(|| unknown_key(from))?;
        let (coverage, height, mips, df, df_columns, accel, dims) = (
            src.coverage.clone(),
            src.height.clone(),
            src.mips.clone(),
            src.distance_field.clone(),
            src.df_columns.clone(),
            src.accel.clone(),
            src.dims,
        );
        let (_, dst) = self.parts(to)?;
        if (dst.dims.width, dst.dims.height) != (dims.width, dims.height) {
            return Err(CpuError::size("the occlusion to share", (dims.width, dims.height), (dst.dims.width, dst.dims.height)).into());
        }
        // The tables are a function of coverage and height: copied with them.
        dst.occlusion_version = next_version();
        dst.accel = accel;
        dst.windows.clear();
        dst.coverage = coverage;
        dst.height = height;
        dst.mips = mips;
        dst.distance_field = df;
        dst.df_columns = df_columns;
        Ok(())
    }

    fn recompute(&mut self, key: InstanceKey, input: &RecomputeInput) -> Result<RecomputeReport> {
        let (pool, inst) = self.parts(key)?;
        // Every mask tile this recompute may write takes this version.
        let version = next_version();
        let (w, h) = (inst.dims.width, inst.dims.height);
        let changed = pool.install(|| {
            let occ = Occlusion {
                width: w,
                height: h,
                coverage: &inst.coverage,
                heights: &inst.height,
                mips: &inst.mips,
                distance_field: &inst.distance_field,
                accel: &inst.accel,
            };
            // The blocks whose blurred visibility changed.
            let mut blurred_marks = Blocks::new(w as usize, h as usize, false);
            if !input.reuse_visibility {
                let (_, changed, across) = passes::visibility::visibility_changes(input, &occ, &mut inst.windows, &mut inst.visibility);
                if let Some(judge) = inst.judge.as_mut() {
                    judge.mark(&changed);
                }
                if let Some(v) = tiles::of(&mut inst.mask_tiles, Texture::Visibility) {
                    v.stamp(&changed, version);
                }
                // Blurred changes within the kernel's reach of what changed,
                // when the kernel and one step are what blurred was made with.
                let same_kernel = inst.blurred_with.as_ref() == Some(&input.blur);
                inst.blurred_with = Some(input.blur.clone());
                if input.blur.iterations == 1 && same_kernel {
                    let reach = across.widened_rows(input.blur.radius());
                    blurred_marks = passes::blur::blur_marked(&input.blur, w, h, &inst.visibility, &mut inst.blurred, &reach);
                } else {
                    blurred_marks = Blocks::new(w as usize, h as usize, true);
                    passes::blur::blur(&input.blur, w, h, &inst.visibility, &mut inst.blurred);
                }
                if let Some(v) = tiles::of(&mut inst.mask_tiles, Texture::Blur) {
                    v.stamp(&blurred_marks, version);
                }
            }
            let params = ComposeParams {
                fade_in_step: input.fade_in_step,
                relax_step: input.relax_step,
                explored_value: input.explored_value,
                mapped_value: input.mapped_value,
                show_memory_alpha: input.show_memory_alpha,
            };
            // Memory and compose where blurred changed or a block has not
            // settled (every block when the fixed points moved).
            let key = SettleKey::new(input.forget_step, input.freeze_memory, params);
            let mut todo = blurred_marks;
            let known = inst.settled_under == Some(key);
            if known {
                todo.add(&inst.unsettled);
            } else {
                todo = Blocks::new(w as usize, h as usize, true);
            }
            let (mut moved, mut remembered) = (Blocks::new(w as usize, h as usize, false), Blocks::new(w as usize, h as usize, false));
            // The upscale of scale 1 copies each block of composed that
            // moved, in the same pass.
            let scale = inst.dims.out_width / w;
            let copy = (scale == 1 && known).then_some(&mut inst.upscaled[..]);
            let changed = passes::settle::memory_compose_marked(
                &inst.blurred,
                &mut inst.memory,
                &mut inst.mapped,
                &mut inst.composed,
                copy,
                inst.reveals.as_ref().map(passes::settle::Planes::of),
                (input.forget_step, input.freeze_memory),
                params,
                &todo,
                &mut inst.unsettled,
                &mut moved,
                &mut remembered,
            );
            inst.settled_under = Some(key);
            // The versions follow the marks once a state was saved.
            let mut composed = Vec::new();
            if inst.mask_tiles.is_some() {
                composed = tiles::marked_tiles(&moved);
                let remembered = tiles::marked_tiles(&remembered);
                let stamps = [(Texture::Memory, &remembered), (Texture::Mapped, &remembered), (Texture::Compose, &composed)];
                for (mask, marked) in stamps {
                    if let Some(v) = tiles::of(&mut inst.mask_tiles, mask) {
                        v.stamp_tiles(marked, version);
                    }
                }
            }
            if !known {
                // After a restore the upscaled mask may not be the one of
                // composed: every block is upscaled again.
                moved = Blocks::new(w as usize, h as usize, true);
            }
            // The upscaled mask changes only where composed did.
            if scale == 1 {
                if !known {
                    inst.upscaled.copy_from_slice(&inst.composed);
                }
                match tiles::of(&mut inst.mask_tiles, Texture::Upscale) {
                    Some(v) if known => v.stamp_tiles(&composed, version),
                    Some(v) => v.stamp_all(version),
                    None => {}
                }
                inst.out_unsettled.add(&moved);
                inst.copies.upscale_is_compose = true;
            } else if moved.any() {
                passes::upscale::upscale(&inst.composed, w, h, scale, &mut inst.upscaled);
                if let Some(v) = tiles::of(&mut inst.mask_tiles, Texture::Upscale) {
                    v.stamp_all(version);
                }
                inst.out_unsettled = Blocks::new(inst.dims.out_width as usize, inst.dims.out_height as usize, true);
            }
            // The blend starts from the final mask (equal to it where
            // settled): the next blend copies it as it goes.
            inst.start_pending = true;
            if let Some(v) = tiles::of(&mut inst.mask_tiles, Texture::Start) {
                v.stamp(&inst.out_unsettled, version);
            }
            changed
        });
        Ok(RecomputeReport { changed: Readback::Ready(changed) })
    }

    fn set_reveals(&mut self, key: InstanceKey, layer: Option<&murk_core::RevealLayer>) -> Result<()> {
        let (_, inst) = self.parts(key)?;
        let (w, h) = (inst.dims.width as usize, inst.dims.height as usize);
        if let Some(l) = layer {
            for (name, plane) in [("sight", &l.sight), ("kept", &l.kept), ("map", &l.map)] {
                if plane.len() != w * h {
                    let (what, size, instance) = (format!("reveal plane `{name}`"), format!("{} texels", plane.len()), format!("{w}x{h}"));
                    return Err(CpuError::SizeMismatch { what, size, instance }.into());
                }
            }
        }
        // Memory and compose run again where the planes changed, and
        // footprints are judged again where the sight plane did.
        let old = inst.reveals.take();
        let plane = |l: Option<&murk_core::RevealLayer>, i: usize| l.map_or((0, 0, 0), |l| (l.sight[i], l.kept[i], l.map[i]));
        let mut sight = Blocks::new(w, h, false);
        for y in 0..h {
            for b in 0..w.div_ceil(passes::dirty::BLOCK) {
                let span = y * w + b * passes::dirty::BLOCK..y * w + ((b + 1) * passes::dirty::BLOCK).min(w);
                if span.clone().any(|i| plane(old.as_ref(), i) != plane(layer, i)) {
                    inst.unsettled.marks[y * inst.unsettled.per_row + b] = true;
                }
                if span.clone().any(|i| plane(old.as_ref(), i).0 != plane(layer, i).0) {
                    sight.marks[y * sight.per_row + b] = true;
                }
            }
        }
        if let Some(judge) = inst.judge.as_mut() {
            judge.mark(&sight);
        }
        inst.reveals = layer.cloned();
        Ok(())
    }

    fn blend(&mut self, key: InstanceKey, t: u32) -> Result<()> {
        let (pool, inst) = self.parts_pending(key)?;
        let restart = std::mem::take(&mut inst.start_pending);
        if restart {
            // The start takes the final mask's values below (where the two
            // may differ; elsewhere they are equal), before its tiles move.
            inst.copies.start_made(&inst.mask_tiles);
        }
        // A settled instance has nothing to blend: the pool is not woken.
        if inst.out_unsettled.any() {
            pool.install(|| {
                // Changes matter only to versioned masks.
                let versioned = inst.mask_tiles.is_some();
                let grid = |on: bool| vec![false; if on { tiles::band_marks_len(inst.dims.out_width, inst.dims.out_height) } else { 0 }];
                let (mut changed, mut apart) = (grid(versioned), grid(versioned));
                let marks = passes::settle::BandMarks { changed: versioned.then_some(&mut changed[..]), apart: versioned.then_some(&mut apart[..]) };
                passes::settle::blend_marked(&mut inst.start, &inst.upscaled, t, &mut inst.final_mask, &mut inst.out_unsettled, restart, marks);
                // The final mask's tiles whose bytes changed take a new
                // version; those left equal to the upscaled mask's are known
                // to be its copies.
                if versioned {
                    let written = tiles::band_tiles(&changed, inst.dims.out_width);
                    if let Some(v) = tiles::of(&mut inst.mask_tiles, Texture::Final) {
                        v.stamp_tiles(&written, next_version());
                    }
                    inst.copies.final_written(&written, &tiles::band_tiles(&apart, inst.dims.out_width), &inst.mask_tiles);
                }
            });
        }
        Ok(())
    }

    fn read_stage(&mut self, key: InstanceKey, stage: Stage) -> Result<StageImage> {
        match stage.texture() {
            Some(texture) => self.read_texture(key, texture),
            None => {
                let (_, inst) = self.parts(key)?;
                Ok(murk_core::mip_atlas(inst.dims.width, inst.dims.height, &inst.mips))
            }
        }
    }

    fn submit_samples(&mut self, batch: &[SampleRequest]) -> Result<u64> {
        // The CPU answers at once; the ticket is ready on the first poll.
        // (In turn: a batch is a few thousand texels, less work than handing
        // it to the pool's threads costs.)
        let mut values = Vec::with_capacity(batch.iter().map(|r| r.texels.len()).sum());
        for r in batch {
            values.extend(sample_mask(self.instances.get(&r.key).ok_or_else(|| unknown_key(r.key))?, &r.texels)?);
        }
        let ticket = self.next_ticket;
        self.next_ticket += 1;
        self.samples.insert(ticket, values);
        Ok(ticket)
    }

    fn submit_footprints(&mut self, batch: &[FootprintRequest]) -> Result<u64> {
        // Checked before anything is judged: a bad footprint changes nothing.
        // Instances over one grid share a list: it is checked once.
        let mut checked: Option<(&Arc<FootprintList>, (u32, u32))> = None;
        for r in batch {
            let (_, inst) = self.parts(r.key)?;
            let size = (inst.dims.width, inst.dims.height);
            if checked.is_some_and(|(list, s)| Arc::ptr_eq(list, &r.footprints) && s == size) {
                continue;
            }
            checked = Some((&r.footprints, size));
            check_inside(size, &r.footprints.texels)?;
            r.footprints.check()?;
        }
        // Instances that share a list and judged one same list before (one
        // per team over one map) share the work of comparing the two.
        let mut plans: Vec<Plan> = Vec::new();
        let mut plan_of = Vec::with_capacity(batch.len());
        for r in batch {
            let (_, inst) = self.parts(r.key)?;
            let (w, h) = (inst.dims.width as usize, inst.dims.height as usize);
            let judge = inst.judge.get_or_insert_with(|| Judge::new(w, h));
            plan_of.push(match plans.iter().position(|p| p.fits(&r.footprints, judge.previous())) {
                Some(at) => at,
                None => {
                    plans.push(Plan::new(&r.footprints, judge.previous_plan()));
                    plans.len() - 1
                }
            });
        }
        // Each instance's footprints are judged in its own signal: the
        // instances are judged side by side, each into its part of the
        // values (a batch that names an instance twice is judged in order).
        let mut values = vec![0u16; batch.iter().map(|r| r.footprints.ends.len()).sum()];
        let mut parts = Vec::with_capacity(batch.len());
        let mut rest = &mut values[..];
        for r in batch {
            let (part, tail) = std::mem::take(&mut rest).split_at_mut(r.footprints.ends.len());
            parts.push(part);
            rest = tail;
        }
        let mut keys: Vec<InstanceKey> = batch.iter().map(|r| r.key).collect();
        keys.sort_unstable();
        keys.dedup();
        if keys.len() == batch.len() {
            let mut instances: BTreeMap<InstanceKey, &mut CpuInstance> =
                self.instances.iter_mut().filter(|(k, _)| keys.binary_search(k).is_ok()).map(|(k, inst)| (*k, inst)).collect();
            let work: Vec<_> = batch
                .iter()
                .zip(parts)
                .zip(&plan_of)
                .map(|((r, part), &at)| (instances.remove(&r.key).expect("every key of the batch is an instance"), r.cutoff, part, &plans[at]))
                .collect();
            self.pool.install(|| passes::pieces::each(work, 1, || (), |_, _, (inst, cutoff, part, plan)| judge_into(inst, plan, cutoff, part)));
        } else {
            for ((r, part), &at) in batch.iter().zip(parts).zip(&plan_of) {
                let inst = self.instances.get_mut(&r.key).ok_or_else(|| unknown_key(r.key))?;
                judge_into(inst, &plans[at], r.cutoff, part);
            }
        }
        let ticket = self.next_ticket;
        self.next_ticket += 1;
        self.samples.insert(ticket, values);
        Ok(ticket)
    }

    fn poll_samples(&mut self, ticket: u64, _wait: bool) -> Result<Option<Vec<u16>>> {
        match self.samples.remove(&ticket) {
            Some(v) => Ok(Some(v)),
            None => Err(MurkError::UnknownTicket { backend: "cpu".into(), what: "sample", ticket }),
        }
    }

    fn readbacks_held(&self) -> usize {
        self.samples.len()
    }

    fn forget_readback(&mut self, ticket: u64) {
        // Samples are the only answers the CPU holds for a later poll.
        self.samples.remove(&ticket);
    }

    fn read_texture(&mut self, key: InstanceKey, texture: Texture) -> Result<StageImage> {
        let (_, inst) = self.parts(key)?;
        let (width, height, texels) = inst.texels(texture)?;
        let data = match texels {
            Texels::U8(v) => StageData::U8(v.to_vec()),
            Texels::U16(v) => StageData::U16(v.to_vec()),
            Texels::I32(v) => StageData::I32(v.to_vec()),
            Texels::U32(v) => StageData::U32(v.to_vec()),
        };
        Ok(StageImage { width, height, data })
    }

    fn save_tiles(&mut self, key: InstanceKey, textures: &[(Texture, Option<&TiledImage>)]) -> Result<Vec<Option<TiledImage>>> {
        let (pool, inst) = self.parts(key)?;
        // The first save versions the masks from here on: what they hold
        // now takes new versions.
        let dims = inst.dims;
        inst.mask_tiles.get_or_insert_with(|| CpuInstance::blank_tiles(dims, next_version()));
        let mut work = Vec::with_capacity(textures.len());
        for &(texture, base) in textures {
            let (w, h, texels) = inst.texels(texture)?;
            let masks = tiles::mask_index(texture).and_then(|m| Some(&inst.mask_tiles.as_ref()?[m]));
            let count = TiledImage::tile_count(w, h);
            let base = base.filter(|b| (b.width, b.height) == (w, h) && b.tiles.len() == count && b.versions.len() == count);
            work.push(SaveWork { texture, width: w, height: h, texels, masks, base });
        }
        // The blend starts from the final mask of the tick before: the
        // start's tiles taken anew are those of the last save's final mask.
        let last_final = work.iter().find(|wk| wk.texture == Texture::Final).and_then(|wk| wk.base);
        let occlusion = inst.occlusion_version;
        let copies = &inst.copies;
        // A tile under the version the base's tile has holds its bytes. A
        // mask's tile taken anew is first compared with the tiles taken anew
        // at the same place of the masks of its size before it (composed,
        // upscaled and final are often equal there), a start tile also with
        // the last final one, and shares an equal one. A mask that copies
        // another at every place shares the other's whole list of tiles.
        let saved = pool.install(|| {
            let mut saved: Vec<Option<(TiledImage, Vec<bool>)>> = Vec::with_capacity(work.len());
            for &SaveWork { texture, width: w, height: h, ref texels, masks, base } in &work {
                let count = TiledImage::tile_count(w, h);
                let versions = masks.map_or_else(|| vec![occlusion; count], |m| m.all().to_vec());
                if base.is_some_and(|b| b.versions == versions) {
                    saved.push(None);
                    continue;
                }
                let twins: Vec<_> = match masks {
                    Some(_) => work
                        .iter()
                        .zip(&saved)
                        .filter(|(other, _)| other.masks.is_some() && (other.width, other.height) == (w, h))
                        .filter_map(|(_, s)| s.as_ref())
                        .collect(),
                    None => Vec::new(),
                };
                let before = last_final.filter(|f| texture == Texture::Start && (f.width, f.height) == (w, h));
                // The image this mask is known to copy, with the version each
                // tile of it had when copied (`None`: the copy is whole): a
                // tile of the image still under that version is shared
                // unread.
                let taken = |texture: Texture| {
                    let k = work.iter().position(|wk| wk.texture == texture)?;
                    saved[k].as_ref().map(|(image, _)| image).or(work[k].base)
                };
                let copied: Option<(&TiledImage, Option<&[u64]>)> = match texture {
                    Texture::Upscale if copies.upscale_is_compose => taken(Texture::Compose).map(|c| (c, None)),
                    Texture::Start => before.zip(copies.start_from.as_deref().map(Some)),
                    Texture::Final => taken(Texture::Upscale).zip(copies.final_from.as_deref().map(Some)),
                    _ => None,
                };
                let copied = copied.filter(|(image, _)| (image.width, image.height) == (w, h) && image.tiles.len() == count);
                let copies = |(image, from): (&TiledImage, Option<&[u64]>), i: usize| from.is_none_or(|from| from.get(i) == Some(&image.versions[i]));
                // A tile under the base's version is not taken anew (its
                // bytes are the base's), wherever else it is shared from.
                let fresh: Vec<bool> = match base {
                    Some(b) => b.versions.iter().zip(&versions).map(|(b, v)| b != v).collect(),
                    None => vec![true; count],
                };
                // The tile a place takes unread: the base's, or the copied
                // image's; the others are read.
                let unread = |i: usize| match base {
                    Some(b) if !fresh[i] => Some(&b.tiles[i]),
                    _ => copied.filter(|&c| copies(c, i)).map(|(image, _)| &image.tiles[i]),
                };
                let mut lists = copied.map(|(image, _)| image).into_iter().chain(base);
                if let Some(whole) = lists.find(|list| (0..count).all(|i| unread(i).is_some_and(|t| t.same(&list.tiles[i])))) {
                    saved.push(Some((TiledImage { width: w, height: h, versions, tiles: whole.tiles.clone() }, fresh)));
                    continue;
                }
                let tiles: Vec<TileData> = (0..count)
                    .into_par_iter()
                    .map(|i| match unread(i) {
                        Some(tile) => tile.clone(),
                        None => {
                            let taken = twins.iter().filter(|(_, fresh)| fresh[i]).map(|(image, _)| &image.tiles[i]);
                            let twins = taken.chain(before.map(|f| &f.tiles[i]));
                            texels.tile(w, h, i, twins)
                        }
                    })
                    .collect();
                saved.push(Some((TiledImage { width: w, height: h, versions, tiles: tiles.into() }, fresh)));
            }
            saved
        });
        Ok(saved.into_iter().map(|s| s.map(|(image, _)| image)).collect())
    }

    fn write_textures(&mut self, key: InstanceKey, set: &TextureSet) -> Result<()> {
        let (_, inst) = self.parts(key)?;
        let d = inst.dims;
        // Every texture is checked before any is written: an error changes
        // nothing (the set checked each texture's type and texel count).
        for (texture, size) in set.sizes() {
            let expected = match texture {
                Texture::Mip(_) | Texture::DistanceField => size,
                Texture::Upscale | Texture::Start | Texture::Final => (d.out_width, d.out_height),
                _ => (d.width, d.height),
            };
            if size != expected {
                return Err(CpuError::size(format!("texture `{}`", texture.name()), size, expected).into());
            }
        }
        // Written in place, into the buffers the instance has. A set of
        // tiles (a rollback state's) whose occlusion tiles are all under the
        // instance's occlusion version is the occlusion the instance holds:
        // it is left as it is, with its tables, source windows and the
        // field's column pass. Otherwise the tables and windows are a
        // function of coverage and height: a load of equal ones keeps them,
        // and the windows' combination is finished anew over the loaded
        // visibility.
        let fresh = next_version();
        let occlusion: Vec<Texture> = set.sizes().map(|(t, _)| t).filter(|t| t.is_occlusion()).collect();
        let saved_version = uniform_version(set, &occlusion);
        if saved_version != Some(inst.occlusion_version) {
            let (coverage, height) = match (set.get(Texture::Coverage).map(|i| &i.data), set.get(Texture::Height).map(|i| &i.data)) {
                (Some(StageData::U8(c)), Some(StageData::I32(h))) => (c, h),
                _ => return Err(CpuError::MissingTexture("coverage and heights".into()).into()),
            };
            let same_occlusion = *coverage == inst.coverage && *height == inst.height;
            let field = set.grid::<u32>(Texture::DistanceField).unwrap_or_default();
            let mips = set.mips();
            let (same_field, same_mips) = (field == inst.distance_field, mips == inst.mips);
            inst.coverage.copy_from_slice(coverage);
            inst.height.copy_from_slice(height);
            (inst.mips, inst.distance_field) = (mips, field);
            // The column pass kept for local updates belongs to the field it
            // built; equal bytes keep their version.
            if !(same_occlusion && same_field) {
                inst.df_columns.clear();
            }
            if !(same_occlusion && same_field && same_mips) {
                inst.occlusion_version = saved_version.unwrap_or(fresh);
            }
            if same_occlusion {
                inst.windows.unfinish();
            } else {
                inst.accel = passes::visibility::Accel::new(&inst.coverage, &inst.height, d.width, d.height);
                inst.windows.clear();
            }
        } else {
            inst.windows.unfinish();
        }
        // The masks: a tile of a state's under the version the instance's
        // tile has is there already; the others are copied and take the
        // state's version (a whole image, or a tile not versioned, a new
        // one). A set of tiles starts the versions; whole images (a
        // restore, a resample) keep them only where they run.
        // What the masks copied of each other is not known of loaded ones.
        inst.copies = tiles::Copies::default();
        let CpuInstance { visibility, blurred, memory, mapped, composed, upscaled, start, final_mask, mask_tiles, .. } = inst;
        let buffers: [&mut Vec<u16>; 8] = [visibility, blurred, memory, mapped, composed, upscaled, start, final_mask];
        if tiles::MASKS.iter().any(|&t| set.tiles(t).is_some()) {
            mask_tiles.get_or_insert_with(|| CpuInstance::blank_tiles(d, fresh));
        }
        for (k, (texture, buffer)) in tiles::MASKS.iter().zip(buffers).enumerate() {
            let versions = mask_tiles.as_mut().map(|masks| &mut masks[k]);
            match set.tiles(*texture) {
                Some(img) => {
                    let held = |i: usize| versions.as_ref().is_some_and(|v| img.versions[i] != 0 && img.versions[i] == v.get(i));
                    if !img.write_into(buffer, held) {
                        let problem = "is not in tiles of 16-bit texels of its size".into();
                        return Err(CpuError::TexelType { texture: texture.name(), problem }.into());
                    }
                    if let Some(v) = versions {
                        v.take(img, fresh);
                    }
                }
                None => match set.get(*texture).map(|i| &i.data) {
                    Some(StageData::U16(v)) => {
                        buffer.copy_from_slice(v);
                        if let Some(v) = versions {
                            v.stamp_all(fresh);
                        }
                    }
                    _ => return Err(CpuError::MissingTexture(format!("the 16-bit texture `{}`", texture.name())).into()),
                },
            }
        }
        // Nothing is known settled or blurred about the loaded masks. The
        // reveals are an input, not a texture: they stay.
        let blank = CpuInstance::blank_caches(d);
        (inst.unsettled, inst.settled_under, inst.out_unsettled, inst.blurred_with) = blank;
        // The next footprints are judged from the loaded visibility.
        inst.judge = None;
        Ok(())
    }

    fn hash_textures(&mut self, key: InstanceKey, textures: &[Texture]) -> Result<Readback<Vec<u64>>> {
        let (pool, inst) = self.parts(key)?;
        // The first hash versions the masks from here on, as a save does:
        // the next hash rehashes only the tiles a pass wrote since.
        let dims = inst.dims;
        inst.mask_tiles.get_or_insert_with(|| CpuInstance::blank_tiles(dims, next_version()));
        // The kept hashes are taken out while the masks are borrowed, and
        // put back whatever happens.
        let mut kept = std::mem::take(&mut inst.hashes);
        let masks = &*inst;
        let hashes = (|| {
            let mut asks = Vec::with_capacity(textures.len());
            for &texture in textures {
                let (w, h, texels) = masks.texels(texture)?;
                let (Texels::U16(texels), Some(m)) = (texels, tiles::mask_index(texture)) else {
                    let problem = format!("holds {} texels, the state hash takes u16", texture.kind().name());
                    return Err(MurkError::from(CpuError::TexelType { texture: texture.name(), problem }));
                };
                asks.push((m, w, h, texels, &masks.mask_tiles.as_ref().expect("versioned above")[m]));
            }
            Ok(pool.install(|| tiles::KeptHash::hash_all(&mut kept, &asks)))
        })();
        inst.hashes = kept;
        Ok(Readback::Ready(hashes?))
    }

    fn poll_hashes(&mut self, ticket: u64, _wait: bool) -> Result<Option<Vec<u64>>> {
        // Every hash is answered at once: no ticket is ever given out.
        Err(MurkError::UnknownTicket { backend: "cpu".into(), what: "hash", ticket })
    }

    fn sample_final(&mut self, key: InstanceKey, texels: &[[u32; 2]]) -> Result<Vec<u16>> {
        let (_, inst) = self.parts(key)?;
        sample_mask(inst, texels)
    }
}

/// The one version every tile of `textures` in `set` holds, when the set
/// holds them as tiles all under one version (`None` otherwise).
fn uniform_version(set: &TextureSet, textures: &[Texture]) -> Option<u64> {
    let mut versions = Vec::new();
    for &t in textures {
        versions.extend_from_slice(&set.tiles(t)?.versions);
    }
    let first = *versions.first()?;
    (first != 0 && versions.iter().all(|&v| v == first)).then_some(first)
}

/// The texels of one texture of an instance, borrowed.
enum Texels<'a> {
    U8(&'a [u8]),
    U16(&'a [u16]),
    I32(&'a [i32]),
    U32(&'a [u32]),
}

/// One texture a save asks for: its size and texels, the versions of its
/// tiles (a mask's; `None`: the occlusion's, versioned all together) and
/// the state's image to share tiles with.
struct SaveWork<'a> {
    texture: Texture,
    width: u32,
    height: u32,
    texels: Texels<'a>,
    masks: Option<&'a tiles::TileVersions>,
    base: Option<&'a TiledImage>,
}

impl Texels<'_> {
    /// Tile `i` of the texture, `width x height` texels: the first of
    /// `twins` that holds its texels, or else a copy.
    fn tile<'a>(&self, width: u32, height: u32, i: usize, twins: impl IntoIterator<Item = &'a TileData>) -> TileData {
        match self {
            Texels::U8(v) => TiledImage::copy_tile_or_twin(v, width, height, i, twins),
            Texels::U16(v) => TiledImage::copy_tile_or_twin(v, width, height, i, twins),
            Texels::I32(v) => TiledImage::copy_tile_or_twin(v, width, height, i, twins),
            Texels::U32(v) => TiledImage::copy_tile_or_twin(v, width, height, i, twins),
        }
    }
}

impl CpuInstance {
    /// One texture's width, height and texels; a pyramid level not built is
    /// an error naming it.
    fn texels(&self, texture: Texture) -> Result<(u32, u32, Texels<'_>)> {
        let d = self.dims;
        let (internal, output) = ((d.width, d.height), (d.out_width, d.out_height));
        let ((w, h), texels) = match texture {
            Texture::Coverage => (internal, Texels::U8(&self.coverage)),
            Texture::Height => (internal, Texels::I32(&self.height)),
            Texture::Mip(level) => match level.checked_sub(1).and_then(|i| self.mips.get(i as usize)) {
                Some(grid) => ((grid.width, grid.height), Texels::U8(&grid.texels)),
                None => return Err(CpuError::NotBuilt { level, built: self.mips.len() }.into()),
            },
            Texture::DistanceField => ((self.distance_field.width, self.distance_field.height), Texels::U32(&self.distance_field.texels)),
            Texture::Visibility => (internal, Texels::U16(&self.visibility)),
            Texture::Blur => (internal, Texels::U16(&self.blurred)),
            Texture::Memory => (internal, Texels::U16(&self.memory)),
            Texture::Mapped => (internal, Texels::U16(&self.mapped)),
            Texture::Compose => (internal, Texels::U16(&self.composed)),
            Texture::Upscale => (output, Texels::U16(&self.upscaled)),
            Texture::Start => (output, Texels::U16(&self.start)),
            Texture::Final => (output, Texels::U16(&self.final_mask)),
        };
        Ok((w, h, texels))
    }
}

/// The final mask of `inst` at `texels` (output texels, each inside the grid).
fn sample_mask(inst: &CpuInstance, texels: &[[u32; 2]]) -> Result<Vec<u16>> {
    check_inside((inst.dims.out_width, inst.dims.out_height), texels)?;
    let w = inst.dims.out_width;
    Ok(texels.iter().map(|&[x, y]| inst.final_mask[(y * w + x) as usize]).collect())
}

/// Whether every one of `texels` lies inside the output grid of `inst`.
fn check_inside((w, h): (u32, u32), texels: &[[u32; 2]]) -> Result<()> {
    // The largest column and row first (a loop without a branch); the texel
    // outside is looked for only when there is one.
    let [mx, my] = texels.iter().fold([0, 0], |[mx, my], &[x, y]| [mx.max(x), my.max(y)]);
    if texels.is_empty() || mx < w && my < h {
        return Ok(());
    }
    match texels.iter().find(|&&[x, y]| x >= w || y >= h) {
        Some([x, y]) => Err(MurkError::invalid("texel", format!("({x}, {y})"), format!("must lie inside {w}x{h}"))),
        None => Ok(()),
    }
}

/// Judges an instance's footprints (`plan`'s list) in its sight signal
/// into `out`, one value per footprint.
fn judge_into(inst: &mut CpuInstance, plan: &Plan, cutoff: u16, out: &mut [u16]) {
    let w = inst.dims.width as usize;
    let signal = Signal { visibility: &inst.visibility, sight: inst.reveals.as_ref().map(|l| &l.sight[..]), width: w };
    let judge = inst.judge.as_mut().expect("a judge is made for every instance before judging");
    out.copy_from_slice(judge.judge(signal, plan, cutoff));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The helpers that keep the other workers awake end with the work:
    /// a result comes back, a panic in the work comes back as a panic (not a
    /// hang), and an install inside an install runs.
    #[test]
    fn workers_return_results_and_panics() {
        for threads in [1, 2, 3] {
            let workers = Workers::new(threads).expect("a pool");
            let sum: u64 = workers.install(|| (0..10_000u64).into_par_iter().map(|i| i * i).sum());
            assert_eq!(sum, (0..10_000u64).map(|i| i * i).sum::<u64>());
            let nested = workers.install(|| workers.install(|| (0..100u32).into_par_iter().sum::<u32>()));
            assert_eq!(nested, 4950);
            let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                workers.install(|| (0..64u32).into_par_iter().for_each(|i| assert!(i != 40, "work {i} fails")))
            }));
            assert!(caught.is_err(), "{threads} threads: the panic came back");
            // The pool still works after the panic.
            assert_eq!(workers.install(|| (0..10u32).into_par_iter().sum::<u32>()), 45);
        }
    }
}
