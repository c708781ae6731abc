//! The small trait every backend implements.
//!
//! A backend owns the per-instance textures (every row of
//! [`crate::texture::TEXTURES`]) and runs the passes over them.
//! Core decides *when* (dirty rules, cadence) and *with what* (inputs already
//! in texel space); the backend decides *how*. No wgpu or rayon type appears
//! here.

use crate::error::{MurkError, Result};
use crate::frame::{OcclusionInput, RayRule, RecomputeInput, RecomputeReport, RevealLayer};
pub use crate::frame::{Readback, ReadbackHold};
use crate::texture::{
    instance_textures, mip_atlas, BackendNotes, Grid, KeptTextures, OcclusionBuild, Resolution, Texture, TextureRow, TextureSet, TiledImage,
};
pub use crate::texture::{InstanceDims, TexelRect, TextureData, TextureImage};
use std::sync::Arc;

/// Identifies an instance's resources inside a backend.
pub type InstanceKey = u32;

/// Runs work on a backend's threads (see [`Backend::tick_runner`]),
/// independent of the backend's own borrow.
pub trait TickRunner: Send + Sync {
    /// Runs `work` there and returns when it is done.
    fn run(&self, work: &mut (dyn FnMut() + Send));
}

/// A fog backend: runs the passes of the pipeline on its own resources.
pub trait Backend: Send {
    /// Short name (`cpu`, `gpu`) with its configuration (`cpu[threads=2]`).
    fn name(&self) -> String;
    /// Allocates an instance's textures (all masks zero).
    fn create_instance(&mut self, key: InstanceKey, dims: InstanceDims) -> Result<()>;
    /// Frees an instance's textures; unknown keys are ignored.
    fn destroy_instance(&mut self, key: InstanceKey);
    /// Passes 1-3: rasterize, mips (if asked), distance field (if asked).
    fn build_occlusion(&mut self, key: InstanceKey, input: &OcclusionInput) -> Result<()>;
    /// Passes 1-3 again where the occlusion may have changed since the last
    /// build or update of `key`: `input` is the whole new input (as
    /// [`Backend::build_occlusion`] takes it, with the same mips and
    /// distance-field settings as the last build), and every texel whose
    /// coverage or height differs lies in one of `changed`. The textures
    /// must end byte for byte as a full build of `input` leaves them; what
    /// the backend keeps across recomputes (source windows) is forgotten
    /// only where the change reaches it.
    fn update_occlusion(&mut self, key: InstanceKey, input: &OcclusionInput, changed: &[TexelRect]) -> Result<()>;
    /// Copies the occlusion textures of `from` into `to` (instances over the
    /// same area with the same inputs share one build). Both must have the
    /// same internal size.
    fn copy_occlusion(&mut self, from: InstanceKey, to: InstanceKey) -> Result<()>;
    /// Runs `work` where the backend wants core's parallel work (the
    /// height-capture resample) to run: the CPU backend on its own thread
    /// pool, so that its thread count holds for the whole tick. By default
    /// on the calling thread (rayon's global pool). The bytes do not depend
    /// on where it runs.
    fn run_parallel(&self, work: &mut (dyn FnMut() + Send)) {
        work();
    }
    /// Where a whole tick should run, when not on the calling thread: the
    /// CPU backend's pool, so that the tick's many backend calls start
    /// their parallel work from one of its workers instead of each handing
    /// work to the pool and waiting to be woken. `None` (the default): on
    /// the calling thread. The bytes do not depend on where it runs.
    fn tick_runner(&self) -> Option<Arc<dyn TickRunner>> {
        None
    }
    /// Passes 5-9: visibility, blur, memory, compose, upscale. Also records
    /// the current final mask as the start of the next blend. Whether memory
    /// or the composed mask changed may come back later: core reads it
    /// [`crate::frame::READBACK_LATENCY_TICKS`] ticks after the recompute.
    fn recompute(&mut self, key: InstanceKey, input: &RecomputeInput) -> Result<RecomputeReport>;
    /// The "changed" flag of a recompute that answered with
    /// [`Readback::Ticket`]: `None` while it is in flight (`wait` blocks
    /// until it lands). Delivers each ticket once.
    fn poll_changed(&mut self, ticket: u64, wait: bool) -> Result<Option<bool>> {
        let _ = wait;
        Err(MurkError::UnknownTicket { backend: self.name(), what: "changed-flag", ticket })
    }
    /// Replaces the scripted reveals an instance's memory and compose passes
    /// read from its next recompute on (`None`: no reveal, every plane 0).
    /// The planes must hold one value per internal texel.
    fn set_reveals(&mut self, key: InstanceKey, layer: Option<&RevealLayer>) -> Result<()>;
    /// Pass 10: `final = lerp(start, upscaled, t / 65536)`.
    fn blend(&mut self, key: InstanceKey, t: u32) -> Result<()>;
    /// Starts sampling the final masks of several instances at texels
    /// without waiting (one readback for the whole batch); returns a ticket
    /// for [`Backend::poll_samples`].
    fn submit_samples(&mut self, batch: &[SampleRequest]) -> Result<u64>;
    /// Starts judging footprints in the sight signals of several instances
    /// without waiting (one readback for the whole batch); returns a ticket
    /// for [`Backend::poll_samples`], whose values are one per footprint, in
    /// request order, then footprint order: [`footprint_value`] of the
    /// footprint's largest value. An instance's sight signal at an internal
    /// texel is the larger of its visibility and its scripted sight reveal
    /// (the `sight` plane of [`Backend::set_reveals`], 0 without one).
    /// Every backend answers the same values.
    fn submit_footprints(&mut self, batch: &[FootprintRequest]) -> Result<u64>;
    /// Traces the sight lines of `request` over its instance's occlusion as
    /// it was last built, each by the march of `request.rule` (step 5 of
    /// the visibility pass, exactly): the light of each, in line order,
    /// comes back through [`Backend::poll_samples`]. A line from a texel to
    /// itself lets everything through. Every backend answers the same
    /// values.
    fn submit_lines(&mut self, request: &LineRequest) -> Result<u64>;
    /// The samples of a ticket once they have arrived, in request order and
    /// texel order, footprint order for [`Backend::submit_footprints`], or
    /// line order for [`Backend::submit_lines`] (`None` while pending;
    /// `wait` blocks until they arrive). Delivers each ticket once.
    fn poll_samples(&mut self, ticket: u64, wait: bool) -> Result<Option<Vec<u16>>>;
    /// Drops a ticket (of a flag, samples or hashes) that will never be polled: its
    /// instance was destroyed or a snapshot replaced the state. Unknown
    /// tickets are ignored.
    fn forget_readback(&mut self, ticket: u64) {
        let _ = ticket;
    }
    /// Holds the value of a ticket in flight (a flag, samples or hashes)
    /// for a rollback state saved while it flies: while the hold lives, the
    /// backend keeps the value for every poll of the ticket (whoever polled
    /// or forgot it first), so that the save need not wait for it and a
    /// load of the state polls it again. `None` (the default, for a backend
    /// whose values are never in flight long): the save lands it instead.
    fn hold_readback(&mut self, ticket: u64) -> Option<ReadbackHold> {
        let _ = ticket;
        None
    }
    /// Samples the final mask at texels and waits for the values.
    fn sample_final(&mut self, key: InstanceKey, texels: &[[u32; 2]]) -> Result<Vec<u16>> {
        let ticket = self.submit_samples(&[SampleRequest { key, texels: texels.to_vec() }])?;
        self.poll_samples(ticket, true)?.ok_or_else(|| MurkError::ReadbackLost { backend: self.name(), what: "sample readback" })
    }
    /// How many times the backend has synchronized the calling thread with
    /// the device so far: readbacks taken with waiting and waits for the
    /// device to go idle, counted even when the device had already finished
    /// (so the count does not depend on the device's speed). Backends that
    /// compute on the calling thread never wait and report 0.
    fn blocking_waits(&self) -> u64 {
        0
    }
    /// Readbacks the backend holds for a later poll: answers not yet
    /// delivered and not forgotten (a game that loads states over and over
    /// must not see it grow). Backends that hold none report 0.
    fn readbacks_held(&self) -> usize {
        0
    }
    /// Starts timing each pass on the device; an error says why the backend
    /// cannot (the default: it does not time its passes).
    fn enable_timings(&mut self) -> Result<()> {
        Err(MurkError::backend_message(self.name(), "this backend does not time its passes"))
    }
    /// Time per pass since timings were enabled or last taken (waits for the
    /// work in flight); empty when timings are off.
    fn take_timings(&mut self) -> Result<Vec<PassTiming>> {
        Ok(Vec::new())
    }
    /// One texture of an instance as it holds it now (snapshots read every
    /// texture of [`crate::texture::instance_textures`] this way, pictures
    /// and the conformance harness through [`read_row`]). A pyramid level it
    /// has not built is an error naming it.
    fn read_texture(&mut self, key: InstanceKey, texture: Texture) -> Result<TextureImage>;
    /// Textures of an instance in [`crate::texture::TILE`]-sided tiles, for
    /// a rollback state, each with a base: an earlier read of that texture
    /// (or a set of tiles loaded into it). A backend that versions its
    /// writes gives each tile the version of its bytes, and a tile of the
    /// base under the version the tile still has is shared from there, not
    /// read again; `None` in place of a texture says that every tile of
    /// its base still holds (the base is the texture). The default reads
    /// each texture whole and versions nothing.
    fn save_tiles(&mut self, key: InstanceKey, textures: &[(Texture, Option<&TiledImage>)]) -> Result<Vec<Option<TiledImage>>> {
        textures.iter().map(|&(texture, _)| Ok(Some(TiledImage::split(&self.read_texture(key, texture)?)))).collect()
    }
    /// What the backend knows of an instance's textures beyond their
    /// texels, saved beside the tiles of [`Backend::save_tiles`] in a
    /// rollback state and handed back with them in
    /// [`TextureSet::notes`] (facts about those texels only, so that a load
    /// of them keeps them). The default knows nothing.
    fn save_notes(&mut self, _key: InstanceKey) -> Result<Option<BackendNotes>> {
        Ok(None)
    }
    /// Copies every texture of an instance where the backend keeps them
    /// (on its device) for a rollback state, reading none back: what a
    /// backend with a device saves instead of [`Backend::save_tiles`]. The
    /// default keeps nothing (`None`): the state takes tiles.
    fn keep_textures(&mut self, _key: InstanceKey) -> Result<Option<KeptTextures>> {
        Ok(None)
    }
    /// Whether textures kept by [`Backend::keep_textures`] load into an
    /// instance of `dims`: an error says why not (they were kept by another
    /// backend, on another device, or for another size). A load checks
    /// every instance this way before it writes any.
    fn check_kept(&self, _kept: &KeptTextures, _dims: InstanceDims) -> Result<()> {
        Err(kept_elsewhere(&self.name()))
    }
    /// Loads textures kept by [`Backend::keep_textures`] into an instance
    /// (after [`Backend::check_kept`]); as [`Backend::write_textures`], the
    /// reveals stay.
    fn load_kept(&mut self, _key: InstanceKey, _kept: &KeptTextures) -> Result<()> {
        Err(kept_elsewhere(&self.name()))
    }
    /// Replaces every texture of an instance with a checked set (a restore,
    /// a resample into a new area); the set is checked against the
    /// instance's size by [`TextureSet::new`], so a backend only loads it.
    /// A tile of a set made of tiles under a version the backend gave the
    /// instance's tile at its place is already there. An error leaves the
    /// instance as it was. The reveals of
    /// [`Backend::set_reveals`] are not textures: they stay.
    fn write_textures(&mut self, key: InstanceKey, set: &TextureSet) -> Result<()>;
    /// Hashes 16-bit textures of an instance with
    /// [`crate::hash::texture_hash`], as they stand once the work recorded so
    /// far has run, one value per texture in order. A backend that computes
    /// on the calling thread answers at once; one with a device hashes there
    /// and reads the values back with its next submission, for
    /// [`Backend::poll_hashes`]. A texture of another texel type is an error
    /// naming it.
    fn hash_textures(&mut self, key: InstanceKey, textures: &[Texture]) -> Result<Readback<Vec<u64>>>;
    /// The values of a [`Backend::hash_textures`] or
    /// [`Backend::count_explored`] ticket once they have come back (`None`
    /// while in flight, unless `wait`).
    fn poll_hashes(&mut self, ticket: u64, wait: bool) -> Result<Option<Vec<u64>>>;
    /// How many texels of the instance's explored memory
    /// ([`Texture::Memory`]) are above 0, as they stand once the work
    /// recorded so far has run: at once, or a ticket whose one value comes
    /// back through [`Backend::poll_hashes`]. Every backend answers the
    /// same count.
    fn count_explored(&mut self, key: InstanceKey) -> Result<Readback<u64>>;
}

