//! `murk render --look top-view`: the fog drawn from above the way a game's
//! material draws it on the GPU. The simulation runs on the GPU backend, the
//! final mask stays in its texture, and a render pass samples it through
//! `murk_fog.wgsl` (`GpuBackend::render_top_view`): only the finished
//! pictures come back to the CPU.

use crate::render::{check_size, run_frames, write_gif, RenderOptions};
use murk_core::scenario::{Scenario, ScenarioFiles, ScenarioRunner};
use murk_core::BackendChoice;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Runs the scenario on the GPU and writes `<instance>.top-view.<tick>.png`
/// frames and `<instance>.top-view.gif`.
pub fn render(opts: &RenderOptions) -> Result<Vec<PathBuf>, String> {
    let (w, h) = check_size(opts)?;
    if opts.backend == BackendChoice::Cpu {
        return Err("--look top-view samples the mask texture on the GPU: use --backend gpu or auto".into());
    }
    let gpu = murk_gpu::GpuBackend::new().map_err(|e| format!("--look top-view needs a GPU: {e}"))?;
    println!("gpu on {}", gpu.adapter());
    let scenario = Scenario::load(&opts.scenario).map_err(|e| e.to_string())?;
    let files = ScenarioFiles::load(&scenario, crate::scenario_base(&opts.scenario)).map_err(|e| e.to_string())?;
    let mut runner = ScenarioRunner::new(scenario, &files, Box::new(gpu.clone())).map_err(|e| e.to_string())?;
    std::fs::create_dir_all(&opts.out).map_err(|e| format!("cannot create {}: {e}", opts.out.display()))?;
    let mut written = Vec::new();
    let mut gifs: BTreeMap<String, Vec<Vec<u8>>> = BTreeMap::new();
    run_frames(&mut runner, opts.every, |runner, tick| {
        for name in runner.fog().instance_names() {
            let key = runner.fog().instance_key(&name).map_err(|e| e.to_string())?;
            let params = runner.fog().shader_params(&name).map_err(|e| e.to_string())?;
            let picture = gpu.render_top_view(key, &params, w, h).map_err(|e| e.to_string())?;
            let rgb: Vec<u8> = picture.pixels.chunks_exact(4).flat_map(|p| [p[0], p[1], p[2]]).collect();
            let path = opts.out.join(format!("{name}.top-view.{tick:04}.png"));
            crate::picture::write_rgb8(&path, w, h, &rgb)?;
            written.push(path);
            gifs.entry(name).or_default().push(rgb);
        }
        Ok(())
    })?;
    for (name, frames) in &gifs {
        let path = opts.out.join(format!("{name}.top-view.gif"));
        write_gif(&path, w, h, frames)?;
        written.push(path);
    }
    Ok(written)
}
