//! GPU-only checks: the CPU and GPU pass by pass on seeded worlds, the mask
//! texture, the render path and the readback latency. (The corpus and the
//! behaviour suites run on the GPU in the `backends` harness.)
//!
//! These tests need a GPU adapter (CI uses Mesa's lavapipe), so they are
//! ignored by the plain `cargo test`, which reports them as ignored. Run them
//! with `cargo test -p murk-conformance --test gpu -- --ignored`; without an
//! adapter they fail, they never pass.
//!
//! (Over 600 lines as one concept: each check sets the GPU against the CPU
//! reference on the same seeded worlds.)

use murk_conformance::harness::case_files;
use murk_conformance::scene::seeded_world;
use murk_conformance::workloads;
use murk_core::fixed::hash2;
use murk_core::glam::Vec3;
use murk_core::hecs::World;
use murk_core::scenario::{Scenario, ScenarioFiles, ScenarioRunner};
use murk_core::{
    Area, Backend, Blocker, BlockerShape, FogSubsystem, InstanceDesc, Position, Profile, RayMethod, TeamMask, Texture, TextureRow, VisionSource,
};
use murk_core::{HideMode, StealthActor};
use murk_gpu::GpuBackend;
use std::path::PathBuf;

fn gpu() -> GpuBackend {
    GpuBackend::new().unwrap_or_else(|e| panic!("the GPU test did not run: {e}"))
}

fn cpu() -> Box<dyn Backend> {
    Box::new(murk_cpu::CpuBackend::new(2).unwrap())
}

fn pass_outputs(fog: &mut FogSubsystem, name: &str) -> Vec<(&'static TextureRow, murk_core::TextureImage)> {
    murk_core::pass_outputs().map(|row| (row, fog.read_row(name, row).unwrap())).collect()
}

#[test]
#[ignore = "needs a GPU adapter: cargo test -p murk-conformance --test gpu -- --ignored"]
fn seeded_worlds_agree_pass_by_pass_with_the_cpu() {
    let shared = gpu();
    let methods = [RayMethod::None, RayMethod::StepScan, RayMethod::Dda, RayMethod::HierarchicalDda, RayMethod::DistanceField];
    for seed in 0..40 {
        let method = methods[seed as usize % methods.len()];
        let profile = Profile {
            ray_method: method,
            soft_shadows: seed % 2 == 0,
            df_jitter: if seed % 3 == 0 { 0.3 } else { 0.0 },
            df_scale: [1, 2, 4][seed as usize % 3],
            blur_radius: seed as u32 % 3,
            forget_rate: 0.5,
            update_rate: if seed % 4 == 0 { 0.1 } else { 0.0 },
            ..Profile::default()
        };
        let desc = InstanceDesc {
            name: "i".into(),
            area: Area { center: Vec3::new(32.0, 24.0, 5.0), extents: Vec3::new(64.0, 48.0, 10.0), yaw_degrees: (seed * 17 % 90) as f32 },
            resolution: 64,
            lod: seed as u32 % 2,
            observed_teams: TeamMask::ALL,
            profile,
        };
        let mut a = FogSubsystem::new(cpu());
        let mut b = FogSubsystem::new(Box::new(shared.another_world()));
        a.create_instance(desc.clone()).unwrap();
        b.create_instance(desc).unwrap();
        let mut world = seeded_world(seed);
        for tick in 0..4 {
            // Move every source a little each tick.
            for (p, _) in world.query_mut::<(&mut Position, &VisionSource)>() {
                p.0.x += 0.37;
            }
            let ra = a.tick(&mut world.clone_for_test(), 50_000).unwrap();
            let rb = b.tick(&mut world.clone_for_test(), 50_000).unwrap();
            assert_eq!(ra, rb, "seed {seed} tick {tick}: recompute decisions");
            for ((row, x), (_, y)) in pass_outputs(&mut a, "i").iter().zip(pass_outputs(&mut b, "i")) {
                assert!(x == &y, "seed {seed} ({method:?}) tick {tick}: texture `{}` differs first at {:?}", row.name, x.first_difference(&y));
            }
        }
    }
}

/// A copy of the world's murk components (hecs worlds do not clone).
trait CloneForTest {
    fn clone_for_test(&self) -> World;
}

impl CloneForTest for World {
    fn clone_for_test(&self) -> World {
        let mut w = World::new();
        for (p, s) in self.query::<(&Position, &VisionSource)>().iter() {
            w.spawn((*p, *s));
        }
        for (p, b) in self.query::<(&Position, &Blocker)>().iter() {
            w.spawn((*p, b.clone()));
        }
        w
    }
}

fn scenario_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios").join(name)
}

fn runner(name: &str, backend: Box<dyn Backend>) -> ScenarioRunner {
    let path = scenario_path(name);
    let s = Scenario::load(&path).unwrap();
    let files = ScenarioFiles::load(&s, path.parent().unwrap()).unwrap();
    ScenarioRunner::new(s, &files, backend).unwrap()
}

