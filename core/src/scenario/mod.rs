//! Scenario files: a scripted world for `murk run`, the conformance corpus
//! and the benches. JSON or RON; `docs/scenario.md` is the reference.
//!
//! A [`ScenarioRunner`] owns a `hecs::World` and a [`FogSubsystem`](crate::FogSubsystem), moves
//! entities along their waypoints, spawns and despawns them, applies the
//! scripted events and ticks.

mod format;
mod runner;
mod validate;

pub use format::*;
pub use runner::{EventRecord, ObserverEventRecord, QueryRecord, ScenarioRunner, SightRecord, TickAnswers, TickRecord};

use crate::error::{MurkError, Result};
use crate::movingai::MovingAiMap;
use crate::profile::Profile;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Reads a file relative to a base directory.
fn read_relative(base: &Path, file: &str) -> Result<(PathBuf, String)> {
    let path = base.join(file);
    let text = std::fs::read_to_string(&path).map_err(|e| MurkError::Io { path: path.display().to_string(), message: e.to_string() })?;
    Ok((path, text))
}

/// Files a scenario refers to, loaded: the map and profile files.
#[derive(Clone, Debug, Default)]
pub struct ScenarioFiles {
    /// The map, if the scenario has one.
    pub map: Option<MovingAiMap>,
    /// Profiles loaded from `profile_file`, by instance name.
    pub profiles: BTreeMap<String, Profile>,
}

impl ScenarioFiles {
    /// Loads what `scenario` refers to, relative to `base`.
    pub fn load(scenario: &Scenario, base: &Path) -> Result<Self> {
        let mut files = ScenarioFiles::default();
        if let Some(settings) = &scenario.map {
            let (path, text) = read_relative(base, &settings.file)?;
            files.map = Some(MovingAiMap::parse(&text, &path.display().to_string())?);
        }
        for inst in &scenario.instances {
            if let Some(file) = &inst.profile_file {
                files.profiles.insert(inst.name.clone(), Profile::load(&base.join(file))?);
            }
        }
        Ok(files)
    }
}
