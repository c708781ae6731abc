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

pub mod looks;
pub mod passes;

use murk_core::backend::{InstanceDims, InstanceKey, Readback, SampleRequest, Stage, StageData, StageImage};
use murk_core::fixed::HEIGHT_FLOOR;
use murk_core::{Backend, MurkError, OcclusionInput, RecomputeInput, RecomputeReport, Result};
use passes::compose::ComposeParams;
use passes::dirty::Blocks;
use passes::settle::SettleKey;
use passes::visibility::Occlusion;
use std::collections::BTreeMap;

fn backend_error(message: String) -> MurkError {
    MurkError::Backend { backend: "cpu".into(), message }
}

fn unknown_key(key: InstanceKey) -> MurkError {
    MurkError::UnknownKey { backend: "cpu".into(), key }
}

/// Textures of one instance.
struct CpuInstance {
    dims: InstanceDims,
    coverage: Vec<u8>,
    height: Vec<i32>,
    mips: Vec<(u32, u32, Vec<u8>)>,
    distance_field: (u32, u32, Vec<u32>),
    accel: passes::visibility::Accel,
    /// Source windows over the current occlusion (cleared with `accel`).
    windows: passes::visibility::WindowCache,
    visibility: Vec<u16>,
    blurred: Vec<u16>,
    memory: Vec<u16>,
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
    /// The kernel `blurred` was last blurred with (`None`: not known).
    blurred_with: Option<murk_core::BlurKernel>,
}

impl CpuInstance {
    fn new(dims: InstanceDims) -> Self {
        let n = (dims.width * dims.height) as usize;
        let on = (dims.out_width * dims.out_height) as usize;
        let (n_w, n_h) = (dims.width as usize, dims.height as usize);
        Self {
            dims,
            coverage: vec![0; n],
            height: vec![HEIGHT_FLOOR; n],
            mips: Vec::new(),
            distance_field: (0, 0, Vec::new()),
            accel: passes::visibility::Accel::new(&vec![0; n], &vec![HEIGHT_FLOOR; n], dims.width, dims.height),
            windows: passes::visibility::WindowCache::default(),
            visibility: vec![0; n],
            blurred: vec![0; n],
            memory: vec![0; n],
            composed: vec![0; n],
            upscaled: vec![0; on],
            start: vec![0; on],
            final_mask: vec![0; on],
            unsettled: Blocks::new(n_w, n_h, true),
            settled_under: None,
            out_unsettled: Blocks::new(dims.out_width as usize, dims.out_height as usize, true),
            blurred_with: None,
        }
    }
}

