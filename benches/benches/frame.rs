//! Whole frames, backends side by side: `frame/<workload>/<backend>/<threads>`,
//! and steady ticks: `tick/rts-static/...` (nothing moves while a fade runs:
//! visibility and blur are kept, memory, compose, upscale and blend run),
//! `tick/rts-steady/...` (every tenth source walks each tick, the others
//! stand: a typical RTS tick), `tick/rts-march/...` (every source walks:
//! an army on the move), `tick/rts-build/...` and `tick/rts-door/...`
//! (the walkers, and a building placed or a door toggled every tick),
//! `tick/rts-hash-every/...` (the walkers, hashing every tick),
//! `tick/rts-saving/...` (the walkers, a rollback state saved after every
//! tick),
//! `tick/rts-4teams/...` and `tick/rts-tracked/...` (the walkers, four
//! instances of one team each, and in the second every unit tracked: the
//! difference is what the sight sets cost), `tick/rts-observed-still/...`
//! and `tick/rts-tracked-still/...` (the same with nobody walking: the
//! difference is the sets' cost without the walkers' noise),
//! `tick/rts-radar/...` (the walkers and a radar layer beside sight: 1000
//! radar sources seeing through walls, 20 jammers, a quarter-resolution
//! radar instance), `tick/rts-radar-sweep/...` (the same radar
//! recomputing five times a second), `tick/rts-radar-snapped/...` (the
//! same radar with its sources on its texels' centres),
//! `sight/rts-walking/...` and `sight/rts-still/...` (the time those
//! ticks wait for their sight steps, timed inside the tick), and
//! what a lockstep or rollback game asks beside the tick: `hash/rts/...`,
//! `save/rts/...`, `restore/rts/...` (the portable snapshot) and
//! `save-state/rts/...` (the in-memory rollback state, saved after each
//! walking tick and kept eight deep, as a rollback game keeps it),
//! `drop-state/rts/...` (the state that leaves those eight dropped, which
//! a rollback game pays when it saves too), `load-state/rts/...`, and a
//! rollback game's frames: `save-drop/rts/...` (a state saved into a ring
//! of eight, the oldest dropped), `rollback/rts-8/...` (the state eight
//! ticks back loaded and seven ticks simulated again, as a `ggrs` session
//! does at its prediction limit) and `tick/rts-after-load/...` (the first
//! of those ticks alone), and `lines/rts-10k/...` (10 000 sight lines from
//! the units to points in their sight radius, answered now) and
//! `explored/rts/...` (the explored count asked after each walking tick).
//!
//! `cargo bench -p murk-benches --bench frame`. The GPU rows appear when an
//! adapter exists (figures on lavapipe are not performance figures).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use murk_benches::ticks::{rts_lines, Change, RtsTicks};
use murk_conformance::workloads::{self, Workload};
use murk_core::{
    Backend, BackendChoice, FogSubsystem, InstanceDims, InstanceKey, MurkError, OcclusionInput, RecomputeInput, RecomputeReport, Result,
    SampleRequest, TextureImage,
};

/// One full recompute (occlusion, visibility .. upscale, blend) per iteration.
fn bench_frames(c: &mut Criterion, w: &mut Workload, backends: Vec<(String, Box<dyn Backend>)>) {
    let mut group = c.benchmark_group("frame");
    group.sample_size(10);
    for (label, backend) in backends {
        let mut fog = FogSubsystem::new(backend);
        fog.create_instance(w.desc.clone()).expect("valid workload");
        fog.tick(&mut w.world, 33_333).expect("first tick");
        let (name, profile) = (w.desc.name.clone(), w.desc.profile.clone());
        let timed = fog.enable_timings().is_ok();
        let id = format!("{}/{label}", w.name);
        group.bench_function(BenchmarkId::new(&id, ""), |b| {
            b.iter(|| {
                // Invalidate so that nothing is skipped: occlusion and visibility both rebuild.
                fog.apply_profile(&name, profile.clone()).expect("profile");
                fog.invalidate(&name).expect("instance");
                fog.tick(&mut w.world, 33_333).expect("tick")
            })
        });
        if timed {
            report_device_time(&id, &mut fog);
        }
    }
    group.finish();
}

