//! The harness: run a case on a backend, record every pass at the case's
//! stage ticks, and compare with the goldens.
//!
//! Goldens are written only by the CPU reference, through `murk-bless`. Each
//! recorded pass is held by its hash in `goldens/manifest.json`; the final
//! mask of the last stage tick is also stored as a 16-bit PNG, for people and
//! the contact sheet. A mismatch is reported at the first pass (in pipeline
//! order) that differs, with the case, tick, instance and first differing
//! texel, and writes actual, expected and difference images.

use crate::error::{Context, HarnessError};
use murk_core::fixed::Fnv64;
use murk_core::scenario::{Scenario, ScenarioFiles, ScenarioRunner};
use murk_core::{pass_outputs, Backend, BackendChoice, InstanceStats, MurkError, RayMethod, Resolution, Texture, TextureImage, TextureRow};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The corpus folder.
pub fn cases_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("cases")
}

/// The goldens folder.
pub fn goldens_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("goldens")
}

/// Where mismatch images go.
pub fn failures_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/conformance-failures")
}

/// Every case file, sorted by name.
pub fn case_files() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(cases_dir())
        .expect("conformance/cases exists")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| matches!(p.extension().and_then(|e| e.to_str()), Some("json" | "ron")))
        .collect();
    v.sort();
    v
}

/// A case's name: its file stem.
pub fn case_name(path: &Path) -> String {
    path.file_stem().and_then(|s| s.to_str()).expect("case files have UTF-8 names").to_string()
}

/// A backend configuration the corpus runs on.
pub struct Variant {
    /// Name, as in reports (`cpu-1`).
    pub name: String,
    /// Builds a fresh backend.
    pub make: Box<dyn Fn() -> Box<dyn Backend> + Send + Sync>,
}

/// The variant a backend choice opens, through [`BackendChoice::open`] as
/// every program that lets a user choose: the CPU reference on `threads`
/// threads, or the GPU on the first adapter with one device shared by every
/// case (`Auto` takes a hardware adapter only and falls back to the CPU,
/// as everywhere). A GPU that cannot
/// open is [`HarnessError::NoAdapter`] with the reason.
pub fn variant(choice: BackendChoice, threads: usize) -> Result<Variant, HarnessError> {
    let cpu = || -> murk_core::Result<Variant> {
        // Opened once here so that a bad thread count is this call's error.
        murk_cpu::CpuBackend::new(threads)?;
        let make = move || Box::new(murk_cpu::CpuBackend::new(threads).expect("opened once with this thread count")) as Box<dyn Backend>;
        Ok(Variant { name: format!("cpu-{threads}"), make: Box::new(make) })
    };
    let gpu = |hardware: bool| -> murk_core::Result<Variant> {
        let gpu = if hardware { murk_gpu::GpuBackend::new_hardware()? } else { murk_gpu::GpuBackend::new()? };
        Ok(Variant { name: format!("gpu:{}", gpu.adapter()), make: Box::new(move || Box::new(gpu.another_world())) })
    };
    match choice.open(cpu, gpu) {
        Ok(opened) => Ok(opened.backend),
        Err(MurkError::NoAdapter(why)) => Err(HarnessError::NoAdapter(why)),
        Err(e) if choice == BackendChoice::Gpu => Err(HarnessError::NoAdapter(e.to_string())),
        Err(e) => Err(e).context(|| format!("opening the {} backend", choice.name())),
    }
}

/// The CPU reference on 1 thread (the golden writer) and on 3 threads.
pub fn cpu_variants() -> Result<Vec<Variant>, HarnessError> {
    [1usize, 3].into_iter().map(|threads| variant(BackendChoice::Cpu, threads)).collect()
}

/// One recorded pass output: a texture, read whole.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TextureRecord {
    /// Tick after which it was read.
    pub tick: u32,
    /// Instance.
    pub instance: String,
    /// The texture's row (the pyramid's: its levels side by side).
    pub row: &'static TextureRow,
    /// The texels.
    pub image: TextureImage,
}