/// One row of the texture table ([`crate::texture::TEXTURES`]) of an
/// instance read whole, as pictures and the conformance goldens show it:
/// the row's texture, or for the pyramid every level that `build` made,
/// side by side ([`mip_atlas`]; zeros when none was made). Every backend
/// reads it through [`Backend::read_texture`].
pub fn read_row(
    backend: &mut dyn Backend,
    key: InstanceKey,
    dims: InstanceDims,
    build: Option<OcclusionBuild>,
    row: &TextureRow,
) -> Result<TextureImage> {
    if row.resolution != Resolution::Pyramid {
        return backend.read_texture(key, row.texture);
    }
    let mut levels = Vec::new();
    for spec in instance_textures(dims, build).into_iter().filter(|s| s.texture.resolution() == Resolution::Pyramid) {
        let image = backend.read_texture(key, spec.texture)?;
        levels.push(Grid::from_image(&image).ok_or_else(|| {
            MurkError::backend_message(
                backend.name(),
                format!(
                    "texture `{}` came back as {}x{} of {} {} texels",
                    spec.texture.name(),
                    image.width,
                    image.height,
                    image.data.len(),
                    image.data.kind().name()
                ),
            )
        })?);
    }
    Ok(mip_atlas(dims.width, dims.height, &levels))
}

