//! The scenario file format: every type a scenario file is made of, and
//! parsing it from JSON or RON. `docs/scenario.md` is the reference.

use crate::components::{AntiVision, Blocker, StealthActor, VisionSource};
use crate::error::{read_document, MurkError, Result};
use crate::profile::{Profile, RayMethod};
use crate::subsystem::{FogTarget, Reveal, RevealArea};
use crate::transform::Area;
use glam::{Vec2, Vec3};
use serde::de::{self, DeserializeOwned, MapAccess, SeqAccess, Visitor};
use serde::ser::SerializeStruct;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::marker::PhantomData;
use std::path::Path;

/// Largest tick count a scenario may ask for.
pub const MAX_TICKS: u32 = 1_000_000;

/// A scenario file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Name (used in reports).
    pub name: String,
    /// Tick length in microseconds.
    #[serde(default = "default_tick_us")]
    pub tick_us: u32,
    /// Ticks to run.
    pub ticks: u32,
    /// Backend to run on when the command line does not say (`cpu`, `gpu`, `auto`).
    #[serde(default)]
    pub backend: Option<crate::backend::BackendChoice>,
    /// A Moving AI map loaded as a height capture.
    #[serde(default)]
    pub map: Option<MapSpec>,
    /// Fog instances.
    pub instances: Vec<ScenarioInstance>,
    /// Vision sources.
    #[serde(default)]
    pub sources: Vec<ScenarioSource>,
    /// Blockers.
    #[serde(default)]
    pub blockers: Vec<ScenarioBlocker>,
    /// Stealth actors.
    #[serde(default)]
    pub actors: Vec<ScenarioActor>,
    /// Anti-vision areas.
    #[serde(default)]
    pub anti_vision: Vec<ScenarioAntiVision>,
    /// Scripted changes.
    #[serde(default)]
    pub events: Vec<ScenarioEvent>,
    /// Scripted queries; their answers land in `summary.json`.
    #[serde(default)]
    pub queries: Vec<ScriptedQuery>,
    /// Ticks (0-based) after which every texture a pass writes is recorded (conformance).
    #[serde(default)]
    pub stage_ticks: Vec<u32>,
}

fn default_tick_us() -> u32 {
    33_333
}

/// A Moving AI map used as the world's height capture.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MapSpec {
    /// Path of the `.map` file, relative to the scenario file.
    pub file: String,
    /// World size of one map cell.
    #[serde(default = "one")]
    pub cell_size: f32,
    /// World XY of the corner of cell (0, 0).
    #[serde(default)]
    pub origin: Vec2,
    /// Ground Z.
    #[serde(default)]
    pub ground_z: f32,
    /// Height of `T` cells above the ground.
    #[serde(default = "default_tree_height")]
    pub tree_height: f32,
}

fn one() -> f32 {
    1.0
}

fn default_tree_height() -> f32 {
    4.0
}

/// A fog instance of a scenario.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioInstance {
    /// Unique name (output files are `<name>.final.png`).
    pub name: String,
    /// Covered area.
    pub area: Area,
    /// Output texels along the area's X side.
    pub resolution: u32,
    /// Internal downscale.
    #[serde(default)]
    pub lod: u32,
    /// Observed teams (all when absent).
    #[serde(default)]
    pub observed_teams: Option<Vec<u8>>,
    /// Inline settings.
    #[serde(default)]
    pub profile: Option<Profile>,
    /// Settings file (JSON, RON or TOML), relative to the scenario file.
    #[serde(default)]
    pub profile_file: Option<String>,
}

/// Scripted movement shared by sources and blockers.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Motion {
    /// Points visited after the start position, in order.
    #[serde(default)]
    pub waypoints: Vec<Vec3>,
    /// World units per second along the path.
    #[serde(default)]
    pub speed: f32,
    /// Return to the start and go round again.
    #[serde(default)]
    pub looped: bool,
}

