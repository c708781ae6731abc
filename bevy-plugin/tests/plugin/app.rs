//! A headless Bevy app running a scripted scene gives, tick for tick, the
//! same masks, stealth events and lockstep hashes as the same scene run
//! through `FogSubsystem` directly: on the CPU, and on the GPU (ignored
//! without an adapter; CI runs them on lavapipe).
//!
//! (Over 600 lines as one concept: each test drives the same app and scene
//! against the same direct run.)

use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use murk_bevy::prelude::*;
use murk_bevy::{FogObserverStealthEvent, FogSightEvent, FogViewer};
use murk_core::{Backend, FogSubsystem, HideMode, Position, StealthEvent, TransientReveal};
use std::time::Duration;

pub(crate) const DT_US: u32 = 33_333;
const TICKS: u32 = 48;

pub(crate) fn desc() -> InstanceDesc {
    InstanceDesc {
        name: "ground".into(),
        area: Area { center: Vec3::new(32.0, 32.0, 5.0), extents: Vec3::new(64.0, 64.0, 10.0), yaw_degrees: 0.0 },
        resolution: 64,
        lod: 0,
        observed_teams: TeamMask::ALL,
        profile: Profile { fade_in_rate: 8.0, relax_rate: 8.0, ..Profile::default() },
    }
}

/// One tick's final mask, lockstep hash and stealth events (as kinds).
/// Per tick: the final mask, the lockstep hash that arrived (with the tick
/// count of the state it hashes) and the stealth events.
type TickOut = (Vec<u16>, Option<(u64, u64)>, Vec<&'static str>);

/// What the script does at a tick, for both worlds to apply.
#[derive(Clone, Copy, PartialEq)]
enum Step {
    Walk(f32),
    Flare,
    GuardLeaves,
    WallMoves,
}

fn steps(tick: u32) -> Vec<Step> {
    let mut s = vec![Step::Walk(8.5 + (tick % 30) as f32 * 2.0)];
    match tick {
        10 => s.push(Step::Flare),
        20 => s.push(Step::GuardLeaves),
        25 => s.push(Step::WallMoves),
        _ => {}
    }
    s
}

fn guard() -> VisionSource {
    let mut g = VisionSource::new(12.0);
    g.cone = Some(murk_core::Cone { yaw_degrees: 180.0, half_angle_degrees: 40.0 });
    g
}

fn thief() -> StealthActor {
    StealthActor { hide_mode: HideMode::FreezeWithGhost, ..StealthActor::default() }
}

fn wall() -> Blocker {
    Blocker::wall(BlockerShape::Circle { radius: 3.0 })
}

/// The scene run through the subsystem directly: per tick, the final mask,
/// the lockstep hash and the stealth events (as kinds, in order).
fn direct(backend: Box<dyn Backend>, order: [usize; 4]) -> Vec<TickOut> {
    let mut fog = FogSubsystem::new(backend);
    fog.create_instance(desc()).unwrap();
    let mut world = hecs::World::new();
    // Spawned in the order the mirror spawned them: Bevy's entity order,
    // which is deterministic but not always the order of the spawn calls.
    let mut spawned = [None; 4];
    for i in order {
        spawned[i] = Some(match i {
            0 => world.spawn((Position(Vec3::new(8.5, 32.5, 0.0)), VisionSource::new(9.0))),
            1 => world.spawn((Position(Vec3::new(56.0, 40.0, 0.0)), guard())),
            2 => world.spawn((Position(Vec3::new(40.0, 20.0, 0.0)), wall())),
            _ => world.spawn((Position(Vec3::new(32.5, 36.5, 0.0)), thief())),
        });
    }
    let [walker, guard_e, wall_e, _] = spawned.map(|e| e.expect("all four spawned"));
    let (mut out, mut hashes) = (Vec::new(), Vec::new());
    for tick in 0..TICKS {
        for step in steps(tick) {
            match step {
                Step::Walk(x) => world.get::<&mut Position>(walker).unwrap().0.x = x,
                Step::Flare => {
                    world.spawn((Position(Vec3::new(20.0, 10.0, 0.0)), VisionSource::new(6.0), TransientReveal { remaining_ticks: 5 }));
                }
                Step::GuardLeaves => world.despawn(guard_e).unwrap(),
                Step::WallMoves => world.get::<&mut Position>(wall_e).unwrap().0 = Vec3::new(44.0, 28.0, 0.0),
            }
        }
        let report = fog.tick(&mut world, DT_US).unwrap();
        let events = report.events.iter().map(kind).collect();
        hashes.push(fog.lockstep_hash().unwrap());
        // The app's hash of a tick arrives two ticks later.
        let arrived = tick.checked_sub(2).map(|n| (u64::from(n) + 1, hashes[n as usize]));
        out.push((fog.final_mask("ground").unwrap(), arrived, events));
    }
    out
}

fn kind(e: &StealthEvent) -> &'static str {
    match e {
        StealthEvent::Revealed { .. } => "revealed",
        StealthEvent::Hidden { .. } => "hidden",
        StealthEvent::GhostSpawned { .. } => "ghost spawned",
        StealthEvent::GhostRemoved { .. } => "ghost removed",
    }
}

fn change_kind(c: StealthChange) -> &'static str {
    match c {
        StealthChange::Revealed => "revealed",
        StealthChange::Hidden => "hidden",
        StealthChange::GhostSpawned => "ghost spawned",
        StealthChange::GhostRemoved => "ghost removed",
    }
}

fn headless(choice: BackendChoice) -> App {
    let mut app = App::new();
    app.add_plugins(MinimalPlugins)
        .insert_resource(Time::<Fixed>::from_duration(Duration::from_micros(u64::from(DT_US))))
        .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_micros(u64::from(DT_US))))
        .add_plugins(MurkPlugin::new(choice).instance(FogInstance::new(desc())).hash_each_tick(true));
    app
}

