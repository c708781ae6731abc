//! A two-player rollback game on murk, judged by a real rollback library:
//! `ggrs`'s `SyncTestSession` saves every frame, rolls back
//! `check_distance` frames, simulates them again and compares the checksum
//! each frame gave the first time. murk's lockstep hash is the checksum, so a
//! byte that depends on anything but the inputs (a thread count, a cache, a
//! restore that misses something) fails the session.
//!
//! Each player walks their half of a workload's walking sources and places
//! 3x3 buildings; the fog ticks every frame. A frame's state is the fog's
//! in-memory save state (`FogSubsystem::save_state`) with the units'
//! positions and the buildings placed.

use crate::workloads::Workload;
use ggrs::{Config, Frame, GgrsError, GgrsRequest, InputStatus, PredictRepeatLast, SessionBuilder};
use murk_core::glam::{Vec2, Vec3};
use murk_core::hecs::{Entity, World};
use murk_core::{Backend, Blocker, BlockerShape, FogSubsystem, MurkError, Position, SaveState, VisionSource};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Microseconds per frame.
pub const FRAME_US: u32 = 33_333;

/// One player's orders for a frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Orders {
    /// Walk east (+1), west (-1) or stand (0), a quarter unit.
    pub dx: i8,
    /// Walk north (+1), south (-1) or stand (0), a quarter unit.
    pub dy: i8,
    /// Place a 3x3 building at this world cell.
    pub build: Option<(u16, u16)>,
}

/// What one frame of the game is, for ggrs to keep.
#[derive(Clone, Debug)]
pub struct Saved {
    /// The fog state.
    pub fog: Arc<SaveState>,
    /// Every unit's position (`f32` bits).
    pub units: Vec<[u32; 3]>,
    /// How many buildings stood.
    pub buildings: usize,
}

/// The ggrs configuration of the game.
pub struct RollbackConfig;

impl Config for RollbackConfig {
    type Input = Orders;
    type InputPredictor = PredictRepeatLast;
    type State = Saved;
    type Address = u8;
}