#[test]
#[ignore = "needs a GPU adapter: cargo test -p murk-conformance --test gpu -- --ignored"]
fn snapshots_move_between_backends_and_lockstep_hashes_agree() {
    let shared = gpu();
    let mut full_cpu = runner("infiltration.json", cpu());
    let mut full_gpu = runner("infiltration.json", Box::new(shared.another_world()));
    let (mut a, mut b) = (Vec::new(), Vec::new());
    while !full_cpu.finished() {
        a.push(full_cpu.step().unwrap());
        b.push(full_gpu.step().unwrap());
    }
    assert_eq!(a, b, "per-tick lockstep hashes, stealth events and query answers agree across backends");
    // A CPU snapshot continues on the GPU, and the other way round.
    for (from_gpu, at) in [(false, 12u32), (true, 25)] {
        let mut r = if from_gpu { runner("infiltration.json", Box::new(shared.another_world())) } else { runner("infiltration.json", cpu()) };
        while r.ticks_done() <= at {
            r.step().unwrap();
        }
        let bytes = r.snapshot(&scenario_path("")).unwrap();
        let other = if from_gpu { cpu() } else { Box::new(shared.another_world()) };
        let mut resumed = ScenarioRunner::resume(&bytes, other).unwrap();
        let mut rest = Vec::new();
        while !resumed.finished() {
            rest.push(resumed.step().unwrap());
        }
        assert_eq!(&a[at as usize + 1..], &rest[..], "resumed after tick {at}, from the {} backend", if from_gpu { "gpu" } else { "cpu" });
    }
}

#[test]
#[ignore = "needs a GPU adapter: cargo test -p murk-conformance --test gpu -- --ignored"]
fn batched_queries_resolve_by_polling_and_match_the_cpu() {
    let shared = gpu();
    let mut g = runner("outpost.json", Box::new(shared.another_world()));
    let mut c = runner("outpost.json", cpu());
    for _ in 0..10 {
        g.step().unwrap();
        c.step().unwrap();
    }
    let points: Vec<Vec3> = (0..200).map(|i| Vec3::new((hash2(i, 1) % 216) as f32, (hash2(i, 2) % 224) as f32, 0.0)).collect();
    let handle = g.fog().submit_mask_query(&points, None).unwrap();
    let mut polls = 0;
    let answers = loop {
        polls += 1;
        if let Some(a) = g.fog().poll_mask_query(handle).unwrap() {
            break a;
        }
        assert!(polls < 1_000_000, "the readback never landed");
    };
    assert!(g.fog().poll_mask_query(handle).is_err(), "delivered once");
    assert_eq!(answers, c.fog().mask_query_now(&points, None).unwrap());
}

/// A sample batch over up to six instances is one dispatch (four teams'
/// sight sets, or stealth samples for four observers, cost one per tick);
/// seven requests, one instance asked twice among them, are two, and every
/// value is the instance's own final mask at the texel; three instances'
/// footprints are one dispatch too (each reads its visibility and its
/// sight reveal), one value each, and four are two.
#[test]
#[ignore = "needs a GPU adapter: cargo test -p murk-conformance --test gpu -- --ignored"]
fn a_sample_batch_reads_six_instances_in_one_dispatch() {
    let shared = gpu();
    // A handle on the subsystem's world, to sample its instances directly.
    let mut backend = shared.another_world();
    let mut fog = FogSubsystem::new(Box::new(backend.clone()));
    let names: Vec<String> = (0..6).map(|k| format!("i{k}")).collect();
    for (k, name) in names.iter().enumerate() {
        let desc = InstanceDesc {
            name: name.clone(),
            area: Area { center: Vec3::new(32.0, 24.0, 5.0), extents: Vec3::new(64.0, 48.0, 10.0), yaw_degrees: 0.0 },
            resolution: 40 + 8 * k as u32,
            lod: 0,
            observed_teams: TeamMask::ALL,
            profile: Profile { ray_method: RayMethod::Dda, ..Profile::default() },
        };
        fog.create_instance(desc).unwrap();
    }
    let mut world = seeded_world(3);
    for _ in 0..3 {
        fog.tick(&mut world, 50_000).unwrap();
    }
    let masks: Vec<(Vec<u16>, u32, u32)> = names
        .iter()
        .map(|n| {
            let image = fog.read_texture(n, Texture::Final).unwrap();
            (fog.final_mask(n).unwrap(), image.width, image.height)
        })
        .collect();
    let visibility: Vec<Vec<u16>> = names
        .iter()
        .map(|n| match fog.read_texture(n, Texture::Visibility).unwrap().data {
            murk_core::TextureData::U16(v) => v,
            other => panic!("{other:?}"),
        })
        .collect();
    let request = |k: usize, salt: i32| {
        let (_, w, h) = masks[k];
        let texels = (0..50 + 7 * k as i32).map(|i| [hash2(i, salt) % w, hash2(i, salt + 1) % h]).collect();
        murk_core::SampleRequest { key: fog.instance_key(&names[k]).unwrap(), texels }
    };
    let four = vec![request(0, 1), request(1, 3), request(2, 5), request(3, 7)];
    let seven = vec![request(0, 11), request(1, 13), request(2, 15), request(3, 17), request(4, 19), request(5, 21), request(2, 23)];
    for (requests, dispatches) in [(four, 1), (seven, 2)] {
        let before = shared.dispatches();
        let ticket = backend.submit_samples(&requests).unwrap();
        assert_eq!(shared.dispatches() - before, dispatches, "{} requests", requests.len());
        let got = backend.poll_samples(ticket, true).unwrap().expect("waited for");
        let want: Vec<u16> = requests
            .iter()
            .flat_map(|r| {
                let k = names.iter().position(|n| fog.instance_key(n).unwrap() == r.key).unwrap();
                let (mask, w, _) = &masks[k];
                r.texels.iter().map(move |&[x, y]| mask[(y * w + x) as usize]).collect::<Vec<_>>()
            })
            .collect();
        assert_eq!(got, want, "{} requests", requests.len());
    }
    // Footprints: three instances judge one list (footprints of one to five
    // texels) in one dispatch, each against its own cutoff, in its sight
    // signal (its visibility: no reveal here); one value each, reduced on
    // the device: one word a footprint comes back, not its texels.
    let texels = request(0, 31).texels;
    let mut list = murk_core::FootprintList::default();
    for (i, t) in texels.into_iter().enumerate() {
        list.texels.push(t);
        if i % 5 == i % 3 {
            list.ends.push(list.texels.len() as u32);
        }
    }
    if list.ends.last() != Some(&(list.texels.len() as u32)) {
        list.ends.push(list.texels.len() as u32);
    }
    let list = std::sync::Arc::new(list);
    let held = visibility[0].iter().copied().find(|&v| v > 0 && v < 65535).unwrap_or(1);
    let footprints: Vec<murk_core::FootprintRequest> = [held, 1, 65535]
        .iter()
        .enumerate()
        .map(|(k, &cutoff)| murk_core::FootprintRequest { key: fog.instance_key(&names[k]).unwrap(), cutoff, footprints: list.clone() })
        .collect();
    let (before, read) = (shared.dispatches(), shared.bytes_read_back());
    let ticket = backend.submit_footprints(&footprints).unwrap();
    assert_eq!(shared.dispatches() - before, 1, "three footprint requests");
    assert_eq!(shared.bytes_read_back() - read, 3 * 4 * list.ends.len() as u64, "bytes read back for {} footprints", 3 * list.ends.len());
    let got = backend.poll_samples(ticket, true).unwrap().expect("waited for");
    let want: Vec<u16> = footprints
        .iter()
        .enumerate()
        .flat_map(|(k, r)| {
            let ((mask, w), list) = ((&visibility[k], masks[k].1), &list);
            (0..list.ends.len()).map(move |i| {
                let top = list.footprint(i).iter().map(|&[x, y]| mask[(y * w + x) as usize]).max().unwrap();
                murk_core::backend::footprint_value(top, r.cutoff)
            })
        })
        .collect();
    assert_eq!(got, want, "footprint values");
    assert!(want.iter().any(|&v| v > 0) && want.contains(&0), "some footprints reach their cutoff, some do not");
    let four: Vec<murk_core::FootprintRequest> = footprints.iter().cloned().chain([footprints[0].clone()]).collect();
    let before = shared.dispatches();
    let ticket = backend.submit_footprints(&four).unwrap();
    assert_eq!(shared.dispatches() - before, 2, "four footprint requests");
    let got = backend.poll_samples(ticket, true).unwrap().expect("waited for");
    assert_eq!(got, want.iter().chain(&want[..list.ends.len()]).copied().collect::<Vec<_>>(), "four requests' values");
}

