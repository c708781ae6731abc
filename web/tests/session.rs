//! The page's session driven natively, the way the page drives it: the
//! hashes it collects are those of `murk run`, and a switch from the CPU to
//! the GPU and back (the GPU ticked only when its readbacks have landed,
//! the switch away from it rehearsed) keeps them, with no wait for the
//! device. Every scenario in `scenarios/`, given the files it names as a
//! user drops them beside it, gives the page `murk run`'s hashes, sight
//! sets and events, and the view moves between its instances. The GPU
//! tests need an adapter (CI uses Mesa's lavapipe) and is
//! ignored by the plain `cargo test`; without an adapter it fails.

use murk_core::scenario::{Scenario, ScenarioFiles, ScenarioRunner, TickAnswers, TickRecord};
use murk_core::Backend;
use murk_cpu::CpuBackend;
use murk_gpu::GpuBackend;
use murk_web::Session;
use std::collections::BTreeMap;
use std::path::Path;

const TICKS: u32 = 40;

fn assets() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../assets"))
}

fn demo() -> (String, BTreeMap<String, String>) {
    let text = std::fs::read_to_string(assets().join("demo.json")).unwrap();
    let map = std::fs::read_to_string(assets().join("maps/lak303d.map")).unwrap();
    (text, BTreeMap::from([("lak303d.map".to_string(), map)]))
}

fn cpu() -> Box<dyn Backend> {
    Box::new(CpuBackend::new(1).unwrap())
}

/// The lockstep hash of every tick as `murk run` writes it (`step`, which
/// hashes each tick's state on demand).
fn murk_run(ticks: u32) -> Vec<u64> {
    let scenario = Scenario::load(&assets().join("demo.json")).unwrap();
    let files = ScenarioFiles::load(&scenario, assets()).unwrap();
    let mut runner = ScenarioRunner::new(scenario, &files, Box::new(CpuBackend::new(2).unwrap())).unwrap();
    (0..ticks).map(|_| u64::from_str_radix(&runner.step().unwrap().lockstep, 16).unwrap()).collect()
}

/// Asserts that every landed hash is `murk run`'s for its tick, and that
/// all but the last two ticks' have landed.
fn assert_hashes_are_murk_runs(session: &Session, ticks: u32) {
    let expected = murk_run(ticks);
    let landed = session.hashes();
    assert_eq!(landed.len(), ticks as usize - 2, "each tick's hash lands two ticks later: {:?}", landed.keys());
    for (&tick, &hash) in landed {
        assert_eq!(hash, expected[tick as usize], "tick {tick}");
    }
}

#[test]
fn the_pages_hashes_are_those_of_murk_run_on_the_cpu() {
    let (text, maps) = demo();
    let mut session = Session::new("demo.json", &text, &maps, cpu(), None).unwrap();
    for _ in 0..TICKS {
        assert!(session.ready().unwrap(), "the CPU is always ready");
        session.tick().unwrap();
    }
    assert_hashes_are_murk_runs(&session, TICKS);
    let picture = session.picture().unwrap();
    assert_eq!(picture.rgba.len(), (picture.width * picture.height * 4) as usize);
    // The overlay shows all three states: clear, haze and dark.
    let mut shades: Vec<u8> = picture.rgba.chunks(4).map(|p| p[1]).collect();
    shades.sort_unstable();
    shades.dedup();
    assert!(shades.len() > 3, "{shades:?}");
}

#[test]
fn a_scenario_without_the_files_it_names_is_named() {
    let (text, _) = demo();
    let e = Session::new("demo.json", &text, &BTreeMap::new(), cpu(), None).err().expect("no map given");
    assert!(e.to_string().contains("map.file") && e.to_string().contains("lak303d.map") && e.to_string().contains("given: none"), "{e}");
    let (name, outpost, mut files) = scenario_with_files("outpost.json");
    files.retain(|file, _| file.ends_with(".map"));
    let e = Session::new(&name, &outpost, &files, cpu(), None).err().expect("the profile file left out");
    assert!(e.to_string().contains("instances[0].profile_file") && e.to_string().contains("outpost.profile.toml"), "{e}");
    let e = Session::new("bad.json", "{", &BTreeMap::new(), cpu(), None).err().expect("not JSON");
    assert!(e.to_string().contains("bad.json"), "{e}");
}

fn scenarios() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../scenarios"))
}

/// Every scenario file in `scenarios/`, by file name.
fn every_scenario() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(scenarios())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".json") || n.ends_with(".ron"))
        .collect();
    names.sort();
    assert!(names.len() >= 3, "{names:?}");
    names
}

/// A scenario's text and the files it names, by file name: what a user
/// drops on the page.
fn scenario_with_files(name: &str) -> (String, String, BTreeMap<String, String>) {
    let path = scenarios().join(name);
    let text = std::fs::read_to_string(&path).unwrap();
    let scenario = Scenario::load(&path).unwrap();
    let mut named: Vec<&str> = scenario.instances.iter().filter_map(|i| i.profile_file.as_deref()).collect();
    named.extend(scenario.map.as_ref().map(|m| m.file.as_str()));
    let files = named
        .into_iter()
        .map(|file| (Path::new(file).file_name().unwrap().to_str().unwrap().to_string(), std::fs::read_to_string(scenarios().join(file)).unwrap()))
        .collect();
    (name.to_string(), text, files)
}

/// `murk run`'s records of every tick of a scenario, on the CPU.
fn murk_run_records(name: &str) -> Vec<TickRecord> {
    let scenario = Scenario::load(&scenarios().join(name)).unwrap();
    let files = ScenarioFiles::load(&scenario, scenarios()).unwrap();
    let mut runner = ScenarioRunner::new(scenario, &files, Box::new(CpuBackend::new(2).unwrap())).unwrap();
    let mut records = Vec::new();
    while !runner.finished() {
        records.push(runner.step().unwrap());
    }
    records
}