/// A scripted entity of a scenario: an id unique among all scripted
/// entities, a start position, its component, its movement and its
/// lifetime. In a file the component sits under its own key
/// ([`ScriptedComponent::KEY`]: `source`, `blocker`, `stealth`,
/// `anti_vision`) beside the common keys.
#[derive(Clone, Debug, PartialEq)]
pub struct Scripted<C> {
    /// Unique id among all scripted entities.
    pub id: String,
    /// Start position.
    pub position: Vec3,
    /// The component it carries.
    pub component: C,
    /// Movement.
    pub motion: Motion,
    /// First tick it exists.
    pub spawn_tick: u32,
    /// Tick at which it is removed.
    pub despawn_tick: Option<u32>,
    /// A transient reveal lasting this many ticks (sources only).
    pub transient_ticks: Option<u32>,
    /// Tracked for the sight sets, with this footprint: each instance's
    /// set lands in `summary.json` tick by tick.
    pub tracked: Option<crate::components::Tracked>,
}

/// A vision source of a scenario.
pub type ScenarioSource = Scripted<VisionSource>;
/// A blocker of a scenario.
pub type ScenarioBlocker = Scripted<Blocker>;
/// A stealth actor of a scenario.
pub type ScenarioActor = Scripted<StealthActor>;
/// An anti-vision area of a scenario.
pub type ScenarioAntiVision = Scripted<AntiVision>;

/// A component a scenario can script, and how it is written in a file.
pub trait ScriptedComponent: Clone + Serialize + DeserializeOwned {
    /// The key the component is written under.
    const KEY: &'static str;
    /// Every key an entity of this kind may have (for error messages).
    const FIELDS: &'static [&'static str];
    /// Whether the entity may hold `transient_ticks`.
    const TRANSIENT: bool = false;
    /// The component when the file leaves its key out (`None`: required).
    fn when_absent() -> Option<Self> {
        None
    }
}

impl ScriptedComponent for VisionSource {
    const KEY: &'static str = "source";
    const FIELDS: &'static [&'static str] = &["id", "position", "source", "motion", "spawn_tick", "despawn_tick", "transient_ticks", "tracked"];
    const TRANSIENT: bool = true;
}

impl ScriptedComponent for Blocker {
    const KEY: &'static str = "blocker";
    const FIELDS: &'static [&'static str] = &["id", "position", "blocker", "motion", "spawn_tick", "despawn_tick", "tracked"];
}

impl ScriptedComponent for StealthActor {
    const KEY: &'static str = "stealth";
    const FIELDS: &'static [&'static str] = &["id", "position", "stealth", "motion", "spawn_tick", "despawn_tick", "tracked"];
    fn when_absent() -> Option<Self> {
        Some(Self::default())
    }
}

impl ScriptedComponent for AntiVision {
    const KEY: &'static str = "anti_vision";
    const FIELDS: &'static [&'static str] = &["id", "position", "anti_vision", "motion", "spawn_tick", "despawn_tick", "tracked"];
}

impl<C: ScriptedComponent> Serialize for Scripted<C> {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("Scripted", C::FIELDS.len())?;
        st.serialize_field("id", &self.id)?;
        st.serialize_field("position", &self.position)?;
        st.serialize_field(C::KEY, &self.component)?;
        st.serialize_field("motion", &self.motion)?;
        st.serialize_field("spawn_tick", &self.spawn_tick)?;
        st.serialize_field("despawn_tick", &self.despawn_tick)?;
        if C::TRANSIENT {
            st.serialize_field("transient_ticks", &self.transient_ticks)?;
        }
        st.serialize_field("tracked", &self.tracked)?;
        st.end()
    }
}

impl<'de, C: ScriptedComponent> Deserialize<'de> for Scripted<C> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        d.deserialize_struct("Scripted", C::FIELDS, ScriptedVisitor(PhantomData))
    }
}

