//! `murk`: run the built-in demo, or a scenario file. `murk --help` and
//! `murk <command> --help` list everything (clap).

mod picture;
mod render;
mod scene;
#[cfg(feature = "gpu")]
mod top_view;

use clap::{Args, Parser, Subcommand};
use murk_core::scenario::{Scenario, ScenarioFiles, ScenarioRunner, TickRecord, MAX_TICKS};
use murk_core::{pass_outputs, Backend, BackendChoice, MurkError, Texture};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// murk: deterministic fog of war. Without a command, runs the built-in demo
/// (180 ticks on a Dragon Age map) and writes pictures to murk-out/demo/.
#[derive(Parser)]
#[command(name = "murk", version)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Run a scenario file (JSON or RON): writes DIR/<instance>.final.png
    /// (16-bit grayscale) and DIR/summary.json (state hashes per tick, stealth
    /// events, query answers, the settings used)
    Run(RunArgs),
    /// Continue a run saved with `murk run --snapshot-at`
    Resume(ResumeArgs),
    /// Draw a camera view of a scenario with a premade fog look: PNG frames,
    /// an animated GIF, and for the surface the fog mesh as glTF
    Render(RenderArgs),
    /// Explored memory as save data: run a scenario and export an
    /// instance's memory, or run one with a memory imported before tick 0
    #[command(subcommand)]
    Memory(MemoryCommand),
}

#[derive(Subcommand)]
enum MemoryCommand {
    /// Run a scenario, then write an instance's explored memory and mapped
    /// state to FILE (murk's memory blob); the run's pictures and summary
    /// are written as `murk run` writes them
    Export(MemoryExportArgs),
    /// Run a scenario with a memory blob imported into an instance before
    /// tick 0 (resampled into its area), or with `--as-map` added to its
    /// mapped state (a map shared by an ally)
    Import(MemoryImportArgs),
}

#[derive(Args)]
struct MemoryExportArgs {
    /// The scenario file
    #[arg(value_name = "SCENARIO")]
    scenario: PathBuf,
    /// The instance whose memory is written
    #[arg(long, value_name = "NAME")]
    instance: String,
    /// Where to write the blob
    #[arg(long = "to", value_name = "FILE")]
    to: PathBuf,
    #[command(flatten)]
    common: Common,
}

#[derive(Args)]
struct MemoryImportArgs {
    /// The scenario file
    #[arg(value_name = "SCENARIO")]
    scenario: PathBuf,
    /// The instance the memory goes into
    #[arg(long, value_name = "NAME")]
    instance: String,
    /// The blob, as `murk memory export` or `FogSubsystem::export_memory` wrote it
    #[arg(long = "from", value_name = "FILE")]
    from: PathBuf,
    /// Add what the blob knew to the mapped state instead of replacing the memory
    #[arg(long)]
    as_map: bool,
    #[command(flatten)]
    common: Common,
}

/// What `run` and `resume` share.
#[derive(Args)]
struct Common {
    /// Backend; auto takes the GPU when there is one and says why not
    /// [default: the scenario's, else cpu]
    #[arg(long, value_name = "cpu|gpu|auto", value_parser = parse_choice)]
    backend: Option<BackendChoice>,
    /// Worker threads of the CPU backend [default: all cores]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    threads: Option<u32>,
    /// Ticks to run, 1 to 1000000 (the bound of a scenario file's `ticks`)
    /// [default: the scenario's, or what is left of it]
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_TICKS)))]
    ticks: Option<u32>,
    /// Also write DIR/<instance>.<texture>.png for every texture a pass writes
    #[arg(long)]
    stages: bool,
    /// Output folder [default: murk-out/<file stem>]
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
}

#[derive(Args)]
struct RunArgs {
    /// The scenario file
    #[arg(value_name = "SCENARIO")]
    scenario: PathBuf,
    #[command(flatten)]
    common: Common,
    /// Run a second backend alongside and report agreement, or the first
    /// differing tick, pass and texel
    #[arg(long, value_name = "cpu|gpu|auto", value_parser = parse_choice)]
    compare: Option<BackendChoice>,
    /// After tick TICK, save DIR/snapshot-TICK.murk
    #[arg(long, value_name = "TICK")]
    snapshot_at: Option<u32>,
    /// Print the device time of each pass over the run (GPU backend, with
    /// timestamp queries)
    #[arg(long)]
    timings: bool,
}

#[derive(Args)]
struct ResumeArgs {
    /// A snapshot written by `murk run --snapshot-at`
    #[arg(value_name = "SNAPSHOT")]
    snapshot: PathBuf,
    #[command(flatten)]
    common: Common,
}

