//! A headless game server and three clients in one process, on
//! `bevy_replicon` (its in-process test connection between apps), judged
//! independently: murk decides what each client is sent, and on every tick
//! the test works out by itself (`murk_conformance::judge`, from the
//! scouts, the wall and where the units stood two ticks before) which units
//! each team sees, and holds each client to exactly those:
//!
//! - a client holds a unit (with its replicated `Transform` and `Health`)
//!   if and only if the judge saw it two ticks before, the documented
//!   latency (a per-observer stealth actor also while its state for that
//!   team does not hide it), so nothing outside a team's sight is sent and
//!   a unit leaves within the latency; a unit that dies leaves at once;
//! - a client that joins late holds the same from its first tick;
//! - every ghost a client holds is its own team's, and shows the health
//!   that team last saw.

use bevy::prelude::*;
use bevy::state::app::StatesPlugin;
use bevy::time::TimeUpdateStrategy;
use bevy_replicon::prelude::*;
use bevy_replicon::test_app::ServerTestAppExt;
use murk_bevy::prelude::*;
use murk_bevy::{FogGhostPayloadPlugin, FogObserver, MurkReplicationPlugin};
use murk_conformance::judge::{Eye, Scene, Wall};
use murk_core::HideMode;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

/// A unit's id, replicated.
#[derive(Component, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
struct Unit(u32);

/// A unit's health, replicated; ghosts carry it as last seen.
#[derive(Component, Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Health(u32);

/// On a ghost: the unit it stands in for, replicated.
#[derive(Component, Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct GhostOf(u32);

/// How a unit walks: its start and its step per tick.
#[derive(Component, Clone, Copy)]
struct Walk(Vec2, Vec2);

/// Where every scout and unit stood when murk read them, tick by tick
/// (taken from Bevy's own transforms, right before murk mirrors them).
#[derive(Resource, Default)]
struct Stood(Vec<(Vec<Eye>, BTreeMap<u32, Vec2>)>);

const DT: Duration = Duration::from_millis(50);
const TEAMS: [(&str, u8); 2] = [("red", 0), ("blue", 1)];
const FOOTPRINT: f32 = 1.0;
/// The wall down the middle of the field, with a gap at y 28..36.
const WALLS: [([i64; 2], [i64; 2]); 2] = [([30, 4], [32, 28]), ([30, 36], [32, 60])];
/// Units that are per-observer stealth actors.
const STEALTHY: [u32; 2] = [1, 4];

fn registered(app: &mut App) -> &mut App {
    app.replicate::<Transform>().replicate::<Unit>().replicate::<Health>().replicate::<GhostOf>()
}

fn server() -> App {
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, StatesPlugin, RepliconPlugins.set(ServerPlugin::new(PostUpdate))))
        .insert_resource(Time::<Fixed>::from_duration(DT))
        .insert_resource(TimeUpdateStrategy::ManualDuration(DT))
        .init_resource::<Stood>();
    let mut murk = MurkPlugin::new(BackendChoice::Cpu);
    for (name, team) in TEAMS {
        // One unit a texel from the origin, one height unit a world unit:
        // the judge's grid.
        let area = Area { center: Vec3::new(32.0, 32.0, 128.0), extents: Vec3::new(64.0, 64.0, 256.0), yaw_degrees: 0.0 };
        let profile = Profile { fade_in_rate: 10.0, relax_rate: 10.0, ..Profile::default() };
        let desc = InstanceDesc { name: name.into(), area, resolution: 64, lod: 0, observed_teams: TeamMask::of(&[team]).unwrap(), profile };
        murk = murk.instance(FogInstance::new(desc));
    }
    app.add_plugins((murk, FogGhostPayloadPlugin::<Health>::new("health"), MurkReplicationPlugin));
    registered(&mut app)
        .add_systems(FixedUpdate, (walk, record).chain().before(MurkSet::Mirror))
        .add_systems(FixedUpdate, name_ghosts.after(MurkSet::Publish));
    app.finish();
    for (min, max) in WALLS {
        let size = Vec2::new((max[0] - min[0]) as f32, (max[1] - min[1]) as f32);
        let centre = Vec2::new(min[0] as f32, min[1] as f32) + size / 2.0;
        let wall = Blocker::wall(BlockerShape::Rect { size, yaw_degrees: 0.0 });
        app.world_mut().spawn((Transform::from_translation(centre.extend(0.0)), FogBlocker(wall)));
    }
    // Scouts: red's in the west, blue's in the east.
    for (x, y, team) in [(12.5, 20.5, 0u8), (14.5, 44.5, 0), (26.5, 32.5, 0), (52.5, 30.5, 1), (40.5, 50.5, 1)] {
        let source = VisionSource { team, falloff: Some(0.0), ..VisionSource::new(14.0) };
        app.world_mut().spawn((Transform::from_xyz(x, y, 0.0), FogVision { source, cone_follows_rotation: false }));
    }
    // Units walking across the field (on eighths of a unit, as the judge
    // takes them), two of them per-observer stealth actors.
    for i in 0..6u32 {
        let start = Vec2::new(4.5 + 9.0 * i as f32, 8.5 + 8.0 * i as f32);
        let step = Vec2::new(if i % 2 == 0 { 0.375 } else { -0.25 }, if i % 3 == 0 { 0.25 } else { -0.125 });
        let mut unit = app.world_mut().spawn((
            Transform::from_translation(start.extend(0.0)),
            Walk(start, step),
            Unit(i),
            Health(100),
            FogTracked(Tracked::new(FOOTPRINT)),
            Replicated,
        ));
        if STEALTHY.contains(&i) {
            unit.insert(FogStealth(StealthActor { hide_mode: HideMode::FreezeWithGhost, per_observer: true, ..StealthActor::default() }));
        }
    }
    app
}

