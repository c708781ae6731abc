//! Writes the conformance goldens with the CPU reference (1 thread):
//! `goldens/manifest.json`, the final-mask PNGs, the contact sheet, and the
//! premade looks' low-resolution goldens in `looks-goldens/`.
//!
//! `cargo run --release -p murk-conformance --bin murk-bless` (add `-- --looks`
//! for the looks' goldens alone).

use murk_conformance::harness::{case_files, case_name, golden_images, goldens_dir, manifest_entry, run_case, write_png16};
use murk_conformance::looks::{looks_goldens_dir, render_looks, write_rgba, Fixture, LookImage};
use murk_conformance::sheet::{contact_html, contact_sheet};
use serde_json::{json, Map};
use std::process::ExitCode;

fn main() -> ExitCode {
    if std::env::args().nth(1).as_deref() == Some("--looks") {
        return match bless_looks() {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("murk-bless: error: {e}");
                ExitCode::FAILURE
            }
        };
    }
    match bless() {
        Ok(n) => {
            println!("blessed {n} cases into {}", goldens_dir().display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("murk-bless: error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn bless() -> Result<usize, Box<dyn std::error::Error>> {
    let dir = goldens_dir();
    if dir.exists() {
        std::fs::remove_dir_all(&dir).map_err(|e| format!("cannot clear {}: {e}", dir.display()))?;
    }
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let mut cases = Map::new();
    let mut thumbs = Vec::new();
    let mut html_items = Vec::new();
    let files = case_files();
    for path in &files {
        let case = case_name(path);
        let backend = Box::new(murk_cpu::CpuBackend::new(1).map_err(|e| e.to_string())?);
        let run = run_case(path, backend).map_err(|e| format!("{case}: {e}"))?;
        let description = murk_core::scenario::Scenario::load(path).map_err(|e| e.to_string())?.name;
        for (rel, image) in golden_images(&case, &run) {
            write_png16(&dir.join(&rel), image.width, image.height, &image.to_gray16())?;
            let instance = rel.rsplit('/').next().unwrap_or("").split('.').next().unwrap_or("").to_string();
            thumbs.push((format!("{case}/{instance}"), image));
            html_items.push((rel, format!("{case} / {instance}"), description.clone()));
        }
        cases.insert(case.clone(), manifest_entry(&case, &run));
        println!("  {case}: {} passes recorded", run.records.len());
    }
    let manifest = json!({ "format": 1, "writer": "cpu-1", "cases": cases });
    let text = serde_json::to_string_pretty(&manifest).map_err(|e| e.to_string())? + "\n";
    std::fs::write(dir.join("manifest.json"), text).map_err(|e| e.to_string())?;
    let (w, h, px) = contact_sheet(&thumbs);
    let file = std::fs::File::create(dir.join("contact-sheet.png")).map_err(|e| e.to_string())?;
    let mut enc = png::Encoder::new(std::io::BufWriter::new(file), w, h);
    enc.set_color(png::ColorType::Grayscale);
    enc.set_depth(png::BitDepth::Eight);
    enc.write_header().and_then(|mut wr| wr.write_image_data(&px)).map_err(|e| e.to_string())?;
    std::fs::write(dir.join("contact-sheet.html"), contact_html(&html_items)).map_err(|e| e.to_string())?;
    bless_looks()?;
    Ok(files.len())
}

/// The premade looks' low-resolution goldens, from the CPU reference.
fn bless_looks() -> Result<(), Box<dyn std::error::Error>> {
    let dir = looks_goldens_dir();
    if dir.exists() {
        std::fs::remove_dir_all(&dir).map_err(|e| format!("cannot clear {}: {e}", dir.display()))?;
    }
    for LookImage { look, width, height, pixels } in render_looks(&mut murk_cpu::looks::CpuLooks, &Fixture::new())? {
        write_rgba(&dir.join(format!("{look}.png")), width, height, &pixels)?;
        println!("  looks: {look} {width}x{height}");
    }
    Ok(())
}
