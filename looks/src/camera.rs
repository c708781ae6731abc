//! The view the surface mesh and the volume look are seen through, and the
//! 3-vector helpers they share.

use murk_core::error::{MurkError, Result};
use murk_core::glam::Vec3;

/// A pinhole camera looking from `eye` toward `target`, world Z up.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Camera {
    /// Eye position.
    pub eye: [f32; 3],
    /// Point looked at.
    pub target: [f32; 3],
    /// Vertical field of view, degrees.
    pub fov_y_degrees: f32,
    /// Image width in pixels.
    pub width: u32,
    /// Image height in pixels.
    pub height: u32,
}

/// Dot product.
pub fn dot(a: [f32; 3], b: [f32; 3]) -> f32 {
    Vec3::from(a).dot(Vec3::from(b))
}

/// `v / |v|` (zero stays zero).
pub fn normalize(v: [f32; 3]) -> [f32; 3] {
    Vec3::from(v).normalize_or_zero().into()
}

impl Camera {
    /// Rejects zero-size images, a NaN or coincident eye and target, and a
    /// field of view outside 1..=170 degrees, naming the field.
    pub fn validate(&self) -> Result<()> {
        if self.width == 0 || self.height == 0 || self.width > 8192 || self.height > 8192 {
            return Err(MurkError::invalid("camera width x height", format!("{}x{}", self.width, self.height), "must be within 1..=8192 each"));
        }
        for (k, v) in self.eye.iter().chain(&self.target).enumerate() {
            murk_core::error::finite(["camera eye", "camera target"][k / 3], *v)?;
        }
        murk_core::error::in_range("camera fov_y_degrees", self.fov_y_degrees, 1.0, 170.0)?;
        let f = Vec3::from(self.target) - Vec3::from(self.eye);
        if f.length_squared() == 0.0 || f.normalize_or_zero().cross(Vec3::Z) == Vec3::ZERO {
            return Err(MurkError::invalid(
                "camera target",
                format!("{:?}", self.target),
                "must differ from the eye and not be straight below or above it",
            ));
        }
        Ok(())
    }

    /// The camera basis: forward (unit), right and up, the last two scaled so
    /// that `forward + ndc_x * right + ndc_y * up` is the ray through a point
    /// of normalised device coordinates (`-1..1`, Y up).
    pub fn basis(&self) -> [[f32; 3]; 3] {
        let f = (Vec3::from(self.target) - Vec3::from(self.eye)).normalize_or_zero();
        let r = f.cross(Vec3::Z).normalize_or_zero();
        let u = r.cross(f);
        let tan = (self.fov_y_degrees.to_radians() * 0.5).tan();
        let aspect = self.width as f32 / self.height as f32;
        [f.into(), (r * tan * aspect).into(), (u * tan).into()]
    }

    /// The unit ray through pixel coordinates `(px, py)` (pixel centres at +0.5).
    pub fn ray(&self, px: f32, py: f32) -> [f32; 3] {
        let [f, r, u] = self.basis();
        let (nx, ny) = (2.0 * px / self.width as f32 - 1.0, 1.0 - 2.0 * py / self.height as f32);
        normalize([0, 1, 2].map(|i| f[i] + nx * r[i] + ny * u[i]))
    }

    /// Projects a world point: pixel X, pixel Y and the view depth (distance
    /// along forward); `None` behind the eye.
    pub fn project(&self, p: [f32; 3]) -> Option<[f32; 3]> {
        let [f, r, u] = self.basis();
        let d = (Vec3::from(p) - Vec3::from(self.eye)).into();
        let z = dot(d, f);
        if z <= 1e-4 {
            return None;
        }
        let nx = dot(d, r) / dot(r, r) / z;
        let ny = dot(d, u) / dot(u, u) / z;
        Some([(nx + 1.0) * 0.5 * self.width as f32, (1.0 - ny) * 0.5 * self.height as f32, z])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn camera_projects_what_it_casts() {
        let cam = Camera { eye: [0.0, -50.0, 40.0], target: [0.0, 0.0, 0.0], fov_y_degrees: 50.0, width: 320, height: 200 };
        cam.validate().unwrap();
        let d = cam.ray(100.5, 60.5);
        let p = [0, 1, 2].map(|i| cam.eye[i] + 30.0 * d[i]);
        let [x, y, _] = cam.project(p).unwrap();
        assert!((x - 100.5).abs() < 1e-2 && (y - 60.5).abs() < 1e-2, "{x} {y}");
        let bad = Camera { target: [0.0, -50.0, 0.0], ..cam };
        assert!(bad.validate().unwrap_err().to_string().contains("camera target"));
        let empty = Camera { width: 0, ..cam };
        assert!(empty.validate().unwrap_err().to_string().contains("camera width x height"));
    }
}
