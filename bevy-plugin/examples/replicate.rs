//! A headless game server and two clients in one process, on `bevy_replicon`
//! (its in-process test connection between apps): murk decides what each
//! client is sent. Team red's scouts and team blue's scouts watch a field
//! where six units walk, hide behind the fog, get hurt and die. Every tick
//! the example checks, on both clients, that
//!
//! - every unit a client holds is one its team's instance sees on the
//!   server this tick (nothing outside its team's sight was sent), and
//! - every ghost a client holds is its own team's, and shows the health
//!   the team last saw, not the unit's health now.
//!
//! It fails (a non-zero exit) on the first leak. CI runs it for 120 ticks:
//! `cargo run -p murk-bevy --example replicate -- --ticks 120`.

use bevy::prelude::*;
use bevy::state::app::StatesPlugin;
use bevy::time::TimeUpdateStrategy;
use bevy_replicon::prelude::*;
use bevy_replicon::test_app::ServerTestAppExt;
use murk_bevy::prelude::*;
use murk_bevy::{FogGhostPayloadPlugin, FogObserver, MurkReplicationPlugin};
use murk_core::HideMode;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
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

const DT: Duration = Duration::from_millis(50);
const TEAMS: [(&str, u8); 2] = [("red", 0), ("blue", 1)];

fn registered(app: &mut App) -> &mut App {
    app.replicate::<Unit>().replicate::<Health>().replicate::<GhostOf>()
}

