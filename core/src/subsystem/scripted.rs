//! Scripted reveals and hides, for one instance or for every instance
//! observing a team: starting and ending reveals, and hiding an area, which
//! rewrites explored memory and the mapped state (what a reveal is, and its
//! layer, are in `reveal.rs`).

use super::fog::FogSubsystem;
use super::reveal::{coverage, ActiveReveal, FogTarget, Reveal, RevealArea, RevealId, RevealKind};
use crate::components::TeamMask;
use crate::error::{finite, MurkError, Result};
use crate::texture::{instance_textures, Grid, Texture, TextureSet};

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
                TeamMask::check(*team, || "target.team".into())?;
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
            slot.state.reveals.push(ActiveReveal { id, reveal: reveal.clone(), age: 0, applied: false });
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
            let before = slot.state.reveals.len();
            slot.state.reveals.retain(|r| r.id != id);
            found |= slot.state.reveals.len() != before;
        }
        if found {
            Ok(())
        } else {
            Err(MurkError::invalid("reveal id", id.0, "names no running reveal"))
        }
    }

    /// The reveals an instance holds, oldest first.
    pub fn reveals(&self, name: &str) -> Result<&[ActiveReveal]> {
        Ok(&self.slot(name)?.state.reveals)
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
                self.slot_mut(name)?.state.reveals.clear();
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
    pub(crate) fn rewrite_masks(&mut self, name: &str, which: &[Texture], mut edit: impl FnMut(Texture, &mut Vec<u16>)) -> Result<()> {
        let slot = self.slot(name)?;
        let (key, dims, build) = (slot.key, slot.dims, slot.state.built_for);
        let mut textures = Vec::new();
        for entry in instance_textures(dims, build) {
            let mut image = self.backend.read_texture(key, entry.texture)?;
            if which.contains(&entry.texture) {
                let mut grid = Grid::<u16>::from_image(&image).filter(|g| (g.width, g.height) == (dims.width, dims.height)).ok_or_else(|| {
                    MurkError::backend_message(self.backend.name(), format!("texture `{}` is not an internal mask", entry.texture.name()))
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
        slot.caches.last_input = None;
        slot.unsettle();
        Ok(())
    }
}
