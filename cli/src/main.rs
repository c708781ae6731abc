//! `murk`: run the built-in demo, or a scenario file.
//!
//! ```text
//! murk                                  the demo: writes pictures to murk-out/demo/
//! murk run SCENARIO [--backend cpu|gpu|auto] [--compare cpu|gpu|auto] [--threads N] [--ticks N] [--stages] [--snapshot-at TICK] [--out DIR]
//! murk resume SNAPSHOT [--backend cpu|gpu|auto] [--threads N] [--ticks N] [--stages] [--out DIR]
//! murk render SCENARIO --variant overlay|surface|volume [--backend cpu|gpu|auto] [--every K] [--size WxH] [--out DIR]
//! ```

mod picture;
mod render;
mod scene;

use murk_core::scenario::{Scenario, ScenarioFiles, ScenarioRunner, TickRecord};
use murk_core::{Backend, BackendChoice, MurkError, Stage};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

const USAGE: &str = "\
murk - deterministic fog of war

USAGE:
    murk                      run the built-in demo and write pictures to murk-out/demo/
    murk run SCENARIO [OPTIONS]
    murk resume SNAPSHOT [OPTIONS]   continue a run saved with --snapshot-at
    murk render SCENARIO --variant overlay|surface|volume [--backend cpu|gpu|auto]
                [--every K] [--size WxH] [--out DIR]
                              a camera view of the scenario with a premade fog
                              look: PNG frames, an animated GIF, and for the
                              surface the mesh as glTF
    murk --help

OPTIONS (run):
    --backend cpu|gpu|auto    backend (default: the scenario's, else cpu); auto
                              takes the GPU when there is one and says why not
    --compare cpu|gpu|auto    (run) run a second backend alongside and report
                              agreement, or the first differing tick, pass and texel
    --threads N               worker threads of the CPU backend (default: all cores)
    --ticks N                 ticks to run (default: the scenario's)
    --stages                  also write DIR/<instance>.<pass>.png for every pass
    --snapshot-at TICK        (run) after tick TICK, save DIR/snapshot-TICK.murk
    --out DIR                 output folder (default: murk-out/<file stem>)
";

/// Options of `murk run`.
struct RunOptions {
    scenario: PathBuf,
    backend: Option<BackendChoice>,
    compare: Option<BackendChoice>,
    threads: usize,
    ticks: Option<u32>,
    stages: bool,
    snapshot_at: Option<u32>,
    out: Option<PathBuf>,
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        None => demo(),
        Some("-h" | "--help" | "help") => {
            print!("{USAGE}");
            Ok(())
        }
        Some("run") => parse_run(&args[1..]).and_then(|o| run(&o)),
        Some("resume") => parse_run(&args[1..]).and_then(|o| resume(&o)),
        Some("render") => parse_render(&args[1..]).and_then(|o| {
            for p in render::render(&o)? {
                println!("wrote {}", p.display());
            }
            Ok(())
        }),
        Some(other) => Err(format!("unknown command `{other}`\n\n{USAGE}")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("murk: error: {message}");
            ExitCode::FAILURE
        }
    }
}

fn parse_choice(flag: &str, v: &str) -> Result<BackendChoice, String> {
    v.parse().map_err(|_| format!("invalid {flag} = {v}: must be cpu, gpu or auto"))
}

fn parse_render(args: &[String]) -> Result<render::RenderOptions, String> {
    let mut it = args.iter();
    let (mut scenario, mut variant, mut out, mut every) = (None, None, None, 10u32);
    let (mut backend, mut size) = (BackendChoice::Cpu, (480u32, 270u32));
    while let Some(a) = it.next() {
        let mut value = |name: &str| it.next().cloned().ok_or_else(|| format!("{name} needs a value"));
        match a.as_str() {
            "--variant" => variant = Some(value("--variant")?),
            "--out" => out = Some(PathBuf::from(value("--out")?)),
            "--backend" => backend = parse_choice("--backend", &value("--backend")?)?,
            "--size" => {
                let v = value("--size")?;
                size = v
                    .split_once('x')
                    .and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)))
                    .ok_or_else(|| format!("invalid --size = {v}: must be WIDTHxHEIGHT"))?;
            }
            "--every" => {
                let v = value("--every")?;
                every = v.parse().ok().filter(|&n| n > 0).ok_or_else(|| format!("invalid --every = {v}: must be a positive integer"))?;
            }
            flag if flag.starts_with("--") => return Err(format!("unknown option `{flag}`\n\n{USAGE}")),
            path => scenario = Some(PathBuf::from(path)),
        }
    }
    let scenario = scenario.ok_or_else(|| format!("missing SCENARIO\n\n{USAGE}"))?;
    let variant = variant.ok_or_else(|| format!("missing --variant ({})", render::VARIANTS.join(", ")))?;
    let stem = scenario.file_stem().and_then(|s| s.to_str()).unwrap_or("render").to_string();
    let out = out.unwrap_or_else(|| PathBuf::from("murk-out").join(format!("{stem}-render")));
    Ok(render::RenderOptions { scenario, variant, out, every, backend, size })
}

fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

fn parse_run(args: &[String]) -> Result<RunOptions, String> {
    let mut it = args.iter();
    let mut opts = RunOptions {
        scenario: PathBuf::new(),
        backend: None,
        compare: None,
        threads: default_threads(),
        ticks: None,
        stages: false,
        snapshot_at: None,
        out: None,
    };
    let mut scenario = None;
    while let Some(a) = it.next() {
        let mut value = |name: &str| it.next().cloned().ok_or_else(|| format!("{name} needs a value"));
        match a.as_str() {
            "--backend" => opts.backend = Some(parse_choice("--backend", &value("--backend")?)?),
            "--compare" => opts.compare = Some(parse_choice("--compare", &value("--compare")?)?),
            "--threads" => {
                let v = value("--threads")?;
                opts.threads = v.parse().ok().filter(|&n| n > 0).ok_or_else(|| format!("invalid --threads = {v}: must be a positive integer"))?;
            }
            "--ticks" => {
                let v = value("--ticks")?;
                opts.ticks = Some(v.parse().map_err(|_| format!("invalid --ticks = {v}: must be a non-negative integer"))?);
            }
            "--stages" => opts.stages = true,
            "--snapshot-at" => {
                let v = value("--snapshot-at")?;
                opts.snapshot_at = Some(v.parse().map_err(|_| format!("invalid --snapshot-at = {v}: must be a tick number"))?);
            }
            "--out" => opts.out = Some(PathBuf::from(value("--out")?)),
            flag if flag.starts_with("--") => return Err(format!("unknown option `{flag}`\n\n{USAGE}")),
            path => {
                if scenario.replace(PathBuf::from(path)).is_some() {
                    return Err("give one scenario file".into());
                }
            }
        }
    }
    opts.scenario = scenario.ok_or_else(|| format!("missing SCENARIO or SNAPSHOT\n\n{USAGE}"))?;
    Ok(opts)
}

fn make_backend(choice: BackendChoice, threads: usize) -> Result<(Box<dyn Backend>, String), String> {
    murk_cli::select_backend(choice, threads).map_err(|e| format!("--backend {}: {e}", choice_name(choice)))
}

fn choice_name(c: BackendChoice) -> &'static str {
    match c {
        BackendChoice::Cpu => "cpu",
        BackendChoice::Gpu => "gpu",
        BackendChoice::Auto => "auto",
    }
}

fn err(e: MurkError) -> String {
    e.to_string()
}

/// Where to save a snapshot during a run.
struct SnapshotAt<'a> {
    tick: u32,
    base: &'a Path,
    out: &'a Path,
}

