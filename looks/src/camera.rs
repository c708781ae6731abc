//! The view the surface mesh and the volume look are seen through, and the
//! 3-vector helpers they share.

use murk_core::error::{MurkError, Result};

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

fn sub(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}
fn cross(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}
/// Dot product.
pub fn dot(a: [f32; 3], b: [f32; 3]) -> f32 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}
/// `v / |v|` (zero stays zero).
pub fn normalize(v: [f32; 3]) -> [f32; 3] {
    let l = dot(v, v).sqrt();
    if l > 0.0 {
        v.map(|c| c / l)
    } else {
        v
    }
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
        let f = sub(self.target, self.eye);
        if dot(f, f) == 0.0 || cross(normalize(f), [0.0, 0.0, 1.0]) == [0.0; 3] {
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
        let f = normalize(sub(self.target, self.eye));
        let r = normalize(cross(f, [0.0, 0.0, 1.0]));
        let u = cross(r, f);
        let tan = (self.fov_y_degrees.to_radians() * 0.5).tan();
        let aspect = self.width as f32 / self.height as f32;
        [f, r.map(|c| c * tan * aspect), u.map(|c| c * tan)]
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
        let d = sub(p, self.eye);
        let z = dot(d, f);
        if z <= 1e-4 {
            return None;
        }
        let nx = dot(d, r) / dot(r, r) / z;
        let ny = dot(d, u) / dot(u, u) / z;
        Some([(nx + 1.0) * 0.5 * self.width as f32, (1.0 - ny) * 0.5 * self.height as f32, z])
    }
}