/// Device time spent in one pass, as a backend that times its passes reports it.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct PassTiming {
    /// The pass, e.g. `visibility`.
    pub pass: String,
    /// Dispatches (or runs) timed.
    pub dispatches: u64,
    /// Their total time, nanoseconds.
    pub nanos: f64,
    /// Dispatches that could not be timed (too many in one submission).
    pub untimed: u64,
}

/// The final-mask texels of one instance to sample.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SampleRequest {
    /// The instance.
    pub key: InstanceKey,
    /// Output texels `[x, y]`.
    pub texels: Vec<[u32; 2]>,
}

/// One sight line over an instance's internal grid: the ray a lone source
/// in texel `from` with its eye at `eye` casts to the ground of texel `to`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineTexels {
    /// The looker's texel `[x, y]`.
    pub from: [u32; 2],
    /// The looker's eye, height units.
    pub eye: i32,
    /// The target's texel `[x, y]`.
    pub to: [u32; 2],
}

/// Sight lines over one instance to trace: each comes back as the light
/// its ray lets through (`0..=65535`, what the visibility pass scales a
/// source's falloff by), in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineRequest {
    /// The instance.
    pub key: InstanceKey,
    /// The rule the instance's visibility pass judges rays by.
    pub rule: RayRule,
    /// The lines.
    pub lines: Vec<LineTexels>,
}