/// Runs `ticks` more ticks, printing progress for long runs and saving a
/// snapshot after the tick `snapshot.tick`.
fn run_ticks(runner: &mut ScenarioRunner, ticks: u32, snapshot: Option<SnapshotAt>) -> Result<Vec<TickRecord>, String> {
    let mut records = Vec::with_capacity(ticks as usize);
    let every = (ticks / 10).max(1);
    let started = std::time::Instant::now();
    for n in 0..ticks {
        let tick = runner.ticks_done();
        records.push(runner.step().map_err(|e| format!("tick {tick}: {e}"))?);
        if let Some(s) = snapshot.as_ref().filter(|s| s.tick == tick) {
            let bytes = runner.snapshot(s.base).map_err(err)?;
            let path = s.out.join(format!("snapshot-{tick}.murk"));
            std::fs::write(&path, bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
            println!("wrote {}", path.display());
        }
        if ticks >= 100 && (n + 1) % every == 0 {
            eprintln!("  tick {}/{ticks} ({:.1} s)", n + 1, started.elapsed().as_secs_f64());
        }
    }
    Ok(records)
}

fn run(opts: &RunOptions) -> Result<(), String> {
    // The file is checked as written (its `ticks` bound its events); `--ticks`
    // only says how many of them to run.
    let scenario = Scenario::load(&opts.scenario).map_err(err)?;
    let ticks = opts.ticks.unwrap_or(scenario.ticks);
    if ticks == 0 {
        return Err("invalid --ticks = 0: must be at least 1".into());
    }
    let base = scenario_base(&opts.scenario);
    let files = ScenarioFiles::load(&scenario, base).map_err(err)?;
    let choice = opts.backend.or(scenario.backend).unwrap_or_default();
    let (backend, chosen) = make_backend(choice, opts.threads)?;
    eprintln!("murk: backend: {chosen}");
    if let Some(other) = opts.compare {
        let (second, line) = make_backend(other, opts.threads)?;
        eprintln!("murk: comparing with: {line}");
        return compare(scenario, &files, backend, second, ticks);
    }
    let mut runner = ScenarioRunner::new(scenario, &files, backend).map_err(err)?;
    let stem = opts.scenario.file_stem().and_then(|s| s.to_str()).unwrap_or("scenario");
    let out = opts.out.clone().unwrap_or_else(|| PathBuf::from("murk-out").join(stem));
    std::fs::create_dir_all(&out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    eprintln!("murk: running `{}` for {ticks} ticks on {}", runner.scenario().name, runner.backend_name());
    if let Some(t) = opts.snapshot_at.filter(|&t| t >= ticks) {
        return Err(format!("invalid --snapshot-at = {t}: the run has ticks 0..{ticks}"));
    }
    let base = std::fs::canonicalize(base).map_err(|e| format!("cannot resolve {}: {e}", base.display()))?;
    let snapshot = opts.snapshot_at.map(|tick| SnapshotAt { tick, base: &base, out: &out });
    let records = run_ticks(&mut runner, ticks, snapshot)?;
    finish(&mut runner, opts, &out, &records)
}

/// The folder a scenario's relative paths start from: the file's folder, or
/// the current one for a bare file name (whose parent is the empty path).
pub(crate) fn scenario_base(scenario: &Path) -> &Path {
    match scenario.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Writes the pictures and `summary.json` of a run.
fn finish(runner: &mut ScenarioRunner, opts: &RunOptions, out: &Path, records: &[TickRecord]) -> Result<(), String> {
    let written = picture::write_outputs(runner, out, opts.stages)?;
    let summary = picture::summary(runner, opts.threads, records)?;
    let summary_path = out.join("summary.json");
    std::fs::write(&summary_path, serde_json::to_string_pretty(&summary).map_err(|e| e.to_string())?)
        .map_err(|e| format!("cannot write {}: {e}", summary_path.display()))?;
    for p in written.iter().chain(std::iter::once(&summary_path)) {
        println!("wrote {}", p.display());
    }
    Ok(())
}

/// Runs the scenario on two backends tick by tick and compares every pass
/// of every instance; reports agreement or the first difference.
fn compare(scenario: Scenario, files: &ScenarioFiles, a: Box<dyn Backend>, b: Box<dyn Backend>, ticks: u32) -> Result<(), String> {
    let mut first = ScenarioRunner::new(scenario.clone(), files, a).map_err(err)?;
    let mut second = ScenarioRunner::new(scenario, files, b).map_err(err)?;
    let (na, nb) = (first.backend_name(), second.backend_name());
    for tick in 0..ticks {
        first.step().map_err(|e| format!("{na}, tick {tick}: {e}"))?;
        second.step().map_err(|e| format!("{nb}, tick {tick}: {e}"))?;
        for name in first.fog().instance_names() {
            for stage in Stage::ALL {
                let x = first.fog().read_stage(&name, stage).map_err(err)?;
                let y = second.fog().read_stage(&name, stage).map_err(err)?;
                if let Some((tx, ty)) = x.first_difference(&y) {
                    return Err(format!(
                        "{na} and {nb} differ at tick {tick}, instance `{name}`, pass `{}`, first at texel ({tx}, {ty})",
                        stage.name()
                    ));
                }
            }
        }
    }
    println!("{na} and {nb} agree: every pass of every instance, byte for byte, for {ticks} ticks");
    Ok(())
}

fn resume(opts: &RunOptions) -> Result<(), String> {
    let bytes = std::fs::read(&opts.scenario).map_err(|e| format!("cannot read {}: {e}", opts.scenario.display()))?;
    let (backend, chosen) = make_backend(opts.backend.unwrap_or_default(), opts.threads)?;
    eprintln!("murk: backend: {chosen}");
    let mut runner = ScenarioRunner::resume(&bytes, backend).map_err(|e| format!("{}: {e}", opts.scenario.display()))?;
    let done = runner.ticks_done();
    let ticks = opts.ticks.unwrap_or(runner.scenario().ticks.saturating_sub(done));
    let stem = opts.scenario.file_stem().and_then(|s| s.to_str()).unwrap_or("resume");
    let out = opts.out.clone().unwrap_or_else(|| PathBuf::from("murk-out").join(stem));
    std::fs::create_dir_all(&out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    eprintln!("murk: resuming `{}` at tick {done} for {ticks} ticks on {}", runner.scenario().name, runner.backend_name());
    let records = run_ticks(&mut runner, ticks, None)?;
    finish(&mut runner, opts, &out, &records)
}

const DEMO_SCENARIO: &str = include_str!("../../assets/demo.json");
const DEMO_MAP: &str = include_str!("../../assets/maps/lak303d.map");

fn demo() -> Result<(), String> {
    let scenario = Scenario::parse(DEMO_SCENARIO, "json", "built-in demo").map_err(err)?;
    let files = ScenarioFiles { map: Some(murk_core::movingai::MovingAiMap::parse(DEMO_MAP, "lak303d.map").map_err(err)?), ..Default::default() };
    let (backend, _) = make_backend(BackendChoice::Cpu, default_threads())?;
    let mut runner = ScenarioRunner::new(scenario, &files, backend).map_err(err)?;
    let ticks = runner.scenario().ticks;
    println!("murk demo: {}", runner.scenario().name);
    println!("  {} ticks of {} ms on {}", ticks, runner.scenario().tick_us / 1000, runner.backend_name());
    let started = std::time::Instant::now();
    let records = run_ticks(&mut runner, ticks, None)?;
    println!("  ran in {:.2} s; final state hash {}", started.elapsed().as_secs_f64(), records.last().map_or("-", |r| r.hashes["demo"].as_str()));
    let out = PathBuf::from("murk-out").join("demo");
    std::fs::create_dir_all(&out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    let map = files.map.as_ref().ok_or("the demo has a map")?;
    let mut written = Vec::new();
    for (stage, file) in [(Stage::Visibility, "demo.visibility.png"), (Stage::Memory, "demo.memory.png"), (Stage::Final, "demo.final.png")] {
        let img = runner.fog().read_stage("demo", stage).map_err(err)?;
        let path = out.join(file);
        picture::write_gray16(&path, img.width, img.height, &img.to_gray16())?;
        written.push(path);
    }
    let fin = runner.fog().read_stage("demo", Stage::Final).map_err(err)?;
    let path = out.join("demo.overlay.png");
    picture::write_overlay(&path, map, fin.width, fin.height, &fin.to_gray16())?;
    written.push(path);
    println!("  pictures (visibility and memory at the internal resolution, final and overlay at the output resolution):");
    for p in &written {
        println!("    {}", p.display());
    }
    Ok(())
}
