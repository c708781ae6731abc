//! # murk-benches
//!
//! Criterion benches of murk's backends and of the peers a Rust developer
//! would pick instead. The workloads come from `murk_conformance::workloads`,
//! so what is timed is what is tested.
//!
//! * `frame`: the whole frame (`frame/<workload>/<backend>/<threads>`).
//! * `passes`: each pass alone on `rts` (`<pass>/cpu/<threads>`).
//! * `peers`: the `rts` line-of-sight job done by grid field-of-view crates,
//!   and the exact distance transform against `distance-transform`.

pub mod ticks;

use murk_conformance::workloads::Workload;
use murk_core::{FogSubsystem, Grid, OcclusionInput, RecomputeInput, Texture, TextureData};
use murk_cpu::passes::visibility::{Accel, Occlusion};

/// The projected inputs of a workload's first frame, and its occlusion
/// textures as the CPU backend builds them.
pub struct Prepared {
    /// Occlusion inputs.
    pub occlusion: OcclusionInput,
    /// Visibility-through-upscale inputs.
    pub recompute: RecomputeInput,
    /// Coverage, 0/1.
    pub coverage: Vec<u8>,
    /// Heights.
    pub heights: Vec<i32>,
}

impl Prepared {
    /// What the CPU visibility pass reads of these textures, with no
    /// pyramid or distance field, over `accel` (built from them).
    pub fn occlusion<'a>(&'a self, accel: &'a Accel) -> Occlusion<'a> {
        static NO_FIELD: Grid<u32> = Grid { width: 0, height: 0, texels: Vec::new() };
        Occlusion {
            width: self.occlusion.width,
            height: self.occlusion.height,
            coverage: &self.coverage,
            heights: &self.heights,
            mips: &[],
            distance_field: &NO_FIELD,
            accel,
        }
    }
}

/// Projects a workload once (CPU reference, 2 threads).
pub fn prepare(w: &mut Workload) -> Prepared {
    let mut fog = FogSubsystem::new(Box::new(murk_cpu::CpuBackend::new(2).expect("pool")));
    fog.create_instance(w.desc.clone()).expect("valid workload");
    fog.tick(&mut w.world, 33_333).expect("tick");
    let (occlusion, recompute) = fog.frame_inputs(&w.desc.name, &w.world, 33_333).expect("inputs");
    let coverage = match fog.read_texture(&w.desc.name, Texture::Coverage).expect("coverage").data {
        TextureData::U8(v) => v,
        _ => unreachable!("coverage is u8"),
    };
    let heights = match fog.read_texture(&w.desc.name, Texture::Height).expect("height").data {
        TextureData::I32(v) => v,
        _ => unreachable!("height is i32"),
    };
    Prepared { occlusion, recompute, coverage, heights }
}

/// A rayon pool of `threads` threads.
pub fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("thread pool")
}