/// Ticks of `rts` where `change` happens each tick, one row per backend.
fn bench_ticks(c: &mut Criterion, change: Change, backends: Vec<(String, Box<dyn Backend>)>) {
    let mut group = c.benchmark_group("tick");
    group.sample_size(10);
    for (backend_label, backend) in backends {
        let mut t = RtsTicks::new(backend, change);
        let timed = t.fog.enable_timings().is_ok();
        let id = format!("{}/{backend_label}", change.label());
        group.bench_function(BenchmarkId::new(&id, ""), |b| b.iter(|| t.step()));
        if timed {
            report_device_time(&id, &mut t.fog);
        }
    }
    group.finish();
}

/// `sight/rts-walking/...` and `sight/rts-still/...`: what the four
/// observers' sight sets add to `rts-tracked` and `rts-tracked-still`
/// ticks: each iteration runs one tick, and the row's time is what that
/// tick waited for its sight steps (the tail of gathering the footprints,
/// which runs beside the gathering of the instances' inputs, and updating
/// the sets while the footprints are judged), timed inside the tick
/// (murk-core's `timers` feature). The steps' own time, wherever they ran,
/// is printed after the row. On the GPU, the host's part.
fn bench_sight(c: &mut Criterion, walking: bool, backends: Vec<(String, Box<dyn Backend>)>) {
    let mut group = c.benchmark_group("sight");
    group.sample_size(20);
    for (backend_label, backend) in backends {
        let mut t = RtsTicks::new(backend, if walking { Change::Tracked } else { Change::TrackedStill });
        let id = format!("rts-{}/{backend_label}", if walking { "walking" } else { "still" });
        let mut steps = murk_core::SightTimes::default();
        let mut ticks = 0u32;
        group.bench_function(BenchmarkId::new(&id, ""), |b| {
            b.iter_custom(|iters| {
                t.fog.take_sight_times();
                for _ in 0..iters {
                    t.step();
                }
                let spent = t.fog.take_sight_times();
                steps.gather += spent.gather;
                steps.gather_wait += spent.gather_wait;
                steps.update += spent.update;
                ticks += iters as u32;
                spent.added()
            })
        });
        // Where the time goes, per tick, over every tick the row ran (none
        // when a filter left the row out).
        if ticks == 0 {
            continue;
        }
        let per_tick = |d: std::time::Duration| d.as_secs_f64() * 1e6 / f64::from(ticks);
        println!(
            "{id}: per tick, gathering {:.1} us (the tick waited {:.1} us of it), updating the sets while judging {:.1} us",
            per_tick(steps.gather),
            per_tick(steps.gather_wait),
            per_tick(steps.update)
        );
    }
    group.finish();
}