/// Reads the keys of a [`Scripted`] entity: unknown and repeated keys are
/// errors, as for the derived formats.
struct ScriptedVisitor<C>(PhantomData<C>);

/// A key of a scripted entity, read as an identifier (RON writes struct
/// keys bare, JSON as strings).
struct Key(String);

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct KeyVisitor;
        impl Visitor<'_> for KeyVisitor {
            type Value = Key;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a field name")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<Key, E> {
                Ok(Key(v.to_string()))
            }
        }
        d.deserialize_identifier(KeyVisitor)
    }
}

/// Reads the field at `index` of a sequence.
fn element<'de, T: Deserialize<'de>, A: SeqAccess<'de>>(seq: &mut A, index: usize) -> std::result::Result<T, A::Error> {
    seq.next_element()?.ok_or_else(|| de::Error::invalid_length(index, &"every field of a scripted entity"))
}

/// Reads one value into `slot`; a key seen twice is an error.
fn read_once<'de, T: Deserialize<'de>, A: MapAccess<'de>>(map: &mut A, slot: &mut Option<T>, key: &'static str) -> std::result::Result<(), A::Error> {
    if slot.is_some() {
        return Err(de::Error::duplicate_field(key));
    }
    *slot = Some(map.next_value()?);
    Ok(())
}

impl<'de, C: ScriptedComponent> Visitor<'de> for ScriptedVisitor<C> {
    type Value = Scripted<C>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a scripted entity with `id`, `position` and `{}`", C::KEY)
    }

    /// The compact encodings (snapshots) write every field in order.
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<Self::Value, A::Error> {
        Ok(Scripted {
            id: element(&mut seq, 0)?,
            position: element(&mut seq, 1)?,
            component: element(&mut seq, 2)?,
            motion: element(&mut seq, 3)?,
            spawn_tick: element(&mut seq, 4)?,
            despawn_tick: element(&mut seq, 5)?,
            transient_ticks: if C::TRANSIENT { element(&mut seq, 6)? } else { None },
            tracked: element(&mut seq, if C::TRANSIENT { 7 } else { 6 })?,
        })
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Self::Value, A::Error> {
        let (mut id, mut position, mut component, mut motion) = (None, None, None, None);
        let (mut spawn_tick, mut despawn_tick, mut transient_ticks, mut tracked) = (None, None, None, None);
        while let Some(Key(key)) = map.next_key()? {
            match key.as_str() {
                "id" => read_once(&mut map, &mut id, "id")?,
                "position" => read_once(&mut map, &mut position, "position")?,
                "motion" => read_once(&mut map, &mut motion, "motion")?,
                "spawn_tick" => read_once(&mut map, &mut spawn_tick, "spawn_tick")?,
                "despawn_tick" => read_once(&mut map, &mut despawn_tick, "despawn_tick")?,
                "transient_ticks" if C::TRANSIENT => read_once(&mut map, &mut transient_ticks, "transient_ticks")?,
                "tracked" => read_once(&mut map, &mut tracked, "tracked")?,
                k if k == C::KEY => read_once(&mut map, &mut component, C::KEY)?,
                other => return Err(de::Error::unknown_field(other, C::FIELDS)),
            }
        }
        Ok(Scripted {
            id: id.ok_or_else(|| de::Error::missing_field("id"))?,
            position: position.ok_or_else(|| de::Error::missing_field("position"))?,
            component: component.or_else(C::when_absent).ok_or_else(|| de::Error::missing_field(C::KEY))?,
            motion: motion.unwrap_or_default(),
            spawn_tick: spawn_tick.unwrap_or(0),
            despawn_tick: despawn_tick.flatten(),
            transient_ticks: transient_ticks.flatten(),
            tracked: tracked.flatten(),
        })
    }
}

