//! Reading the state out: stages, the final mask, the lockstep hashes, the
//! material parameters for a shader, and the inputs a tick would hand the
//! backend (for benches and tools).

use super::project::gather;
use super::rules::recompute_input;
use super::FogSubsystem;
use crate::backend::{Stage, StageData, StageImage};
use crate::error::{MurkError, Result};
use crate::fixed::Fnv64;
use crate::frame::{OcclusionInput, RecomputeInput};
use hecs::{Entity, World};
use std::collections::BTreeMap;

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
            pad: 0.0,
        })
    }

    /// Lockstep hash of everything: every instance's final mask, memory and
    /// composed mask, and every stealth state. Equal on every peer that ran
    /// the same inputs, whatever its thread count.
    pub fn lockstep_hash(&mut self) -> Result<u64> {
        Ok(self.state_hashes()?.0)
    }

    /// The lockstep hash and, from the same pass over the textures, each
    /// instance's [`Self::state_hash`].
    pub fn state_hashes(&mut self) -> Result<(u64, BTreeMap<String, u64>)> {
        let mut per_instance = BTreeMap::new();
        let mut h = Fnv64::default();
        for name in self.instance_names() {
            let s = self.state_hash(&name)?;
            h.write(name.as_bytes());
            h.write(&s.to_le_bytes());
            per_instance.insert(name, s);
        }
        for (bits, state) in &self.stealth {
            if let Some(actor) = Entity::from_bits(*bits) {
                state.hash_into(actor, &mut h);
            }
        }
        Ok((h.finish(), per_instance))
    }

    /// The inputs the backend would get for a full recompute of `name` now
    /// (occlusion with a fresh capture, and visibility through upscale, with
    /// rate steps for `elapsed_us`): for benches and tools that drive single
    /// passes. Changes nothing.
    pub fn frame_inputs(&self, name: &str, world: &World, elapsed_us: u64) -> Result<(OcclusionInput, RecomputeInput)> {
        let slot = self.slot(name)?;
        let mut result = None;
        self.backend.run_parallel(&mut || result = Some(gather(slot, world)));
        let g = result.expect("run_parallel runs its work")?;
        let mut occlusion = g.occlusion;
        occlusion.capture = match g.capture {
            Some(super::capture::CaptureUpdate { heights: Some(texels), .. }) => Some(texels),
            _ => slot.state.capture.clone(),
        };
        Ok((occlusion, recompute_input(slot, g.sources, elapsed_us)?))
    }

    /// Reads a stage of an instance.
    pub fn read_stage(&mut self, name: &str, stage: Stage) -> Result<StageImage> {
        let key = self.slot(name)?.key;
        self.backend.read_stage(key, stage)
    }

    /// The final mask (output resolution, row-major).
    pub fn final_mask(&mut self, name: &str) -> Result<Vec<u16>> {
        match self.read_stage(name, Stage::Final)?.data {
            StageData::U16(v) => Ok(v),
            other => Err(MurkError::Backend { backend: self.backend.name(), message: format!("final mask has type {other:?}") }),
        }
    }

    /// Lockstep state hash of an instance: final mask, explored memory and
    /// composed mask, FNV-1a 64.
    pub fn state_hash(&mut self, name: &str) -> Result<u64> {
        let mut h = Fnv64::default();
        for stage in [Stage::Final, Stage::Memory, Stage::Compose] {
            h.write(&self.read_stage(name, stage)?.bytes());
        }
        Ok(h.finish())
    }
}
