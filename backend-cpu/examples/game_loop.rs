//! What a game calls each tick: the example of `docs/gameplay.md`.
//!
//! `cargo run -p murk-cpu --example game_loop`

use murk_core::glam::{Vec2, Vec3};
use murk_core::hecs::World;
use murk_core::{
    Area, Blocker, BlockerShape, Cone, FogSubsystem, HideMode, InstanceDesc, MaskAnswer, Position, Profile, StealthActor, StealthEvent, TeamMask,
    TransientReveal, VisionSource,
};

fn main() -> Result<(), murk_core::MurkError> {
    // One subsystem per world, on the CPU reference backend with 2 threads.
    let mut fog = FogSubsystem::new(Box::new(murk_cpu::CpuBackend::new(2)?));
    // Player 0's view of a 64 x 64 area.
    fog.create_instance(InstanceDesc {
        name: "player0".into(),
        area: Area { center: Vec3::new(32.0, 32.0, 5.0), extents: Vec3::new(64.0, 64.0, 10.0), yaw_degrees: 0.0 },
        resolution: 128,
        lod: 1,
        observed_teams: TeamMask::of(&[0]).expect("teams below 64"),
        profile: Profile { update_rate: 0.1, ..Profile::default() },
    })?;

    let mut world = World::new();
    // A guard of team 0 with a cone, a wall, and an enemy that leaves a ghost.
    let mut guard = VisionSource::new(30.0);
    guard.cone = Some(Cone { yaw_degrees: 180.0, half_angle_degrees: 40.0 });
    world.spawn((Position(Vec3::new(50.0, 32.0, 0.0)), guard));
    world.spawn((Position(Vec3::new(30.0, 20.0, 0.0)), Blocker::wall(BlockerShape::Rect { size: Vec2::new(2.0, 16.0), yaw_degrees: 0.0 })));
    let enemy = world.spawn((Position(Vec3::new(26.0, 10.0, 0.0)), StealthActor { hide_mode: HideMode::FreezeWithGhost, ..StealthActor::default() }));
    // A sound ping: reveals for 5 ticks, then murk removes it.
    world.spawn((Position(Vec3::new(10.0, 50.0, 0.0)), VisionSource::new(6.0), TransientReveal { remaining_ticks: 5 }));

    // Lockstep peers compare a hash of every tick: murk hashes each tick's
    // state and hands the hash over two ticks later, without waiting.
    fog.set_hash_every_tick(true);
    let mut pending = None;
    for tick in 0..60 {
        // The game moves its entities...
        world.get::<&mut Position>(enemy).expect("the enemy exists").0.y = 10.0 + tick as f32 * 0.8;
        // ...then ticks the fog (33 ms) and reacts to stealth transitions.
        let report = fog.tick(&mut world, 33_333)?;
        for event in &report.events {
            match event {
                StealthEvent::Revealed { .. } => println!("tick {tick}: enemy spotted"),
                StealthEvent::Hidden { .. } => println!("tick {tick}: enemy lost"),
                StealthEvent::GhostSpawned { ghost, .. } => {
                    let at = world.get::<&Position>(*ghost).expect("murk spawned it").0;
                    println!("tick {tick}: ghost left at ({:.1}, {:.1})", at.x, at.y);
                }
                StealthEvent::GhostRemoved { .. } => println!("tick {tick}: ghost removed"),
            }
        }
        // Batched mask queries: submit, then poll on later ticks.
        match pending.take() {
            None => pending = Some(fog.submit_mask_query(&[Vec3::new(40.0, 32.0, 0.0), Vec3::new(5.0, 5.0, 0.0)], None)?),
            Some(handle) => match fog.poll_mask_query(handle)? {
                Some(answers) if tick % 20 == 1 => {
                    for a in answers {
                        if let MaskAnswer::Sampled { value, visible, .. } = a {
                            println!("tick {tick}: mask {value} visible {visible}");
                        }
                    }
                }
                Some(_) => {}
                None => pending = Some(handle),
            },
        }
        // Sent to the peers, who compare it with theirs for the same tick count.
        if let Some(landed) = report.lockstep.filter(|h| h.ticks % 20 == 0) {
            println!("tick {tick}: lockstep hash of tick count {}: {:016x}", landed.ticks, landed.hash);
        }
    }
    // Save and restore everything (e.g. for a replay or a reconnect).
    let snapshot = fog.snapshot(&world)?;
    fog.restore(&mut world, &snapshot)?;
    println!("snapshot of {} bytes restored; the final mask has {} texels", snapshot.len(), fog.final_mask("player0")?.len());
    Ok(())
}