/// Runs `name` to its end in a session on `backend` (ticking only when
/// ready), and asserts that every landed hash and every tick's answers
/// are `murk run`'s. Returns how many ticks had a sight set.
fn assert_session_is_murk_run(name: &str, backend: Box<dyn Backend>, gpu: Option<GpuBackend>) -> usize {
    let (name, text, files) = scenario_with_files(name);
    let records = murk_run_records(&name);
    let mut session = Session::new(&name, &text, &files, backend, gpu).unwrap();
    for _ in 0..records.len() {
        while !session.ready().unwrap() {
            std::thread::sleep(std::time::Duration::from_micros(200));
        }
        session.tick().unwrap();
    }
    assert_eq!(session.hashes().len(), records.len() - 2, "{name}: each tick's hash lands two ticks later");
    for (&tick, &hash) in session.hashes() {
        assert_eq!(format!("{hash:016x}"), records[tick as usize].lockstep, "{name} tick {tick}: the hash");
    }
    assert_eq!(session.answers().len(), records.len(), "{name}: an answer for every tick");
    for (&tick, answers) in session.answers() {
        let r = &records[tick as usize];
        let want = TickAnswers {
            events: r.events.clone(),
            observer_events: r.observer_events.clone(),
            sight: r.sight.clone(),
            sight_events: r.sight_events.clone(),
            blips: r.blips.clone(),
        };
        assert_eq!(answers, &want, "{name} tick {tick}: the sets, events and blips");
    }
    records.iter().filter(|r| !r.sight.is_empty()).count()
}

#[test]
fn every_scenario_with_the_files_beside_it_gives_murk_runs_hashes_sets_and_events() {
    let mut with_sets = 0;
    for name in every_scenario() {
        with_sets += assert_session_is_murk_run(&name, cpu(), None);
    }
    assert!(with_sets > 10, "some scenario tracks entities that are seen ({with_sets} ticks with a set)");
    let radar = murk_run_records("radar.json");
    assert!(radar.iter().filter(|r| !r.blips.is_empty()).count() > 10, "the radar scenario has blips to carry");
}

#[test]
fn the_view_moves_between_the_teams_and_an_unknown_one_is_named() {
    let (name, text, files) = scenario_with_files("patrol.json");
    let mut session = Session::new(&name, &text, &files, cpu(), None).unwrap();
    assert_eq!(session.instances(), ["blue", "red"]);
    assert_eq!(session.view(), "blue", "the view starts on the first instance");
    for _ in 0..20 {
        session.tick().unwrap();
    }
    let blue = session.picture().unwrap();
    session.set_view("red").unwrap();
    let red = session.picture().unwrap();
    assert_ne!(blue.rgba, red.rgba, "the red team sees another picture");
    let e = session.set_view("green").expect_err("no such team");
    assert!(e.to_string().contains("view") && e.to_string().contains("green") && e.to_string().contains("blue, red"), "{e}");
    assert_eq!(session.view(), "red", "the view stays where it was");
    assert_eq!(session.picture().unwrap().rgba, red.rgba);
    session.tick().unwrap();
    assert_eq!(session.ticks_done(), 21, "the run goes on");
}

#[test]
#[ignore = "needs a GPU adapter: cargo test -p murk-web -- --ignored"]
fn every_scenario_on_the_gpu_gives_murk_runs_hashes_sets_and_events_without_a_wait() {
    let gpu = GpuBackend::new().unwrap_or_else(|e| panic!("the GPU test did not run: {e}"));
    for name in every_scenario() {
        let world = gpu.another_world();
        assert_session_is_murk_run(&name, Box::new(world.clone()), Some(world));
    }
    assert_eq!(gpu.device_waits(), 0, "a call blocked on the device");
}

#[test]
#[ignore = "needs a GPU adapter: cargo test -p murk-web -- --ignored"]
fn switching_to_the_gpu_and_back_keeps_the_hashes_and_never_waits_for_the_device() {
    let gpu = GpuBackend::new().unwrap_or_else(|e| panic!("the GPU test did not run: {e}"));
    let (text, maps) = demo();
    let mut session = Session::new("demo.json", &text, &maps, cpu(), None).unwrap();
    let mut not_ready = 0u32;
    for tick in 0..TICKS {
        if tick == 10 {
            session.switch(Box::new(gpu.clone()), Some(gpu.clone())).unwrap();
            assert!(session.on_gpu());
        }
        if tick == 25 {
            // Leaving the GPU: wait for what is in flight, rehearse, wait
            // for the copies, then switch. Right after a tick the readbacks
            // are usually still in flight and a rehearsal is refused; a
            // fast device may have landed them already, and then this is
            // the rehearsal (the device decides, so both are allowed).
            if let Err(e) = session.prepare_switch() {
                let e = e.to_string();
                assert!(e.contains("prepare_switch") && e.contains("in flight"), "{e}");
            }
            while !session.ready().unwrap() {
                not_ready += 1;
                std::thread::sleep(std::time::Duration::from_micros(200));
            }
            session.prepare_switch().unwrap();
            while !session.ready().unwrap() {
                not_ready += 1;
                std::thread::sleep(std::time::Duration::from_micros(200));
            }
            session.switch(cpu(), None).unwrap();
            assert!(!session.on_gpu());
        }
        while !session.ready().unwrap() {
            not_ready += 1;
            std::thread::sleep(std::time::Duration::from_micros(200));
        }
        session.tick().unwrap();
    }
    assert_eq!(gpu.device_waits(), 0, "a call blocked on the device");
    assert_hashes_are_murk_runs(&session, TICKS);
    println!("the session found the GPU busy {not_ready} times and never blocked");
}