fn client() -> App {
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, StatesPlugin, RepliconPlugins));
    registered(&mut app).finish();
    app
}

/// Units walk back and forth, and lose health every 7 ticks.
fn walk(mut units: Query<(&mut Transform, &Walk, &mut Health)>, mut tick: Local<u32>) {
    *tick += 1;
    let phase = (*tick % 80) as f32;
    let along = if phase < 40.0 { phase } else { 80.0 - phase };
    for (mut t, Walk(start, step), mut health) in &mut units {
        let p = *start + *step * along * 2.0;
        t.translation = Vec3::new(p.x.clamp(1.0, 63.0), p.y.clamp(1.0, 63.0), 0.0);
        if (*tick).is_multiple_of(7) {
            health.0 = health.0.saturating_sub(3);
        }
    }
}

/// Keeps where the scouts and units stand as murk is about to read them
/// (it reads the transforms, propagated as it propagates them).
fn record(scouts: Query<(&Transform, &FogVision)>, units: Query<(&Transform, &Unit)>, mut stood: ResMut<Stood>) {
    let eyes = scouts
        .iter()
        .map(|(t, v)| Eye { at: t.translation.truncate(), eye: 0, radius: v.source.radius, team: v.source.team, see_through: false })
        .collect();
    stood.0.push((eyes, units.iter().map(|(t, u)| (u.0, t.translation.truncate())).collect()));
}

/// Ghosts name the unit they stand in for (the game's own marker).
fn name_ghosts(mut commands: Commands, ghosts: Query<(Entity, &FogGhost), Without<GhostOf>>, units: Query<&Unit>) {
    for (e, ghost) in &ghosts {
        if let Ok(unit) = units.get(ghost.actor) {
            commands.entity(e).insert(GhostOf(unit.0));
        }
    }
}

/// The units team `team` (instance `name`) may be sent after murk's tick
/// `tick`: those the judge saw at tick `tick - 2` that still exist, less the
/// stealth actors whose state for that team hides them.
fn judged(server: &mut App, tick: usize, name: &str, team: u8) -> BTreeSet<u32> {
    if tick < 2 {
        return BTreeSet::new();
    }
    let (eyes, units) = server.world().resource::<Stood>().0[tick - 2].clone();
    let walls = WALLS.iter().map(|&(min, max)| Wall { min, max, top: None }).collect();
    let scene = Scene { width: 64, height: 64, eyes, walls, reveal_walls: true, ..Scene::default() };
    let alive: Vec<(Entity, u32)> = server.world_mut().query::<(Entity, &Unit)>().iter(server.world()).map(|(e, u)| (e, u.0)).collect();
    let mirrored: Vec<(u32, Option<hecs::Entity>)> =
        alive.iter().map(|(e, u)| (*u, server.world().resource::<FogMirror>().hecs_entity(*e))).collect();
    let mut fog = server.world_mut().resource_mut::<MurkFog>();
    let sub = fog.subsystem().expect("murk runs");
    mirrored
        .into_iter()
        .filter(|(u, _)| units.get(u).is_some_and(|at| scene.sees(TeamMask::of(&[team]).unwrap(), *at, FOOTPRINT)))
        .filter(|(u, h)| !STEALTHY.contains(u) || h.and_then(|h| sub.stealth_state_for(h, name)).is_none_or(|s| s.last_visible))
        .map(|(u, _)| u)
        .collect()
}