impl TextureRecord {
    /// FNV-1a 64 of the dimensions and texel bytes, hex.
    pub fn hash(&self) -> String {
        let mut h = Fnv64::default();
        h.write(&self.image.width.to_le_bytes());
        h.write(&self.image.height.to_le_bytes());
        h.write(&self.image.bytes());
        format!("{:016x}", h.finish())
    }

    /// Key in the manifest: `t<tick>/<instance>/<texture>`.
    pub fn key(&self) -> String {
        format!("t{}/{}/{}", self.tick, self.instance, self.row.name)
    }
}

/// Everything a case produced.
pub struct CaseRun {
    /// Recorded passes, by tick, then instance, then pipeline order.
    pub records: Vec<TextureRecord>,
    /// Counters per instance at the end (the recompute rules' decisions).
    pub stats: BTreeMap<String, InstanceStats>,
    /// The lights of the sight lines the case's queries asked, by
    /// `t<tick>/<query id>` (empty when it asks none).
    pub lines: BTreeMap<String, Vec<u16>>,
}

/// The textures recorded for an instance using `method`: what every pass
/// writes, the pyramid and the distance field only when the method builds
/// them.
fn recorded(method: RayMethod) -> impl Iterator<Item = &'static TextureRow> {
    pass_outputs().filter(move |row| match row.resolution {
        Resolution::Pyramid => method.needs_mips(),
        Resolution::DistanceField => method.needs_distance_field(),
        Resolution::Internal | Resolution::Output => true,
    })
}

/// Runs a case file on `backend`.
pub fn run_case(path: &Path, backend: Box<dyn Backend>) -> Result<CaseRun, HarnessError> {
    let case = case_name(path);
    let scenario = Scenario::load(path).context(|| case.clone())?;
    let base = path.parent().unwrap_or(Path::new("."));
    let files = ScenarioFiles::load(&scenario, base).context(|| case.clone())?;
    let stage_ticks = scenario.stage_ticks.clone();
    let mut runner = ScenarioRunner::new(scenario, &files, backend).context(|| case.clone())?;
    let mut records = Vec::new();
    let mut lines = BTreeMap::new();
    while !runner.finished() {
        let tick = runner.ticks_done();
        let record = runner.step().context(|| format!("{case}, tick {tick}"))?;
        for q in record.queries {
            if let Some(answers) = q.lines {
                lines.insert(format!("t{tick}/{}", q.id), answers.iter().map(|a| a.light).collect());
            }
        }
        if !stage_ticks.contains(&tick) {
            continue;
        }
        for instance in runner.fog().instance_names() {
            let method = runner.fog().instance(&instance).context(|| case.clone())?.profile.ray_method;
            for row in recorded(method) {
                let image = runner.fog().read_row(&instance, row).context(|| format!("{case}, tick {tick}"))?;
                records.push(TextureRecord { tick, instance: instance.clone(), row, image });
            }
        }
    }
    let mut stats = BTreeMap::new();
    for instance in runner.fog().instance_names() {
        stats.insert(instance.clone(), runner.fog().stats(&instance).context(|| case.clone())?);
    }
    Ok(CaseRun { records, stats, lines })
}

/// The golden final-mask images of a run: `(relative path, image)` for
/// every instance at the last stage tick.
pub fn golden_images(case: &str, run: &CaseRun) -> Vec<(String, TextureImage)> {
    let Some(last) = run.records.iter().map(|r| r.tick).max() else {
        return Vec::new();
    };
    run.records
        .iter()
        .filter(|r| r.tick == last && r.row.texture == Texture::Final)
        .map(|r| (format!("{case}/{}.t{}.final.png", r.instance, r.tick), r.image.clone()))
        .collect()
}