fn thief_hecs(world: &World, thief: Entity) -> hecs::Entity {
    world.resource::<FogMirror>().hecs_entity(thief).expect("the thief is mirrored")
}

/// Runs frames until murk ticked once more.
pub(crate) fn step(app: &mut App) {
    let before = app.world().resource::<MurkFog>().ticks();
    for _ in 0..10 {
        app.update();
        let now = app.world().resource::<MurkFog>().ticks();
        if now > before {
            assert_eq!(now, before + 1, "one frame of one fixed step ran one tick");
            return;
        }
        let errors: Vec<FogError> = app.world_mut().resource_mut::<Messages<FogError>>().drain().collect();
        assert!(errors.is_empty(), "murk reported {errors:?}");
    }
    panic!("murk did not tick in 10 frames");
}

/// The same scene in a Bevy app, moved to `switch_to` after tick 24 when set.
fn in_app(choice: BackendChoice, switch_to: Option<BackendChoice>) -> (Vec<TickOut>, App, [usize; 4]) {
    let mut app = headless(choice);
    let walker = app.world_mut().spawn((Transform::from_xyz(8.5, 32.5, 0.0), FogVision::new(9.0))).id();
    let guard_e = app.world_mut().spawn((Transform::from_xyz(56.0, 40.0, 0.0), FogVision { source: guard(), cone_follows_rotation: false })).id();
    let wall_e = app.world_mut().spawn((Transform::from_xyz(40.0, 20.0, 0.0), FogBlocker(wall()))).id();
    let thief_e = app.world_mut().spawn((Transform::from_xyz(32.5, 36.5, 0.0), FogStealth(thief()), FogHideWhenUnseen)).id();
    let mut order = [0, 1, 2, 3];
    let entities = [walker, guard_e, wall_e, thief_e];
    order.sort_by_key(|&i| entities[i]);
    let mut flare = None;
    let mut out = Vec::new();
    let mut saw_hidden = false;
    for tick in 0..TICKS {
        for s in steps(tick) {
            let world = app.world_mut();
            match s {
                Step::Walk(x) => world.get_mut::<Transform>(walker).unwrap().translation.x = x,
                Step::Flare => {
                    flare = Some(
                        world
                            .spawn((Transform::from_xyz(20.0, 10.0, 0.0), FogVision::new(6.0), FogReveal(TransientReveal { remaining_ticks: 5 })))
                            .id(),
                    );
                }
                Step::GuardLeaves => {
                    world.despawn(guard_e);
                }
                Step::WallMoves => world.get_mut::<Transform>(wall_e).unwrap().translation = Vec3::new(44.0, 28.0, 0.0),
            }
        }
        if let (24, Some(to)) = (tick, switch_to) {
            app.world_mut().write_message(SwitchBackend(to));
        }
        step(&mut app);
        let world = app.world_mut();
        let events: Vec<FogStealthEvent> = world.resource_mut::<Messages<FogStealthEvent>>().drain().collect();
        assert!(events.iter().all(|e| e.actor == thief_e), "events name the Bevy actor: {events:?}");
        let hash = world.resource::<FogHash>();
        let hash = hash.hash.map(|h| (hash.tick, h));
        let mask = world.resource_mut::<MurkFog>().subsystem().unwrap().final_mask("ground").unwrap();
        // Hidden actors are hidden on screen, and a ghost stands in for them.
        let visible = world.get::<Visibility>(thief_e).copied().unwrap();
        let ghosts: Vec<FogGhost> = world.query::<&FogGhost>().iter(world).copied().collect();
        let murk_ghosts = world.resource::<FogMirror>().world().query::<&murk_core::Ghost>().iter().count();
        assert_eq!(ghosts.len(), murk_ghosts, "tick {tick}: one ghost entity per murk ghost");
        assert!(ghosts.iter().all(|g| g.actor == thief_e), "ghosts name the Bevy actor");
        let thief_h = thief_hecs(world, thief_e);
        let seen_before = world.resource_mut::<MurkFog>().subsystem().unwrap().stealth_state(thief_h).is_some_and(|s| s.last_known.is_some());
        if visible == Visibility::Hidden && seen_before {
            saw_hidden = true;
            assert_eq!(ghosts.len(), 1, "tick {tick}: a FreezeWithGhost actor seen before and hidden now has its ghost");
        }
        assert_eq!(visible == Visibility::Hidden, !world.resource::<MurkFog>().stealth_visible(thief_h).unwrap_or(true));
        out.push((mask, hash, events.iter().map(|e| change_kind(e.change)).collect()));
    }
    assert!(saw_hidden, "the walker saw the thief and lost it again, leaving a ghost");
    let flare = flare.unwrap();
    assert!(app.world().get_entity(flare).is_err(), "murk ended the flare, and the plugin despawned its entity");
    (out, app, order)
}

fn compare(choice: BackendChoice, switch_to: Option<BackendChoice>, direct_backend: Box<dyn Backend>) {
    let (got, app, order) = in_app(choice, switch_to);
    let expected = direct(direct_backend, order);
    for (tick, (e, g)) in expected.iter().zip(&got).enumerate() {
        if let Some(i) = e.0.iter().zip(&g.0).position(|(a, b)| a != b) {
            panic!("tick {tick}: first differing texel {i} ({}, {}): direct {} app {}", i % 64, i / 64, e.0[i], g.0[i]);
        }
        assert_eq!(e.1, g.1, "tick {tick}: lockstep hashes");
        assert_eq!(e.2, g.2, "tick {tick}: stealth events");
    }
    assert_eq!(expected.len(), got.len());
    assert!(expected.iter().any(|t| !t.2.is_empty()), "the scene produced stealth events to compare");
    let name = app.world().resource::<MurkFog>().backend_name().unwrap();
    let last = switch_to.unwrap_or(choice);
    let want = if last == BackendChoice::Gpu { "gpu" } else { "cpu" };
    assert!(name.starts_with(want), "{name} runs the app at the end");
    let errors: Vec<FogError> = app.world().resource::<Messages<FogError>>().iter_current_update_messages().cloned().collect();
    assert!(errors.is_empty(), "{errors:?}");
}

