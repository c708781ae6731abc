//! What a fog instance is made of ([`InstanceDesc`]), and the checks a
//! description passes before an instance is made of it: the area, the
//! resolution, the profile, and the texel and slab sizes they give.

use super::naming::prefix_error;
use crate::backend::InstanceDims;
use crate::components::TeamMask;
use crate::error::{MurkError, Result};
use crate::fixed::{HEIGHT_LIMIT, HEIGHT_UNITS_PER_SLAB};
use crate::profile::{Profile, ProfileQ};
use crate::transform::{grid_size, Area, AreaTransform};
use serde::{Deserialize, Serialize};

/// The smallest internal texel an area may have, in world units; finer grids
/// (an area of 1e-30 units) are degenerate and rejected when created.
pub const MIN_TEXEL_SIZE: f64 = 1.0 / 65536.0;

/// The smallest height slab (`extents.z`), in world units (a height unit is
/// 1/256 of it).
pub const MIN_SLAB_HEIGHT: f64 = 1.0 / 256.0;

/// What a fog instance is made of.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InstanceDesc {
    /// Unique name.
    pub name: String,
    /// Covered area.
    pub area: Area,
    /// Output texels along the area's X side (rows follow from the aspect).
    pub resolution: u32,
    /// Internal downscale: passes run at `resolution >> lod`.
    #[serde(default)]
    pub lod: u32,
    /// Teams whose sources reveal this instance.
    #[serde(default)]
    pub observed_teams: TeamMask,
    /// Settings.
    #[serde(default)]
    pub profile: Profile,
}

/// What a checked description gives: the profile in integers, the
/// world-to-texel mapping at the internal resolution, and the sizes.
pub(crate) struct Checked {
    pub(crate) q: ProfileQ,
    pub(crate) transform: AreaTransform,
    pub(crate) dims: InstanceDims,
}

impl InstanceDesc {
    /// Checks the description (area, resolution, profile, the texel and
    /// slab sizes, the target height against the slab), with errors naming
    /// fields under `prefix`.
    pub(crate) fn checked(&self, prefix: &str) -> Result<Checked> {
        self.area.validate(&format!("{prefix}.area"))?;
        let q = self.profile.quantize(&format!("{prefix}.profile"))?;
        let (out_w, out_h) = grid_size(&self.area, self.resolution, self.lod).map_err(|e| prefix_error(e, prefix))?;
        let (w, h) = (out_w >> self.lod, out_h >> self.lod);
        let transform = AreaTransform::new(&self.area, w, h);
        if transform.texel_size() < MIN_TEXEL_SIZE {
            return Err(MurkError::invalid(
                format!("{prefix}.area.extents.x"),
                self.area.extents.x,
                format!(
                    "gives texels of {:e} world units at {w} internal texels; they must be at least 2^-16 = {MIN_TEXEL_SIZE:e} (a larger area or a lower resolution)",
                    transform.texel_size()
                ),
            ));
        }
        if f64::from(self.area.extents.z) < MIN_SLAB_HEIGHT {
            return Err(MurkError::invalid(
                format!("{prefix}.area.extents.z"),
                self.area.extents.z,
                format!("the height slab must be at least 2^-8 = {MIN_SLAB_HEIGHT} world units"),
            ));
        }
        self.target_height_units().map_err(|e| prefix_error(e, prefix))?;
        Ok(Checked { q, transform, dims: InstanceDims { width: w, height: h, out_width: out_w, out_height: out_h } })
    }

    /// The profile's target height in height units, checked against the
    /// height range.
    pub(crate) fn target_height_units(&self) -> Result<i32> {
        let units = f64::from(self.profile.target_height) / (f64::from(self.area.extents.z) / HEIGHT_UNITS_PER_SLAB);
        if units.abs() > f64::from(HEIGHT_LIMIT) {
            return Err(MurkError::invalid("profile.target_height", self.profile.target_height, "must stay within 256 slab heights (extents.z)"));
        }
        Ok(units.round() as i32)
    }
}