/// The CPU reference backend.
pub struct CpuBackend {
    pool: rayon::ThreadPool,
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
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("murk-cpu-{i}"))
            .build()
            .map_err(|e| MurkError::Backend { backend: "cpu".into(), message: e.to_string() })?;
        Ok(Self { pool, threads, instances: BTreeMap::new(), samples: BTreeMap::new(), next_ticket: 0 })
    }

    /// Splits the backend into its pool and one instance's textures.
    fn parts(&mut self, key: InstanceKey) -> Result<(&rayon::ThreadPool, &mut CpuInstance)> {
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

    fn create_instance(&mut self, key: InstanceKey, dims: InstanceDims) -> Result<()> {
        self.instances.insert(key, CpuInstance::new(dims));
        Ok(())
    }

    fn destroy_instance(&mut self, key: InstanceKey) {
        self.instances.remove(&key);
    }

    fn build_occlusion(&mut self, key: InstanceKey, input: &OcclusionInput) -> Result<()> {
        let (pool, inst) = self.parts(key)?;
        if (input.width, input.height) != (inst.dims.width, inst.dims.height) {
            return Err(MurkError::Backend {
                backend: "cpu".into(),
                message: format!("occlusion input is {}x{}, instance is {}x{}", input.width, input.height, inst.dims.width, inst.dims.height),
            });
        }
        pool.install(|| {
            // Rasterized row by row into the tables' first pass.
            inst.accel.fill_and_rebuild(&mut inst.coverage, &mut inst.height, input.width, input.height, |row, cov, hgt| {
                passes::rasterize::rasterize_row(input, row, cov, hgt)
            });
            inst.windows.clear();
            inst.mips = if input.build_mips { passes::mips::build_mips(&inst.coverage, input.width, input.height) } else { Vec::new() };
            inst.distance_field = if input.distance_field_scale > 0 {
                passes::distance_field::distance_field(&inst.coverage, input.width, input.height, input.distance_field_scale)
            } else {
                (0, 0, Vec::new())
            };
        });
        Ok(())
    }

    fn copy_occlusion(&mut self, from: InstanceKey, to: InstanceKey) -> Result<()> {
        let src = self.instances.get(&from).ok_or_else(|| unknown_key(from))?;
        let (coverage, height, mips, df, accel, dims) =
            (src.coverage.clone(), src.height.clone(), src.mips.clone(), src.distance_field.clone(), src.accel.clone(), src.dims);
        let (_, dst) = self.parts(to)?;
        if (dst.dims.width, dst.dims.height) != (dims.width, dims.height) {
            return Err(backend_error(format!(
                "cannot share occlusion between {}x{} and {}x{}",
                dims.width, dims.height, dst.dims.width, dst.dims.height
            )));
        }
        // The tables are a function of coverage and height: copied with them.
        dst.accel = accel;
        dst.windows.clear();
        dst.coverage = coverage;
        dst.height = height;
        dst.mips = mips;
        dst.distance_field = df;
        Ok(())
    }

    fn recompute(&mut self, key: InstanceKey, input: &RecomputeInput) -> Result<RecomputeReport> {
        let (pool, inst) = self.parts(key)?;
        let (w, h) = (inst.dims.width, inst.dims.height);
        let changed = pool.install(|| {
            let occ = Occlusion {
                width: w,
                height: h,
                coverage: &inst.coverage,
                heights: &inst.height,
                mips: &inst.mips,
                distance_field: (inst.distance_field.0, inst.distance_field.1, &inst.distance_field.2),
                accel: &inst.accel,
            };
            // The blocks whose blurred visibility may change.
            let mut blurred_marks = Blocks::new(w as usize, h as usize, false);
            if !input.reuse_visibility {
                let (_, changed) = passes::visibility::visibility_changes(input, &occ, &mut inst.windows, &mut inst.visibility);
                // Blurred changes within the kernel's reach of what changed,
                // when the kernel and one step are what blurred was made with.
                let same_kernel = inst.blurred_with.as_ref() == Some(&input.blur);
                inst.blurred_with = Some(input.blur.clone());
                if input.blur.iterations == 1 && same_kernel {
                    blurred_marks = changed.widened(input.blur.radius());
                    passes::blur::blur_marked(&input.blur, w, h, &inst.visibility, &mut inst.blurred, &blurred_marks);
                } else {
                    blurred_marks = Blocks::new(w as usize, h as usize, true);
                    passes::blur::blur(&input.blur, w, h, &inst.visibility, &mut inst.blurred);
                }
            }
            let params = ComposeParams {
                fade_in_step: input.fade_in_step,
                relax_step: input.relax_step,
                explored_value: input.explored_value,
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
            let mut moved = Blocks::new(w as usize, h as usize, false);
            let changed = passes::settle::memory_compose_marked(
                &inst.blurred,
                &mut inst.memory,
                &mut inst.composed,
                input.forget_step,
                input.freeze_memory,
                params,
                &todo,
                &mut inst.unsettled,
                &mut moved,
            );
            inst.settled_under = Some(key);
            if !known {
                // After a restore the upscaled mask may not be the one of
                // composed: every block is upscaled again.
                moved = Blocks::new(w as usize, h as usize, true);
            }
            // The upscaled mask changes only where composed did.
            let scale = inst.dims.out_width / w;
            if scale == 1 {
                passes::settle::copy_marked(&inst.composed, &mut inst.upscaled, &moved);
                inst.out_unsettled.add(&moved);
            } else if moved.any() {
                passes::upscale::upscale(&inst.composed, w, h, scale, &mut inst.upscaled);
                inst.out_unsettled = Blocks::new(inst.dims.out_width as usize, inst.dims.out_height as usize, true);
            }
            // The blend starts from the final mask (equal to it where settled).
            passes::settle::copy_marked(&inst.final_mask, &mut inst.start, &inst.out_unsettled);
            changed
        });
        Ok(RecomputeReport { changed: Readback::Ready(changed) })
    }

    fn blend(&mut self, key: InstanceKey, t: u32) -> Result<()> {
        let (pool, inst) = self.parts(key)?;
        pool.install(|| passes::settle::blend_marked(&inst.start, &inst.upscaled, t, &mut inst.final_mask, &mut inst.out_unsettled));
        Ok(())
    }

    fn read_stage(&mut self, key: InstanceKey, stage: Stage) -> Result<StageImage> {
        let (_, inst) = self.parts(key)?;
        let d = inst.dims;
        let (width, height, data) = match stage {
            Stage::Coverage => (d.width, d.height, StageData::U8(inst.coverage.clone())),
            Stage::Height => (d.width, d.height, StageData::I32(inst.height.clone())),
            Stage::Mips => {
                // Levels side by side, level 1 at the left.
                let (w, h) = (d.width.div_ceil(2).max(1), d.height.div_ceil(2).max(1));
                let total_w: u32 = inst.mips.iter().map(|l| l.0).sum::<u32>().max(w);
                let mut atlas = vec![0u8; (total_w * h) as usize];
                let mut x0 = 0;
                for (lw, lh, texels) in &inst.mips {
                    for y in 0..*lh {
                        for x in 0..*lw {
                            atlas[(y * total_w + x0 + x) as usize] = texels[(y * lw + x) as usize];
                        }
                    }
                    x0 += lw;
                }
                (total_w, h, StageData::U8(atlas))
            }
            Stage::DistanceField => (inst.distance_field.0, inst.distance_field.1, StageData::U32(inst.distance_field.2.clone())),
            Stage::Visibility => (d.width, d.height, StageData::U16(inst.visibility.clone())),
            Stage::Blur => (d.width, d.height, StageData::U16(inst.blurred.clone())),
            Stage::Memory => (d.width, d.height, StageData::U16(inst.memory.clone())),
            Stage::Compose => (d.width, d.height, StageData::U16(inst.composed.clone())),
            Stage::Upscale => (d.out_width, d.out_height, StageData::U16(inst.upscaled.clone())),
            Stage::Final => (d.out_width, d.out_height, StageData::U16(inst.final_mask.clone())),
        };
        Ok(StageImage { width, height, data })
    }

    fn submit_samples(&mut self, batch: &[SampleRequest]) -> Result<u64> {
        // The CPU answers at once; the ticket is ready on the first poll.
        let mut values = Vec::new();
        for request in batch {
            values.extend(self.sample_final(request.key, &request.texels)?);
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

    fn export_textures(&mut self, key: InstanceKey) -> Result<Vec<(String, StageImage)>> {
        let (_, inst) = self.parts(key)?;
        let d = inst.dims;
        let img = |w: u32, h: u32, data: StageData| StageImage { width: w, height: h, data };
        let mut out = vec![
            ("coverage".to_string(), img(d.width, d.height, StageData::U8(inst.coverage.clone()))),
            ("height".to_string(), img(d.width, d.height, StageData::I32(inst.height.clone()))),
        ];
        for (i, (w, h, texels)) in inst.mips.iter().enumerate() {
            out.push((format!("mip{}", i + 1), img(*w, *h, StageData::U8(texels.clone()))));
        }
        let (dw, dh, df) = &inst.distance_field;
        out.push(("distance_field".into(), img(*dw, *dh, StageData::U32(df.clone()))));
        for (name, v) in [("visibility", &inst.visibility), ("blur", &inst.blurred), ("memory", &inst.memory), ("compose", &inst.composed)] {
            out.push((name.into(), img(d.width, d.height, StageData::U16(v.clone()))));
        }
        for (name, v) in [("upscale", &inst.upscaled), ("start", &inst.start), ("final", &inst.final_mask)] {
            out.push((name.into(), img(d.out_width, d.out_height, StageData::U16(v.clone()))));
        }
        Ok(out)
    }

    fn import_textures(&mut self, key: InstanceKey, textures: &[(String, StageImage)]) -> Result<()> {
        let (_, inst) = self.parts(key)?;
        let d = inst.dims;
        let mut next = CpuInstance::new(d);
        let mut mips = Vec::new();
        for (name, image) in textures {
            let internal = (image.width, image.height) == (d.width, d.height);
            let output = (image.width, image.height) == (d.out_width, d.out_height);
            let wrong = || backend_error(format!("snapshot texture `{name}` is {}x{} of the wrong type or size", image.width, image.height));
            match (name.as_str(), &image.data) {
                ("coverage", StageData::U8(v)) if internal => next.coverage.clone_from(v),
                ("height", StageData::I32(v)) if internal => next.height.clone_from(v),
                (m, StageData::U8(v)) if m.starts_with("mip") && v.len() == (image.width * image.height) as usize => {
                    mips.push((image.width, image.height, v.clone()))
                }
                ("distance_field", StageData::U32(v)) if v.len() == (image.width * image.height) as usize => {
                    next.distance_field = (image.width, image.height, v.clone())
                }
                ("visibility", StageData::U16(v)) if internal => next.visibility.clone_from(v),
                ("blur", StageData::U16(v)) if internal => next.blurred.clone_from(v),
                ("memory", StageData::U16(v)) if internal => next.memory.clone_from(v),
                ("compose", StageData::U16(v)) if internal => next.composed.clone_from(v),
                ("upscale", StageData::U16(v)) if output => next.upscaled.clone_from(v),
                ("start", StageData::U16(v)) if output => next.start.clone_from(v),
                ("final", StageData::U16(v)) if output => next.final_mask.clone_from(v),
                _ => return Err(wrong()),
            }
        }
        next.mips = mips;
        next.accel = passes::visibility::Accel::new(&next.coverage, &next.height, d.width, d.height);
        next.windows.clear();
        *inst = next;
        Ok(())
    }

    fn sample_final(&mut self, key: InstanceKey, texels: &[[u32; 2]]) -> Result<Vec<u16>> {
        let (_, inst) = self.parts(key)?;
        let d = inst.dims;
        texels
            .iter()
            .map(|&[x, y]| {
                if x < d.out_width && y < d.out_height {
                    Ok(inst.final_mask[(y * d.out_width + x) as usize])
                } else {
                    Err(MurkError::invalid("texel", format!("({x}, {y})"), format!("must lie inside {}x{}", d.out_width, d.out_height)))
                }
            })
            .collect()
    }
}