/// What a lockstep or rollback game does beside ticking, on the
/// `rts-steady` state: `hash/rts` (the lockstep hash asked for after each
/// walking tick; only the hash is timed),
/// `save/rts` (a snapshot, its size printed) and `restore/rts`.
fn bench_state(c: &mut Criterion, backends: Vec<(String, Box<dyn Backend>)>) {
    for (backend_label, backend) in backends {
        let mut t = RtsTicks::new(backend, Change::Walkers);
        c.benchmark_group("hash").sample_size(10).bench_function(BenchmarkId::new(format!("rts/{backend_label}"), ""), |b| {
            b.iter_custom(|iters| {
                let mut spent = std::time::Duration::ZERO;
                for _ in 0..iters {
                    t.step();
                    let started = std::time::Instant::now();
                    std::hint::black_box(t.fog.lockstep_hash().expect("hash"));
                    spent += started.elapsed();
                }
                spent
            })
        });
        let bytes = t.fog.snapshot(&t.world).expect("snapshot");
        eprintln!("snapshot rts/{backend_label}: {} bytes", bytes.len());
        c.benchmark_group("save")
            .sample_size(10)
            .bench_function(BenchmarkId::new(format!("rts/{backend_label}"), ""), |b| b.iter(|| t.fog.snapshot(&t.world).expect("snapshot")));
        c.benchmark_group("restore").sample_size(10).bench_function(BenchmarkId::new(format!("rts/{backend_label}"), ""), |b| {
            b.iter(|| t.fog.restore(&mut t.world, &bytes).expect("restore"))
        });
        // A rollback game saves after every tick and keeps a few frames of
        // states: only the save is timed, after a walking tick.
        let mut states = std::collections::VecDeque::new();
        c.benchmark_group("save-state").sample_size(10).bench_function(BenchmarkId::new(format!("rts/{backend_label}"), ""), |b| {
            b.iter_custom(|iters| {
                let mut spent = std::time::Duration::ZERO;
                for _ in 0..iters {
                    t.step();
                    let started = std::time::Instant::now();
                    states.push_back(t.fog.save_state(&t.world).expect("save"));
                    spent += started.elapsed();
                    if states.len() > 8 {
                        states.pop_front();
                    }
                }
                spent
            })
        });
        // The state that leaves the eight dropped: the tiles no later state
        // shares are freed, and every other tile's count goes down. A
        // rollback library drops it where it saves the new one.
        c.benchmark_group("drop-state").sample_size(10).bench_function(BenchmarkId::new(format!("rts/{backend_label}"), ""), |b| {
            b.iter_custom(|iters| {
                let mut spent = std::time::Duration::ZERO;
                for _ in 0..iters {
                    t.step();
                    states.push_back(t.fog.save_state(&t.world).expect("save"));
                    if states.len() > 8 {
                        let oldest = states.pop_front();
                        let started = std::time::Instant::now();
                        drop(oldest);
                        spent += started.elapsed();
                    }
                }
                spent
            })
        });
        if let [.., before, last] = states.make_contiguous() {
            let (all, shared) = last.texture_bytes(before);
            eprintln!("save-state rts/{backend_label}: {all} bytes of textures and heights, {shared} shared with the state before");
        }
        let state = t.fog.save_state(&t.world).expect("save");
        c.benchmark_group("load-state").sample_size(10).bench_function(BenchmarkId::new(format!("rts/{backend_label}"), ""), |b| {
            b.iter(|| t.fog.load_state(&mut t.world, &state).expect("load"))
        });
    }
}

/// `lines/rts-10k/...`: a batch of 10 000 sight lines on the `rts-steady`
/// state, as a game's targeting asks them: from each of the 1000 units to
/// ten points around it, each within its sight radius (32), answered now.
fn bench_lines(c: &mut Criterion, backends: Vec<(String, Box<dyn Backend>)>) {
    let mut group = c.benchmark_group("lines");
    group.sample_size(20);
    for (backend_label, backend) in backends {
        let t = RtsTicks::new(backend, Change::Walkers);
        let mut fog = t.fog;
        let name = fog.instance_names().into_iter().next().expect("the rts instance");
        let lines = rts_lines(&t.world);
        assert_eq!(lines.len(), 10_000);
        let seen = fog.sight_lines_now(&name, &lines).expect("lines").iter().filter(|a| a.visible).count();
        eprintln!("lines rts-10k/{backend_label}: {seen} of {} clear", lines.len());
        group.bench_function(BenchmarkId::new(format!("rts-10k/{backend_label}"), ""), |b| {
            b.iter(|| fog.sight_lines_now(&name, &lines).expect("lines"))
        });
    }
    group.finish();
}

/// `explored/rts/...`: the explored count asked after each `rts-steady`
/// tick (only the count is timed), as a game that shows it live asks it.
fn bench_explored(c: &mut Criterion, backends: Vec<(String, Box<dyn Backend>)>) {
    let mut group = c.benchmark_group("explored");
    group.sample_size(20);
    for (backend_label, backend) in backends {
        let mut t = RtsTicks::new(backend, Change::Walkers);
        let name = t.fog.instance_names().into_iter().next().expect("the rts instance");
        group.bench_function(BenchmarkId::new(format!("rts/{backend_label}"), ""), |b| {
            b.iter_custom(|iters| {
                let mut spent = std::time::Duration::ZERO;
                for _ in 0..iters {
                    t.step();
                    let started = std::time::Instant::now();
                    std::hint::black_box(t.fog.explored(&name).expect("explored"));
                    spent += started.elapsed();
                }
                spent
            })
        });
    }
    group.finish();
}

