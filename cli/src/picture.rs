//! PNG output and `summary.json`.

use murk_core::movingai::MovingAiMap;
use murk_core::scenario::{ScenarioRunner, TickRecord};
use murk_core::{pass_outputs, MurkError, Texture};
use serde_json::{json, Value};
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

fn png_writer(path: &Path, width: u32, height: u32, color: png::ColorType, depth: png::BitDepth) -> Result<png::Writer<BufWriter<File>>, String> {
    let file = File::create(path).map_err(|e| format!("cannot create {}: {e}", path.display()))?;
    let mut enc = png::Encoder::new(BufWriter::new(file), width, height);
    enc.set_color(color);
    enc.set_depth(depth);
    enc.write_header().map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Writes a 16-bit grayscale PNG.
pub fn write_gray16(path: &Path, width: u32, height: u32, texels: &[u16]) -> Result<(), String> {
    let mut w = png_writer(path, width, height, png::ColorType::Grayscale, png::BitDepth::Sixteen)?;
    let bytes: Vec<u8> = texels.iter().flat_map(|v| v.to_be_bytes()).collect();
    w.write_image_data(&bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// The colour of a terrain character (also used by `murk render`).
pub fn terrain_colour(cell: u8) -> [f64; 3] {
    match cell {
        b'@' | b'O' => [40.0, 36.0, 48.0],
        b'T' => [46.0, 120.0, 60.0],
        b'W' => [50.0, 90.0, 170.0],
        b'S' => [90.0, 110.0, 70.0],
        _ => [196.0, 180.0, 140.0],
    }
}

/// Writes an 8-bit RGB PNG.
pub fn write_rgb8(path: &Path, width: u32, height: u32, rgb: &[u8]) -> Result<(), String> {
    let mut w = png_writer(path, width, height, png::ColorType::Rgb, png::BitDepth::Eight)?;
    w.write_image_data(rgb).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Writes the map in colour under the final mask (dark where unexplored).
pub fn write_overlay(path: &Path, map: &MovingAiMap, width: u32, height: u32, mask: &[u16]) -> Result<(), String> {
    let mut rgb = Vec::with_capacity((width * height * 3) as usize);
    for y in 0..height {
        for x in 0..width {
            let (c, r) = (x * map.width / width, y * map.height / height);
            let base = terrain_colour(map.cells[(r * map.width + c) as usize]);
            let light = 0.12 + 0.88 * f64::from(mask[(y * width + x) as usize]) / 65535.0;
            rgb.extend(base.iter().map(|v| (v * light).round() as u8));
        }
    }
    write_rgb8(path, width, height, &rgb)
}

fn err(e: MurkError) -> String {
    e.to_string()
}

/// Writes `<instance>.final.png` for every instance, and with `stages` one
/// `<instance>.<texture>.png` per texture a pass writes (the pyramid as
/// `mips`, its levels side by side).
pub fn write_outputs(runner: &mut ScenarioRunner, out: &Path, stages: bool) -> Result<Vec<PathBuf>, String> {
    let mut written = Vec::new();
    for name in runner.fog().instance_names() {
        let rows = pass_outputs().filter(|row| stages || row.texture == Texture::Final);
        for row in rows {
            let img = runner.fog().read_row(&name, row).map_err(err)?;
            if img.width == 0 || img.height == 0 {
                continue;
            }
            let path = out.join(format!("{name}.{}.png", row.name));
            write_gray16(&path, img.width, img.height, &img.to_gray16())?;
            written.push(path);
        }
    }
    Ok(written)
}

/// A value as JSON, with `f32` fields printed in their shortest form
/// (`0.4`, not `0.4000000059604645`).
fn shortest<T: serde::Serialize>(v: &T) -> Result<Value, String> {
    let text = serde_json::to_string(v).map_err(|e| e.to_string())?;
    serde_json::from_str(&text).map_err(|e| e.to_string())
}

/// The `summary.json` format: 6 added each instance's explored count
/// (`settings.instances[].explored`) and the sight lines of scripted
/// queries (`per_tick[].queries[].lines`); 5 added each tick's sight sets, sight
/// events and per-observer stealth events; 4 since the texture hash of
/// `murk_core::hash` reads 16x16 leaves; 3 made each instance's state hash
/// take in its mapped texture; 2 made the lockstep and state hashes the
/// block hash of `murk_core::hash` (1, without the field, was FNV-1a 64
/// over the mask bytes).
pub const SUMMARY_FORMAT: u32 = 6;

/// The `summary.json` document.
pub fn summary(runner: &mut ScenarioRunner, threads: usize, records: &[TickRecord]) -> Result<Value, String> {
    let mut instances = Vec::new();
    for name in runner.fog().instance_names() {
        let desc = runner.fog().instance(&name).map_err(err)?.clone();
        let dims = runner.fog().dims(&name).map_err(err)?;
        let stats = runner.fog().stats(&name).map_err(err)?;
        let explored = runner.fog().explored(&name).map_err(err)?;
        instances.push(json!({
            "name": name,
            "area": shortest(&desc.area)?,
            "resolution": desc.resolution,
            "lod": desc.lod,
            "internal_size": [dims.width, dims.height],
            "output_size": [dims.out_width, dims.out_height],
            "observed_teams": format!("{:#010x}", desc.observed_teams.0),
            "profile": shortest(&desc.profile)?,
            "stats": stats,
            "explored": { "texels": explored.texels, "of": explored.of, "fraction": explored.fraction() },
        }));
    }
    let s = runner.scenario();
    Ok(json!({
        "format": SUMMARY_FORMAT,
        "scenario": s.name,
        "backend": runner.backend_name(),
        "threads": threads,
        "tick_us": runner.scenario().tick_us,
        "ticks": records.len(),
        "settings": { "instances": instances },
        "per_tick": records,
    }))
}