#[test]
fn the_app_matches_the_subsystem_on_the_cpu() {
    compare(BackendChoice::Cpu, None, Box::new(murk_cpu::CpuBackend::new(1).unwrap()));
}

/// A switch goes through a snapshot into a fresh subsystem: nothing changes.
#[test]
fn a_backend_switch_changes_no_byte() {
    compare(BackendChoice::Cpu, Some(BackendChoice::Cpu), Box::new(murk_cpu::CpuBackend::new(3).unwrap()));
}

fn gpu() -> murk_gpu::GpuBackend {
    murk_gpu::GpuBackend::new().unwrap_or_else(|e| panic!("the GPU test did not run: {e}"))
}

#[test]
#[ignore = "needs a GPU adapter: cargo test -p murk-bevy -- --ignored"]
fn the_app_matches_the_subsystem_on_the_gpu() {
    compare(BackendChoice::Gpu, None, Box::new(gpu()));
}

#[test]
#[ignore = "needs a GPU adapter: cargo test -p murk-bevy -- --ignored"]
fn the_app_moves_from_the_cpu_to_the_gpu_mid_game_without_a_byte_changing() {
    compare(BackendChoice::Cpu, Some(BackendChoice::Gpu), Box::new(murk_cpu::CpuBackend::new(2).unwrap()));
}

/// Only what changed costs work: entities that did not move keep their
/// mirror, and the mirror's content follows Bevy's.
#[test]
fn the_mirror_follows_spawns_changes_and_despawns() {
    let mut app = headless(BackendChoice::Cpu);
    let a = app.world_mut().spawn((Transform::from_xyz(10.0, 10.0, 0.0), FogVision::new(5.0))).id();
    let b = app.world_mut().spawn((Transform::from_xyz(20.0, 20.0, 0.0), FogBlocker(wall()))).id();
    let plain = app.world_mut().spawn(Transform::from_xyz(1.0, 1.0, 0.0)).id();
    step(&mut app);
    let mirror = app.world().resource::<FogMirror>();
    assert_eq!(mirror.len(), 2, "entities without murk components are not mirrored");
    assert!(mirror.hecs_entity(plain).is_none());
    let ha = mirror.hecs_entity(a).unwrap();
    app.world_mut().get_mut::<Transform>(a).unwrap().translation.x = 12.0;
    app.world_mut().entity_mut(b).remove::<FogBlocker>();
    step(&mut app);
    let mirror = app.world().resource::<FogMirror>();
    assert_eq!(mirror.hecs_entity(a), Some(ha), "a moved entity keeps its mirror");
    assert_eq!(mirror.world().get::<&Position>(ha).unwrap().0.x, 12.0);
    assert!(mirror.hecs_entity(b).is_none(), "an entity that lost its last murk component is no longer mirrored");
    app.world_mut().entity_mut(a).insert(FogAntiVision(murk_core::AntiVision { radius: 2.0, falloff: 0.0, targets: TeamMask::ALL, layer: 0 }));
    step(&mut app);
    let mirror = app.world().resource::<FogMirror>();
    assert!(mirror.world().get::<&murk_core::AntiVision>(ha).is_ok(), "an added component reaches the mirror");
    app.world_mut().despawn(a);
    step(&mut app);
    assert!(app.world().resource::<FogMirror>().is_empty());
}

/// At a frame rate well above the fixed tick's, a despawn several frames
/// before the next tick still reaches the mirror (Bevy keeps removal
/// messages for two frames only).
#[test]
fn despawns_between_fixed_ticks_are_not_missed() {
    let mut app = App::new();
    let frame = Duration::from_micros(u64::from(DT_US) / 8);
    app.add_plugins(MinimalPlugins)
        .insert_resource(Time::<Fixed>::from_duration(Duration::from_micros(u64::from(DT_US))))
        .insert_resource(TimeUpdateStrategy::ManualDuration(frame))
        .add_plugins(MurkPlugin::new(BackendChoice::Cpu).instance(FogInstance::new(desc())));
    let a = app.world_mut().spawn((Transform::from_xyz(10.0, 10.0, 0.0), FogVision::new(5.0))).id();
    let b = app.world_mut().spawn((Transform::from_xyz(30.0, 30.0, 0.0), FogVision::new(5.0), FogBlocker(wall()))).id();
    step(&mut app);
    app.world_mut().despawn(a);
    app.world_mut().entity_mut(b).remove::<FogBlocker>();
    let frames_before = app.world().resource::<MurkFog>().ticks();
    let mut frames = 0;
    while app.world().resource::<MurkFog>().ticks() == frames_before {
        app.update();
        frames += 1;
    }
    assert!(frames > 2, "the next tick came {frames} frames later, after Bevy dropped the removal messages");
    let mirror = app.world().resource::<FogMirror>();
    assert!(mirror.hecs_entity(a).is_none(), "the despawned source left the mirror");
    let hb = mirror.hecs_entity(b).unwrap();
    assert!(mirror.world().get::<&Blocker>(hb).is_err(), "the removed blocker left the mirror");
    assert!(mirror.world().get::<&VisionSource>(hb).is_ok());
}