/// A query asked after a tick ran.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptedQuery {
    /// Tick (after it ran).
    pub tick: u32,
    /// Name in the results.
    pub id: String,
    /// World points.
    pub points: Vec<Vec3>,
    /// Cutoff override (`0..=1`) for the mask query.
    #[serde(default)]
    pub cutoff: Option<f32>,
    /// Also ask the immediate query for these teams.
    #[serde(default)]
    pub immediate_teams: Option<Vec<u8>>,
    /// Also ask a sight line from this looker to every point.
    #[serde(default)]
    pub sight_from: Option<ScriptedLooker>,
}

/// The looker of a scripted query's sight lines.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptedLooker {
    /// The instance the lines are judged in.
    pub instance: String,
    /// Where the looker stands.
    pub at: Vec3,
    /// Its eye above `at`, world units.
    #[serde(default)]
    pub eye_height: f32,
}

/// What an edited map cell becomes.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Terrain {
    /// Open ground: nothing there.
    Open,
    /// A wall nothing sees over.
    Wall,
    /// Something this high (world Z of its top).
    Height(f32),
}

impl Terrain {
    /// The cell value of a height capture (`NaN` nothing, `+inf` a wall).
    pub fn cell(self) -> f32 {
        match self {
            Terrain::Open => f32::NAN,
            Terrain::Wall => f32::INFINITY,
            Terrain::Height(h) => h,
        }
    }
}

/// A scripted change at a tick (applied before that tick runs).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioEvent {
    /// Tick (0-based).
    pub tick: u32,
    /// What happens.
    pub action: Action,
}

/// Boolean settings that [`Action::Toggle`] can set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Setting {
    /// [`Profile::enabled`].
    Enabled,
    /// [`Profile::show_fog`].
    ShowFog,
    /// [`Profile::freeze_state`].
    FreezeState,
    /// [`Profile::show_memory`].
    ShowMemory,
    /// [`Profile::freeze_memory`].
    FreezeMemory,
    /// [`Profile::soft_shadows`].
    SoftShadows,
    /// [`Profile::z_layering`].
    ZLayering,
}

/// Scripted changes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Action {
    /// Replace an instance's profile.
    SetProfile {
        /// Instance name.
        instance: String,
        /// The new profile (absent fields take defaults).
        profile: Profile,
    },
    /// Set one boolean setting.
    Toggle {
        /// Instance name.
        instance: String,
        /// Which setting.
        setting: Setting,
        /// New value.
        value: bool,
    },
    /// Change the ray method.
    SetRayMethod {
        /// Instance name.
        instance: String,
        /// New method.
        method: RayMethod,
    },
    /// Move or resize an instance.
    SetArea {
        /// Instance name.
        instance: String,
        /// New area.
        area: Area,
    },
    /// Grow an instance's area to include a point.
    ExpandArea {
        /// Instance name.
        instance: String,
        /// World point.
        point: Vec3,
    },
    /// Change the teams an instance observes.
    SetObservedTeams {
        /// Instance name.
        instance: String,
        /// Teams.
        teams: Vec<u8>,
    },
    /// Teleport a source or blocker (its path restarts from there, stopped).
    Move {
        /// Source or blocker id.
        id: String,
        /// New position.
        position: Vec3,
    },
    /// Remove a source or blocker now.
    Despawn {
        /// Source or blocker id.
        id: String,
    },
    /// Force a recapture of the map capture.
    MarkCaptureDirty,
    /// Edit the map locally: every map cell whose centre lies in the world
    /// rectangle `min..=max` becomes `to`, and only that rectangle is
    /// resampled ([`crate::FogSubsystem::mark_capture_dirty_in`]): a wall
    /// blown open, a bridge built, a ditch dug.
    EditTerrain {
        /// World X/Y of the rectangle's low corner.
        min: Vec2,
        /// World X/Y of its high corner.
        max: Vec2,
        /// What the cells become.
        to: Terrain,
    },
    /// Start a scripted reveal ([`crate::FogSubsystem::reveal`]); it lasts
    /// its `ticks` (or until a hide of everything).
    Reveal {
        /// An instance or a team.
        target: FogTarget,
        /// The area, kind, fade and duration.
        reveal: Reveal,
    },
    /// Forget an area ([`crate::FogSubsystem::hide`]); `everywhere` also ends
    /// the target's reveals.
    Hide {
        /// An instance or a team.
        target: FogTarget,
        /// The area.
        area: RevealArea,
    },
}

