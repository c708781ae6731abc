//! The 3D fog surface's settings and vertex grid ([`SurfaceParams`]), its
//! noise ([`surface_elevation`]), the heights a backend answers
//! ([`SurfaceGrid`]), and whether a tall object shows above it.

use crate::mask::MaskView;
use crate::noise::value_noise3;
use murk_core::error::{MurkError, Result};
use murk_core::frame::ShaderParams;

/// The 3D fog surface's settings and the
/// vertex grid it is evaluated on. Uploaded as-is to the GPU (`#[repr(C)]`,
/// mirrored by `SurfaceParams` in `backend-gpu/shaders/looks/surface.wgsl`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct SurfaceParams {
    /// World XY of vertex (0, 0).
    pub origin: [f32; 2],
    /// World distance between neighbouring vertices along X and Y.
    pub spacing: [f32; 2],
    /// Vertices along X.
    pub cols: u32,
    /// Vertices along Y.
    pub rows: u32,
    /// Animation time in seconds.
    pub time_s: f32,
    /// World Z of the fog's top where nothing is explored.
    pub fog_level: f32,
    /// Height of the noise waves on the top (world units).
    pub amplitude: f32,
    /// Noise frequency (waves per world unit).
    pub noise_scale: f32,
    /// Noise drift speed (lattice units per second).
    pub speed: f32,
    /// How far below the ground a fully explored vertex sinks (hides it).
    pub sink: f32,
}

impl SurfaceParams {
    /// A grid of `cols x rows` vertices over an area of `size` centred at
    /// `center` (XY), with murk's stock look at a scale of `fog_level`.
    pub fn over(center: [f32; 2], size: [f32; 2], cols: u32, rows: u32, fog_level: f32) -> Self {
        let spacing = [size[0] / (cols.max(2) - 1) as f32, size[1] / (rows.max(2) - 1) as f32];
        Self {
            origin: [center[0] - 0.5 * size[0], center[1] - 0.5 * size[1]],
            spacing,
            cols,
            rows,
            time_s: 0.0,
            fog_level,
            amplitude: 0.35 * fog_level,
            noise_scale: 24.0 / size[0].max(size[1]).max(1e-3),
            speed: 0.15,
            sink: 0.05 * fog_level,
        }
    }

    /// Rejects grids of fewer than 2x2 or more than 4096x4096 vertices and
    /// non-finite or negative settings, naming the field.
    pub fn validate(&self) -> Result<()> {
        for (name, n) in [("surface cols", self.cols), ("surface rows", self.rows)] {
            if !(2..=4096).contains(&n) {
                return Err(MurkError::invalid(name, n, "must be within 2..=4096"));
            }
        }
        for (name, v) in [
            ("surface origin x", self.origin[0]),
            ("surface origin y", self.origin[1]),
            ("surface time_s", self.time_s),
            ("surface fog_level", self.fog_level),
        ] {
            murk_core::error::finite(name, v)?;
        }
        for (name, v) in [
            ("surface spacing x", self.spacing[0]),
            ("surface spacing y", self.spacing[1]),
            ("surface amplitude", self.amplitude),
            ("surface noise_scale", self.noise_scale),
            ("surface speed", self.speed),
            ("surface sink", self.sink),
        ] {
            murk_core::error::in_range(name, v, 0.0, 1.0e6)?;
        }
        Ok(())
    }

    /// World XY of vertex `(i, j)`.
    pub fn vertex_xy(&self, i: u32, j: u32) -> [f32; 2] {
        [self.origin[0] + i as f32 * self.spacing[0], self.origin[1] + j as f32 * self.spacing[1]]
    }
}

/// The surface's noise elevation at a world point, about `0..1.2`: two
/// octaves of 3D value noise drifting in time plus a finer detail octave.
pub fn surface_elevation(x: f32, y: f32, p: &SurfaceParams) -> f32 {
    let (sx, sy, t) = (x * p.noise_scale, y * p.noise_scale, p.time_s * p.speed);
    let fbm = 0.65 * value_noise3([sx, sy, t]) + 0.35 * value_noise3([2.0 * sx + 17.0, 2.0 * sy + 5.0, 2.0 * t]);
    fbm + 0.2 * value_noise3([3.0 * sx + 41.0, 3.0 * sy + 23.0, 1.5 * t])
}

/// A backend's answer for the surface: per vertex, its height and how far it
/// has dropped (0 = floating at the fog level, 1 = sunk to the ground).
#[derive(Clone, Debug, PartialEq)]
pub struct SurfaceGrid {
    /// Vertices along X.
    pub cols: u32,
    /// Vertices along Y.
    pub rows: u32,
    /// World Z per vertex, row-major.
    pub z: Vec<f32>,
    /// Drop factor per vertex in `0..1`.
    pub drop: Vec<f32>,
}

/// Checks the shared inputs of [`Looks::surface`].
pub fn validate_surface(mask: &MaskView, ground: &[f32], params: &SurfaceParams) -> Result<()> {
    mask.validate()?;
    params.validate()?;
    let n = params.cols as usize * params.rows as usize;
    if ground.len() != n {
        return Err(MurkError::invalid("surface ground", ground.len(), format!("must hold cols x rows = {n} heights")));
    }
    if let Some(i) = ground.iter().position(|g| !g.is_finite()) {
        return Err(MurkError::invalid(format!("surface ground[{i}]"), ground[i], "must be finite"));
    }
    Ok(())
}

/// Whether a tall object at `world` is hidden by the fog surface: an object
/// shows once the explored mask under it passes 0.6.
pub fn object_hidden(mask: &MaskView, area: &ShaderParams, world: [f32; 3]) -> bool {
    mask.known_at(world, area) <= 0.6
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tall_object_shows_once_the_ground_under_it_is_explored() {
        let texels = [0u16, 32768, 65535, 65535];
        let m = MaskView { width: 4, height: 1, texels: &texels, explored: 0.5, mapped: 0.0 };
        let a = ShaderParams { center: [10.0, 20.0, 0.0], enabled: 1.0, size: [40.0, 20.0, 10.0], explored_value: 0.5, ..Default::default() };
        // Texel centres at x = -5, 5, 15, 25 in world.
        assert!(object_hidden(&m, &a, [-5.0, 20.0, 0.0]) && !object_hidden(&m, &a, [15.0, 20.0, 0.0]));
    }
}