#[test]
#[ignore = "needs a GPU adapter: cargo test -p murk-conformance --test gpu -- --ignored"]
fn creating_and_destroying_instances_grows_nothing() {
    let shared = gpu();
    let mut fog = FogSubsystem::new(Box::new(shared.another_world()));
    let desc = |i: u32| InstanceDesc {
        name: format!("i{i}"),
        area: Area { center: Vec3::new(32.0, 32.0, 5.0), extents: Vec3::new(64.0, 64.0, 10.0), yaw_degrees: 0.0 },
        resolution: 64,
        lod: 0,
        observed_teams: TeamMask::ALL,
        profile: Profile {
            ray_method: if i.is_multiple_of(2) { RayMethod::HierarchicalDda } else { RayMethod::DistanceField },
            ..Profile::default()
        },
    };
    let mut world = World::new();
    world.spawn((Position(Vec3::new(20.0, 20.0, 0.0)), VisionSource::new(10.0)));
    world.spawn((Position(Vec3::new(25.0, 20.0, 0.0)), Blocker::wall(BlockerShape::Circle { radius: 2.0 })));
    let mut after_warm_up = 0;
    for i in 0..2000u32 {
        fog.create_instance(desc(i)).unwrap();
        fog.tick(&mut world, 33_333).unwrap();
        fog.destroy_instance(&format!("i{i}")).unwrap();
        if i == 9 {
            after_warm_up = shared.allocated_buffers();
        }
    }
    let end = shared.allocated_buffers();
    eprintln!("GPU buffers allocated: {after_warm_up} after 10 instances, {end} after 2000");
    assert_eq!(after_warm_up, end, "the pool reuses every buffer");
    // Each destroyed instance had changed flags in flight: none is kept.
    assert_eq!(shared.readbacks_in_flight(), 0, "flags of destroyed instances are forgotten");
}

#[test]
#[ignore = "needs a GPU adapter: cargo test -p murk-conformance --test gpu -- --ignored"]
fn the_small_workload_agrees_with_the_cpu() {
    let shared = gpu();
    let mut w = workloads::small();
    let mut a = FogSubsystem::new(cpu());
    let mut b = FogSubsystem::new(Box::new(shared.another_world()));
    a.create_instance(w.desc.clone()).unwrap();
    b.create_instance(w.desc.clone()).unwrap();
    a.tick(&mut w.world, 33_333).unwrap();
    b.tick(&mut w.world, 33_333).unwrap();
    for ((row, x), (_, y)) in pass_outputs(&mut a, "small").iter().zip(pass_outputs(&mut b, "small")) {
        assert!(x == &y, "texture `{}` differs first at {:?}", row.name, x.first_difference(&y));
    }
}