#[test]
fn each_client_holds_what_the_independent_judge_says_its_team_sees() {
    const TICKS: usize = 120;
    const LATE: usize = 41;
    let mut server = server();
    // Red, blue, and a second red player who joins late.
    let mut clients = [(client(), 0, None), (client(), 1, None), (client(), 0, Some(LATE))];
    let connect = |server: &mut App, client: &mut App, team: usize| {
        server.connect_client(client);
        let entity = **client.world().resource::<bevy_replicon::test_app::TestClientEntity>();
        server.world_mut().entity_mut(entity).insert(FogObserver(TEAMS[team].0.into()));
    };
    for (client, team, late) in &mut clients {
        if late.is_none() {
            connect(&mut server, client, *team);
        }
    }
    let (mut held_views, mut ghost_views, mut stale_ghosts, mut hidden_views) = (0usize, 0usize, 0usize, 0usize);
    for tick in 0..TICKS {
        if tick == TICKS / 2 {
            // Unit 3 dies.
            let dead: Vec<Entity> =
                server.world_mut().query::<(Entity, &Unit)>().iter(server.world()).filter(|(_, u)| u.0 == 3).map(|(e, _)| e).collect();
            for e in dead {
                server.world_mut().despawn(e);
            }
        }
        for (client, team, late) in &mut clients {
            if *late == Some(tick) {
                connect(&mut server, client, *team);
            }
        }
        server.update();
        for (client, _, late) in &mut clients {
            if late.is_none_or(|l| l <= tick) {
                server.exchange_with_client(client);
                client.update();
            }
        }
        let server_units: BTreeMap<u32, (Transform, Health)> =
            server.world_mut().query::<(&Unit, &Transform, &Health)>().iter(server.world()).map(|(u, t, h)| (u.0, (*t, *h))).collect();
        let server_ghosts: Vec<(u32, String, Health)> = server
            .world_mut()
            .query::<(&GhostOf, &FogGhostObserver, &Health)>()
            .iter(server.world())
            .map(|(g, o, h)| (g.0, o.0.clone(), *h))
            .collect();
        for (k, (client, team, late)) in clients.iter_mut().enumerate() {
            if late.is_some_and(|l| l > tick) {
                continue;
            }
            let (name, team_bits) = TEAMS[*team];
            // murk's tick: one per fixed tick run so far (the first update
            // may run none or several).
            let fixed = server.world().resource::<Stood>().0.len();
            let want = judged(&mut server, fixed.saturating_sub(1), name, team_bits);
            let held: BTreeMap<u32, (Transform, Health)> =
                client.world_mut().query::<(&Unit, &Transform, &Health)>().iter(client.world()).map(|(u, t, h)| (u.0, (*t, *h))).collect();
            let ids: BTreeSet<u32> = held.keys().copied().collect();
            assert_eq!(ids, want, "tick {tick}: client {k} of {name} holds units {ids:?}, the judge says its team sees {want:?}");
            for (u, state) in &held {
                assert_eq!(Some(state), server_units.get(u), "tick {tick}: client {k} holds unit {u} with the server's transform and health");
            }
            held_views += held.len();
            hidden_views += server_units.len() - held.len();
            for (of, health) in client.world_mut().query::<(&GhostOf, &Health)>().iter(client.world()) {
                let own = server_ghosts.iter().find(|(g, o, _)| *g == of.0 && o == name);
                let Some((_, _, last_seen)) = own else {
                    panic!("tick {tick}: client {k} of {name} holds a ghost of unit {} that is not its team's", of.0)
                };
                assert_eq!(health, last_seen, "tick {tick}: {name}'s ghost of unit {} shows the health {name} last saw", of.0);
                ghost_views += 1;
                if server_units.get(&of.0).is_some_and(|(_, h)| h != health) {
                    stale_ghosts += 1;
                }
            }
        }
    }
    assert!(held_views > 100 && hidden_views > 100, "units were both sent and kept back: {held_views} sent, {hidden_views} kept back");
    assert!(ghost_views > 0 && stale_ghosts > 0, "ghosts reached their team, some with an older health: {ghost_views} ({stale_ghosts} older)");
}
