//! Runs a scenario on the GPU and draws its fog the way a game would: the
//! fragment shader of a render pass samples the instance's mask texture
//! through `include/murk_fog.wgsl`. No mask crosses to the CPU; only the
//! finished picture is read back and written as a PNG.
//!
//! ```text
//! cargo run -p murk-gpu --example top_view -- [SCENARIO] [TICKS] [OUT.png]
//! ```

use murk_core::scenario::{Scenario, ScenarioFiles, ScenarioRunner};
use murk_gpu::GpuBackend;
use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let path = args.next().map_or_else(|| repo.join("scenarios/infiltration.json"), PathBuf::from);
    let ticks: u32 = args.next().map_or(Ok(30), |t| t.parse())?;
    let out = args.next().map_or_else(|| PathBuf::from("murk-out/top_view.png"), PathBuf::from);

    let gpu = GpuBackend::new()?;
    println!("adapter: {}", gpu.adapter());
    let scenario = Scenario::load(&path)?;
    let files = ScenarioFiles::load(&scenario, path.parent().unwrap_or(&repo))?;
    let mut runner = ScenarioRunner::new(scenario, &files, Box::new(gpu.clone()))?;
    for _ in 0..ticks {
        if runner.finished() {
            break;
        }
        runner.step()?;
    }
    let fog = runner.fog();
    let name = fog.instance_names().into_iter().next().ok_or("the scenario has no fog instance")?;
    let dims = fog.dims(&name)?;
    // Four pixels per mask texel: the filtering sampler smooths between them.
    let picture = gpu.render_top_view(fog.instance_key(&name)?, &fog.shader_params(&name)?, dims.out_width * 4, dims.out_height * 4)?;
    if let Some(dir) = out.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut encoder = png::Encoder::new(std::io::BufWriter::new(std::fs::File::create(&out)?), picture.width, picture.height);
    encoder.set_color(png::ColorType::Rgba);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.write_header()?.write_image_data(&picture.pixels)?;
    println!("wrote {} ({}x{}, instance `{name}` after {} ticks)", out.display(), picture.width, picture.height, runner.ticks_done());
    Ok(())
}
