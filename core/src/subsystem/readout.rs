//! Reading the state out: textures, the final mask, how much is explored,
//! the material parameters for a shader, and the inputs a tick would hand
//! the backend (for benches and tools).

use super::fog::FogSubsystem;
use super::gather::gather;
use super::rules::recompute_input;
use super::sources::WorldSources;
use super::terrain::CaptureHeights;
use crate::backend::Readback;
use crate::error::{MurkError, Result};
use crate::frame::{OcclusionInput, RecomputeInput};
use crate::query::Explored;
use crate::texture::{Texture, TextureData, TextureImage, TextureRow};
use hecs::World;

impl FogSubsystem {
    /// The material parameter block of an instance (area, cutoff, Z
    /// layering, explored value), ready to upload as a uniform for
    /// `backend-gpu/include/murk_fog.wgsl`.
    pub fn shader_params(&self, name: &str) -> Result<crate::frame::ShaderParams> {
        let slot = self.slot(name)?;
        let (a, p) = (&slot.desc.area, &slot.desc.profile);
        let flag = |b: bool| if b { 1.0 } else { 0.0 };
        Ok(crate::frame::ShaderParams {
            center: a.center.into(),
            enabled: flag(p.enabled && p.show_fog),
            // The span the texture really covers: rows are whole texels.
            size: [a.extents.x, a.extents.x * slot.dims.out_height as f32 / slot.dims.out_width as f32, a.extents.z],
            yaw_degrees: a.yaw_degrees,
            visibility_cutoff: p.visibility_cutoff,
            use_z_layering: flag(p.z_layering),
            explored_value: p.explored_value,
            mapped_value: p.explored_value * p.mapped_fraction,
        })
    }

    /// The inputs the backend would get for a full recompute of `name` now
    /// (occlusion with a fresh capture, and visibility through upscale, with
    /// rate steps for `elapsed_us`): for benches and tools that drive single
    /// passes. Changes nothing.
    pub fn frame_inputs(&self, name: &str, world: &World, elapsed_us: u64) -> Result<(OcclusionInput, RecomputeInput)> {
        let slot = self.slot(name)?;
        let mut result = None;
        self.backend.run_parallel(&mut || result = Some(gather(slot, world, &WorldSources::of(world))));
        let g = result.expect("run_parallel runs its work")?;
        let mut occlusion = g.occlusion;
        g.blocker_memo.shapes().lend_to(&mut occlusion);
        occlusion.capture = match g.capture.and_then(|c| c.heights) {
            Some(CaptureHeights::Whole(texels)) => Some(texels),
            Some(CaptureHeights::Rows { first, texels }) => slot.state.capture.clone().map(|mut all| {
                let at = first as usize * slot.dims.width as usize;
                all[at..at + texels.len()].copy_from_slice(&texels);
                all
            }),
            None => slot.state.capture.clone(),
        };
        Ok((occlusion, recompute_input(slot, g.sources, elapsed_us)?))
    }

    /// Reads one texture of an instance (a pyramid level it has not built
    /// is an error naming it).
    pub fn read_texture(&mut self, name: &str, texture: Texture) -> Result<TextureImage> {
        let key = self.slot(name)?.key;
        self.backend.read_texture(key, texture)
    }

    /// Reads one row of the texture table of an instance whole, the pyramid
    /// as its levels side by side (see [`crate::backend::read_row`]).
    pub fn read_row(&mut self, name: &str, row: &TextureRow) -> Result<TextureImage> {
        let slot = self.slot(name)?;
        let (key, dims, build) = (slot.key, slot.dims, slot.state.built_for);
        crate::backend::read_row(&mut *self.backend, key, dims, build, row)
    }

    /// The final mask (output resolution, row-major).
    pub fn final_mask(&mut self, name: &str) -> Result<Vec<u16>> {
        match self.read_texture(name, Texture::Final)?.data {
            TextureData::U16(v) => Ok(v),
            other => Err(MurkError::backend_message(self.backend.name(), format!("final mask has type {other:?}"))),
        }
    }

    /// How much of an instance's grid its explored memory covers: the
    /// texels of [`Texture::Memory`] above 0, as the last tick (or load)
    /// left them. The CPU backend keeps a count per tile and recounts only
    /// the tiles written since it was last asked; the GPU backend counts on
    /// the device and this call waits for its one value. For a team's
    /// share, ask the instance that observes that team.
    pub fn explored(&mut self, name: &str) -> Result<Explored> {
        let slot = self.slot(name)?;
        let key = slot.key;
        let texels = match self.backend.count_explored(key)? {
            Readback::Ready(count) => count,
            Readback::Ticket(ticket) => {
                let count = self.backend.poll_hashes(ticket, true)?.and_then(|v| v.first().copied());
                count.ok_or_else(|| MurkError::ReadbackLost { backend: self.backend.name(), what: "explored count" })?
            }
        };
        self.explored_of(name, texels)
    }

    /// [`Self::explored`] without waiting, for a host that cannot block (a
    /// browser on WebGPU): the first call asks the backend to count, and
    /// the calls after it give the count once it has landed (`None` until
    /// then; on the CPU it is there at once), then ask anew. The count is
    /// of the memory as the last tick left it when it was asked.
    pub fn poll_explored(&mut self, name: &str) -> Result<Option<Explored>> {
        let slot = self.slot(name)?;
        let ticket = match slot.caches.explored_asked {
            Some(ticket) => ticket,
            None => match self.backend.count_explored(slot.key)? {
                Readback::Ready(count) => return self.explored_of(name, count).map(Some),
                Readback::Ticket(ticket) => ticket,
            },
        };
        let landed = self.backend.poll_hashes(ticket, false);
        let slot = self.slot_mut(name)?;
        slot.caches.explored_asked = match &landed {
            Ok(None) => Some(ticket),
            _ => None,
        };
        match landed? {
            Some(v) => {
                let count = v.first().copied().ok_or_else(|| MurkError::ReadbackLost { backend: self.backend.name(), what: "explored count" })?;
                self.explored_of(name, count).map(Some)
            }
            None => Ok(None),
        }
    }

    /// The explored count of instance `name`, checked against its grid.
    fn explored_of(&self, name: &str, texels: u64) -> Result<Explored> {
        let dims = self.slot(name)?.dims;
        let of = u64::from(dims.width) * u64::from(dims.height);
        if texels > of {
            return Err(MurkError::backend_message(self.backend.name(), format!("counted {texels} explored texels of {of}")));
        }
        Ok(Explored { texels, of })
    }
}