/// The premade looks on the GPU: each within its tolerance of the CPU
/// reference (overlay per 8-bit channel, surface heights and drops, volume
/// half and full frames, with and without history, marched and analytic),
/// and within the golden tolerance of the low-resolution goldens.
#[test]
#[ignore = "needs a GPU adapter: cargo test -p murk-conformance --test gpu -- --ignored"]
fn looks_agree_with_the_cpu_within_tolerance() {
    use murk_conformance::looks::{check_goldens, compare_f32, compare_rgba, Fixture, OVERLAY_TOLERANCE, SURFACE_TOLERANCE, VOLUME_TOLERANCE};
    use murk_looks::{Looks, OverlayStyle, VolumeParams, VolumeScene};
    let mut gpu = gpu();
    let mut cpu = murk_cpu::looks::CpuLooks;
    let fx = Fixture::new();
    let mut report = Vec::new();
    for (tint, time) in [(None, 0.0), (Some(fx.tint.as_slice()), 3.7)] {
        let style = OverlayStyle::default();
        let a = cpu.overlay(&fx.view(), tint, time, &style).unwrap();
        let b = gpu.overlay(&fx.view(), tint, time, &style).unwrap();
        report.push(("overlay", f32::from(compare_rgba("overlay", a.width, &a.pixels, &b.pixels, OVERLAY_TOLERANCE).unwrap())));
    }
    let a = cpu.surface(&fx.view(), &fx.area, &fx.ground, &fx.surface).unwrap();
    let b = gpu.surface(&fx.view(), &fx.area, &fx.ground, &fx.surface).unwrap();
    report.push(("surface z", compare_f32("surface z", &a.z, &b.z, SURFACE_TOLERANCE).unwrap()));
    report.push(("surface drop", compare_f32("surface drop", &a.drop, &b.drop, SURFACE_TOLERANCE).unwrap()));
    let flat = |f: &murk_looks::VolumeFrame| f.texels.iter().flatten().copied().collect::<Vec<f32>>();
    let (history, _) = cpu.volume(&fx.view(), &fx.area, &fx.scene(), &fx.volume_params(0)).unwrap();
    for (label, params, with_history) in [
        ("volume", fx.volume_params(1), false),
        ("volume low tier", VolumeParams { steps: 0, ..fx.volume_params(1) }, false),
        ("volume blended", fx.volume_params(2), true),
    ] {
        let scene = VolumeScene { history: with_history.then_some(&history), ..fx.scene() };
        let (ah, af) = cpu.volume(&fx.view(), &fx.area, &scene, &params).unwrap();
        let (bh, bf) = gpu.volume(&fx.view(), &fx.area, &scene, &params).unwrap();
        report.push((label, compare_f32(&format!("{label} half"), &flat(&ah), &flat(&bh), VOLUME_TOLERANCE).unwrap()));
        report.push((label, compare_f32(&format!("{label} full"), &flat(&af), &flat(&bf), VOLUME_TOLERANCE).unwrap()));
    }
    eprintln!("largest CPU/GPU differences: {report:?}");
    let goldens = check_goldens(&mut gpu, "gpu").unwrap_or_else(|e| panic!("{e}"));
    eprintln!("largest GPU/golden differences (8-bit): {goldens:?}");
}

#[test]
#[ignore = "needs a GPU adapter: cargo test -p murk-conformance --test gpu -- --ignored"]
fn area_changes_resample_alike_on_both_backends() {
    let shared = gpu();
    let mut fogs = [FogSubsystem::new(cpu()), FogSubsystem::new(Box::new(shared.another_world()))];
    let mut worlds = [World::new(), World::new()];
    let profile =
        Profile { fade_in_rate: 20.0, relax_rate: 20.0, resample_on_area_change: true, ray_method: RayMethod::HierarchicalDda, ..Profile::default() };
    for (fog, world) in fogs.iter_mut().zip(&mut worlds) {
        let area = Area { center: Vec3::new(32.0, 32.0, 5.0), extents: Vec3::new(64.0, 64.0, 10.0), yaw_degrees: 0.0 };
        fog.create_instance(InstanceDesc { name: "i".into(), area, resolution: 64, lod: 1, observed_teams: TeamMask::ALL, profile: profile.clone() })
            .unwrap();
        world.spawn((Position(Vec3::new(20.5, 20.5, 0.0)), VisionSource::new(10.0)));
        world.spawn((Position(Vec3::new(25.0, 20.0, 0.0)), Blocker::wall(BlockerShape::Circle { radius: 1.5 })));
        for _ in 0..4 {
            fog.tick(world, 50_000).unwrap();
        }
        fog.set_area("i", Area { center: Vec3::new(40.0, 30.0, 5.0), extents: Vec3::new(64.0, 64.0, 10.0), yaw_degrees: 30.0 }).unwrap();
        fog.expand_area_to_include("i", Vec3::new(120.0, 10.0, 0.0)).unwrap();
        fog.tick(world, 50_000).unwrap();
    }
    let [a, b] = &mut fogs;
    for texture in [Texture::Visibility, Texture::Memory, Texture::Compose, Texture::Final] {
        assert_eq!(a.read_texture("i", texture).unwrap(), b.read_texture("i", texture).unwrap(), "{}", texture.name());
    }
    assert_eq!(a.lockstep_hash().unwrap(), b.lockstep_hash().unwrap());
}

