//! The `rts` ticks the tick rows and the cost examples run: the `rts`
//! workload after its cold frame, what changes in each tick, and the
//! sight lines a game's targeting asks of it.

use murk_conformance::workloads;
use murk_core::glam::{Vec2, Vec3};
use murk_core::hecs::{Entity, World};
use murk_core::{Backend, Blocker, BlockerShape, FogSubsystem, Position, SightLine, VisionSource};
use std::time::{Duration, Instant};

/// The median of `times` (the upper one of an even count); `times` is not
/// empty.
pub fn median(mut times: Vec<Duration>) -> Duration {
    times.sort_unstable();
    times[times.len() / 2]
}

/// The median time of `ticks` (at least 1) more ticks of `t`.
pub fn median_tick(t: &mut RtsTicks, ticks: usize) -> Duration {
    median(
        (0..ticks)
            .map(|_| {
                let started = Instant::now();
                t.step();
                started.elapsed()
            })
            .collect(),
    )
}

/// What changes in each tick of an `rts` tick row.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// Nothing moves; the profile is applied again so the fade never settles (`rts-static`).
    Nothing,
    /// Every tenth source walks (`rts-steady`).
    Walkers,
    /// Every source walks: an army on the move (`rts-march`).
    March,
    /// The walkers, and one 3x3 building placed (`rts-build`).
    Building,
    /// The walkers, and a 1x4 door that opens or closes (`rts-door`).
    Door,
    /// The walkers, the lockstep hash taken in every tick
    /// (`set_hash_every_tick`), as a lockstep game runs: this row less
    /// `rts-steady` is what hashing every tick costs (`rts-hash-every`).
    HashEvery,
    /// The walkers, a rollback save state taken after every tick and kept
    /// eight deep: this row less `rts-steady` and `save-state/rts` is what
    /// saving costs the tick (the tile stamps) (`rts-saving`).
    Saving,
    /// The walkers, with four instances over the map, one team each of
    /// 250 units (`rts-4teams`): set beside `rts-steady` (one instance, all
    /// 1000 sources), what a team each costs.
    Observed,
    /// `Observed` with every unit tracked (footprint 1): what the four
    /// observers' sight sets cost is this row less `rts-4teams`
    /// (`rts-tracked`).
    Tracked,
    /// `Observed` with nobody walking: once the fade settles a tick costs
    /// almost nothing (`rts-observed-still`).
    ObservedStill,
    /// `Tracked` with nobody walking: the sight sets are still measured,
    /// sampled and updated every tick, so this row less
    /// `rts-observed-still` is their cost without the walkers' noise
    /// (`rts-tracked-still`).
    TrackedStill,
    /// The walkers, and a radar picture beside the sight one: an instance
    /// of sensor layer 1 at a quarter of the resolution that sees through
    /// walls, fed by a radar source (radius 48) beside every unit (a tenth
    /// of them walking with their units) and 20 radar jammers
    /// (`rts-radar`): this row less `rts-steady` is what the radar layer
    /// costs.
    Radar,
    /// `Radar` with a radar that sweeps five times a second
    /// (`update_rate: 0.2`), as radars do (`rts-radar-sweep`).
    RadarSweep,
    /// `Radar` with the radar's sources and jammers standing on its
    /// texels' centres (`snap_sources`), as a radar grid places its
    /// sensors by cell: a walker changes the radar only when it crosses a
    /// radar texel (`rts-radar-snapped`).
    RadarSnapped,
}

impl Change {
    /// Every row, in the order the benches list them.
    pub const ALL: [Change; 14] = [
        Change::Nothing,
        Change::Walkers,
        Change::March,
        Change::Building,
        Change::Door,
        Change::HashEvery,
        Change::Saving,
        Change::Observed,
        Change::Tracked,
        Change::ObservedStill,
        Change::TrackedStill,
        Change::Radar,
        Change::RadarSweep,
        Change::RadarSnapped,
    ];

    /// The row named `label` (`rts-steady`), if there is one.
    pub fn named(label: &str) -> Option<Change> {
        Change::ALL.into_iter().find(|c| c.label() == label)
    }