/// A rollback game's frames on `rts-steady`: `save-drop/rts` (a state saved
/// after a walking tick into a ring of eight, the oldest dropped: both
/// timed), `rollback/rts-8` (the state eight ticks back loaded and seven
/// ticks simulated again: timed together) and `tick/rts-after-load` (the
/// first of those ticks alone). The walkers are put back with the state, as
/// a game puts its own world back; after each rollback one more tick
/// brings the run to where it was.
fn bench_rollback(c: &mut Criterion, backends: Vec<(String, Box<dyn Backend>)>) {
    const FRAMES: usize = 8;
    for (backend_label, backend) in backends {
        let mut t = RtsTicks::new(backend, Change::Walkers);
        // The states of the last ticks, newest last, each with its tick.
        let mut ring: std::collections::VecDeque<(u32, murk_core::SaveState)> = std::collections::VecDeque::new();
        let forward = |t: &mut RtsTicks, ring: &mut std::collections::VecDeque<(u32, murk_core::SaveState)>| {
            t.step();
            let started = std::time::Instant::now();
            ring.push_back((t.ticks(), t.fog.save_state(&t.world).expect("save")));
            let oldest = (ring.len() > FRAMES + 1).then(|| ring.pop_front());
            drop(oldest);
            started.elapsed()
        };
        for _ in 0..=FRAMES {
            forward(&mut t, &mut ring);
        }
        c.benchmark_group("save-drop").sample_size(10).bench_function(BenchmarkId::new(format!("rts/{backend_label}"), ""), |b| {
            b.iter_custom(|iters| (0..iters).map(|_| forward(&mut t, &mut ring)).sum())
        });
        // Loads the state `FRAMES` ticks back and runs `FRAMES - 1` ticks,
        // timing the load and the first `timed` of them; then brings the
        // run back to where it was.
        let roll_back = |t: &mut RtsTicks, ring: &std::collections::VecDeque<(u32, murk_core::SaveState)>, timed: usize| {
            let (at, state) = &ring[ring.len() - 1 - FRAMES];
            let started = std::time::Instant::now();
            t.rewind(state, *at);
            let mut spent = std::time::Duration::ZERO;
            for k in 0..FRAMES {
                if k == timed {
                    spent = started.elapsed();
                }
                t.step();
            }
            spent
        };
        c.benchmark_group("rollback").sample_size(10).bench_function(BenchmarkId::new(format!("rts-8/{backend_label}"), ""), |b| {
            b.iter_custom(|iters| (0..iters).map(|_| roll_back(&mut t, &ring, FRAMES - 1)).sum())
        });
        c.benchmark_group("tick").sample_size(10).bench_function(BenchmarkId::new(format!("rts-after-load/{backend_label}"), ""), |b| {
            b.iter_custom(|iters| {
                (0..iters)
                    .map(|_| {
                        let (at, state) = &ring[ring.len() - 1 - FRAMES];
                        t.rewind(state, *at);
                        let started = std::time::Instant::now();
                        t.step();
                        let spent = started.elapsed();
                        for _ in 1..FRAMES {
                            t.step();
                        }
                        spent
                    })
                    .sum()
            })
        });
    }
}

/// The device time per tick of each pass over every tick the bench ran
/// (the GPU rows, from timestamp queries), one line per pass and a total:
/// `device <row> <pass> <ms per tick>`, which `benches/gpu.sh` collects.
fn report_device_time(id: &str, fog: &mut FogSubsystem) {
    let timings = fog.take_timings().expect("timings");
    // One blend per tick.
    let ticks = timings.iter().find(|t| t.pass == "blend").map_or(0, |t| t.dispatches).max(1) as f64;
    let mut total = 0.0;
    for t in timings.iter().filter(|t| t.untimed == 0) {
        total += t.nanos;
        eprintln!("device {id} {} {:.4}", t.pass, t.nanos / 1e6 / ticks);
    }
    eprintln!("device {id} all {:.4}", total / 1e6 / ticks);
}

