//! The volumetric ground-fog look: its settings, the light and height-fog
//! terms, and the frames it renders.

use crate::camera::{normalize, Camera};
use murk_core::error::{MurkError, Result};

/// Volumetric ground fog settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VolumeParams {
    /// Extinction at Z = 0 where nothing is explored (per world unit).
    pub density: f32,
    /// Exponential height falloff `b` of `density * exp(-b z)` (per world unit).
    pub falloff: f32,
    /// March steps per pixel (12 to 16 is typical; `ground_fog` uses 14);
    /// 0 = the analytic low tier only.
    pub steps: u32,
    /// March range (world units); past it the analytic fog in closed form.
    pub range: f32,
    /// Noise frequency (lattice cells per world unit).
    pub noise_frequency: f32,
    /// Wind: noise drift in world units per second, XY.
    pub wind: [f32; 2],
    /// Henyey-Greenstein anisotropy `g` in `-0.99..0.99`.
    pub anisotropy: f32,
    /// Unit direction toward the light.
    pub light_dir: [f32; 3],
    /// Light colour (linear, 0..1 and above).
    pub light_colour: [f32; 3],
    /// Ambient fog colour (linear).
    pub ambient_colour: [f32; 3],
    /// Weight of the new frame in the temporal blend (`ground_fog` uses 0.1); 1 = no history.
    pub temporal_blend: f32,
    /// Animation time in seconds.
    pub time_s: f32,
    /// Frame number (varies the per-pixel march jitter the temporal blend averages).
    pub frame: u32,
}

impl VolumeParams {
    /// Murk's stock look for a scene whose ground is at Z = 0 and whose fog
    /// bank is about `bank` world units deep.
    pub fn ground_fog(bank: f32) -> Self {
        Self {
            density: 18.0 / bank,
            falloff: 1.0 / (0.3 * bank),
            steps: 14,
            range: 40.0 * bank,
            noise_frequency: 0.6 / bank,
            wind: [0.4 * bank, 0.15 * bank],
            anisotropy: 0.35,
            light_dir: normalize([0.4, 0.6, 0.7]),
            light_colour: [0.55, 0.54, 0.50],
            ambient_colour: [0.30, 0.33, 0.40],
            temporal_blend: 0.1,
            time_s: 0.0,
            frame: 0,
        }
    }

    /// Rejects NaN, negative or out-of-range settings, naming the field.
    pub fn validate(&self) -> Result<()> {
        use murk_core::error::in_range;
        in_range("volume density", self.density, 0.0, 1.0e6)?;
        in_range("volume falloff", self.falloff, 1.0e-6, 1.0e6)?;
        if self.steps > 256 {
            return Err(MurkError::invalid("volume steps", self.steps, "must be within 0..=256"));
        }
        in_range("volume range", self.range, 0.0, 1.0e9)?;
        in_range("volume noise_frequency", self.noise_frequency, 0.0, 1.0e6)?;
        in_range("volume wind x", self.wind[0], -1.0e6, 1.0e6)?;
        in_range("volume wind y", self.wind[1], -1.0e6, 1.0e6)?;
        in_range("volume anisotropy", self.anisotropy, -0.99, 0.99)?;
        for (name, v) in
            [("volume light_dir", self.light_dir), ("volume light_colour", self.light_colour), ("volume ambient_colour", self.ambient_colour)]
        {
            for c in v {
                in_range(name, c, -1.0e3, 1.0e3)?;
            }
        }
        in_range("volume temporal_blend", self.temporal_blend, 0.0, 1.0)?;
        murk_core::error::finite("volume time_s", self.time_s)?;
        Ok(())
    }
}

/// Henyey-Greenstein phase, scaled so that an isotropic medium gives 1.
pub fn henyey_greenstein(cos_theta: f32, g: f32) -> f32 {
    let d = 1.0 + g * g - 2.0 * g * cos_theta;
    (1.0 - g * g) / (d * d.sqrt()).max(1e-6)
}

/// The optical depth of `density * exp(-falloff * z)` along `length` world
/// units of a ray starting at height `z0` with vertical direction `dir_z`, in
/// closed form (Quilez's "better fog"), with the horizontal limit. Written
/// as a difference of two exponentials of the end heights, so a long ray
/// from high above neither overflows nor underflows into `0 * inf`.
pub fn height_fog_depth(density: f32, falloff: f32, z0: f32, dir_z: f32, length: f32) -> f32 {
    let k = falloff * dir_z;
    if k.abs() < 1e-5 {
        density * (-falloff * z0).exp() * length
    } else {
        let z1 = z0 + dir_z * length;
        density * ((-falloff * z0).exp() - (-falloff * z1).exp()) / k
    }
}

/// A volume pass's output: scattered light (RGB) and transmittance, per
/// pixel, at half resolution (`march`) or full resolution (`upsample`).
#[derive(Clone, Debug, PartialEq)]
pub struct VolumeFrame {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// `[r, g, b, transmittance]` per pixel, row-major.
    pub texels: Vec<[f32; 4]>,
}

/// Half-resolution size of a camera image (rounded up).
pub fn half_size(width: u32, height: u32) -> (u32, u32) {
    (width.div_ceil(2), height.div_ceil(2))
}

/// What a volume frame needs besides the settings.
#[derive(Clone, Copy, Debug)]
pub struct VolumeScene<'a> {
    /// The camera.
    pub camera: &'a Camera,
    /// Distance from the eye along each full-resolution pixel's ray to the
    /// first surface (`f32::INFINITY` or any large value for sky).
    pub depth: &'a [f32],
    /// The previous half-resolution frame, for the temporal blend (same camera).
    pub history: Option<&'a VolumeFrame>,
}

impl VolumeScene<'_> {
    /// Checks the depth buffer and the history against the camera.
    pub fn validate(&self) -> Result<()> {
        self.camera.validate()?;
        let n = self.camera.width as usize * self.camera.height as usize;
        if self.depth.len() != n {
            return Err(MurkError::invalid("volume depth", self.depth.len(), format!("must hold width x height = {n} values")));
        }
        if let Some(i) = self.depth.iter().position(|d| d.is_nan() || *d < 0.0) {
            return Err(MurkError::invalid(format!("volume depth[{i}]"), self.depth[i], "must be a non-negative distance"));
        }
        if let Some(h) = self.history {
            let (w, hh) = half_size(self.camera.width, self.camera.height);
            if (h.width, h.height) != (w, hh) || h.texels.len() != (w * hh) as usize {
                return Err(MurkError::invalid(
                    "volume history",
                    format!("{}x{}", h.width, h.height),
                    format!("must be the half-resolution frame {w}x{hh}"),
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closed_form_height_fog_matches_a_fine_sum() {
        let (a, b, z0, dz, len) = (0.8f32, 0.5f32, 0.3f32, 0.2f32, 12.0f32);
        let n = 20000;
        let sum: f32 = (0..n).map(|i| a * (-b * (z0 + dz * (i as f32 + 0.5) * len / n as f32)).exp() * len / n as f32).sum();
        assert!((height_fog_depth(a, b, z0, dz, len) - sum).abs() < 1e-3 * sum);
        assert!((height_fog_depth(a, b, z0, 0.0, len) - a * (-b * z0).exp() * len).abs() < 1e-5);
        assert!((henyey_greenstein(0.3, 0.0) - 1.0).abs() < 1e-6);
    }
}