    /// The row's name (`rts-steady`).
    pub fn label(self) -> &'static str {
        match self {
            Change::Nothing => "rts-static",
            Change::Walkers => "rts-steady",
            Change::March => "rts-march",
            Change::Building => "rts-build",
            Change::Door => "rts-door",
            Change::HashEvery => "rts-hash-every",
            Change::Saving => "rts-saving",
            Change::Observed => "rts-4teams",
            Change::Tracked => "rts-tracked",
            Change::ObservedStill => "rts-observed-still",
            Change::TrackedStill => "rts-tracked-still",
            Change::Radar => "rts-radar",
            Change::RadarSweep => "rts-radar-sweep",
            Change::RadarSnapped => "rts-radar-snapped",
        }
    }
}

/// An `rts` subsystem after the cold frame and four ticks of `change`, and
/// the step that runs one more tick.
pub struct RtsTicks {
    /// The subsystem.
    pub fog: FogSubsystem,
    /// The world it ticks.
    pub world: World,
    change: Change,
    /// The sources that walk, with where each starts.
    moving: Vec<(Entity, Vec3)>,
    door: Entity,
    tick: u32,
    profile: (String, murk_core::Profile),
    /// The states of a `Saving` row, newest last.
    saved: std::collections::VecDeque<murk_core::SaveState>,
}

impl RtsTicks {
    /// `backend` after the cold `rts` frame and four ticks of `change`.
    pub fn new(backend: Box<dyn Backend>, change: Change) -> Self {
        let mut w = workloads::rts();
        let mut fog = FogSubsystem::new(backend);
        fog.create_instance(w.desc.clone()).expect("valid workload");
        let mut sources: Vec<Entity> = w.world.query::<(Entity, &VisionSource)>().iter().map(|(e, _)| e).collect();
        sources.sort();
        if matches!(change, Change::Observed | Change::Tracked | Change::ObservedStill | Change::TrackedStill) {
            // Four teams of 250 units, one instance each.
            fog.set_observed_teams(&w.desc.name, murk_core::TeamMask::of(&[0]).expect("teams below 64")).expect("the instance");
            for team in 1..4u8 {
                let desc = murk_core::InstanceDesc {
                    name: format!("team{team}"),
                    observed_teams: murk_core::TeamMask::of(&[team]).expect("teams below 64"),
                    ..w.desc.clone()
                };
                fog.create_instance(desc).expect("valid workload");
            }
            for (i, &e) in sources.iter().enumerate() {
                w.world.get::<&mut VisionSource>(e).expect("source").team = (i % 4) as u8;
                if matches!(change, Change::Tracked | Change::TrackedStill) {
                    w.world.insert_one(e, murk_core::Tracked::new(1.0)).expect("a unit");
                }
            }
        }
        let step = if change == Change::March { 1 } else { 10 };
        let mut walking: Vec<Entity> = sources.iter().copied().step_by(step).collect();
        if matches!(change, Change::Radar | Change::RadarSweep | Change::RadarSnapped) {
            // A sweeping radar recomputes five times a second; the blend
            // still runs every tick.
            let update_rate = if change == Change::RadarSweep { 0.2 } else { 0.0 };
            let snap_sources = change == Change::RadarSnapped;
            let profile = murk_core::Profile { layer: 1, see_through: true, update_rate, snap_sources, ..w.desc.profile.clone() };
            let radar = murk_core::InstanceDesc { name: "radar".into(), resolution: w.desc.resolution / 4, profile, ..w.desc.clone() };
            fog.create_instance(radar).expect("valid workload");
            for (i, &e) in sources.iter().enumerate() {
                let (at, team) = (w.world.get::<&Position>(e).expect("a source").0, w.world.get::<&VisionSource>(e).expect("a source").team);
                let dish = w.world.spawn((Position(at), VisionSource { layer: 1, team, ..VisionSource::new(48.0) }));
                if i % step == 0 {
                    walking.push(dish);
                }
            }
            for k in 0..20u32 {
                let at = Vec3::new(48.5 + (k * 97 % 928) as f32, 48.5 + (k * 211 % 928) as f32, 0.0);
                w.world.spawn((Position(at), murk_core::AntiVision { radius: 24.0, falloff: 0.25, targets: murk_core::TeamMask::ALL, layer: 1 }));
            }
        }
        let moving = walking.into_iter().map(|e| (e, w.world.get::<&Position>(e).expect("a source").0)).collect();
        let door = w.world.spawn((Position(Vec3::new(500.5, 500.5, 0.0)),));
        let profile = (w.desc.name.clone(), w.desc.profile.clone());
        fog.set_hash_every_tick(change == Change::HashEvery);
        let mut t = Self { fog, world: w.world, change, moving, door, tick: 0, profile, saved: Default::default() };
        for _ in 0..4 {
            t.step();
        }
        t
    }

