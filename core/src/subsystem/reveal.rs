//! What a scripted reveal is (a scan, a flare, a bought map, a cheat) and
//! how it reaches the passes: for one instance or for every instance
//! observing a team (the subsystem's calls are in `scripted.rs`).
//!
//! A reveal is a world-space area and a kind. A *sight* reveal shows its area
//! as visible while it lasts, as a source that sees through everything would,
//! and explored memory takes it in when it is remembered. A *map* reveal
//! raises the mapped texture (known from a map, never seen), which never
//! decays. Either can fade in over a number of ticks. Core rasterizes the
//! reveals of an instance with the blockers' exact rule into a
//! [`RevealLayer`] and hands it to the backend when it changes; the memory
//! and compose passes of both backends read it, so the bytes are the same
//! everywhere. A hide clears explored memory and the mapped state in an
//! area.

use super::blockers::project_shape;
use crate::components::BlockerShape;
use crate::error::{finite, MurkError, Result};
use crate::fixed::{Fnv64, MASK_MAX};
use crate::frame::{OcclusionInput, PolygonTexel, RevealLayer};
use crate::raster::rasterize;
use crate::transform::AreaTransform;
use glam::Vec2;
use serde::{Deserialize, Serialize};

/// Whom a reveal or a hide is for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FogTarget {
    /// One instance, by name.
    Instance(String),
    /// Every instance that observes this team (0..=63) when the call is made.
    Team(u8),
}

/// A world-space area on the ground plane.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum RevealArea {
    /// The whole area of every target instance.
    Everywhere,
    /// A shape (the blockers' shapes) placed at a world point.
    Shape {
        /// World X/Y of the shape's origin.
        at: Vec2,
        /// The outline, relative to `at`, covered as a blocker's is.
        shape: BlockerShape,
    },
}

/// What a reveal writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum RevealKind {
    /// Visible while the reveal lasts; with `remember`, explored memory
    /// takes it in as it takes in a source's sight.
    Sight {
        /// Explored memory keeps what it showed.
        remember: bool,
    },
    /// Known from a map: raises the mapped state, for good.
    Map,
}

/// A scripted reveal.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reveal {
    /// Where.
    pub area: RevealArea,
    /// What it writes.
    pub kind: RevealKind,
    /// Ticks over which it rises to full strength, linearly (0 or 1: at
    /// once). The composed mask still moves at the profile's fade-in rate.
    #[serde(default)]
    pub fade_ticks: u32,
    /// Sight only: how many ticks it lasts (`None`: until
    /// [`FogSubsystem::end_reveal`] or a hide of everything). A map reveal
    /// ends by itself once a recompute has taken it in at full strength.
    #[serde(default)]
    pub ticks: Option<u32>,
}

/// Names a reveal for [`FogSubsystem::end_reveal`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct RevealId(pub u64);

/// A reveal as an instance holds it (and a snapshot saves it).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ActiveReveal {
    /// Its id.
    pub id: RevealId,
    /// What was asked for.
    pub reveal: Reveal,
    /// Ticks it has run.
    pub age: u32,
    /// A map reveal that a recompute took in at full strength (it ends after
    /// this tick).
    pub applied: bool,
}

impl ActiveReveal {
    /// Its strength this tick, mask scale: the linear fade-in.
    pub fn strength(&self) -> u16 {
        let fade = self.reveal.fade_ticks;
        if fade <= 1 {
            return MASK_MAX;
        }
        let step = u64::from(self.age.saturating_add(1).min(fade));
        (step * u64::from(MASK_MAX) / u64::from(fade)) as u16
    }
}