/// The manifest entry of a run.
pub fn manifest_entry(case: &str, run: &CaseRun) -> Value {
    let hashes: BTreeMap<String, String> = run.records.iter().map(|r| (r.key(), r.hash())).collect();
    let images: Vec<String> = golden_images(case, run).into_iter().map(|(p, _)| p).collect();
    let mut entry = json!({ "hashes": hashes, "stats": run.stats, "images": images });
    if !run.lines.is_empty() {
        entry["lines"] = json!(run.lines);
    }
    entry
}

/// Loads `goldens/manifest.json`.
pub fn load_manifest() -> Result<Value, HarnessError> {
    let path = goldens_dir().join("manifest.json");
    let text = std::fs::read_to_string(&path).map_err(|e| HarnessError::file(&path, format!("cannot read: {e} (run murk-bless)")))?;
    serde_json::from_str(&text).map_err(|e| HarnessError::file(&path, format!("cannot parse: {e}")))
}

/// The first texel at which two images differ, as `(x, y)`.
pub fn first_difference(a: &TextureImage, b: &TextureImage) -> Option<(u32, u32)> {
    a.first_difference(b)
}

/// Writes a 16-bit grayscale PNG.
pub fn write_png16(path: &Path, width: u32, height: u32, texels: &[u16]) -> Result<(), HarnessError> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| HarnessError::file(dir, format!("cannot create: {e}")))?;
    }
    let file = std::fs::File::create(path).map_err(|e| HarnessError::file(path, format!("cannot create: {e}")))?;
    let mut enc = png::Encoder::new(std::io::BufWriter::new(file), width.max(1), height.max(1));
    enc.set_color(png::ColorType::Grayscale);
    enc.set_depth(png::BitDepth::Sixteen);
    let mut w = enc.write_header().map_err(|e| HarnessError::file(path, e))?;
    let mut bytes: Vec<u8> = texels.iter().flat_map(|v| v.to_be_bytes()).collect();
    bytes.resize((width.max(1) * height.max(1) * 2) as usize, 0);
    w.write_image_data(&bytes).map_err(|e| HarnessError::file(path, e))
}

/// Decodes a PNG that must have the given colour type and bit depth:
/// `(width, height, bytes)`.
pub fn read_png(path: &Path, color: png::ColorType, depth: png::BitDepth) -> Result<(u32, u32, Vec<u8>), HarnessError> {
    let file = std::fs::File::open(path).map_err(|e| HarnessError::file(path, format!("cannot open: {e}")))?;
    let mut reader = png::Decoder::new(std::io::BufReader::new(file)).read_info().map_err(|e| HarnessError::file(path, e))?;
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).map_err(|e| HarnessError::file(path, e))?;
    if info.bit_depth != depth || info.color_type != color {
        return Err(HarnessError::file(path, format!("is not {depth:?}-bit {color:?}")));
    }
    buf.truncate(info.buffer_size());
    Ok((info.width, info.height, buf))
}

/// Reads a 16-bit grayscale PNG.
pub fn read_png16(path: &Path) -> Result<(u32, u32, Vec<u16>), HarnessError> {
    let (w, h, bytes) = read_png(path, png::ColorType::Grayscale, png::BitDepth::Sixteen)?;
    Ok((w, h, bytes.chunks(2).map(|c| u16::from_be_bytes([c[0], c[1]])).collect()))
}

/// Writes actual, expected and difference images of a mismatch; returns the folder.
fn write_mismatch_images(variant: &str, case: &str, actual: &TextureRecord, expected: &TextureImage) -> Result<PathBuf, HarnessError> {
    let safe: String = variant.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' }).collect();
    let dir = failures_dir().join(safe).join(case);
    let stem = format!("{}.t{}.{}", actual.instance, actual.tick, actual.row.name);
    let a = actual.image.to_gray16();
    let e = expected.to_gray16();
    write_png16(&dir.join(format!("{stem}-actual.png")), actual.image.width, actual.image.height, &a)?;
    write_png16(&dir.join(format!("{stem}-expected.png")), expected.width, expected.height, &e)?;
    if a.len() == e.len() {
        let diff: Vec<u16> = a.iter().zip(&e).map(|(x, y)| if x == y { 0 } else { (x.abs_diff(*y)).max(16384) }).collect();
        write_png16(&dir.join(format!("{stem}-difference.png")), expected.width, expected.height, &diff)?;
    }
    Ok(dir)
}

