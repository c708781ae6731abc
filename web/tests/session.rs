//! The page's session driven natively, the way the page drives it: the
//! hashes it collects are those of `murk run`, and a switch from the CPU to
//! the GPU and back (the GPU ticked only when its readbacks have landed,
//! the switch away from it rehearsed) keeps them, with no wait for the
//! device. The GPU test needs an adapter (CI uses Mesa's lavapipe) and is
//! ignored by the plain `cargo test`; without an adapter it fails.

use murk_core::scenario::{Scenario, ScenarioFiles, ScenarioRunner};
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
fn a_scenario_without_its_map_or_with_a_profile_file_is_named() {
    let (text, _) = demo();
    let e = Session::new("demo.json", &text, &BTreeMap::new(), cpu(), None).err().expect("no map given");
    assert!(e.to_string().contains("map.file") && e.to_string().contains("lak303d.map"), "{e}");
    let with_profile = std::fs::read_to_string(Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../scenarios/outpost.json"))).unwrap();
    let e = Session::new("outpost.json", &with_profile, &BTreeMap::new(), cpu(), None).err().expect("a profile file");
    assert!(e.to_string().contains("profile_file"), "{e}");
    let e = Session::new("bad.json", "{", &BTreeMap::new(), cpu(), None).err().expect("not JSON");
    assert!(e.to_string().contains("bad.json"), "{e}");
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
            // for the copies, then switch.
            assert!(session.prepare_switch().is_err() || session.ready().unwrap(), "rehearsing with readbacks in flight");
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