impl Reveal {
    /// The checks that do not depend on an instance; errors name `{field}.*`.
    pub fn check(&self, field: &str) -> Result<()> {
        if let RevealArea::Shape { at, shape } = &self.area {
            finite(|| format!("{field}.area.at.x"), at.x)?;
            finite(|| format!("{field}.area.at.y"), at.y)?;
            shape.check(&format!("{field}.area.shape"))?;
        }
        match (self.kind, self.ticks) {
            (RevealKind::Sight { .. }, Some(0)) => {
                Err(MurkError::invalid(format!("{field}.ticks"), 0, "must be at least 1 (or absent: until ended)"))
            }
            (RevealKind::Map, Some(n)) => {
                Err(MurkError::invalid(format!("{field}.ticks"), n, "applies to sight reveals only: a map reveal ends once it is taken in"))
            }
            _ => Ok(()),
        }
    }
}

/// Texel coverage of `area` over the grid of `t`, one byte per internal
/// texel (1 inside, outline included).
pub(crate) fn coverage(area: &RevealArea, t: &AreaTransform, field: &str) -> Result<Vec<u8>> {
    let (w, h) = (t.width(), t.height());
    let n = (w * h) as usize;
    let RevealArea::Shape { at, shape } = area else {
        return Ok(vec![1; n]);
    };
    let mut input = OcclusionInput { width: w, height: h, ..Default::default() };
    let mut polygons = Vec::new();
    project_shape(t, (f64::from(at.x), f64::from(at.y)), shape, 0, &format!("{field}.area.shape"), &mut input.circles, &mut polygons)?;
    for (vertices, top) in polygons {
        input.polygons.push(PolygonTexel { first: input.vertices.len() as u32, count: vertices.len() as u32, height: top, pad: 0 });
        input.vertices.extend(vertices);
    }
    let (mut cov, mut hgt) = (vec![0u8; n], vec![0i32; n]);
    rasterize(&input, &mut cov, &mut hgt);
    Ok(cov)
}

/// Whether every reveal of `reveals` can be measured in the grid of `t`
/// (an area change to finer texels can make a radius too long).
pub(crate) fn check_reveals(reveals: &[ActiveReveal], t: &AreaTransform) -> Result<()> {
    for r in reveals {
        if let RevealArea::Shape { .. } = r.reveal.area {
            coverage(&r.reveal.area, t, &format!("reveal {}", r.id.0))?;
        }
    }
    Ok(())
}

/// The layer of `reveals` over the grid of `t` (`None` when there are none).
pub(crate) fn reveal_layer(reveals: &[ActiveReveal], t: &AreaTransform) -> Result<Option<RevealLayer>> {
    if reveals.is_empty() {
        return Ok(None);
    }
    let n = (t.width() * t.height()) as usize;
    let mut layer = RevealLayer { sight: vec![0; n], kept: vec![0; n], map: vec![0; n] };
    for r in reveals {
        let cov = coverage(&r.reveal.area, t, &format!("reveal {}", r.id.0))?;
        let s = r.strength();
        let planes: [Option<&mut Vec<u16>>; 2] = match r.reveal.kind {
            RevealKind::Sight { remember } => [Some(&mut layer.sight), remember.then_some(&mut layer.kept)],
            RevealKind::Map => [Some(&mut layer.map), None],
        };
        for plane in planes.into_iter().flatten() {
            for (v, &c) in plane.iter_mut().zip(&cov) {
                if c != 0 {
                    *v = (*v).max(s);
                }
            }
        }
    }
    Ok(Some(layer))
}

/// What the layer of `reveals` depends on besides the grid: ids, what
/// each asks for and its strength now.
pub(crate) fn reveal_signature(reveals: &[ActiveReveal]) -> Option<u64> {
    if reveals.is_empty() {
        return None;
    }
    let mut h = Fnv64::default();
    for r in reveals {
        h.write(&r.id.0.to_le_bytes());
        h.write(&r.strength().to_le_bytes());
        // The request as text: serde_json writes floats exactly and in a
        // fixed order.
        h.write(serde_json::to_string(&r.reveal).unwrap_or_default().as_bytes());
    }
    Some(h.finish())
}
