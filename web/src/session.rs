//! A scenario running on one backend at a time, in the shape a page drives
//! it: one tick per call, never a wait for the device, each tick's lockstep
//! hash kept as it lands, each tick's multiplayer answers (sight sets and
//! events, stealth events) kept, a backend switch through a snapshot, and
//! the view through any one instance's (team's) eyes. Nothing
//! here needs a browser; the page (`page.rs`) wraps it for JavaScript, and
//! the native tests drive it as the page does.

use murk_core::movingai::MovingAiMap;
use murk_core::scenario::{Scenario, ScenarioFiles, ScenarioRunner, TickAnswers};
use murk_core::{Backend, MurkError, Profile, Result, ShaderParams, Texture, TextureData};
use murk_gpu::{wgpu, GpuBackend};
use std::collections::BTreeMap;

/// A scenario running in a page.
pub struct Session {
    runner: ScenarioRunner,
    /// A handle on the GPU backend the run is on, if it is on one.
    gpu: Option<GpuBackend>,
    /// Lockstep hash of the state after each tick, by tick index (0-based,
    /// as `murk run` numbers its `per_tick` records).
    hashes: BTreeMap<u64, u64>,
    /// Each tick's multiplayer answers, by tick index.
    answers: BTreeMap<u32, TickAnswers>,
    /// The instance the page shows.
    view: String,
}

/// The three-state overlay of one instance as RGBA pixels, one per output
/// texel, row 0 at the area's local -Y edge.
pub struct Picture {
    /// Pixels across.
    pub width: u32,
    /// Pixels down.
    pub height: u32,
    /// Four bytes a pixel.
    pub rgba: Vec<u8>,
}

impl Session {
    /// Parses a scenario (`name` ends in `.json` or `.ron`) and builds its
    /// world on `backend` (with `gpu`, a handle on it, when it is the GPU
    /// backend). The files it names (its map, its instances' profile files)
    /// are looked up in `files` by file name, without folders, as a user
    /// drops them beside it. The view starts on the first instance.
    pub fn new(name: &str, text: &str, files: &BTreeMap<String, String>, backend: Box<dyn Backend>, gpu: Option<GpuBackend>) -> Result<Self> {
        let format = if name.ends_with(".ron") { "ron" } else { "json" };
        let scenario = Scenario::parse(text, format, name)?;
        let mut loaded = ScenarioFiles::default();
        if let Some(settings) = &scenario.map {
            let (file, map) = given(files, "map.file".into(), &settings.file)?;
            loaded.map = Some(MovingAiMap::parse(map, file)?);
        }
        for (i, inst) in scenario.instances.iter().enumerate() {
            if let Some(path) = &inst.profile_file {
                let (file, profile) = given(files, format!("instances[{i}].profile_file"), path)?;
                let ext = file.rsplit_once('.').map_or("", |(_, e)| e);
                loaded.profiles.insert(inst.name.clone(), Profile::parse(profile, ext, file)?);
            }
        }
        let view = scenario.instances.first().map(|i| i.name.clone()).unwrap_or_default();
        let mut runner = ScenarioRunner::new(scenario, &loaded, backend)?;
        runner.fog().set_hash_every_tick(true);
        Ok(Self { runner, gpu, hashes: BTreeMap::new(), answers: BTreeMap::new(), view })
    }

    /// The backend's name.
    pub fn backend_name(&self) -> String {
        self.runner.backend_name()
    }

    /// Whether the run is on the GPU backend.
    pub fn on_gpu(&self) -> bool {
        self.gpu.is_some()
    }

    /// Ticks run so far.
    pub fn ticks_done(&self) -> u32 {
        self.runner.ticks_done()
    }

    /// Whether the next tick (or the second step of a switch) would find
    /// every readback landed: always on the CPU; on the GPU once the device
    /// has answered, which in a browser happens only while the page yields.
    pub fn ready(&self) -> Result<bool> {
        self.gpu.as_ref().map_or(Ok(true), GpuBackend::readbacks_landed)
    }

    /// Runs one tick. Call it only when [`Session::ready`] holds: on the GPU
    /// a readback that has not landed would otherwise be waited for, which
    /// a browser cannot do (the tick fails there and changes nothing
    /// the page keeps).
    pub fn tick(&mut self) -> Result<()> {
        let tick = self.runner.ticks_done();
        let report = self.runner.advance()?;
        if let Some(landed) = report.lockstep {
            // `ticks` counts the ticks behind the state: tick index + 1.
            self.hashes.insert(landed.ticks - 1, landed.hash);
        }
        self.answers.insert(tick, self.runner.answers(&report)?);
        Ok(())
    }

    /// Each tick's multiplayer answers, by tick index: the stealth events,
    /// per-observer stealth events, sight events and sight sets that
    /// `murk run` writes in the same tick's `per_tick` record.
    pub fn answers(&self) -> &BTreeMap<u32, TickAnswers> {
        &self.answers
    }

    /// The lockstep hashes landed so far, by tick index: each tick's
    /// arrives two ticks after it.
    pub fn hashes(&self) -> &BTreeMap<u64, u64> {
        &self.hashes
    }