/// Bad input is a message naming the field, and the tick changes nothing.
#[test]
fn bad_input_is_reported_and_changes_nothing() {
    let mut app = headless(BackendChoice::Cpu);
    let a = app.world_mut().spawn((Transform::from_xyz(10.0, 10.0, 0.0), FogVision::new(5.0))).id();
    step(&mut app);
    let before = app.world_mut().resource_mut::<MurkFog>().subsystem().unwrap().final_mask("ground").unwrap();
    app.world_mut().get_mut::<FogVision>(a).unwrap().source.radius = -1.0;
    app.update();
    let errors: Vec<FogError> = app.world_mut().resource_mut::<Messages<FogError>>().drain().collect();
    assert!(errors.iter().any(|e| e.to_string().contains("radius") && e.to_string().contains("-1")), "{errors:?}");
    let after = app.world_mut().resource_mut::<MurkFog>().subsystem().unwrap().final_mask("ground").unwrap();
    assert_eq!(before, after);
}

/// Snapshots through messages: save, go on, restore, and the state is the
/// saved one (same hash); a backend switch moves the state over.
#[test]
fn snapshots_and_backend_switches_go_through_messages() {
    let mut app = headless(BackendChoice::Cpu);
    let a = app.world_mut().spawn((Transform::from_xyz(10.0, 10.0, 0.0), FogVision::new(8.0))).id();
    for _ in 0..3 {
        step(&mut app);
    }
    app.world_mut().write_message(SaveFog);
    step(&mut app);
    let saved: Vec<FogSaved> = app.world_mut().resource_mut::<Messages<FogSaved>>().drain().collect();
    assert_eq!(saved.len(), 1);
    let hash_then = app.world_mut().resource_mut::<MurkFog>().subsystem().unwrap().lockstep_hash().unwrap();
    app.world_mut().get_mut::<Transform>(a).unwrap().translation.x = 40.0;
    step(&mut app);
    let moved = app.world_mut().resource_mut::<MurkFog>().subsystem().unwrap().lockstep_hash().unwrap();
    assert_ne!(moved, hash_then, "the state moved on");
    app.world_mut().write_message(RestoreFog(saved[0].bytes.clone()));
    step(&mut app);
    // The restore ran after that tick: the subsystem holds the saved state.
    let restored = app.world_mut().resource_mut::<MurkFog>().subsystem().unwrap().lockstep_hash().unwrap();
    assert_eq!(restored, hash_then);
    assert_eq!(app.world_mut().resource_mut::<Messages<FogRestored>>().drain().count(), 1);
    app.world_mut().write_message(RestoreFog(vec![1, 2, 3]));
    step(&mut app);
    let errors: Vec<FogError> = app.world_mut().resource_mut::<Messages<FogError>>().drain().collect();
    assert!(!errors.is_empty(), "a malformed snapshot is refused with a message");
}

/// What a system sees through `FogQueries`.
#[derive(Resource, Default)]
struct Answers {
    near: Option<bool>,
    far: Option<bool>,
    in_sight: Option<bool>,
    polled: Option<Vec<murk_core::MaskAnswer>>,
    handle: Option<murk_core::QueryHandle>,
    clear: Option<bool>,
    walled: Option<bool>,
    lines: Option<Vec<murk_core::SightAnswer>>,
    lines_handle: Option<murk_core::QueryHandle>,
    explored: Option<murk_core::Explored>,
}

fn ask(mut queries: FogQueries, mut answers: ResMut<Answers>) {
    answers.near = queries.is_visible_now(Vec3::new(10.5, 10.5, 0.0)).ok();
    answers.far = queries.is_visible_now(Vec3::new(60.5, 60.5, 0.0)).ok();
    answers.in_sight = queries.in_sight_of(Vec3::new(12.0, 10.0, 0.0), TeamMask::of(&[0]).unwrap()).ok();
    match answers.handle {
        // Submitted once the point is visible, answered at a later poll.
        None if answers.near == Some(true) => answers.handle = queries.submit(&[Vec3::new(10.5, 10.5, 0.0), Vec3::new(500.0, 0.0, 0.0)], None).ok(),
        Some(h) if answers.polled.is_none() => answers.polled = queries.poll(h).ok().flatten(),
        _ => {}
    }
    answers.explored = queries.explored("ground").ok();
    // From the source, along open ground and across the wall at x 30..34.
    let from = Vec3::new(10.5, 10.5, 0.0);
    answers.clear = queries.line_of_sight_now("ground", from, Vec3::new(10.5, 50.5, 0.0), 1.0).ok();
    answers.walled = queries.line_of_sight_now("ground", from, Vec3::new(50.5, 10.5, 0.0), 1.0).ok();
    let lines = [murk_core::SightLine { from, to: Vec3::new(20.5, 10.5, 0.0), eye_height: 1.0 }; 2];
    match answers.lines_handle {
        None => answers.lines_handle = queries.submit_sight_lines("ground", &lines).ok(),
        Some(h) if answers.lines.is_none() => answers.lines = queries.poll_sight_lines(h).ok().flatten(),
        _ => {}
    }
}

