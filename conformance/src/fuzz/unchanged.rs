//! The rule every target checks: a rejected call changes nothing (the
//! lockstep hash, the instances and their counters and reveals, the tick
//! count and the entities are what they were before it).

use murk_core::hecs::World;
use murk_core::{ActiveReveal, FogSubsystem, InstanceStats};

/// Everything a rejected call must leave alone.
#[derive(Debug, PartialEq)]
struct Observed {
    hash: u64,
    names: Vec<String>,
    tick: u64,
    stats: Vec<InstanceStats>,
    reveals: Vec<Vec<ActiveReveal>>,
    entities: u32,
}

fn observe(fog: &mut FogSubsystem, world: &World) -> Observed {
    let names = fog.instance_names();
    let stats = names.iter().map(|n| fog.stats(n).expect("listed")).collect();
    let reveals = names.iter().map(|n| fog.reveals(n).expect("listed").to_vec()).collect();
    Observed { hash: fog.lockstep_hash().expect("the CPU backend reads back"), names, tick: fog.tick_count(), stats, reveals, entities: world.len() }
}

/// Runs `call`; if it fails, asserts that nothing observable changed.
pub(crate) fn unchanged_on_error<T>(
    fog: &mut FogSubsystem,
    world: &mut World,
    what: &str,
    call: impl FnOnce(&mut FogSubsystem, &mut World) -> murk_core::Result<T>,
) -> Option<T> {
    let before = observe(fog, world);
    match call(fog, world) {
        Ok(v) => Some(v),
        Err(e) => {
            let after = observe(fog, world);
            assert_eq!(before, after, "{what} failed ({e}) and changed the state");
            None
        }
    }
}