/// Runs a case on a variant and compares it with the manifest. The error
/// names the first differing pass.
pub fn check_case(path: &Path, variant: &Variant, manifest: &Value) -> Result<(), HarnessError> {
    let case = case_name(path);
    let entry = &manifest["cases"][&case];
    if entry.is_null() {
        return Err(HarnessError::Mismatch(format!("{case}: no goldens (run murk-bless)")));
    }
    let run = run_case(path, (variant.make)()).map_err(|e| match e {
        HarnessError::Murk { context, source } => HarnessError::Murk { context: format!("{context} on {}", variant.name), source },
        other => other,
    })?;
    let expected_keys: Vec<&String> = entry["hashes"].as_object().map(|o| o.keys().collect()).unwrap_or_default();
    let actual_keys: Vec<String> = run.records.iter().map(TextureRecord::key).collect();
    if expected_keys.len() != actual_keys.len() {
        return Err(HarnessError::Mismatch(format!(
            "{case} on {}: recorded {} passes, the goldens have {}",
            variant.name,
            actual_keys.len(),
            expected_keys.len()
        )));
    }
    for record in &run.records {
        let want = entry["hashes"][record.key()].as_str().unwrap_or("");
        if record.hash() == want {
            continue;
        }
        // Recompute the expected image with the reference to show the difference.
        let reference = run_case(path, Box::new(murk_cpu::CpuBackend::new(1).context(|| "the CPU reference".into())?))?;
        let expected = reference.records.iter().find(|r| r.key() == record.key()).map(|r| r.image.clone());
        let (texel, images) = match &expected {
            Some(e) => (
                first_difference(&record.image, e),
                write_mismatch_images(&variant.name, &case, record, e).map_or_else(|e| e.to_string(), |d| d.display().to_string()),
            ),
            None => (None, "the reference does not record this pass".into()),
        };
        let texel = match texel {
            Some((x, y)) => format!("first differing texel ({x}, {y})"),
            None => "the reference reproduces this output, so the golden is stale (run murk-bless)".into(),
        };
        return Err(HarnessError::Mismatch(format!(
            "{case} on {}: pass `{}` of instance `{}` at tick {} differs from the golden (hash {} != {}); {texel}; images: {images}",
            variant.name,
            record.row.name,
            record.instance,
            record.tick,
            record.hash(),
            want,
        )));
    }
    let stats = serde_json::to_value(&run.stats).map_err(|e| HarnessError::Mismatch(format!("{case}: counters: {e}")))?;
    if stats != entry["stats"] {
        return Err(HarnessError::Mismatch(format!(
            "{case} on {}: recompute counters {stats} differ from the goldens' {}",
            variant.name, entry["stats"]
        )));
    }
    let lines = if run.lines.is_empty() { Value::Null } else { json!(run.lines) };
    if lines != entry["lines"] {
        return Err(HarnessError::Mismatch(format!("{case} on {}: sight lines {lines} differ from the goldens' {}", variant.name, entry["lines"])));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use murk_core::TextureData;

    #[test]
    fn first_difference_names_the_texel() {
        let a = TextureImage { width: 4, height: 3, data: TextureData::U16(vec![0; 12]) };
        let mut v = vec![0u16; 12];
        v[2 * 4 + 1] = 7;
        v[2 * 4 + 3] = 9;
        let b = TextureImage { width: 4, height: 3, data: TextureData::U16(v) };
        assert_eq!(first_difference(&a, &b), Some((1, 2)));
        assert_eq!(first_difference(&a, &a), None);
        let c = TextureImage { width: 2, height: 6, data: TextureData::U16(vec![0; 12]) };
        assert_eq!(first_difference(&a, &c), Some((0, 0)));
    }
}