/// Visibility questions as a system parameter, in Bevy's coordinates.
#[test]
fn systems_ask_visibility_through_fog_queries() {
    let mut app = headless(BackendChoice::Cpu);
    app.init_resource::<Answers>().add_systems(FixedUpdate, ask.after(MurkSet::Publish));
    app.world_mut().spawn((Transform::from_xyz(10.5, 10.5, 0.0), FogVision::new(8.0)));
    app.world_mut().spawn((
        Transform::from_xyz(32.0, 32.0, 0.0),
        FogBlocker(Blocker::wall(BlockerShape::Rect { size: Vec2::new(4.0, 64.0), yaw_degrees: 0.0 })),
    ));
    for _ in 0..8 {
        step(&mut app);
    }
    let a = app.world().resource::<Answers>();
    assert_eq!(a.clear, Some(true), "nothing between the source and a point along open ground");
    assert_eq!(a.walled, Some(false), "the wall stands between the source and a point behind it");
    let lines = a.lines.as_ref().expect("the submitted sight lines resolved by polling");
    assert!(lines.iter().all(|l| l.visible && l.light == u16::MAX), "{lines:?}");
    let explored = a.explored.expect("the explored count");
    assert!(explored.texels > 0 && explored.of == 64 * 64, "{explored:?}");
    assert_eq!(a.near, Some(true), "the source's own texel is visible");
    assert_eq!(a.far, Some(false), "a far corner is not");
    assert_eq!(a.in_sight, Some(true), "in the radius of a team-0 source");
    let polled = a.polled.as_ref().expect("the submitted batch resolved by polling");
    assert!(matches!(polled[0], murk_core::MaskAnswer::Sampled { visible: true, .. }));
    assert_eq!(polled[1], murk_core::MaskAnswer::NoInstance);
    let memory = app.world_mut().resource_mut::<MurkFog>().subsystem().unwrap().read_texture("ground", murk_core::Texture::Memory).unwrap();
    let murk_core::TextureData::U16(memory) = memory.data else { panic!("memory is u16") };
    assert_eq!(explored.texels, memory.iter().filter(|&&m| m > 0).count() as u64, "a count over the memory");
}

/// A cloaked `FogStealth` actor in plain sight stays hidden until a
/// detector `FogVision` has it in range; the reveal reaches Bevy as a
/// message.
#[test]
fn cloaked_actors_show_once_a_detector_finds_them() {
    let mut app = headless(BackendChoice::Cpu);
    app.world_mut().spawn((Transform::from_xyz(10.5, 10.5, 0.0), FogVision::new(20.0)));
    let spy =
        app.world_mut().spawn((Transform::from_xyz(16.5, 10.5, 0.0), FogStealth(StealthActor { cloaked: true, ..StealthActor::default() }))).id();
    let revealed = |app: &mut App| {
        app.world_mut().resource_mut::<Messages<FogStealthEvent>>().drain().any(|e| e.actor == spy && e.change == StealthChange::Revealed)
    };
    for _ in 0..6 {
        step(&mut app);
        assert!(!revealed(&mut app), "cloaked, and no detector");
    }
    let visible = |app: &App| app.world().resource::<MurkFog>().stealth_visible(thief_hecs(app.world(), spy));
    assert_eq!(visible(&app), Some(false));
    let detector = VisionSource { detects: murk_core::Detection::InRange, ..VisionSource::new(8.0) };
    app.world_mut().spawn((Transform::from_xyz(14.5, 14.5, 0.0), FogVision { source: detector, cone_follows_rotation: false }));
    let mut seen = false;
    for _ in 0..6 {
        step(&mut app);
        seen |= revealed(&mut app);
    }
    assert!(seen, "revealed once the detector has it in range");
    assert_eq!(visible(&app), Some(true));
}

/// A radar instance (sensor layer 1, through walls) beside the sight
/// instance: a tracked unit behind a wall is no one's sight, but a blip on
/// the radar, given in Bevy's coordinates and naming no entity.
#[test]
fn radar_blips_reach_bevy_through_fog_queries() {
    use bevy::ecs::system::RunSystemOnce;
    let radar = InstanceDesc { name: "radar".into(), profile: Profile { layer: 1, see_through: true, blip_error: 1.0, ..desc().profile }, ..desc() };
    let mut app = App::new();
    app.add_plugins(MinimalPlugins)
        .insert_resource(Time::<Fixed>::from_duration(Duration::from_micros(u64::from(DT_US))))
        .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_micros(u64::from(DT_US))))
        .add_plugins(MurkPlugin::new(BackendChoice::Cpu).instance(FogInstance::new(desc())).instance(FogInstance::new(radar)));
    app.world_mut().spawn((
        Transform::from_xyz(32.0, 32.0, 0.0),
        FogBlocker(Blocker::wall(BlockerShape::Rect { size: Vec2::new(4.0, 64.0), yaw_degrees: 0.0 })),
    ));
    app.world_mut().spawn((Transform::from_xyz(10.5, 32.5, 0.0), FogVision::new(40.0)));
    app.world_mut().spawn((
        Transform::from_xyz(10.5, 32.5, 0.0),
        FogVision { source: VisionSource { layer: 1, ..VisionSource::new(50.0) }, cone_follows_rotation: false },
    ));
    app.world_mut().spawn((Transform::from_xyz(50.5, 30.5, 0.0), FogTracked(Tracked::new(0.5))));
    for _ in 0..6 {
        step(&mut app);
    }
    let blips = app.world_mut().run_system_once(|mut q: FogQueries| q.blips("radar")).unwrap().unwrap();
    assert_eq!(blips.len(), 1, "{blips:?}");
    assert!((blips[0].x - 50.5).abs() <= 1.0 && (blips[0].y - 30.5).abs() <= 1.0, "{blips:?}");
    let sight = app.world_mut().run_system_once(|mut q: FogQueries| q.blips("ground").is_err()).unwrap();
    assert!(sight, "a sight instance has no blips");
}