    /// First step of a switch away from the GPU, once [`Session::ready`]
    /// holds (an error otherwise: the snapshot would wait for what is in
    /// flight): the snapshot's reads are rehearsed, so that once
    /// [`Session::ready`] holds again the switch reads landed copies and
    /// waits for nothing. Nothing to do on the CPU.
    pub fn prepare_switch(&mut self) -> Result<()> {
        let Some(gpu) = &self.gpu else { return Ok(()) };
        if !gpu.readbacks_landed()? {
            return Err(MurkError::invalid("prepare_switch", "called with readbacks in flight", "wait until `ready` holds first"));
        }
        let runner = &mut self.runner;
        gpu.rehearse_reads(|| runner.snapshot(std::path::Path::new("")).map(drop))??;
        Ok(())
    }

    /// Moves the run onto `backend` (with `gpu`, a handle on it, when it is
    /// the GPU backend) through a snapshot, as a game would while it runs.
    /// From the GPU, call [`Session::prepare_switch`] first and wait for
    /// [`Session::ready`]. On an error the run stays where it was.
    pub fn switch(&mut self, backend: Box<dyn Backend>, gpu: Option<GpuBackend>) -> Result<()> {
        self.runner.switch_backend(backend)?;
        self.gpu = gpu;
        Ok(())
    }

    /// The scenario's instances (its teams' views), in the file's order.
    pub fn instances(&self) -> Vec<String> {
        self.runner.scenario().instances.iter().map(|i| i.name.clone()).collect()
    }

    /// The instance the page shows.
    pub fn view(&self) -> &str {
        &self.view
    }

    /// Shows instance `name` from now on: the page looks through that
    /// team's eyes. An unknown name is an error naming the instances there
    /// are, and the view stays where it was.
    pub fn set_view(&mut self, name: &str) -> Result<()> {
        let names = self.instances();
        if !names.iter().any(|n| n == name) {
            return Err(MurkError::invalid("view", name, format!("is not an instance of this scenario (instances: {})", names.join(", "))));
        }
        self.view = name.to_string();
        Ok(())
    }

    /// The viewed instance's shader parameters (what a material samples its
    /// mask texture with).
    pub fn view_params(&mut self) -> Result<ShaderParams> {
        let view = self.view.clone();
        self.runner.fog().shader_params(&view)
    }

    /// The viewed instance's mask texture key on the GPU (for drawing it).
    pub fn view_key(&mut self) -> Result<murk_core::InstanceKey> {
        let view = self.view.clone();
        self.runner.fog().instance_key(&view)
    }

    /// The mask texture of instance `key` on the GPU (see
    /// [`GpuBackend::mask_texture`]); an error on the CPU.
    pub fn gpu_mask_texture(&self, key: murk_core::InstanceKey) -> Result<wgpu::Texture> {
        let gpu = self.gpu.as_ref().ok_or_else(|| MurkError::invalid("backend", self.backend_name(), "has no mask texture: it is not the GPU"))?;
        gpu.mask_texture(key)
    }

    /// The three-state overlay of the viewed instance drawn from its final
    /// mask, read back: what the page shows on the CPU backend (on the GPU
    /// it draws the mask texture on the device instead).
    pub fn picture(&mut self) -> Result<Picture> {
        let params = self.view_params()?;
        let view = self.view.clone();
        let image = self.runner.fog().read_texture(&view, Texture::Final)?;
        let TextureData::U16(texels) = image.data else {
            return Err(MurkError::backend_message(self.backend_name(), "the final mask is not 16-bit"));
        };
        let rgba = texels.iter().flat_map(|&v| overlay(f32::from(v) / 65535.0, params.explored_value)).collect();
        Ok(Picture { width: image.width, height: image.height, rgba })
    }
}

/// The file a scenario's `field` names at `path`, looked up among the files
/// given with it by its name without folders: its name and text.
fn given<'a>(files: &'a BTreeMap<String, String>, field: String, path: &'a str) -> Result<(&'a str, &'a String)> {
    let file = path.rsplit(['/', '\\']).next().unwrap_or_default();
    let text = files.get(file).ok_or_else(|| {
        let names = if files.is_empty() { "none".to_string() } else { files.keys().cloned().collect::<Vec<_>>().join(", ") };
        MurkError::invalid(field, path, format!("names a file that was not given with the scenario (given: {names}): drop it beside the scenario"))
    })?;
    Ok((file, text))
}

/// One texel of the overlay: ground under fog whose opacity follows the
/// three states as `murk_fog_three_state` in `murk_fog.wgsl` shades them
/// (clear where visible, a haze where explored, dark where never seen).
fn overlay(value: f32, explored: f32) -> [u8; 4] {
    const HAZE: f32 = 0.45;
    const DARK: f32 = 0.92;
    let e = explored.max(1e-4);
    let opacity = if value >= e {
        HAZE * (1.0 - ((value - e) / (1.0 - e).max(1e-4)).clamp(0.0, 1.0))
    } else {
        let t = (value / e).clamp(0.0, 1.0);
        DARK + (HAZE - DARK) * t * t
    };
    let ground = [0.48, 0.56, 0.40];
    let fog = [0.03, 0.04, 0.08];
    let c = |i: usize| ((ground[i] + (fog[i] - ground[i]) * opacity) * 255.0).round() as u8;
    [c(0), c(1), c(2), 255]
}