fn server() -> App {
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, StatesPlugin, RepliconPlugins.set(ServerPlugin::new(PostUpdate))))
        .insert_resource(Time::<Fixed>::from_duration(DT))
        .insert_resource(TimeUpdateStrategy::ManualDuration(DT));
    let mut murk = MurkPlugin::new(BackendChoice::Cpu);
    for (name, team) in TEAMS {
        let area = Area { center: Vec3::new(32.0, 32.0, 5.0), extents: Vec3::new(64.0, 64.0, 10.0), yaw_degrees: 0.0 };
        let profile = Profile { fade_in_rate: 10.0, relax_rate: 10.0, ..Profile::default() };
        let desc = InstanceDesc { name: name.into(), area, resolution: 64, lod: 0, observed_teams: TeamMask::of(&[team]), profile };
        murk = murk.instance(FogInstance::new(desc));
    }
    app.add_plugins((murk, FogGhostPayloadPlugin::<Health>::new("health"), MurkReplicationPlugin));
    registered(&mut app).add_systems(FixedUpdate, walk.before(MurkSet::Mirror)).add_systems(FixedUpdate, name_ghosts.after(MurkSet::Publish));
    app.finish();
    // Scouts: red's in the west, blue's in the east.
    for (x, y, team) in [(12.5, 20.5, 0u8), (14.5, 44.5, 0), (52.5, 30.5, 1)] {
        let vision = FogVision { source: VisionSource { team, ..VisionSource::new(14.0) }, cone_follows_rotation: false };
        app.world_mut().spawn((Transform::from_xyz(x, y, 0.0), vision));
    }
    // Units walking across the field, each a per-observer stealth actor.
    for i in 0..6u32 {
        let start = Vec2::new(4.5 + 9.0 * i as f32, 8.5 + 8.0 * i as f32);
        let step = Vec2::new(if i % 2 == 0 { 0.4 } else { -0.3 }, if i % 3 == 0 { 0.25 } else { -0.2 });
        let stealth = StealthActor { hide_mode: HideMode::FreezeWithGhost, per_observer: true, ..StealthActor::default() };
        app.world_mut().spawn((
            Transform::from_translation(start.extend(0.0)),
            Walk(start, step),
            Unit(i),
            Health(100),
            FogTracked(Tracked { footprint: 1.0 }),
            FogStealth(stealth),
            Replicated,
        ));
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

/// Ghosts name the unit they stand in for (the game's own marker).
fn name_ghosts(mut commands: Commands, ghosts: Query<(Entity, &FogGhost), Without<GhostOf>>, units: Query<&Unit>) {
    for (e, ghost) in &ghosts {
        if let Ok(unit) = units.get(ghost.actor) {
            commands.entity(e).insert(GhostOf(unit.0));
        }
    }
}

fn main() {
    let ticks: u32 = std::env::args().skip_while(|a| a != "--ticks").nth(1).map_or(120, |t| t.parse().expect("--ticks takes a number"));
    let mut server = server();
    let mut clients = [client(), client()];
    for (client, (team, _)) in clients.iter_mut().zip(TEAMS) {
        server.connect_client(client);
        let entity = **client.world().resource::<bevy_replicon::test_app::TestClientEntity>();
        server.world_mut().entity_mut(entity).insert(FogObserver(team.into()));
    }
    let (mut seen_units, mut seen_ghosts, mut stale_ghosts, mut killed) = (0usize, 0usize, 0usize, false);
    for tick in 0..ticks {
        if tick == ticks / 2 && !killed {
            // Unit 3 dies.
            let dead: Vec<Entity> =
                server.world_mut().query::<(Entity, &Unit)>().iter(server.world()).filter(|(_, u)| u.0 == 3).map(|(e, _)| e).collect();
            for e in dead {
                server.world_mut().despawn(e);
            }
            killed = true;
        }
        server.update();
        for client in &mut clients {
            server.exchange_with_client(client);
            client.update();
        }
        for (client, (team, _)) in clients.iter_mut().zip(TEAMS) {
            // What the server's murk says this team sees now.
            let allowed: BTreeSet<u32> = {
                let mut units = server.world_mut().query::<(Entity, &Unit)>();
                let pairs: Vec<(Entity, u32)> = units.iter(server.world()).map(|(e, u)| (e, u.0)).collect();
                let mirror = server.world().resource::<FogMirror>();
                let hecs: Vec<(Option<hecs::Entity>, u32)> = pairs.iter().map(|(e, u)| (mirror.hecs_entity(*e), *u)).collect();
                let mut fog = server.world_mut().resource_mut::<MurkFog>();
                let sub = fog.subsystem().expect("murk runs");
                hecs.into_iter().filter(|(h, _)| h.is_some_and(|h| sub.sees(team, h).unwrap_or(false))).map(|(_, u)| u).collect()
            };
            let held: BTreeSet<u32> = client.world_mut().query::<&Unit>().iter(client.world()).map(|u| u.0).collect();
            assert!(held.is_subset(&allowed), "tick {tick}: client of {team} holds units {held:?}, its team sees {allowed:?}");
            seen_units += held.len();
            // Ghosts: only the team's own, with the health last seen.
            let server_ghosts: Vec<(u32, String, Health)> = server
                .world_mut()
                .query::<(&GhostOf, &FogGhostObserver, &Health)>()
                .iter(server.world())
                .map(|(g, o, h)| (g.0, o.0.clone(), *h))
                .collect();
            let unit_health: Vec<(u32, Health)> =
                server.world_mut().query::<(&Unit, &Health)>().iter(server.world()).map(|(u, h)| (u.0, *h)).collect();
            for (of, health) in client.world_mut().query::<(&GhostOf, &Health)>().iter(client.world()) {
                let own = server_ghosts.iter().find(|(g, o, _)| *g == of.0 && o == team);
                let Some((_, _, last_seen)) = own else {
                    panic!("tick {tick}: client of {team} holds a ghost of unit {} that is not its team's", of.0)
                };
                assert_eq!(health, last_seen, "tick {tick}: {team}'s ghost of unit {} shows the health {team} last saw", of.0);
                seen_ghosts += 1;
                if unit_health.iter().any(|(u, h)| *u == of.0 && h != health) {
                    stale_ghosts += 1;
                }
            }
        }
    }
    println!(
        "replicate: {ticks} ticks, 2 clients: {seen_units} unit views and {seen_ghosts} ghost views sent, all within the team's sight; \
         {stale_ghosts} ghost views showed an older health than the unit's"
    );
    assert!(seen_units > 0 && seen_ghosts > 0, "the run sent units and ghosts");
}
