//! The library API natively, as the JavaScript bindings drive it: handles
//! (stale ones are named errors), errors that name the field and value,
//! sight sets, snapshots and memory round trips, a run snapshot of the
//! scenario runner restored into a library world, and on a GPU (ignored
//! without an adapter) the same hashes, mask, memory and snapshot as the
//! CPU with no blocking wait.

use murk_core::glam::Vec3;
use murk_core::scenario::{Scenario, ScenarioFiles, ScenarioRunner};
use murk_js::{Fog, Parts, Read, VERSIONS};
use std::path::Path;

const INSTANCE: &str = r#"{"name": "red", "area": {"center": [32, 32, 5], "extents": [64, 64, 10]}, "resolution": 64,
    "profile": {"explored_value": 0.45, "update_rate": 0}}"#;

fn parts(json: &str) -> Parts {
    Parts::parse(json).unwrap()
}

/// A fog with one instance, a wall, a scout that sees and a tracked target.
fn scene(mut fog: Fog) -> (Fog, u64, u64) {
    fog.create_instance(INSTANCE).unwrap();
    fog.spawn(Vec3::new(30.0, 32.0, 0.0), &parts(r#"{"blocker": {"shape": {"rect": {"size": [2, 20]}}}}"#)).unwrap();
    let scout = fog.spawn(Vec3::new(16.0, 32.0, 0.0), &parts(r#"{"source": {"radius": 24}, "tracked": {"footprint": 1}}"#)).unwrap();
    let target = fog.spawn(Vec3::new(24.0, 40.0, 0.0), &parts(r#"{"tracked": {"footprint": 1}, "actor": {}}"#)).unwrap();
    (fog, scout, target)
}

#[test]
fn a_removed_or_expired_handle_is_a_named_error() {
    let (mut fog, scout, _) = scene(Fog::on_cpu().unwrap());
    let flare = fog.spawn(Vec3::new(50.0, 50.0, 0.0), &parts(r#"{"source": {"radius": 6}, "transient_ticks": 2}"#)).unwrap();
    fog.remove(scout).unwrap();
    let e = fog.move_to(scout, Vec3::ZERO).unwrap_err().to_string();
    assert!(e.contains(&format!("handle = {scout}: is stale")), "{e}");
    assert!(fog.remove(scout).unwrap_err().to_string().contains("is stale"));
    for _ in 0..2 {
        fog.tick(33_333).unwrap();
    }
    let e = fog.move_to(flare, Vec3::ZERO).unwrap_err().to_string();
    assert!(e.contains(&format!("handle = {flare}: is stale")), "the flare expired: {e}");
    assert!(fog.move_to(u64::MAX, Vec3::ZERO).is_err() && fog.move_to(0, Vec3::ZERO).is_err(), "garbage handles are errors");
}

#[test]
fn bad_input_names_the_field_and_value() {
    let mut fog = Fog::on_cpu().unwrap();
    let e = fog.create_instance(r#"{"name": "x", "area": {"center": [0, 0, 0], "extents": [64, 64, 10]}, "resolution": 0}"#).unwrap_err();
    assert!(e.to_string().contains("resolution = 0"), "{e}");
    let e = fog.create_instance(r#"{"name": "x", "resolution": 64}"#).unwrap_err();
    assert!(e.to_string().contains("missing field `area`"), "{e}");
    fog.create_instance(INSTANCE).unwrap();
    let e = fog.spawn(Vec3::new(f32::NAN, 0.0, 0.0), &parts(r#"{"tracked": {"footprint": 0}}"#)).unwrap_err();
    assert!(e.to_string().contains("position.x = NaN"), "{e}");
    let e = fog.load_map("type octile\nheight 1\nwidth 1\nmap\n.\n", r#"{"cell_size": -1}"#).unwrap_err();
    assert!(e.to_string().contains("map.cell_size = -1"), "{e}");
    let e = fog.apply_profile("red", r#"{"explored_value": 2}"#).unwrap_err();
    assert!(e.to_string().contains("explored_value"), "{e}");
    assert!(fog.final_mask("blue").unwrap_err().to_string().contains("unknown instance `blue`"));
    let e = fog.restore(b"not a snapshot").unwrap_err();
    assert!(!e.to_string().is_empty());
}

#[test]
fn the_scout_sees_the_target_a_few_ticks_on_and_the_mask_shows_it() {
    let (mut fog, scout, target) = scene(Fog::on_cpu().unwrap());
    // Footprint samples come back two ticks after the tick that took them.
    for _ in 0..6 {
        fog.tick(33_333).unwrap();
    }
    assert!(fog.visible_to("red").unwrap().contains(&target), "the target stands in the scout's view");
    assert!(fog.sees("red", target).unwrap());
    assert!(fog.stealth(target, None).unwrap().is_some_and(|s| s.visible));
    assert!(fog.stealth(scout, None).unwrap_err().to_string().contains("is not a stealth actor"));
    let (width, height, texels) = fog.final_mask("red").unwrap();
    assert_eq!((width, height, texels.len()), (64, 64, 64 * 64));
    assert!(texels[32 * 64 + 16] > texels[32 * 64 + 60], "bright at the scout, dark behind the wall");
}

#[test]
fn snapshots_and_memory_go_back_and_forth() {
    let (mut fog, scout, _) = scene(Fog::on_cpu().unwrap());
    let run = |fog: &mut Fog, from: u32| -> Vec<u64> {
        (from..from + 6)
            .map(|t| {
                fog.move_to(scout, Vec3::new(16.0 + t as f32, 32.0, 0.0)).unwrap();
                fog.tick(33_333).unwrap();
                fog.hash_now().unwrap()
            })
            .collect()
    };
    run(&mut fog, 0);
    let saved = fog.snapshot().unwrap();
    assert_eq!(Fog::snapshot_ticks(&saved).unwrap(), 6);
    let memory = fog.export_memory("red").unwrap();
    let first = run(&mut fog, 6);
    fog.restore(&saved).unwrap();
    assert_eq!(fog.ticks(), 6);
    assert_eq!(run(&mut fog, 6), first, "a restored fog goes on as before");
    fog.import_memory("red", &memory, false).unwrap();
    fog.import_memory("red", &memory, true).unwrap();
    assert!(
        VERSIONS.snapshot_format >= 10 && VERSIONS.hash_format == murk_core::hash::FORMAT_VERSION && VERSIONS.package == env!("CARGO_PKG_VERSION")
    );
}

#[test]
fn a_run_snapshot_of_the_runner_restores_its_fog_state_here() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../assets/demo.json");
    let scenario = Scenario::load(&path).unwrap();
    let files = ScenarioFiles::load(&scenario, path.parent().unwrap()).unwrap();
    let mut runner = ScenarioRunner::new(scenario.clone(), &files, Box::new(murk_cpu::CpuBackend::new(1).unwrap())).unwrap();
    for _ in 0..3 {
        runner.step().unwrap();
    }
    let saved = runner.snapshot(path.parent().unwrap()).unwrap();
    let expected = runner.fog().lockstep_hash().unwrap();
    assert_eq!(Fog::snapshot_ticks(&saved).unwrap(), 3);
    let mut fog = Fog::on_cpu().unwrap();
    let i = &scenario.instances[0];
    let desc = serde_json::json!({"name": i.name, "area": i.area, "resolution": i.resolution, "lod": i.lod, "profile": i.profile});
    fog.create_instance(&desc.to_string()).unwrap();
    fog.restore(&saved).unwrap();
    assert_eq!(fog.hash_now().unwrap(), expected, "the run's fog state, restored into the library's world");
}

/// Runs `ticks` ticks on `fog`, ticking only when it is ready (as a page
/// does), and collects the landed hashes.
fn landed_hashes(fog: &mut Fog, scout: u64, ticks: u32) -> Vec<(u64, u64)> {
    let mut hashes = Vec::new();
    for t in 0..ticks {
        while !fog.ready().unwrap() {
            std::thread::yield_now();
        }
        fog.move_to(scout, Vec3::new(16.0 + t as f32 * 0.5, 32.0, 0.0)).unwrap();
        hashes.extend(fog.tick(33_333).unwrap().landed_hash());
    }
    hashes
}

#[test]
#[ignore = "needs a GPU adapter (lavapipe in CI)"]
fn on_a_gpu_the_landed_hashes_equal_the_cpu_and_nothing_waits() {
    let gpu = murk_gpu::GpuBackend::new().unwrap();
    let (mut on_gpu, scout, _) = scene(Fog::on_gpu(gpu.clone()));
    let (mut on_cpu, cpu_scout, _) = scene(Fog::on_cpu().unwrap());
    let hashes = landed_hashes(&mut on_gpu, scout, 12);
    assert_eq!(hashes.len(), 10, "each tick's hash lands two ticks later");
    assert_eq!(hashes, landed_hashes(&mut on_cpu, cpu_scout, 12));
    while !on_gpu.ready().unwrap() {
        std::thread::yield_now();
    }
    on_gpu.prepare(&Read::Mask("red".into())).unwrap();
    while !on_gpu.ready().unwrap() {
        std::thread::yield_now();
    }
    assert_eq!(on_gpu.final_mask("red").unwrap(), on_cpu.final_mask("red").unwrap());
    let prepared = |fog: &mut Fog, read: Read| {
        fog.prepare(&read).unwrap();
        while !fog.ready().unwrap() {
            std::thread::yield_now();
        }
    };
    prepared(&mut on_gpu, Read::Memory("red".into()));
    assert_eq!(on_gpu.export_memory("red").unwrap(), on_cpu.export_memory("red").unwrap());
    prepared(&mut on_gpu, Read::Snapshot);
    let saved = on_gpu.snapshot().unwrap();
    let (mut restored, _, _) = scene(Fog::on_cpu().unwrap());
    restored.restore(&saved).unwrap();
    assert_eq!(restored.hash_now().unwrap(), on_cpu.hash_now().unwrap(), "the GPU's snapshot restores on the CPU as the CPU's state");
    assert!(on_gpu.hash_now().unwrap_err().to_string().contains("hashes on the device"));
    // The explored count and a batch of sight lines land without a wait,
    // as the CPU gives them.
    fn landed<T>(mut poll: impl FnMut() -> Option<T>) -> T {
        for _ in 0..1_000_000 {
            if let Some(v) = poll() {
                return v;
            }
            std::thread::yield_now();
        }
        panic!("nothing landed");
    }
    let explored = landed(|| on_gpu.explored("red").unwrap());
    assert_eq!(Some(explored), on_cpu.explored("red").unwrap());
    #[rustfmt::skip]
    let lines = [16.0, 32.0, 0.0, 44.0, 40.0, 0.0, 1.5, 16.0, 32.0, 0.0, 20.0, 40.0, 0.0, 1.5];
    let (g, c) = (on_gpu.submit_lines("red", &lines).unwrap(), on_cpu.submit_lines("red", &lines).unwrap());
    assert_eq!(landed(|| on_gpu.poll_lines(g).unwrap()), on_cpu.poll_lines(c).unwrap().unwrap());
    assert_eq!(gpu.device_waits(), 0, "no call waited for the device");
}

/// A radar (layer 1, through walls) senses a tracked unit that the team's
/// sight cannot see behind a wall: one blip where the unit stands, strayed
/// by at most the profile's `blip_error`; once sight sees the unit, no
/// blip. Asking a sight instance for blips is a named error.
#[test]
fn a_radar_gives_a_blip_where_sight_does_not_reach() {
    let mut fog = Fog::on_cpu().unwrap();
    fog.create_instance(r#"{"name": "sight", "area": {"center": [32, 32, 5], "extents": [64, 64, 10]}, "resolution": 64, "observed_teams": [0]}"#)
        .unwrap();
    fog.create_instance(
        r#"{"name": "radar", "area": {"center": [32, 32, 5], "extents": [64, 64, 10]}, "resolution": 32, "observed_teams": [0],
            "profile": {"layer": 1, "see_through": true, "blip_error": 1.0}}"#,
    )
    .unwrap();
    fog.spawn(Vec3::new(30.0, 32.0, 0.0), &parts(r#"{"blocker": {"shape": {"rect": {"size": [2, 40]}}}}"#)).unwrap();
    fog.spawn(Vec3::new(16.0, 32.0, 0.0), &parts(r#"{"source": {"radius": 24, "team": 0}}"#)).unwrap();
    fog.spawn(Vec3::new(16.0, 34.0, 0.0), &parts(r#"{"source": {"radius": 40, "team": 0, "layer": 1}}"#)).unwrap();
    let unit = fog.spawn(Vec3::new(44.0, 32.0, 0.0), &parts(r#"{"tracked": {"footprint": 1}}"#)).unwrap();
    for _ in 0..4 {
        fog.tick(33_333).unwrap();
    }
    assert!(fog.visible_to("sight").unwrap().is_empty(), "the wall hides the unit from sight");
    let blips = fog.blips("radar").unwrap();
    assert_eq!(blips.len(), 1, "{blips:?}");
    let [x, y, _] = blips[0];
    assert!((x - 44.0).abs() <= 1.0 && (y - 32.0).abs() <= 1.0, "the blip strays at most 1 from the unit: {blips:?}");
    // In the open, sight sees it: a radar gives no blip of a unit in sight.
    fog.move_to(unit, Vec3::new(20.0, 40.0, 0.0)).unwrap();
    for _ in 0..4 {
        fog.tick(33_333).unwrap();
    }
    assert_eq!(fog.visible_to("sight").unwrap(), [unit]);
    assert!(fog.blips("radar").unwrap().is_empty());
    let e = fog.blips("sight").unwrap_err().to_string();
    assert!(e.contains("sight") && e.contains("layer 0"), "{e}");
}

/// Sight lines go in as seven numbers a line and come back as a light and
/// a visible flag a line: a wall between looker and target lets no light
/// through, open ground all of it; each batch is answered once, and a bad
/// batch (a count that is not seven a line, a number not finite) is an
/// error naming it.
#[test]
fn sight_lines_answer_a_light_and_a_flag_a_line() {
    let mut fog = Fog::on_cpu().unwrap();
    fog.create_instance(r#"{"name": "sight", "area": {"center": [32, 32, 5], "extents": [64, 64, 10]}, "resolution": 64}"#).unwrap();
    fog.spawn(Vec3::new(30.0, 32.0, 0.0), &parts(r#"{"blocker": {"shape": {"rect": {"size": [2, 40]}}}}"#)).unwrap();
    fog.tick(33_333).unwrap();
    #[rustfmt::skip]
    let lines = [
        16.0, 32.0, 0.0, 44.0, 32.0, 0.0, 1.5, // across the wall
        16.0, 32.0, 0.0, 20.0, 40.0, 0.0, 1.5, // in the open
    ];
    let handle = fog.submit_lines("sight", &lines).unwrap();
    assert_eq!(fog.poll_lines(handle).unwrap(), Some(vec![0, 0, u16::MAX, 1]));
    let e = fog.poll_lines(handle).unwrap_err().to_string();
    assert!(e.contains(&handle.to_string()), "an answered batch: {e}");
    let e = fog.submit_lines("sight", &lines[..6]).unwrap_err().to_string();
    assert!(e.contains("lines") && e.contains("6 numbers"), "{e}");
    let mut bad = lines;
    bad[10] = f32::NAN;
    let e = fog.submit_lines("sight", &bad).unwrap_err().to_string();
    assert!(e.contains("lines[1]") && e.contains("NaN"), "{e}");
    let e = fog.submit_lines("nobody", &lines).unwrap_err().to_string();
    assert!(e.contains("nobody"), "{e}");
}

/// The explored count comes back as a count of the grid: on the CPU at
/// once, the count a waited call over the same memory gives; an unknown
/// instance is a named error.
#[test]
fn the_explored_count_is_there_on_the_cpu_at_once() {
    let (mut fog, _, _) = scene(Fog::on_cpu().unwrap());
    for _ in 0..6 {
        fog.tick(33_333).unwrap();
    }
    let explored = fog.explored("red").unwrap().expect("on the CPU at once");
    assert_eq!(explored, fog.subsystem().explored("red").unwrap());
    assert!(explored.texels > 0 && explored.texels < explored.of, "{explored:?}");
    let e = fog.explored("nobody").unwrap_err().to_string();
    assert!(e.contains("nobody"), "{e}");
}