#[derive(Args)]
struct RenderArgs {
    /// The scenario file
    #[arg(value_name = "SCENARIO")]
    scenario: PathBuf,
    /// The premade look
    #[arg(long, alias = "variant", value_name = "LOOK", value_enum)]
    look: render::RenderLook,
    /// Backend of the simulation and the look
    #[arg(long, value_name = "cpu|gpu|auto", value_parser = parse_choice, default_value = "cpu")]
    backend: BackendChoice,
    /// Draw a frame every K ticks
    #[arg(long, value_name = "K", default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    every: u32,
    /// Frame size in pixels
    #[arg(long, value_name = "WxH", default_value = "480x270", value_parser = parse_size)]
    size: (u32, u32),
    /// Output folder [default: murk-out/<file stem>-render]
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
}

/// Options of `murk run` and `murk resume`.
struct RunOptions {
    scenario: PathBuf,
    backend: Option<BackendChoice>,
    compare: Option<BackendChoice>,
    threads: usize,
    ticks: Option<u32>,
    stages: bool,
    snapshot_at: Option<u32>,
    timings: bool,
    out: Option<PathBuf>,
    /// A memory blob to import before tick 0: instance, file, as mapped.
    import: Option<(String, PathBuf, bool)>,
    /// An instance's memory to write after the last tick.
    export: Option<(String, PathBuf)>,
}

impl RunOptions {
    fn new(scenario: PathBuf, c: Common, compare: Option<BackendChoice>, snapshot_at: Option<u32>, timings: bool) -> Self {
        let threads = c.threads.map_or_else(default_threads, |n| n as usize);
        let (import, export) = (None, None);
        Self { scenario, backend: c.backend, compare, threads, ticks: c.ticks, stages: c.stages, snapshot_at, timings, out: c.out, import, export }
    }
}

fn main() -> ExitCode {
    let result = match Cli::parse().command {
        None => demo(),
        Some(Command::Run(a)) => run(&RunOptions::new(a.scenario, a.common, a.compare, a.snapshot_at, a.timings)),
        Some(Command::Resume(a)) => resume(&RunOptions::new(a.snapshot, a.common, None, None, false)),
        Some(Command::Memory(MemoryCommand::Export(a))) => {
            run(&RunOptions { export: Some((a.instance, a.to)), ..RunOptions::new(a.scenario, a.common, None, None, false) })
        }
        Some(Command::Memory(MemoryCommand::Import(a))) => {
            run(&RunOptions { import: Some((a.instance, a.from, a.as_map)), ..RunOptions::new(a.scenario, a.common, None, None, false) })
        }
        Some(Command::Render(a)) => {
            let stem = a.scenario.file_stem().and_then(|s| s.to_str()).unwrap_or("render").to_string();
            let out = a.out.unwrap_or_else(|| PathBuf::from("murk-out").join(format!("{stem}-render")));
            let opts = render::RenderOptions { scenario: a.scenario, look: a.look, out, every: a.every, backend: a.backend, size: a.size };
            let written = match opts.look {
                render::RenderLook::Premade(look) => render::render(&opts, look),
                render::RenderLook::TopView => top_view_render(&opts),
            };
            written.map(|written| {
                for p in written {
                    println!("wrote {}", p.display());
                }
            })
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("murk: error: {message}");
            ExitCode::FAILURE
        }
    }
}

/// `--look top-view`: drawn on the GPU from the mask texture.
#[cfg(feature = "gpu")]
fn top_view_render(opts: &render::RenderOptions) -> Result<Vec<PathBuf>, String> {
    top_view::render(opts)
}

#[cfg(not(feature = "gpu"))]
fn top_view_render(_: &render::RenderOptions) -> Result<Vec<PathBuf>, String> {
    Err("--look top-view needs the GPU backend: this murk was built without the `gpu` feature".into())
}

fn parse_choice(v: &str) -> Result<BackendChoice, String> {
    v.parse().map_err(|_| "must be cpu, gpu or auto".to_string())
}

fn parse_size(v: &str) -> Result<(u32, u32), String> {
    v.split_once('x').and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?))).ok_or_else(|| "must be WIDTHxHEIGHT".to_string())
}

fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