    /// Puts the walkers where they stand after `ticks` ticks: eight ticks
    /// east, eight back, a quarter unit per tick. A function of the tick,
    /// so that a rollback can put the world back with the fog.
    fn place_walkers(&mut self, ticks: u32) {
        let phase = ticks % 16;
        let east = 0.25 * (if phase <= 8 { phase } else { 16 - phase }) as f32;
        for &(e, start) in &self.moving {
            self.world.get::<&mut Position>(e).expect("a source").0.x = start.x + east;
        }
    }

    /// Ticks run so far.
    pub fn ticks(&self) -> u32 {
        self.tick
    }

    /// Puts the fog back to `state`, saved after `ticks` ticks, and the
    /// walkers where they stood then (as a rollback game puts its own world
    /// back). Only for the changes that move walkers and nothing else.
    pub fn rewind(&mut self, state: &murk_core::SaveState, ticks: u32) {
        assert!(matches!(self.change, Change::Walkers | Change::March), "rewinding a {} row", self.change.label());
        self.fog.load_state(&mut self.world, state).expect("load");
        self.tick = ticks;
        self.place_walkers(ticks);
    }

    /// One more tick of `change`.
    pub fn step(&mut self) -> murk_core::TickReport {
        let tick = self.tick;
        if self.change == Change::Nothing {
            self.fog.apply_profile(&self.profile.0, self.profile.1.clone()).expect("profile");
        } else if !matches!(self.change, Change::ObservedStill | Change::TrackedStill) {
            self.place_walkers(tick + 1);
        }
        match self.change {
            Change::Building => {
                // Spread over the map, one more each tick, as a build order places them.
                let at = Vec3::new(64.5 + (tick * 37 % 896) as f32, 64.5 + (tick * 53 % 896) as f32, 0.0);
                self.world.spawn((Position(at), Blocker::wall(BlockerShape::Rect { size: Vec2::new(3.0, 3.0), yaw_degrees: 0.0 })));
            }
            Change::Door if tick.is_multiple_of(2) => {
                let shape = BlockerShape::Rect { size: Vec2::new(1.0, 4.0), yaw_degrees: 0.0 };
                self.world.insert_one(self.door, Blocker::wall(shape)).expect("the door");
            }
            Change::Door => {
                self.world.remove_one::<Blocker>(self.door).expect("a closed door");
            }
            _ => {}
        }
        self.tick += 1;
        let report = self.fog.tick(&mut self.world, 33_333).expect("tick");
        if self.change == Change::Saving {
            self.saved.push_back(self.fog.save_state(&self.world).expect("save"));
            if self.saved.len() > 8 {
                self.saved.pop_front();
            }
        }
        report
    }
}

/// 10 000 sight lines on an `rts` world, as a game's targeting asks them:
/// from each of the 1000 units (in entity order) to ten points around it,
/// 4 to 32 units away (its sight radius), eyes 2 units up. A walker past
/// the map's edge has its lines start at the edge.
pub fn rts_lines(world: &World) -> Vec<SightLine> {
    let mut units: Vec<(Entity, Position)> = world.query::<(Entity, &Position, &VisionSource)>().iter().map(|(e, p, _)| (e, *p)).collect();
    units.sort_by_key(|(e, _)| *e);
    let inside = |p: Vec3| p.clamp(Vec3::new(0.5, 0.5, 0.0), Vec3::new(1023.5, 1023.5, 0.0));
    units
        .iter()
        .enumerate()
        .flat_map(|(i, (_, at))| {
            (0..10).map(move |k| {
                // One of ten directions, turned per unit, at 4..32 units.
                let turn = (i * 7 + k * 36) as f32 * std::f32::consts::PI / 180.0;
                let reach = 4.0 + ((i * 13 + k * 5) % 28) as f32;
                let to = at.0 + Vec3::new(turn.cos() * reach, turn.sin() * reach, 0.0);
                SightLine { from: inside(at.0), to: inside(to), eye_height: 2.0 }
            })
        })
        .collect()
}