/// On the CPU the mask image is uploaded only when the mask changed: a
/// scene that settled modifies no image.
#[test]
fn the_mask_image_is_uploaded_only_when_it_changes() {
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, AssetPlugin::default(), ImagePlugin::default()))
        .insert_resource(Time::<Fixed>::from_duration(Duration::from_micros(u64::from(DT_US))))
        .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_micros(u64::from(DT_US))))
        .add_plugins(MurkPlugin::new(BackendChoice::Cpu).instance(FogInstance::new(desc())));
    app.world_mut().spawn((Transform::from_xyz(20.5, 20.5, 0.0), FogVision::new(8.0)));
    let mut modified = Vec::new();
    for _ in 0..60 {
        step(&mut app);
        let events: Vec<AssetEvent<Image>> = app.world_mut().resource_mut::<Messages<AssetEvent<Image>>>().drain().collect();
        modified.push(events.iter().filter(|e| matches!(e, AssetEvent::Modified { .. })).count());
    }
    let images = app.world().resource::<FogImages>();
    let handle = images.image("ground").expect("an image for the instance").clone();
    let mask = app.world_mut().resource_mut::<MurkFog>().subsystem().unwrap().final_mask("ground").unwrap();
    let image = app.world().resource::<Assets<Image>>().get(&handle).expect("the image exists");
    assert_eq!((image.width(), image.height()), (64, 64));
    assert_eq!(image.data.as_deref(), Some(murk_bevy::mask_texels(&mask).as_slice()), "the image holds the final mask");
    assert!(modified[..10].iter().sum::<usize>() > 0, "the fade-in uploaded: {modified:?}");
    assert_eq!(modified[50..].iter().sum::<usize>(), 0, "a settled scene uploads nothing: {modified:?}");
}