/// A row's backend, opened through [`BackendChoice::open`] as the CLI and
/// the Bevy plugin open theirs: `cpu/<threads>`, or `gpu/1` on the device
/// opened once for every row (`None` where there is none: then `Gpu` is an
/// error and `Auto` the CPU).
fn open(choice: BackendChoice, threads: usize, gpu: Option<&murk_gpu::GpuBackend>) -> Result<(String, Box<dyn Backend>)> {
    let cpu = || -> Result<(String, Box<dyn Backend>)> { Ok((format!("cpu/{threads}"), Box::new(murk_cpu::CpuBackend::new(threads)?))) };
    let gpu = |hardware: bool| -> Result<(String, Box<dyn Backend>)> {
        let g = gpu.ok_or_else(|| MurkError::NoAdapter("no device was opened for the GPU rows".into()))?;
        if hardware && g.is_software() {
            return Err(MurkError::NoAdapter(format!("{} is a software adapter", g.adapter())));
        }
        Ok(("gpu/1".into(), Box::new(Finished(g.another_world()))))
    };
    choice.open(cpu, gpu).map(|opened| opened.backend)
}

fn frame(c: &mut Criterion) {
    let gpu = murk_gpu::GpuBackend::new();
    match &gpu {
        Ok(g) => eprintln!("GPU rows on {}", g.adapter()),
        Err(e) => eprintln!("no GPU rows: {e}"),
    }
    let gpu = gpu.ok();
    let cpu = |threads| open(BackendChoice::Cpu, threads, None).expect("the CPU backend opens");
    let with_gpu = |mut v: Vec<(String, Box<dyn Backend>)>| {
        v.extend(open(BackendChoice::Gpu, 1, gpu.as_ref()).ok());
        v
    };
    bench_frames(c, &mut workloads::small(), with_gpu(vec![cpu(1), cpu(2)]));
    bench_frames(c, &mut workloads::rts(), with_gpu(vec![cpu(1), cpu(2)]));
    bench_frames(c, &mut workloads::rts_sparse(), with_gpu(vec![cpu(2)]));
    bench_frames(c, &mut workloads::long_sight(), vec![cpu(2)]);
    bench_ticks(c, Change::Nothing, with_gpu(vec![cpu(1), cpu(2)]));
    bench_ticks(c, Change::Walkers, with_gpu(vec![cpu(1), cpu(2)]));
    bench_ticks(c, Change::March, with_gpu(vec![cpu(1), cpu(2)]));
    bench_ticks(c, Change::Building, with_gpu(vec![cpu(2)]));
    bench_ticks(c, Change::Door, with_gpu(vec![cpu(2)]));
    bench_ticks(c, Change::HashEvery, with_gpu(vec![cpu(2)]));
    bench_ticks(c, Change::Saving, with_gpu(vec![cpu(2)]));
    bench_ticks(c, Change::Observed, with_gpu(vec![cpu(2)]));
    bench_ticks(c, Change::Tracked, with_gpu(vec![cpu(2)]));
    bench_ticks(c, Change::ObservedStill, with_gpu(vec![cpu(2)]));
    bench_ticks(c, Change::TrackedStill, with_gpu(vec![cpu(2)]));
    bench_ticks(c, Change::Radar, with_gpu(vec![cpu(2)]));
    bench_ticks(c, Change::RadarSweep, with_gpu(vec![cpu(2)]));
    bench_ticks(c, Change::RadarSnapped, with_gpu(vec![cpu(2)]));
    bench_sight(c, true, with_gpu(vec![cpu(2)]));
    bench_sight(c, false, with_gpu(vec![cpu(2)]));
    bench_state(c, with_gpu(vec![cpu(2)]));
    bench_rollback(c, with_gpu(vec![cpu(2)]));
    bench_lines(c, with_gpu(vec![cpu(1), cpu(2)]));
    bench_explored(c, with_gpu(vec![cpu(2)]));
    if std::env::var_os("MURK_BENCH_HUGE").is_some() {
        bench_frames(c, &mut workloads::huge(), with_gpu(vec![cpu(2)]));
    }
}

/// The GPU backend, waiting for the device at the end of each blend (the
/// last GPU work of a tick here, where no stealth actor samples the mask):
/// a tick records and submits without waiting, so timing it alone would
/// time the recording only.
struct Finished(murk_gpu::GpuBackend);