/// Footprints, each a list of internal texels: footprint `i` is
/// `texels[ends[i - 1]..ends[i]]` (from 0).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FootprintList {
    /// Every footprint's texels `[x, y]`, one footprint after the other.
    pub texels: Vec<[u32; 2]>,
    /// Where each footprint's texels end, ascending.
    pub ends: Vec<u32>,
    /// The list's name among the lists of this process ([`FootprintList::new_id`]),
    /// 0 for none: what [`KeptFootprints::from`] names.
    pub id: u64,
    /// Which footprints the maker knows to hold the texels of a footprint
    /// of a list it made before (`None`: nothing known). A backend that
    /// keeps its last judgment may take it from there instead of comparing
    /// the texels.
    pub kept: Option<KeptFootprints>,
}

/// Footprints of a [`FootprintList`] that hold the texels of footprints of
/// an earlier list (the same entities standing still).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KeptFootprints {
    /// The [`FootprintList::id`] of the earlier list (never 0).
    pub from: u64,
    /// Per footprint of this list, the index of the footprint of the earlier
    /// list with the same texels, or [`KeptFootprints::NONE`].
    pub same: Vec<u32>,
}

impl KeptFootprints {
    /// No footprint of the earlier list is known to hold these texels.
    pub const NONE: u32 = u32::MAX;
}

impl FootprintList {
    /// Whether `ends` ascends to the number of texels and `kept` has one
    /// entry per footprint (every backend checks a list before it judges
    /// it); an error names `footprints.ends` or `footprints.kept`.
    pub fn check(&self) -> Result<()> {
        if self.ends.last().copied().unwrap_or(0) as usize != self.texels.len() || self.ends.windows(2).any(|w| w[0] > w[1]) {
            return Err(MurkError::invalid("footprints.ends", self.ends.len(), "must ascend to the number of texels"));
        }
        if let Some(kept) = &self.kept {
            if kept.same.len() != self.ends.len() || kept.from == 0 {
                return Err(MurkError::invalid(
                    "footprints.kept",
                    format!("{} footprints from list {}", kept.same.len(), kept.from),
                    format!("must name a list (not 0) and one footprint for each of the {}", self.ends.len()),
                ));
            }
        }
        Ok(())
    }

