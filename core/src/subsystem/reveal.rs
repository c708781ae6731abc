//! Writing the fog from a script: reveals (a scan, a flare, a bought map, a
//! cheat) and hides, for one instance or for every instance observing a
//! team.
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

use super::project::project_shape;
use super::{FogSubsystem, Slot};
use crate::components::BlockerShape;
use crate::error::{finite, MurkError, Result};
use crate::fixed::{Fnv64, MASK_MAX};
use crate::frame::{OcclusionInput, PolygonTexel, RevealLayer};
use crate::raster::rasterize;
use crate::texture::{instance_textures, Grid, Texture, TextureSet};
use crate::transform::AreaTransform;
use glam::Vec2;
use serde::{Deserialize, Serialize};

/// Whom a reveal or a hide is for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FogTarget {
    /// One instance, by name.
    Instance(String),
    /// Every instance that observes this team (0..=31) when the call is made.
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
fn coverage(area: &RevealArea, t: &AreaTransform, field: &str) -> Result<Vec<u8>> {
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
pub(super) fn check_reveals(reveals: &[ActiveReveal], t: &AreaTransform) -> Result<()> {
    for r in reveals {
        if let RevealArea::Shape { .. } = r.reveal.area {
            coverage(&r.reveal.area, t, &format!("reveal {}", r.id.0))?;
        }
    }
    Ok(())
}

/// The layer of `reveals` over the grid of `t` (`None` when there are none).
pub(super) fn reveal_layer(reveals: &[ActiveReveal], t: &AreaTransform) -> Result<Option<RevealLayer>> {
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
pub(super) fn reveal_signature(reveals: &[ActiveReveal]) -> Option<u64> {
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

impl FogSubsystem {
    /// The instances a target names, sorted; an unknown instance, a team
    /// out of range or one no instance observes is an error naming it.
    fn targets(&self, target: &FogTarget) -> Result<Vec<String>> {
        match target {
            FogTarget::Instance(name) => {
                self.slot(name)?;
                Ok(vec![name.clone()])
            }
            FogTarget::Team(team) => {
                if *team >= 32 {
                    return Err(MurkError::invalid("target.team", team, "must be within 0..=31"));
                }
                let names: Vec<String> =
                    self.instances.iter().filter(|(_, s)| s.desc.observed_teams.contains(*team)).map(|(n, _)| n.clone()).collect();
                if names.is_empty() {
                    return Err(MurkError::invalid("target.team", team, "is observed by no instance"));
                }
                Ok(names)
            }
        }
    }

    /// Starts a reveal for an instance or a team; it takes effect from the
    /// next tick's recompute. A bad shape, fade or target is an error naming
    /// the field, and nothing changes.
    pub fn reveal(&mut self, target: &FogTarget, reveal: Reveal) -> Result<RevealId> {
        reveal.check("reveal")?;
        let names = self.targets(target)?;
        for name in &names {
            // Measured in each instance's texels: too long a radius fails here.
            coverage(&reveal.area, &self.slot(name)?.transform, "reveal")?;
        }
        let id = RevealId(self.next_reveal);
        self.next_reveal = self.next_reveal.checked_add(1).ok_or_else(|| MurkError::invalid("reveal ids", id.0, "are used up"))?;
        for name in &names {
            let slot = self.slot_mut(name)?;
            slot.reveals.push(ActiveReveal { id, reveal: reveal.clone(), age: 0, applied: false });
        }
        Ok(id)
    }

    /// Shows everything to an instance or team until it is ended: a sight
    /// reveal of [`RevealArea::Everywhere`] that memory remembers.
    pub fn reveal_all(&mut self, target: &FogTarget) -> Result<RevealId> {
        self.reveal(target, Reveal { area: RevealArea::Everywhere, kind: RevealKind::Sight { remember: true }, fade_ticks: 0, ticks: None })
    }

    /// Ends a reveal on every instance holding it (the composed mask then
    /// relaxes at the profile's rate). An unknown or finished id is an error.
    pub fn end_reveal(&mut self, id: RevealId) -> Result<()> {
        let mut found = false;
        for slot in self.instances.values_mut() {
            let before = slot.reveals.len();
            slot.reveals.retain(|r| r.id != id);
            found |= slot.reveals.len() != before;
        }
        if found {
            Ok(())
        } else {
            Err(MurkError::invalid("reveal id", id.0, "names no running reveal"))
        }
    }

    /// The reveals an instance holds, oldest first.
    pub fn reveals(&self, name: &str) -> Result<&[ActiveReveal]> {
        Ok(&self.slot(name)?.reveals)
    }

    /// Forgets an area for an instance or team: explored memory and the
    /// mapped state there go back to unexplored at once (the composed mask
    /// relaxes toward it at the profile's rate; what sources and reveals see
    /// now is seen again). Hiding [`RevealArea::Everywhere`] also ends every
    /// reveal of the target. On the GPU this reads the memory back, a
    /// blocking wait. Errors name the field, and change nothing.
    pub fn hide(&mut self, target: &FogTarget, area: &RevealArea) -> Result<()> {
        if let RevealArea::Shape { at, shape } = area {
            finite(|| "hide.area.at.x".to_string(), at.x)?;
            finite(|| "hide.area.at.y".to_string(), at.y)?;
            shape.check("hide.area.shape")?;
        }
        let names = self.targets(target)?;
        let mut masks = Vec::new();
        for name in &names {
            masks.push(coverage(area, &self.slot(name)?.transform, "hide")?);
        }
        for (name, cov) in names.iter().zip(masks) {
            self.rewrite_masks(name, &[Texture::Memory, Texture::Mapped], |_, texels| {
                for (v, &c) in texels.iter_mut().zip(&cov) {
                    if c != 0 {
                        *v = 0;
                    }
                }
            })?;
            if *area == RevealArea::Everywhere {
                self.slot_mut(name)?.reveals.clear();
            }
        }
        Ok(())
    }

    /// [`Self::hide`] of everything.
    pub fn hide_all(&mut self, target: &FogTarget) -> Result<()> {
        self.hide(target, &RevealArea::Everywhere)
    }

    /// Replaces the internal-resolution masks `which` of instance `name`
    /// with what `edit` makes of them, keeping every other texture; the
    /// instance recomputes on its next tick.
    pub(super) fn rewrite_masks(&mut self, name: &str, which: &[Texture], mut edit: impl FnMut(Texture, &mut Vec<u16>)) -> Result<()> {
        let slot = self.slot(name)?;
        let (key, dims, build) = (slot.key, slot.dims, slot.state.built_for);
        let mut textures = Vec::new();
        for entry in instance_textures(dims, build) {
            let mut image = self.backend.read_texture(key, entry.texture)?;
            if which.contains(&entry.texture) {
                let mut grid = Grid::<u16>::from_image(&image).filter(|g| (g.width, g.height) == (dims.width, dims.height)).ok_or_else(|| {
                    MurkError::Backend {
                        backend: self.backend.name(),
                        message: format!("texture `{}` is not an internal mask", entry.texture.name()),
                    }
                })?;
                edit(entry.texture, &mut grid.texels);
                image = grid.image();
            }
            textures.push((entry.texture, image));
        }
        let set = TextureSet::new(dims, build, textures, &format!("instance `{name}`"))?;
        self.backend.write_textures(key, &set)?;
        let slot = self.slot_mut(name)?;
        // The textures were reloaded: what the last recompute kept is gone.
        slot.last_input = None;
        slot.unsettle();
        Ok(())
    }
}

impl Slot {
    /// The layer this tick needs uploaded, when it differs from the one the
    /// backend holds: `Some(None)` clears it.
    pub(super) fn reveal_update(&self) -> Result<Option<(Option<u64>, Option<RevealLayer>)>> {
        let signature = reveal_signature(&self.reveals);
        if self.reveal_uploaded == signature && !self.reveal_stale {
            return Ok(None);
        }
        Ok(Some((signature, reveal_layer(&self.reveals, &self.transform)?)))
    }

    /// After the tick: reveals age; sight reveals past their ticks and map
    /// reveals taken in end.
    pub(super) fn age_reveals(&mut self) {
        for r in &mut self.reveals {
            r.age = r.age.saturating_add(1);
        }
        self.reveals.retain(|r| match r.reveal.kind {
            RevealKind::Sight { .. } => r.reveal.ticks.is_none_or(|n| r.age < n),
            RevealKind::Map => !r.applied,
        });
    }
}