/// The mask texture holds `value / 65535` of the final mask buffer, to the
/// precision of a 16-bit float: one step below 1.0 is 2^-11 (drivers may
/// truncate rather than round when they store a float as 16 bits; lavapipe
/// does).
fn check_mask_texture(gpu: &GpuBackend, fog: &mut FogSubsystem, name: &str) -> Result<(), String> {
    let key = fog.instance_key(name).map_err(|e| e.to_string())?;
    let texture = gpu.mask_texture(key).map_err(|e| e.to_string())?;
    let texels = gpu.read_mask_texture(&texture).map_err(|e| e.to_string())?;
    let exact = fog.final_mask(name).map_err(|e| e.to_string())?;
    let dims = fog.dims(name).map_err(|e| e.to_string())?;
    if (texture.width(), texture.height()) != (dims.out_width, dims.out_height) || texels.len() != exact.len() {
        return Err(format!("{name}: texture {}x{} for a {}x{} mask", texture.width(), texture.height(), dims.out_width, dims.out_height));
    }
    for (i, (t, &v)) in texels.iter().zip(&exact).enumerate() {
        let want = f32::from(v) / 65535.0;
        if (t[0] - want).abs() > 1.0 / 2048.0 || t[0] != t[1] || t[0] != t[2] || t[3] != 1.0 {
            let w = dims.out_width as usize;
            return Err(format!("{name}: texel ({}, {}) holds {t:?}, the buffer {v} ({want})", i % w, i / w));
        }
    }
    Ok(())
}

