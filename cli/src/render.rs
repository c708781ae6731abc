//! `murk render`: a top-down camera view of a scenario with a premade fog
//! look, as PNG frames.

use crate::picture::{terrain_colour, write_rgb8};
use murk_core::scenario::{Scenario, ScenarioFiles, ScenarioRunner};
use murk_core::{AreaTransform, Stage, StageData};
use murk_cpu::variants::overlay::{self, OverlayStyle};
use std::path::{Path, PathBuf};

/// Options of `murk render`.
pub struct RenderOptions {
    /// Scenario file.
    pub scenario: PathBuf,
    /// `overlay` (the others are not built yet).
    pub variant: String,
    /// Output folder.
    pub out: PathBuf,
    /// A frame every this many ticks.
    pub every: u32,
}

/// Runs the scenario and writes `<instance>.<variant>.<tick>.png` frames.
pub fn render(opts: &RenderOptions) -> Result<Vec<PathBuf>, String> {
    if opts.variant != "overlay" {
        return Err(format!("invalid --variant = {}: this build renders `overlay` (`surface` and `volume` are not built yet)", opts.variant));
    }
    let scenario = Scenario::load(&opts.scenario).map_err(|e| e.to_string())?;
    let base = opts.scenario.parent().unwrap_or(Path::new("."));
    let files = ScenarioFiles::load(&scenario, base).map_err(|e| e.to_string())?;
    let backend = murk_cpu::CpuBackend::new(std::thread::available_parallelism().map_or(1, |n| n.get())).map_err(|e| e.to_string())?;
    let mut runner = ScenarioRunner::new(scenario, &files, Box::new(backend)).map_err(|e| e.to_string())?;
    std::fs::create_dir_all(&opts.out).map_err(|e| format!("cannot create {}: {e}", opts.out.display()))?;
    let style = OverlayStyle::default();
    let (tick_s, ticks) = (runner.scenario().tick_us as f32 / 1.0e6, runner.scenario().ticks);
    let mut written = Vec::new();
    while !runner.finished() {
        let tick = runner.ticks_done();
        runner.step().map_err(|e| format!("tick {tick}: {e}"))?;
        if tick % opts.every.max(1) != 0 && tick + 1 != ticks {
            continue;
        }
        for name in runner.fog().instance_names() {
            let img = runner.fog().read_stage(&name, Stage::Final).map_err(|e| e.to_string())?;
            let StageData::U16(mask) = &img.data else { return Err("the final mask is u16".into()) };
            let explored = runner.fog().instance(&name).map_err(|e| e.to_string())?.profile.explored_value;
            let (w, h, fog) = overlay::render(mask, img.width, img.height, explored, None, tick as f32 * tick_s, &style);
            let desc = runner.fog().instance(&name).map_err(|e| e.to_string())?.clone();
            let camera = AreaTransform::new(&desc.area, w, h);
            let mut rgb = Vec::with_capacity((w * h * 3) as usize);
            for y in 0..h {
                for x in 0..w {
                    // Terrain under the texel (the map where there is one, plain ground elsewhere).
                    let (wx, wy) = camera.texel_to_world(f64::from(x) + 0.5, f64::from(y) + 0.5);
                    let ground = match (&files.map, &runner.scenario().map) {
                        (Some(m), Some(spec)) => {
                            let c = ((wx - f64::from(spec.origin.x)) / f64::from(spec.cell_size)).floor();
                            let r = ((wy - f64::from(spec.origin.y)) / f64::from(spec.cell_size)).floor();
                            if c >= 0.0 && r >= 0.0 && (c as u32) < m.width && (r as u32) < m.height {
                                terrain_colour(m.cells[(r as u32 * m.width + c as u32) as usize])
                            } else {
                                terrain_colour(b'@')
                            }
                        }
                        _ => terrain_colour(b'.'),
                    };
                    let i = ((y * w + x) * 4) as usize;
                    let a = f64::from(fog[i + 3]) / 255.0;
                    for (k, g) in ground.iter().enumerate() {
                        rgb.push((g * (1.0 - a) + f64::from(fog[i + k]) * a).round() as u8);
                    }
                }
            }
            let path = opts.out.join(format!("{name}.{}.{tick:04}.png", opts.variant));
            write_rgb8(&path, w, h, &rgb)?;
            written.push(path);
        }
    }
    Ok(written)
}