    /// A list id not given before in this process (never 0).
    pub fn new_id() -> u64 {
        static LAST: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        LAST.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1
    }

    /// The texels of footprint `i` (of a checked list).
    #[inline]
    pub fn footprint(&self, i: usize) -> &[[u32; 2]] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        &self.texels[start..self.ends[i] as usize]
    }
}

/// Footprints judged in one instance's sight signal (see
/// [`Backend::submit_footprints`]): does a texel of each reach `cutoff`?
/// Instances over one internal grid (one per team over one map) share one
/// list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FootprintRequest {
    /// The instance.
    pub key: InstanceKey,
    /// The value a texel must reach.
    pub cutoff: u16,
    /// The footprints, each texel inside the instance's internal grid.
    pub footprints: Arc<FootprintList>,
}

/// The error for textures kept on a device that `backend` cannot load.
fn kept_elsewhere(backend: &str) -> MurkError {
    MurkError::invalid(
        "state.kept",
        "textures kept on a device",
        format!("were kept by another backend than `{backend}`: load a state on the backend that saved it"),
    )
}

/// What a footprint whose largest sight-signal value is `top` reads as in a
/// [`FootprintRequest`] with `cutoff`: the cutoff when `top` reaches it,
/// else 0 (so comparing it with the cutoff answers as `top` would).
pub fn footprint_value(top: u16, cutoff: u16) -> u16 {
    if top >= cutoff {
        cutoff
    } else {
        0
    }
}

/// Which backend to run on, chosen at run time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BackendChoice {
    /// The CPU reference.
    #[default]
    Cpu,
    /// The GPU backend; an error where no adapter exists.
    Gpu,
    /// The GPU on a hardware adapter, else the CPU (the reason is
    /// reported): an adapter that runs on the CPU itself (lavapipe,
    /// llvmpipe, SwiftShader, WARP) is never chosen, since the CPU backend
    /// is far faster there.
    Auto,
}

/// A backend opened for a [`BackendChoice`], and why `Auto` fell back to
/// the CPU when it did.
#[derive(Debug)]
pub struct Opened<B> {
    /// What was opened.
    pub backend: B,
    /// With `Auto`: why the GPU could not be opened, the CPU then runs.
    pub fallback: Option<MurkError>,
}

impl BackendChoice {
    /// Opens what this choice names, with the program's own constructors of
    /// each kind (`murk-cpu`'s, `murk-gpu`'s on its own device or a
    /// renderer's, or a `gpu` that says this build has none): `Cpu` and
    /// `Gpu` open that kind or fail with its error; `Auto` opens the GPU on
    /// a hardware adapter only (`gpu(true)`: a software adapter is an
    /// error) and, when that fails, the CPU, keeping the GPU's error in
    /// [`Opened::fallback`]. Every program that lets a user choose (the
    /// CLI, the Bevy plugin) goes through here, so a choice means the same
    /// everywhere.
    pub fn open<B>(self, cpu: impl FnOnce() -> Result<B>, gpu: impl FnOnce(bool) -> Result<B>) -> Result<Opened<B>> {
        match self {
            BackendChoice::Cpu => Ok(Opened { backend: cpu()?, fallback: None }),
            BackendChoice::Gpu => Ok(Opened { backend: gpu(false)?, fallback: None }),
            BackendChoice::Auto => match gpu(true) {
                Ok(backend) => Ok(Opened { backend, fallback: None }),
                Err(why) => Ok(Opened { backend: cpu()?, fallback: Some(why) }),
            },
        }
    }

    /// The choice as the command line and scenario files spell it.
    pub fn name(self) -> &'static str {
        match self {
            BackendChoice::Cpu => "cpu",
            BackendChoice::Gpu => "gpu",
            BackendChoice::Auto => "auto",
        }
    }
}

impl std::str::FromStr for BackendChoice {
    type Err = MurkError;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "cpu" => Ok(Self::Cpu),
            "gpu" => Ok(Self::Gpu),
            "auto" => Ok(Self::Auto),
            other => Err(MurkError::invalid("backend", other, "must be cpu, gpu or auto")),
        }
    }
}