/// An instance can take its settings from the CLI's profile files, loaded
/// as assets; it waits for the file, then runs with what it says.
#[test]
fn instances_take_their_settings_from_profile_files() {
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, AssetPlugin { file_path: "../scenarios".into(), ..default() }))
        .insert_resource(Time::<Fixed>::from_duration(Duration::from_micros(u64::from(DT_US))))
        .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_micros(u64::from(DT_US))))
        .add_plugins(MurkPlugin::new(BackendChoice::Cpu));
    let profile: Handle<FogProfile> = app.world().resource::<AssetServer>().load("outpost.profile.toml");
    app.world_mut().resource_mut::<FogInstances>().insert(FogInstance::new(desc()).with_profile(profile));
    let expected = Profile::load(std::path::Path::new("../scenarios/outpost.profile.toml")).unwrap();
    for _ in 0..500 {
        app.update();
        if app.world().resource::<MurkFog>().instances().contains_key("ground") {
            break;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    let fog = app.world().resource::<MurkFog>();
    let running = fog.instances().get("ground").expect("the instance was created once its profile loaded");
    assert_eq!(running.profile, expected);
    assert_ne!(running.profile, desc().profile, "the file's settings, not the description's");
}

/// A refused backend is a message, not a panic, and a switch to another
/// one starts murk (no GPU test runs in this process without `--ignored`,
/// so the variable that refuses murk's own device touches no other test).
#[test]
fn a_refused_backend_is_reported_and_a_switch_starts_murk() {
    std::env::set_var(murk_gpu::BACKEND_VAR, "no-such-backend");
    let mut app = headless(BackendChoice::Gpu);
    app.world_mut().spawn((Transform::from_xyz(10.0, 10.0, 0.0), FogVision::new(5.0)));
    let mut errors: Vec<FogError> = Vec::new();
    for _ in 0..5 {
        app.update();
        errors.extend(app.world_mut().resource_mut::<Messages<FogError>>().drain());
    }
    std::env::remove_var(murk_gpu::BACKEND_VAR);
    assert!(errors.iter().any(|e| e.to_string().contains("no-such-backend")), "the error names the value: {errors:?}");
    assert!(app.world().resource::<MurkFog>().backend_name().is_none(), "nothing runs");
    app.world_mut().write_message(SwitchBackend(BackendChoice::Cpu));
    app.update();
    step(&mut app);
    let fog = app.world().resource::<MurkFog>();
    assert!(fog.backend_name().is_some_and(|n| n.starts_with("cpu")), "{:?}", fog.backend_name());
    assert!(fog.instances().contains_key("ground"), "the instances were created on the new backend");
}

/// Sight sets reach Bevy: `FogSightEvent`s as a tracked unit walks into a
/// scout's sight and out again, `observers_of` and `visible_to` about Bevy
/// entities, per-observer stealth transitions as `FogObserverStealthEvent`s,
/// and a unit despawned while seen leaves with its own entity named.
#[test]
fn sight_sets_and_observer_stealth_reach_bevy_as_messages() {
    sight_messages(BackendChoice::Cpu);
}

#[test]
#[ignore = "needs a GPU adapter: cargo test -p murk-bevy -- --ignored"]
fn sight_sets_and_observer_stealth_reach_bevy_as_messages_on_the_gpu() {
    sight_messages(BackendChoice::Gpu);
}

fn sight_messages(choice: BackendChoice) {
    let mut app = headless(choice);
    app.world_mut().spawn((Transform::from_xyz(10.5, 32.5, 0.0), FogVision::new(10.0)));
    let stealth = StealthActor { per_observer: true, ..StealthActor::default() };
    let unit = app.world_mut().spawn((Transform::from_xyz(40.5, 32.5, 0.0), FogTracked(Tracked::new(1.0)), FogStealth(stealth))).id();
    let other = app.world_mut().spawn((Transform::from_xyz(12.5, 30.5, 0.0), FogTracked(Tracked::new(0.0)))).id();
    let (mut sight, mut stealth_events) = (Vec::new(), Vec::new());
    let mut seen_while_near = false;
    for tick in 0..40 {
        // The unit walks to the scout, then away again.
        let x = if tick < 20 { 40.5 - tick as f32 * 1.5 } else { 10.5 + (tick - 20) as f32 * 1.5 };
        app.world_mut().get_mut::<Transform>(unit).unwrap().translation.x = x;
        step(&mut app);
        sight.extend(app.world().resource::<Messages<FogSightEvent>>().iter_current_update_messages().cloned());
        stealth_events.extend(app.world().resource::<Messages<FogObserverStealthEvent>>().iter_current_update_messages().cloned());
        let fog = app.world().resource::<MurkFog>();
        let mirror = app.world().resource::<FogMirror>();
        let seen = fog.visible_to(mirror, "ground").unwrap();
        assert_eq!(seen.contains(&unit), fog.observers_of(mirror, unit) == vec!["ground".to_string()], "tick {tick}");
        seen_while_near |= tick == 19 && seen.contains(&unit);
    }
    let of = |e: Entity| sight.iter().filter(|s| s.entity == e).map(|s| s.entered).collect::<Vec<_>>();
    assert_eq!(of(unit), vec![true, false], "the unit entered and left once: {sight:?}");
    assert_eq!(of(other), vec![true], "the unit beside the scout entered once");
    assert!(seen_while_near, "the unit was in the set beside the scout");
    assert!(sight.iter().all(|s| s.observer == "ground"));
    let changes: Vec<StealthChange> = stealth_events.iter().filter(|s| s.actor == unit && s.observer == "ground").map(|s| s.change).collect();
    assert!(changes.contains(&StealthChange::Revealed) && changes.contains(&StealthChange::Hidden), "{changes:?}");
    assert!(
        app.world().resource::<Messages<FogStealthEvent>>().iter_current_update_messages().all(|s| s.actor != unit),
        "a per-observer actor has no single-observer events"
    );
    app.world_mut().despawn(other);
    step(&mut app);
    let left: Vec<FogSightEvent> = app.world().resource::<Messages<FogSightEvent>>().iter_current_update_messages().cloned().collect();
    assert_eq!(left, vec![FogSightEvent { observer: "ground".into(), entity: other, entered: false }], "a despawned unit leaves by name");
    assert!(app.world().resource::<MurkFog>().visible_to(app.world().resource::<FogMirror>(), "nowhere").is_err(), "an unknown observer is named");
}

/// A client draws through its own team's eyes: with `FogViewer`, a
/// per-observer actor fades and hides by that observer's state, and
/// ghosts of other observers are hidden; an unknown viewer is named.
#[test]
fn the_viewer_decides_how_per_observer_actors_and_ghosts_are_drawn() {
    viewer_draws(BackendChoice::Cpu);
}

#[test]
#[ignore = "needs a GPU adapter: cargo test -p murk-bevy -- --ignored"]
fn the_viewer_decides_how_per_observer_actors_and_ghosts_are_drawn_on_the_gpu() {
    viewer_draws(BackendChoice::Gpu);
}

fn viewer_draws(choice: BackendChoice) {
    let run = |viewer: Option<&str>| -> (Vec<bool>, Vec<(String, bool)>, Vec<FogError>) {
        let mut app = App::new();
        let mut murk = MurkPlugin::new(choice);
        for (name, team) in [("red", 0u8), ("blue", 1)] {
            murk = murk.instance(FogInstance::new(InstanceDesc { name: name.into(), observed_teams: TeamMask::of(&[team]).unwrap(), ..desc() }));
        }
        app.add_plugins(MinimalPlugins)
            .insert_resource(Time::<Fixed>::from_duration(Duration::from_micros(u64::from(DT_US))))
            .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_micros(u64::from(DT_US))))
            .insert_resource(FogViewer(viewer.map(String::from)))
            .add_plugins(murk);
        app.world_mut().spawn((Transform::from_xyz(10.5, 32.5, 0.0), FogVision::new(12.0)));
        let stealth = StealthActor { per_observer: true, hide_mode: HideMode::FreezeWithGhost, ..StealthActor::default() };
        let actor = app.world_mut().spawn((Transform::from_xyz(14.5, 32.5, 0.0), FogStealth(stealth), FogHideWhenUnseen)).id();
        let (mut shown, mut errors) = (Vec::new(), Vec::new());
        for tick in 0..24 {
            if tick == 10 {
                app.world_mut().get_mut::<Transform>(actor).unwrap().translation.x = 50.5;
            }
            step(&mut app);
            shown.push(*app.world().get::<Visibility>(actor).unwrap() != Visibility::Hidden);
            errors.extend(app.world().resource::<Messages<FogError>>().iter_current_update_messages().cloned());
        }
        let ghosts = app
            .world_mut()
            .query::<(&FogGhostObserver, &Visibility)>()
            .iter(app.world())
            .map(|(o, v)| (o.0.clone(), *v != Visibility::Hidden))
            .collect();
        (shown, ghosts, errors)
    };
    let (red, red_ghosts, errors) = run(Some("red"));
    assert!(errors.is_empty(), "{errors:?}");
    assert!(red[5] && !red[20], "red sees the actor beside its scout, then not: {red:?}");
    assert!(red_ghosts.contains(&("red".into(), true)), "red's ghost is drawn for red: {red_ghosts:?}");
    assert!(red_ghosts.iter().all(|(o, shown)| *shown == (o == "red")), "only red's ghosts are drawn: {red_ghosts:?}");
    let (blue, blue_ghosts, _) = run(Some("blue"));
    assert!(blue[5..].iter().all(|s| !s), "blue never sees the actor: {blue:?}");
    assert!(blue_ghosts.iter().any(|(o, shown)| o == "red" && !shown), "red's ghost is hidden from blue: {blue_ghosts:?}");
    let (_, _, errors) = run(Some("green"));
    assert!(errors.iter().any(|e| e.to_string().contains("FogViewer = green")), "{errors:?}");
}