#[test]
#[ignore = "needs a GPU adapter: cargo test -p murk-conformance --test gpu -- --ignored"]
fn mask_textures_hold_the_final_mask_of_every_case() {
    let gpu = gpu();
    let mut failures = Vec::new();
    for case in case_files() {
        let s = Scenario::load(&case).unwrap();
        let files = ScenarioFiles::load(&s, case.parent().unwrap()).unwrap();
        let world = gpu.another_world();
        let mut r = ScenarioRunner::new(s, &files, Box::new(world.clone())).unwrap();
        while !r.finished() {
            r.step().unwrap();
        }
        for name in r.fog().instance_names() {
            if let Err(e) = check_mask_texture(&world, r.fog(), &name) {
                failures.push(format!("{}: {e}", case.display()));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
#[ignore = "needs a GPU adapter: cargo test -p murk-conformance --test gpu -- --ignored"]
fn the_detail_texture_holds_visibility_memory_and_composed() {
    let gpu = gpu();
    let mut r = runner("infiltration.json", Box::new(gpu.clone()));
    let name = r.fog().instance_names()[0].clone();
    gpu.set_detail_texture(r.fog().instance_key(&name).unwrap(), true).unwrap();
    for _ in 0..6 {
        r.step().unwrap();
    }
    let texture = gpu.detail_texture(r.fog().instance_key(&name).unwrap()).unwrap().expect("turned on");
    let texels = gpu.read_mask_texture(&texture).unwrap();
    for (channel, mask) in [Texture::Blur, Texture::Memory, Texture::Compose].into_iter().enumerate() {
        let murk_core::TextureData::U16(exact) = r.fog().read_texture(&name, mask).unwrap().data else { panic!("{mask:?} is a mask") };
        assert_eq!(exact.len(), texels.len());
        let worst = texels.iter().zip(&exact).map(|(t, &v)| (t[channel] - f32::from(v) / 65535.0).abs()).fold(0.0, f32::max);
        assert!(worst <= 1.0 / 2048.0, "{mask:?}: off by {worst}");
        assert!(exact.iter().any(|&v| v > 0), "{mask:?} is not all fog, so the check compares something");
    }
}

/// A walker whose view sweeps over a standing stealth actor, and a wall.
fn patrol() -> World {
    let mut world = World::new();
    world.spawn((Position(Vec3::new(8.5, 32.5, 0.0)), VisionSource::new(9.0)));
    world.spawn((Position(Vec3::new(32.5, 36.5, 0.0)), StealthActor { hide_mode: HideMode::FreezeWithGhost, ..StealthActor::default() }));
    world.spawn((Position(Vec3::new(40.0, 20.0, 0.0)), Blocker::wall(BlockerShape::Circle { radius: 3.0 })));
    world
}

/// The instance over [`patrol`]: 64x64 texels over 64 units, with `profile`.
fn patrol_desc(profile: Profile) -> InstanceDesc {
    InstanceDesc {
        name: "patrol".into(),
        area: Area { center: Vec3::new(32.0, 32.0, 5.0), extents: Vec3::new(64.0, 64.0, 10.0), yaw_degrees: 0.0 },
        resolution: 64,
        lod: 0,
        observed_teams: TeamMask::ALL,
        profile,
    }
}

/// A game's frame: murk ticks, then the frame ends with the GPU done (as
/// presenting does), outside murk. Every tick recomputes (the walker moves)
/// and samples the stealth actor; none may block.
#[test]
#[ignore = "needs a GPU adapter: cargo test -p murk-conformance --test gpu -- --ignored"]
fn ticks_never_wait_on_the_device_while_it_keeps_up() {
    let gpu = gpu();
    let (device, _) = gpu.device();
    let desc = patrol_desc(Profile { fade_in_rate: 8.0, relax_rate: 8.0, ..Profile::default() });
    let mut fogs = [FogSubsystem::new(Box::new(gpu.clone())), FogSubsystem::new(cpu())];
    let mut worlds = [patrol(), patrol()];
    for fog in &mut fogs {
        fog.create_instance(desc.clone()).unwrap();
        // A lockstep game hashes every tick.
        fog.set_hash_every_tick(true);
    }
    let before = fogs[0].blocking_waits();
    let (mut events, mut hashes) = (0, 0);
    for tick in 0..60 {
        let mut reports = Vec::new();
        for (fog, world) in fogs.iter_mut().zip(&mut worlds) {
            for (p, _) in world.query_mut::<(&mut Position, &VisionSource)>() {
                p.0.x = 8.5 + (tick % 30) as f32 * 2.0;
            }
            reports.push(fog.tick(world, 33_333).unwrap());
        }
        assert_eq!(reports[0].events, reports[1].events, "tick {tick}: the same stealth events as the CPU on the same tick");
        assert_eq!(reports[0].instances, reports[1].instances, "tick {tick}: the same recompute decisions");
        assert_eq!(reports[0].lockstep, reports[1].lockstep, "tick {tick}: the same lockstep hash, landed on the same tick");
        let landed = reports[0].lockstep.map(|h| h.ticks);
        assert_eq!(landed, (tick >= 2).then(|| tick as u64 - 1), "tick {tick}: the hash of the state two ticks before");
        hashes += usize::from(landed.is_some());
        events += reports[0].events.len();
        assert_eq!(fogs[0].blocking_waits(), before, "tick {tick} blocked on the device");
        device.poll(wgpu::PollType::wait_indefinitely()).unwrap();
    }
    assert!(events >= 2, "the actor was seen and lost again, read back without waiting ({events} events)");
    assert_eq!(hashes, 58, "every tick's hash landed without a wait");
    // Asking for results is what waits, and the counter sees it.
    let hash = fogs[0].lockstep_hash().unwrap();
    assert_eq!(hash, fogs[1].lockstep_hash().unwrap());
    assert!(fogs[0].blocking_waits() > before);
}

/// A rollback state on the GPU stays on the device: a save copies every
/// texture there and a load copies it back, and neither reads a byte back
/// nor waits: the readbacks the tick left in flight stay in flight in the
/// state (the backend holds their values for it), even when it is loaded
/// at once, before they land; the loaded state is the saved one, twice
/// over, and runs on as a subsystem that never loaded does. States share the occlusion copy while no
/// build wrote the instance's occlusion, and a load of the copy the
/// instance holds copies no occlusion; once a wall rebuilt it, the load
/// copies it back. A subsystem on the CPU,
/// or on another device, refuses such a state by name and keeps its own.
#[test]
#[ignore = "needs a GPU adapter: cargo test -p murk-conformance --test gpu -- --ignored"]
fn a_rollback_state_stays_on_the_device() {
    let gpu = gpu();
    let desc = patrol_desc(Profile { ray_method: RayMethod::HierarchicalDda, fade_in_rate: 8.0, relax_rate: 8.0, ..Profile::default() });
    let walk = |world: &mut World, tick: u32| {
        for (p, _) in world.query_mut::<(&mut Position, &VisionSource)>() {
            p.0.x = 8.5 + (tick % 30) as f32 * 2.0;
        }
    };
    let mut fog = FogSubsystem::new(Box::new(gpu.another_world()));
    fog.create_instance(desc.clone()).unwrap();
    let mut world = patrol();
    // The same ticks on a subsystem that never saves nor loads.
    let mut plain = FogSubsystem::new(Box::new(gpu.another_world()));
    plain.create_instance(desc.clone()).unwrap();
    let mut plain_world = patrol();
    // Both hash every tick: the hashes in flight at the save land after
    // the load as they land without one.
    fog.set_hash_every_tick(true);
    plain.set_hash_every_tick(true);
    for tick in 0..6 {
        walk(&mut world, tick);
        fog.tick(&mut world, 33_333).unwrap();
        walk(&mut plain_world, tick);
        plain.tick(&mut plain_world, 33_333).unwrap();
    }
    let (read, waits, in_flight, kept) = (gpu.bytes_read_back(), fog.blocking_waits(), fog.readbacks_held(), gpu.bytes_kept_on_device());
    let state = fog.save_state(&world).unwrap();
    let whole = gpu.bytes_kept_on_device() - kept;
    assert_eq!(gpu.bytes_read_back(), read, "the save read nothing back");
    assert!(in_flight > 0, "readbacks are in flight after a tick");
    assert_eq!(fog.blocking_waits(), waits, "the save waited for none of the {in_flight} readbacks in flight");
    // Loaded at once, while they still fly: the state's holds keep them.
    fog.load_state(&mut world, &state).unwrap();
    assert_eq!(fog.blocking_waits(), waits, "nor did the load");
    assert_eq!(state.texture_bytes(&state).0, 0, "no texture is in host memory");
    let (saved_hash, saved_mask) = (fog.lockstep_hash().unwrap(), fog.final_mask("patrol").unwrap());
    let mut later = Vec::new();
    for tick in 6..10 {
        walk(&mut world, tick);
        let landed = fog.tick(&mut world, 33_333).unwrap().lockstep;
        later.push(fog.lockstep_hash().unwrap());
        walk(&mut plain_world, tick);
        let plain_landed = plain.tick(&mut plain_world, 33_333).unwrap().lockstep;
        assert!(landed.is_some(), "tick {tick}: a hash landed");
        assert_eq!(landed, plain_landed, "tick {tick}: the hash that landed after the save and load, as without them");
        assert_eq!(later.last(), Some(&plain.lockstep_hash().unwrap()), "tick {tick} after the save and load, as without them");
    }
    assert_ne!(fog.lockstep_hash().unwrap(), saved_hash, "the ticks after the save moved the state");
    // Ticks 6 to 9 run again, each one's lockstep hash.
    let again = |fog: &mut FogSubsystem, world: &mut World| -> Vec<u64> {
        (6..10)
            .map(|tick| {
                walk(world, tick);
                fog.tick(world, 33_333).unwrap();
                fog.lockstep_hash().unwrap()
            })
            .collect()
    };
    // The masks alone: what a load of the occlusion the instance holds
    // copies, and what a state saved over it copies.
    let mut masks = None;
    for round in 0..2 {
        let (read, waits, kept) = (gpu.bytes_read_back(), fog.blocking_waits(), gpu.bytes_kept_on_device());
        fog.load_state(&mut world, &state).unwrap();
        let copied = gpu.bytes_kept_on_device() - kept;
        assert!(masks.is_none_or(|m| m == copied), "round {round}: the load copied {copied} bytes, the one before {masks:?}");
        masks = Some(copied);
        assert_eq!(gpu.bytes_read_back(), read, "round {round}: the load read nothing back");
        assert_eq!(fog.blocking_waits(), waits, "round {round}: the load waited for nothing");
        assert_eq!(fog.lockstep_hash().unwrap(), saved_hash, "round {round}: the state saved");
        assert_eq!(fog.final_mask("patrol").unwrap(), saved_mask, "round {round}: its final mask");
        assert_eq!(again(&mut fog, &mut world), later, "round {round}: the ticks after it run as they did");
    }
    let masks = masks.expect("two rounds");
    let texels = u64::from(64u32 * 64) * 4;
    assert!(whole >= masks + 2 * texels, "a first state copies the occlusion ({whole} bytes) beside the masks ({masks})");
    let kept = gpu.bytes_kept_on_device();
    let over = fog.save_state(&world).unwrap();
    assert_eq!(gpu.bytes_kept_on_device() - kept, masks, "a state saved over the same occlusion shares its copy");
    drop(over);
    // A wall rebuilds the occlusion: loading the state copies it back.
    let open = fog.read_texture("patrol", Texture::Coverage).unwrap();
    let wall = world.spawn((
        Position(Vec3::new(20.5, 32.5, 0.0)),
        Blocker::wall(BlockerShape::Rect { size: murk_core::glam::Vec2::new(2.0, 12.0), yaw_degrees: 0.0 }),
    ));
    walk(&mut world, 10);
    fog.tick(&mut world, 33_333).unwrap();
    assert_ne!(fog.read_texture("patrol", Texture::Coverage).unwrap(), open, "the wall is built");
    world.despawn(wall).unwrap();
    let kept = gpu.bytes_kept_on_device();
    fog.load_state(&mut world, &state).unwrap();
    assert_eq!(gpu.bytes_kept_on_device() - kept, whole, "a load over a rebuilt occlusion copies it back");
    assert_eq!(fog.lockstep_hash().unwrap(), saved_hash, "the state saved, over the rebuilt occlusion");
    assert_eq!(fog.final_mask("patrol").unwrap(), saved_mask, "its final mask");
    assert_eq!(again(&mut fog, &mut world), later, "the ticks after it run as they did");
    // Elsewhere it is refused, and what ran there is left as it was.
    let other = GpuBackend::new().unwrap_or_else(|e| panic!("a second GPU device: {e}"));
    for (name, backend) in [("cpu", cpu()), ("another device", Box::new(other) as Box<dyn Backend>)] {
        let mut elsewhere = FogSubsystem::new(backend);
        elsewhere.create_instance(desc.clone()).unwrap();
        let mut world = patrol();
        elsewhere.tick(&mut world, 33_333).unwrap();
        let hash = elsewhere.lockstep_hash().unwrap();
        let e = elsewhere.load_state(&mut world, &state).expect_err(name).to_string();
        assert!(e.contains("patrol") && e.contains("state.kept"), "{name}: {e}");
        assert_eq!(elsewhere.lockstep_hash().unwrap(), hash, "{name}: the running state stays");
    }
}

/// The explored count asked for without waiting, as a browser on WebGPU
/// asks: the polls until it lands never block on the device, and it is
/// the count a waited call gives of the same memory.
#[test]
#[ignore = "needs a GPU adapter: cargo test -p murk-conformance --test gpu -- --ignored"]
fn the_explored_count_lands_without_a_wait() {
    let gpu = gpu();
    let mut fog = FogSubsystem::new(Box::new(gpu.another_world()));
    fog.create_instance(patrol_desc(Profile { fade_in_rate: 40.0, ..Profile::default() })).unwrap();
    let mut world = patrol();
    for _ in 0..4 {
        fog.tick(&mut world, 33_333).unwrap();
    }
    let (waits, mut polls) = (fog.blocking_waits(), 0);
    let polled = loop {
        polls += 1;
        if let Some(explored) = fog.poll_explored("patrol").unwrap() {
            break explored;
        }
        assert!(polls < 5000, "the count did not land in 5 s");
        std::thread::sleep(std::time::Duration::from_millis(1));
    };
    assert_eq!(fog.blocking_waits(), waits, "{polls} polls, none waited");
    assert!(polled.texels > 0, "the walker explored something");
    assert_eq!(polled, fog.explored("patrol").unwrap());
}

/// The render path a game uses: a fragment shader samples the mask texture
/// through the include. At one pixel per texel the filter lands on texel
/// centres, so each pixel shows its texel's state: ground where the mask is
/// fully visible, near-black fog where it is 0 (and never seen).
#[test]
#[ignore = "needs a GPU adapter: cargo test -p murk-conformance --test gpu -- --ignored"]
fn the_top_view_draws_each_texel_in_its_state() {
    let gpu = gpu();
    let mut r = runner("infiltration.json", Box::new(gpu.clone()));
    for _ in 0..30 {
        r.step().unwrap();
    }
    let name = r.fog().instance_names()[0].clone();
    let dims = r.fog().dims(&name).unwrap();
    let params = r.fog().shader_params(&name).unwrap();
    let picture = gpu.render_top_view(r.fog().instance_key(&name).unwrap(), &params, dims.out_width, dims.out_height).unwrap();
    let mask = r.fog().final_mask(&name).unwrap();
    assert_eq!(picture.pixels.len(), mask.len() * 4);
    let (mut clear, mut dark) = (0, 0);
    for (i, (&v, px)) in mask.iter().zip(picture.pixels.chunks(4)).enumerate() {
        let at = (i as u32 % dims.out_width, i as u32 / dims.out_width);
        if v == u16::MAX {
            clear += 1;
            assert!(px[1] >= 100, "texel {at:?} is visible but drawn {px:?}");
        } else if v == 0 {
            dark += 1;
            assert!(px[1] <= 30, "texel {at:?} was never seen but drawn {px:?}");
        }
    }
    assert!(clear > 50 && dark > 50, "{clear} visible and {dark} unseen texels");
}

/// Timestamp queries around every dispatch: after a few ticks each pass that
/// ran has its dispatches and a device time (lavapipe has timestamps).
#[test]
#[ignore = "needs a GPU adapter: cargo test -p murk-conformance --test gpu -- --ignored"]
fn passes_are_timed_on_the_device() {
    let gpu = gpu();
    let mut fog = FogSubsystem::new(Box::new(gpu.another_world()));
    let mut world = patrol();
    fog.create_instance(InstanceDesc {
        name: "timed".into(),
        area: Area { center: Vec3::new(32.0, 32.0, 5.0), extents: Vec3::new(64.0, 64.0, 10.0), yaw_degrees: 0.0 },
        resolution: 64,
        lod: 0,
        observed_teams: TeamMask::ALL,
        profile: Profile::default(),
    })
    .unwrap();
    fog.enable_timings().unwrap();
    for _ in 0..5 {
        fog.tick(&mut world, 33_333).unwrap();
    }
    let timings = fog.take_timings().unwrap();
    let row = |pass: &str| timings.iter().find(|t| t.pass == pass).unwrap_or_else(|| panic!("no {pass} row in {timings:?}")).clone();
    assert_eq!(row("blend").dispatches, 5, "one blend a tick");
    assert_eq!(row("present").dispatches, 5, "one texture write a tick");
    assert_eq!(row("sample").dispatches, 5, "one stealth batch a tick");
    assert!(row("rasterize").dispatches >= 1 && row("visibility").dispatches >= 1);
    assert!(timings.iter().all(|t| t.nanos >= 0.0) && timings.iter().map(|t| t.nanos).sum::<f64>() > 0.0, "{timings:?}");
    assert!(fog.take_timings().unwrap().is_empty(), "taken once");
}

/// A device the host opened itself, as a game's renderer would.
fn host_device(limits: impl Fn(&wgpu::Limits) -> wgpu::Limits) -> (wgpu::Device, wgpu::Queue, wgpu::AdapterInfo) {
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle());
    let adapter = pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions::default())).expect("an adapter");
    let descriptor = wgpu::DeviceDescriptor { label: Some("the game's device"), required_limits: limits(&adapter.limits()), ..Default::default() };
    let (device, queue) = pollster::block_on(adapter.request_device(&descriptor)).expect("a device");
    (device, queue, adapter.get_info())
}

#[test]
#[ignore = "needs a GPU adapter: cargo test -p murk-conformance --test gpu -- --ignored"]
fn a_host_device_runs_murk_and_a_weak_one_is_refused_by_name() {
    let (device, queue, info) = host_device(murk_gpu::required_limits);
    let gpu = GpuBackend::from_device(device, queue, info).unwrap();
    let mut w = workloads::small();
    let mut fogs = [FogSubsystem::new(cpu()), FogSubsystem::new(Box::new(gpu.clone()))];
    for fog in &mut fogs {
        fog.create_instance(w.desc.clone()).unwrap();
        fog.tick(&mut w.world, 33_333).unwrap();
    }
    let [a, b] = &mut fogs;
    assert_eq!(a.final_mask("small").unwrap(), b.final_mask("small").unwrap());
    let texture = gpu.mask_texture(b.instance_key("small").unwrap()).unwrap();
    assert_eq!(texture.width(), b.dims("small").unwrap().out_width);
    let (weak, queue, info) = host_device(|_| wgpu::Limits::downlevel_defaults());
    let e = GpuBackend::from_device(weak, queue, info).err().expect("four storage buffers are too few");
    assert!(matches!(e, murk_core::MurkError::DeviceTooWeak { .. }), "{e:?}");
    let e = e.to_string();
    assert!(e.contains("max_storage_buffers_per_shader_stage") && e.contains("murk needs 10"), "{e}");
}