/// Errors of the game: murk's or the session's.
#[derive(Debug, thiserror::Error)]
pub enum RollbackError {
    /// murk refused something.
    #[error(transparent)]
    Murk(#[from] MurkError),
    /// The session failed; a checksum mismatch names the frames.
    #[error("ggrs: {0}")]
    Session(#[from] GgrsError),
    /// ggrs asked to load a frame that was never saved.
    #[error("ggrs asked to load frame {0}, which holds no state")]
    NothingSaved(Frame),
}

/// The game: a fog subsystem, its world, and who owns which unit.
pub struct RollbackGame {
    fog: FogSubsystem,
    world: World,
    /// Each player's units; the other sources stand still.
    units: [Vec<Entity>; 2],
    buildings: Vec<Entity>,
    /// The game under test restores the fog on a rollback; without it (a
    /// deliberately broken game), the session must catch the difference.
    restore_fog: bool,
}

impl RollbackGame {
    /// The game on a workload (every tenth source walks, alternately owned
    /// by the two players), after its first tick.
    pub fn new(w: Workload, backend: Box<dyn Backend>) -> Result<Self, RollbackError> {
        let Workload { desc, world, .. } = w;
        let mut fog = FogSubsystem::new(backend);
        fog.create_instance(desc)?;
        let mut sources: Vec<Entity> = world.query::<(Entity, &VisionSource)>().iter().map(|(e, _)| e).collect();
        sources.sort();
        let mut units = [Vec::new(), Vec::new()];
        for (i, e) in sources.into_iter().step_by(10).enumerate() {
            units[i % 2].push(e);
        }
        Ok(Self { fog, world, units, buildings: Vec::new(), restore_fog: true })
    }

    /// The same game with a rollback that forgets to restore the fog.
    pub fn without_fog_restore(mut self) -> Self {
        self.restore_fog = false;
        self
    }

    /// The fog subsystem.
    pub fn fog(&mut self) -> &mut FogSubsystem {
        &mut self.fog
    }

    fn advance(&mut self, inputs: &[(Orders, InputStatus)]) -> Result<(), RollbackError> {
        for (player, (orders, _)) in inputs.iter().enumerate().take(2) {
            let step = Vec3::new(f32::from(orders.dx), f32::from(orders.dy), 0.0) * 0.25;
            for &e in &self.units[player] {
                if let Ok(mut p) = self.world.get::<&mut Position>(e) {
                    p.0 += step;
                }
            }
            if let Some((x, y)) = orders.build {
                let at = Vec3::new(f32::from(x) + 0.5, f32::from(y) + 0.5, 0.0);
                let wall = Blocker::wall(BlockerShape::Rect { size: Vec2::new(3.0, 3.0), yaw_degrees: 0.0 });
                self.buildings.push(self.world.spawn((Position(at), wall)));
            }
        }
        self.fog.tick(&mut self.world, FRAME_US)?;
        Ok(())
    }

    fn save(&mut self) -> Result<(Saved, u128), RollbackError> {
        let fog = Arc::new(self.fog.save_state(&self.world)?);
        let units = self
            .units
            .iter()
            .flatten()
            .map(|&e| {
                self.world
                    .get::<&Position>(e)
                    .map(|p| p.0.to_array().map(f32::to_bits))
                    .map_err(|_| MurkError::UnknownEntity(format!("unit {}", e.id())))
            })
            .collect::<Result<_, _>>()?;
        let checksum = u128::from(self.fog.lockstep_hash()?);
        Ok((Saved { fog, units, buildings: self.buildings.len() }, checksum))
    }

    fn load(&mut self, saved: &Saved) -> Result<(), RollbackError> {
        for (&e, p) in self.units.iter().flatten().zip(&saved.units) {
            if let Ok(mut at) = self.world.get::<&mut Position>(e) {
                at.0 = Vec3::from_array(p.map(f32::from_bits));
            }
        }
        // Buildings only accumulate: the ones placed after the save go.
        for e in self.buildings.drain(saved.buildings.min(self.buildings.len())..) {
            let _ = self.world.despawn(e);
        }
        if self.restore_fog {
            self.fog.load_state(&mut self.world, &saved.fog)?;
        }
        Ok(())
    }

    /// Carries out what the session asks for, in order.
    pub fn handle(&mut self, requests: Vec<GgrsRequest<RollbackConfig>>) -> Result<(), RollbackError> {
        for request in requests {
            match request {
                GgrsRequest::SaveGameState { cell, frame } => {
                    let (saved, checksum) = self.save()?;
                    cell.save(frame, Some(saved), Some(checksum));
                }
                GgrsRequest::LoadGameState { cell, frame } => {
                    let saved = cell.load().ok_or(RollbackError::NothingSaved(frame))?;
                    self.load(&saved)?;
                }
                GgrsRequest::AdvanceFrame { inputs } => self.advance(&inputs)?,
            }
        }
        Ok(())
    }
}

/// The scripted orders of `player` at `frame`: walk a square back and
/// forth, and every 5th frame one player places a building somewhere new
/// inside `[64, 64 + span)^2`.
pub fn orders(player: usize, frame: u32, span: u16) -> Orders {
    let leg = (frame / 8 + player as u32) % 4;
    let (dx, dy) = [(1, 0), (0, 1), (-1, 0), (0, -1)][leg as usize];
    let build = (frame % 5 == player as u32 * 2).then(|| {
        let k = frame / 5;
        (64 + (k * 37 % u32::from(span)) as u16, 64 + (k * 53 % u32::from(span)) as u16)
    });
    Orders { dx, dy, build }
}

/// What a sync test run measured.
#[derive(Clone, Copy, Debug)]
pub struct SyncTestRun {
    /// Frames advanced.
    pub frames: u32,
    /// Wall time per frame (save, advance, roll back and simulate again).
    pub frame_ms: f64,
}

/// Runs `game` in a `SyncTestSession` of two players for `frames` frames,
/// rolling back `check_distance` frames every frame.
pub fn sync_test(game: &mut RollbackGame, frames: u32, check_distance: usize, span: u16) -> Result<SyncTestRun, RollbackError> {
    let mut session = SessionBuilder::<RollbackConfig>::new().with_num_players(2)?.with_check_distance(check_distance).start_synctest_session()?;
    let start = std::time::Instant::now();
    for frame in 0..frames {
        for player in 0..2 {
            session.add_local_input(player, orders(player, frame, span))?;
        }
        let requests = session.advance_frame()?;
        game.handle(requests)?;
    }
    Ok(SyncTestRun { frames, frame_ms: start.elapsed().as_secs_f64() * 1000.0 / f64::from(frames.max(1)) })
}