impl Backend for Finished {
    fn name(&self) -> String {
        self.0.name()
    }
    fn create_instance(&mut self, key: InstanceKey, dims: InstanceDims) -> Result<()> {
        self.0.create_instance(key, dims)
    }
    fn destroy_instance(&mut self, key: InstanceKey) {
        self.0.destroy_instance(key)
    }
    fn build_occlusion(&mut self, key: InstanceKey, input: &OcclusionInput) -> Result<()> {
        self.0.build_occlusion(key, input)
    }
    fn update_occlusion(&mut self, key: InstanceKey, input: &OcclusionInput, changed: &[murk_core::TexelRect]) -> Result<()> {
        self.0.update_occlusion(key, input, changed)
    }
    fn copy_occlusion(&mut self, from: InstanceKey, to: InstanceKey) -> Result<()> {
        self.0.copy_occlusion(from, to)
    }
    fn recompute(&mut self, key: InstanceKey, input: &RecomputeInput) -> Result<RecomputeReport> {
        self.0.recompute(key, input)
    }
    fn poll_changed(&mut self, ticket: u64, wait: bool) -> Result<Option<bool>> {
        self.0.poll_changed(ticket, wait)
    }
    fn set_reveals(&mut self, key: InstanceKey, layer: Option<&murk_core::RevealLayer>) -> Result<()> {
        self.0.set_reveals(key, layer)
    }
    fn blend(&mut self, key: InstanceKey, t: u32) -> Result<()> {
        self.0.blend(key, t)?;
        self.0.finish()
    }
    fn submit_samples(&mut self, batch: &[SampleRequest]) -> Result<u64> {
        self.0.submit_samples(batch)
    }
    fn submit_footprints(&mut self, batch: &[murk_core::FootprintRequest]) -> Result<u64> {
        self.0.submit_footprints(batch)
    }
    fn submit_lines(&mut self, request: &murk_core::LineRequest) -> Result<u64> {
        self.0.submit_lines(request)
    }
    fn poll_samples(&mut self, ticket: u64, wait: bool) -> Result<Option<Vec<u16>>> {
        self.0.poll_samples(ticket, wait)
    }
    fn forget_readback(&mut self, ticket: u64) {
        self.0.forget_readback(ticket)
    }
    fn hold_readback(&mut self, ticket: u64) -> Option<murk_core::ReadbackHold> {
        self.0.hold_readback(ticket)
    }
    fn keep_textures(&mut self, key: InstanceKey) -> Result<Option<murk_core::KeptTextures>> {
        self.0.keep_textures(key)
    }
    fn check_kept(&self, kept: &murk_core::KeptTextures, dims: InstanceDims) -> Result<()> {
        self.0.check_kept(kept, dims)
    }
    fn load_kept(&mut self, key: InstanceKey, kept: &murk_core::KeptTextures) -> Result<()> {
        self.0.load_kept(key, kept)
    }
    fn hash_textures(&mut self, key: InstanceKey, textures: &[murk_core::Texture]) -> Result<murk_core::Readback<Vec<u64>>> {
        self.0.hash_textures(key, textures)
    }
    fn poll_hashes(&mut self, ticket: u64, wait: bool) -> Result<Option<Vec<u64>>> {
        self.0.poll_hashes(ticket, wait)
    }
    fn count_explored(&mut self, key: InstanceKey) -> Result<murk_core::Readback<u64>> {
        self.0.count_explored(key)
    }
    fn read_texture(&mut self, key: InstanceKey, texture: murk_core::Texture) -> Result<TextureImage> {
        self.0.read_texture(key, texture)
    }
    fn save_tiles(
        &mut self,
        key: InstanceKey,
        textures: &[(murk_core::Texture, Option<&murk_core::TiledImage>)],
    ) -> Result<Vec<Option<murk_core::TiledImage>>> {
        self.0.save_tiles(key, textures)
    }
    fn write_textures(&mut self, key: InstanceKey, set: &murk_core::TextureSet) -> Result<()> {
        self.0.write_textures(key, set)
    }
    fn enable_timings(&mut self) -> Result<()> {
        self.0.enable_timings()
    }
    fn take_timings(&mut self) -> Result<Vec<murk_core::PassTiming>> {
        self.0.take_timings()
    }
}

criterion_group!(benches, frame);
criterion_main!(benches);