fn make_backend(choice: BackendChoice, threads: usize) -> Result<(Box<dyn Backend>, String), String> {
    murk_cli::select_backend(choice, threads).map_err(|e| format!("--backend {}: {e}", choice.name()))
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
    // A bar on a terminal; elsewhere (logs, CI) a line every tenth of the run.
    let bar = (ticks >= 100 && std::io::stderr().is_terminal()).then(|| {
        let bar = indicatif::ProgressBar::new(u64::from(ticks));
        bar.set_style(
            indicatif::ProgressStyle::with_template("  {bar:40} {pos}/{len} ticks, {elapsed} (eta {eta})")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        bar
    });
    for n in 0..ticks {
        let tick = runner.ticks_done();
        records.push(runner.step().map_err(|e| format!("tick {tick}: {e}"))?);
        if let Some(s) = snapshot.as_ref().filter(|s| s.tick == tick) {
            let bytes = runner.snapshot(s.base).map_err(err)?;
            let path = s.out.join(format!("snapshot-{tick}.murk"));
            std::fs::write(&path, bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
            println!("wrote {}", path.display());
        }
        match &bar {
            Some(bar) => bar.inc(1),
            None if ticks >= 100 && (n + 1) % every == 0 => eprintln!("  tick {}/{ticks} ({:.1} s)", n + 1, started.elapsed().as_secs_f64()),
            None => {}
        }
    }
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    Ok(records)
}

fn run(opts: &RunOptions) -> Result<(), String> {
    // The file is checked as written (its `ticks` bound its events); `--ticks`
    // only says how many of them to run.
    let scenario = Scenario::load(&opts.scenario).map_err(err)?;
    // Both within 1..=MAX_TICKS: clap bounds `--ticks`, the file's check its own.
    let ticks = opts.ticks.unwrap_or(scenario.ticks);
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
    if opts.timings {
        runner.fog().enable_timings().map_err(|e| format!("--timings: {e}"))?;
    }
    if let Some((instance, _)) = &opts.export {
        runner.fog().instance(instance).map_err(|e| format!("--instance {instance}: {e}"))?;
    }
    if let Some((instance, file, as_map)) = &opts.import {
        let blob = std::fs::read(file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
        let imported = if *as_map { runner.fog().import_memory_as_map(instance, &blob) } else { runner.fog().import_memory(instance, &blob) };
        imported.map_err(|e| format!("--from {}: {e}", file.display()))?;
        eprintln!("murk: imported {} into `{instance}`{}", file.display(), if *as_map { " as mapped" } else { "" });
    }
    let records = run_ticks(&mut runner, ticks, snapshot)?;
    if let Some((instance, file)) = &opts.export {
        let blob = runner.fog().export_memory(instance).map_err(|e| format!("--instance {instance}: {e}"))?;
        std::fs::write(file, blob).map_err(|e| format!("cannot write {}: {e}", file.display()))?;
        println!("wrote {}", file.display());
    }
    if opts.timings {
        print_timings(&runner.fog().take_timings().map_err(err)?, ticks, &runner.backend_name());
    }
    finish(&mut runner, opts, &out, &records)
}

/// The device time of each pass over a run, as a table.
fn print_timings(timings: &[murk_core::PassTiming], ticks: u32, backend: &str) {
    println!("device time per pass over {ticks} ticks on {backend}:");
    println!("  {:<16} {:>10} {:>12} {:>14}", "pass", "dispatches", "total ms", "per tick ms");
    let mut total = 0.0;
    for t in timings {
        if t.untimed > 0 {
            println!("  {} dispatches were not timed (more than the query set holds in one submission)", t.untimed);
            continue;
        }
        total += t.nanos;
        println!("  {:<16} {:>10} {:>12.3} {:>14.4}", t.pass, t.dispatches, t.nanos / 1e6, t.nanos / 1e6 / f64::from(ticks));
    }
    println!("  {:<16} {:>10} {:>12.3} {:>14.4}", "all", "", total / 1e6, total / 1e6 / f64::from(ticks));
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
            for row in pass_outputs() {
                let x = first.fog().read_row(&name, row).map_err(err)?;
                let y = second.fog().read_row(&name, row).map_err(err)?;
                if let Some((tx, ty)) = x.first_difference(&y) {
                    return Err(format!("{na} and {nb} differ at tick {tick}, instance `{name}`, pass `{}`, first at texel ({tx}, {ty})", row.name));
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
    for texture in [Texture::Visibility, Texture::Memory, Texture::Final] {
        let img = runner.fog().read_texture("demo", texture).map_err(err)?;
        let path = out.join(format!("demo.{}.png", texture.name()));
        picture::write_gray16(&path, img.width, img.height, &img.to_gray16())?;
        written.push(path);
    }
    let fin = runner.fog().read_texture("demo", Texture::Final).map_err(err)?;
    let path = out.join("demo.overlay.png");
    picture::write_overlay(&path, map, fin.width, fin.height, &fin.to_gray16())?;
    written.push(path);
    println!("  pictures (visibility and memory at the internal resolution, final and overlay at the output resolution):");
    for p in &written {
        println!("    {}", p.display());
    }
    Ok(())
}