impl Scenario {
    /// Parses scenario text (`json` or `ron`); `what` names it in errors.
    pub fn parse(text: &str, format: &str, what: &str) -> Result<Scenario> {
        let parse_err = |message: String| MurkError::Parse { what: what.to_string(), message };
        match format {
            "json" => serde_json::from_str(text).map_err(|e| parse_err(e.to_string())),
            "ron" => ron::from_str(text).map_err(|e| parse_err(e.to_string())),
            other => Err(MurkError::invalid(format!("{what} format"), other, "scenarios are json or ron")),
        }
    }

    /// Loads a scenario file (format by extension).
    pub fn load(path: &Path) -> Result<Scenario> {
        let (text, ext, what) = read_document(path)?;
        Self::parse(&text, &ext, &what)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(entities: &str) -> Result<Scenario> {
        let text = format!(
            r#"{{"name": "t", "ticks": 2, "instances": [{{"name": "i", "area": {{"center": [0, 0, 0], "extents": [8, 8, 1], "yaw_degrees": 0}}, "resolution": 8}}], {entities}}}"#
        );
        Scenario::parse(&text, "json", "test")
    }

    #[test]
    fn scripted_entities_read_their_own_key_and_the_common_ones() {
        let s = parse(
            r#""sources": [{"id": "s", "position": [1, 2, 0], "source": {"radius": 3}, "spawn_tick": 1, "transient_ticks": 4}],
               "actors": [{"id": "a", "position": [0, 0, 0]}]"#,
        )
        .unwrap();
        let src = &s.sources[0];
        assert_eq!((src.id.as_str(), src.position, src.component.radius), ("s", Vec3::new(1.0, 2.0, 0.0), 3.0));
        assert_eq!((src.spawn_tick, src.despawn_tick, src.transient_ticks), (1, None, Some(4)));
        assert_eq!(s.actors[0].component, StealthActor::default(), "an actor's stealth may be left out");
        // What the run snapshot stores reads back the same.
        let json = serde_json::to_string(&s).unwrap();
        assert_eq!(serde_json::from_str::<Scenario>(&json).unwrap(), s);
        let ron = r#"(name: "t", ticks: 2, instances: [], sources: [(id: "s", position: (1.0, 2.0, 0.0), source: (radius: 3.0), spawn_tick: 1, transient_ticks: Some(4))], actors: [(id: "a", position: (0.0, 0.0, 0.0))])"#;
        let from_ron = Scenario::parse(ron, "ron", "test").unwrap();
        assert_eq!((&from_ron.sources, &from_ron.actors), (&s.sources, &s.actors), "RON reads the same entities");
    }

    #[test]
    fn scripted_entities_refuse_unknown_repeated_and_missing_keys() {
        let e = parse(r#""blockers": [{"id": "b", "position": [0, 0, 0], "blocker": {"shape": {"circle": {"radius": 1}}}, "transient_ticks": 2}]"#);
        assert!(e.unwrap_err().to_string().contains("unknown field `transient_ticks`, expected one of `id`"));
        let e = parse(r#""sources": [{"id": "s", "id": "t", "position": [0, 0, 0], "source": {"radius": 3}}]"#);
        assert!(e.unwrap_err().to_string().contains("duplicate field `id`"));
        let e = parse(r#""anti_vision": [{"id": "v", "position": [0, 0, 0]}]"#);
        assert!(e.unwrap_err().to_string().contains("missing field `anti_vision`"));
    }
}