/// The fade reaches a built-in 3D material: a unit fading in gets its own
/// copy of its `StandardMaterial` (the shared one is untouched), whose
/// alpha is its own alpha times the fade and which blends while partly
/// faded, then takes back its own alpha mode once fully shown.
#[test]
fn a_standard_material_fades_with_its_unit() {
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, AssetPlugin::default()))
        .init_asset::<Image>()
        .init_asset::<StandardMaterial>()
        .insert_resource(Time::<Fixed>::from_duration(Duration::from_micros(u64::from(DT_US))))
        .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_micros(u64::from(DT_US))))
        .add_plugins(MurkPlugin::new(BackendChoice::Cpu).instance(FogInstance::new(desc())));
    let shared = StandardMaterial { base_color: Color::srgba(0.2, 0.3, 0.4, 0.8), alpha_mode: AlphaMode::Opaque, ..default() };
    let shared = app.world_mut().resource_mut::<Assets<StandardMaterial>>().add(shared);
    app.world_mut().spawn((Transform::from_xyz(32.5, 32.5, 0.0), FogVision::new(30.0)));
    let stealth = FogStealth(StealthActor { fade_seconds: 0.5, ..StealthActor::default() });
    let unit = app.world_mut().spawn((Transform::from_xyz(30.5, 30.5, 0.0), stealth, FogHideWhenUnseen, MeshMaterial3d(shared.clone()))).id();
    let other = app.world_mut().spawn((Transform::from_xyz(5.0, 5.0, 0.0), MeshMaterial3d(shared.clone()))).id();
    let state = |app: &App| {
        let fade = app.world().get::<FogFade>(unit).map(|f| f.0);
        let handle = app.world().get::<MeshMaterial3d<StandardMaterial>>(unit).unwrap().0.clone();
        let m = app.world().resource::<Assets<StandardMaterial>>().get(&handle).unwrap().clone();
        (fade, handle, m.base_color.alpha(), m.alpha_mode)
    };
    let mut partly = None;
    for _ in 0..40 {
        step(&mut app);
        app.update();
        let (fade, handle, alpha, mode) = state(&app);
        if let Some(f) = fade.filter(|f| *f > 0.0 && *f < 1.0) {
            partly = Some((f, handle, alpha, mode));
        }
        if fade == Some(1.0) {
            break;
        }
    }
    let (f, handle, alpha, mode) = partly.expect("the unit was partly faded in on some tick");
    assert_ne!(handle, shared, "the fading unit has its own material");
    assert!((alpha - 0.8 * f).abs() < 1e-6 && mode == AlphaMode::Blend, "partly faded: alpha {alpha} at fade {f}, {mode:?}");
    let (fade, _, alpha, mode) = state(&app);
    assert_eq!(fade, Some(1.0), "the unit faded in fully");
    assert!((alpha - 0.8).abs() < 1e-6 && mode == AlphaMode::Opaque, "fully shown: its own alpha {alpha} and mode {mode:?}");
    let materials = app.world().resource::<Assets<StandardMaterial>>();
    let untouched = materials.get(&shared).unwrap();
    assert!((untouched.base_color.alpha() - 0.8).abs() < 1e-6 && untouched.alpha_mode == AlphaMode::Opaque, "the shared material is untouched");
    assert_eq!(app.world().get::<MeshMaterial3d<StandardMaterial>>(other).unwrap().0, shared);
}

/// Reveals, hides, memory and rollback states from a system, through the
/// `FogControl` parameter: a reveal far from every source is seen, a hide
/// of everything forgets it, memory goes out and back in, and a state
/// saved, ticked past and loaded gives back its lockstep hash.
#[test]
fn reveals_memory_and_rollback_states_from_a_system() {
    use bevy::ecs::system::RunSystemOnce;
    use murk_core::{BlockerShape, FogTarget, Reveal, RevealArea, RevealKind};
    let mut app = headless(BackendChoice::Cpu);
    app.world_mut().spawn((Transform::from_xyz(8.5, 8.5, 0.0), FogVision::new(6.0)));
    // Before murk starts, every call is an error.
    let early = app.world_mut().run_system_once(|mut c: FogControl| c.lockstep_hash().is_err()).unwrap();
    assert!(early, "no subsystem yet");
    step(&mut app);
    let value_at = |app: &mut App, x: usize, y: usize| -> u16 {
        app.world_mut().resource_mut::<MurkFog>().subsystem().unwrap().final_mask("ground").unwrap()[y * 64 + x]
    };
    let scan = Reveal {
        area: RevealArea::Shape { at: Vec2::new(50.0, 50.0), shape: BlockerShape::Circle { radius: 5.0 } },
        kind: RevealKind::Sight { remember: true },
        fade_ticks: 0,
        ticks: Some(3),
    };
    app.world_mut()
        .run_system_once(move |mut c: FogControl| c.reveal(&FogTarget::Instance("ground".into()), scan.clone()).map(drop))
        .unwrap()
        .unwrap();
    for _ in 0..6 {
        step(&mut app);
    }
    assert!(value_at(&mut app, 50, 50) > 0, "the scanned ground is explored");
    let blob = app.world_mut().run_system_once(|mut c: FogControl| c.export_memory("ground")).unwrap().unwrap();
    app.world_mut().run_system_once(|mut c: FogControl| c.hide_all(&FogTarget::Instance("ground".into()))).unwrap().unwrap();
    for _ in 0..6 {
        step(&mut app);
    }
    assert_eq!(value_at(&mut app, 50, 50), 0, "hidden: forgotten");
    app.world_mut().run_system_once(move |mut c: FogControl| c.import_memory("ground", &blob)).unwrap().unwrap();
    for _ in 0..6 {
        step(&mut app);
    }
    assert!(value_at(&mut app, 50, 50) > 0, "the memory came back");
    let (state, hash) = app.world_mut().run_system_once(|mut c: FogControl| (c.save_state().unwrap(), c.lockstep_hash().unwrap())).unwrap();
    for _ in 0..3 {
        step(&mut app);
    }
    let after = app.world_mut().run_system_once(move |mut c: FogControl| {
        c.load_state(&state).unwrap();
        c.lockstep_hash().unwrap()
    });
    assert_eq!(after.unwrap(), hash, "the loaded state hashes as it did when saved");
    let bad = app.world_mut().run_system_once(|mut c: FogControl| c.export_memory("nowhere").unwrap_err().to_string()).unwrap();
    assert!(bad.contains("nowhere"), "{bad}");
}
