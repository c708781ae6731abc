//! # murk-looks
//!
//! Premade fog looks: what a game draws from a final mask. They live outside
//! `murk-core`, which stays the deterministic integer core.
//!
//! ```
//! use murk_looks::{Looks, MaskView, OverlayStyle};
//!
//! // A 2 x 1 final mask: never seen, visible.
//! let texels = [0u16, 65535];
//! let mask = MaskView { width: 2, height: 1, texels: &texels, explored: 0.5, mapped: 0.0 };
//! // The CPU reference of the looks (`murk-gpu` has the same on the GPU).
//! let layer = murk_cpu::looks::CpuLooks.overlay(&mask, None, 0.0, &OverlayStyle::default())?;
//! assert_eq!(layer.pixels.len(), (layer.width * layer.height * 4) as usize);
//! let alpha = |x: u32| layer.pixels[(x * 4 + 3) as usize];
//! assert!(alpha(0) > alpha(layer.width - 1), "the unseen side is covered more than the visible one");
//! # Ok::<(), murk_core::MurkError>(())
//! ```
//!
//! Three looks, each computed by a backend through the [`Looks`] trait (the
//! CPU reference in `murk-cpu`, WGSL compute in `murk-gpu`):
//!
//! * **overlay** — the state overlay: clear where visible, a breathing
//!   tinted haze over explored ground, a map tint over mapped ground (known
//!   from a map, never seen), near-black where never seen
//!   ([`OverlayStyle`], an RGBA8 layer over the area).
//! * **surface** — the 3D fog surface: a heightfield sheet floating above the
//!   ground that sinks to the ground where the mask is explored
//!   ([`SurfaceParams`] in, a [`SurfaceGrid`] of vertex heights out; [`mesh`]
//!   turns it into chunks, levels of detail and glTF).
//! * **volume** — volumetric ground fog: a half-resolution march per pixel of
//!   a camera view, with the analytic height fog past the march
//!   ([`VolumeParams`], [`VolumeFrame`]).
//!
//! These are presentation: floats are fine here, CPU and GPU agree within the
//! tolerance each look states (see `docs/looks.md`), and gameplay never reads
//! them. The mask's world mapping is the one of [`ShaderParams`] (the same
//! transform `backend-gpu/include/murk_fog.wgsl` gives engines).

mod camera;
pub mod mesh;
mod noise;
mod volume;

pub use camera::{dot, normalize, Camera};
pub use noise::{hash3, smoothstep, value_noise2, value_noise3};
pub use volume::{half_size, height_fog_depth, henyey_greenstein, VolumeFrame, VolumeParams, VolumeScene};

use murk_core::error::{MurkError, Result};
use murk_core::frame::ShaderParams;

/// A final mask (or any 16-bit mask) and the explored value it was made with.
#[derive(Clone, Copy, Debug)]
pub struct MaskView<'a> {
    /// Width in texels.
    pub width: u32,
    /// Height in texels.
    pub height: u32,
    /// Row-major texels, 65535 = visible.
    pub texels: &'a [u16],
    /// The explored value in `0..1` (the profile's `explored_value`).
    pub explored: f32,
    /// The mapped value in `0..explored` (known from a map, never seen:
    /// the shader parameters' `mapped_value`); 0 draws no mapped state.
    pub mapped: f32,
}

impl MaskView<'_> {
    /// Checks the size and the explored value.
    pub fn validate(&self) -> Result<()> {
        if self.width == 0 || self.height == 0 {
            return Err(MurkError::invalid("mask width x height", format!("{}x{}", self.width, self.height), "must be at least 1x1"));
        }
        let n = self.width as usize * self.height as usize;
        if self.texels.len() != n {
            return Err(MurkError::invalid("mask texels", self.texels.len(), format!("must be width x height = {n}")));
        }
        if !(self.explored > 0.0 && self.explored <= 1.0) {
            return Err(MurkError::invalid("mask explored", self.explored, "must be in (0, 1]"));
        }
        if !(self.mapped >= 0.0 && self.mapped <= self.explored) {
            return Err(MurkError::invalid("mask mapped", self.mapped, format!("must be in [0, {}] (at most the explored value)", self.explored)));
        }
        Ok(())
    }

    /// The mask, bilinear with clamped edges, at `uv` (0..1 across the
    /// area), in `0..1`.
    pub fn sample(&self, uv: [f32; 2]) -> f32 {
        let x = uv[0] * self.width as f32 - 0.5;
        let y = uv[1] * self.height as f32 - 0.5;
        let (x0, y0) = (x.floor(), y.floor());
        let (fx, fy) = (x - x0, y - y0);
        let at = |dx: f32, dy: f32| {
            let cx = (x0 + dx).clamp(0.0, (self.width - 1) as f32) as usize;
            let cy = (y0 + dy).clamp(0.0, (self.height - 1) as f32) as usize;
            f32::from(self.texels[cy * self.width as usize + cx]) / 65535.0
        };
        let top = at(0.0, 0.0) + (at(1.0, 0.0) - at(0.0, 0.0)) * fx;
        let bottom = at(0.0, 1.0) + (at(1.0, 1.0) - at(0.0, 1.0)) * fx;
        top + (bottom - top) * fy
    }

    /// How explored a world point is, `0` (never seen) to `1` (explored or
    /// visible): the mask over the explored value, clamped. Outside the area
    /// (or with the instance disabled) it is `1`: murk puts no fog there.
    pub fn known_at(&self, world: [f32; 3], area: &ShaderParams) -> f32 {
        let uv = fog_uv(world, area);
        if area.enabled < 0.5 || !(0.0..=1.0).contains(&uv[0]) || !(0.0..=1.0).contains(&uv[1]) {
            return 1.0;
        }
        (self.sample(uv) / self.explored).clamp(0.0, 1.0)
    }
}

/// World XY to the area's UV (0..1), as `murk_fog_uv` in the engine include:
/// rotate by minus the yaw about the centre, divide by the size, offset by a half.
pub fn fog_uv(world: [f32; 3], area: &ShaderParams) -> [f32; 2] {
    let a = area.yaw_degrees.to_radians();
    let (dx, dy) = (world[0] - area.center[0], world[1] - area.center[1]);
    let (s, c) = a.sin_cos();
    [(dx * c + dy * s) / area.size[0] + 0.5, (-dx * s + dy * c) / area.size[1] + 0.5]
}

/// An 8-bit RGBA image, straight alpha, rows top to bottom.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RgbaImage {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// `width * height * 4` bytes.
    pub pixels: Vec<u8>,
}

/// How the three-state overlay looks.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OverlayStyle {
    /// Haze opacity over explored ground (default 0.30).
    pub haze_alpha: f32,
    /// Breathing amplitude around `haze_alpha` (default 0.05).
    pub breathing: f32,
    /// Breathing period in seconds (default 9; 8 to 10 is a typical range).
    pub period_s: f32,
    /// Colour of never-seen ground (default #12141a).
    pub unexplored: [u8; 3],
    /// Haze colour where no tint is given.
    pub haze: [u8; 3],
    /// Colour of mapped ground, known from a map and never seen (default
    /// #3c4150).
    pub mapped: [u8; 3],
    /// Opacity over mapped ground (default 0.75).
    pub mapped_alpha: f32,
    /// Output pixels per mask texel (default 4).
    pub upscale: u32,
}

impl Default for OverlayStyle {
    fn default() -> Self {
        Self {
            haze_alpha: 0.30,
            breathing: 0.05,
            period_s: 9.0,
            unexplored: [0x12, 0x14, 0x1a],
            haze: [150, 160, 175],
            mapped: [0x3c, 0x41, 0x50],
            mapped_alpha: 0.75,
            upscale: 4,
        }
    }
}

impl OverlayStyle {
    /// The blur the overlay puts the mask through before upscaling (the
    /// integer blur pass: Gaussian, radius 4, sigma 2), on every backend.
    pub fn kernel() -> murk_core::frame::BlurKernel {
        murk_core::frame::BlurKernel::gaussian(4, 2.0, 1)
    }

    /// Rejects NaN, negative or out-of-range settings, naming the field.
    pub fn validate(&self) -> Result<()> {
        murk_core::error::in_range("overlay haze_alpha", self.haze_alpha, 0.0, 1.0)?;
        murk_core::error::in_range("overlay breathing", self.breathing, 0.0, 1.0)?;
        murk_core::error::in_range("overlay mapped_alpha", self.mapped_alpha, 0.0, 1.0)?;
        murk_core::error::in_range("overlay period_s", self.period_s, 0.1, 1.0e6)?;
        if !(1..=16).contains(&self.upscale) {
            return Err(MurkError::invalid("overlay upscale", self.upscale, "must be within 1..=16"));
        }
        Ok(())
    }
}

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

/// Premade fog looks, computed by a backend. Presentation only: the answers
/// are floats and agree across backends within each look's tolerance.
pub trait Looks {
    /// The three-state overlay of `mask`, `style.upscale` times its size:
    /// the mask blurred (integer, as the blur pass), upscaled bilinearly (as
    /// the upscale pass), then shaded. `tint` gives one RGB per mask texel.
    fn overlay(&mut self, mask: &MaskView, tint: Option<&[[u8; 3]]>, time_s: f32, style: &OverlayStyle) -> Result<RgbaImage>;

    /// The fog surface's vertex heights over `params`' grid; `ground` holds
    /// the terrain's world Z at each vertex, row-major.
    fn surface(&mut self, mask: &MaskView, area: &ShaderParams, ground: &[f32], params: &SurfaceParams) -> Result<SurfaceGrid>;

    /// The volumetric fog of one camera frame: the half-resolution march
    /// (temporally blended with `scene.history`) and its depth-aware
    /// upsample to the camera's size. Returns `(half, full)`.
    fn volume(&mut self, mask: &MaskView, area: &ShaderParams, scene: &VolumeScene, params: &VolumeParams) -> Result<(VolumeFrame, VolumeFrame)>;
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

/// Checks a tint table against the mask.
pub fn validate_tint(mask: &MaskView, tint: Option<&[[u8; 3]]>) -> Result<()> {
    match tint {
        Some(t) if t.len() != mask.texels.len() => {
            Err(MurkError::invalid("overlay tint", t.len(), format!("must hold one colour per mask texel ({})", mask.texels.len())))
        }
        _ => Ok(()),
    }
}

/// Whether a tall object at `world` is hidden by the fog surface: an object
/// shows once the explored mask under it passes 0.6.
pub fn object_hidden(mask: &MaskView, area: &ShaderParams, world: [f32; 3]) -> bool {
    mask.known_at(world, area) <= 0.6
}

#[cfg(test)]
mod tests {
    use super::*;

    fn area() -> ShaderParams {
        ShaderParams {
            center: [10.0, 20.0, 0.0],
            enabled: 1.0,
            size: [40.0, 20.0, 10.0],
            yaw_degrees: 0.0,
            explored_value: 0.5,
            ..Default::default()
        }
    }

    #[test]
    fn uv_maps_the_area_corners_and_turns_with_the_yaw() {
        let a = area();
        assert_eq!(fog_uv([-10.0, 10.0, 0.0], &a), [0.0, 0.0]);
        assert_eq!(fog_uv([30.0, 30.0, 0.0], &a), [1.0, 1.0]);
        let turned = ShaderParams { yaw_degrees: 90.0, size: [20.0, 20.0, 10.0], ..a };
        // Local +X is world +Y after a quarter turn.
        let uv = fog_uv([10.0, 25.0, 0.0], &turned);
        assert!((uv[0] - 0.75).abs() < 1e-6 && (uv[1] - 0.5).abs() < 1e-6, "{uv:?}");
    }

    #[test]
    fn known_is_the_mask_over_explored_and_one_outside() {
        let texels = [0u16, 32768, 65535, 65535];
        let m = MaskView { width: 4, height: 1, texels: &texels, explored: 0.5, mapped: 0.0 };
        let a = area();
        // Texel centres at x = -5, 5, 15, 25 in world.
        assert_eq!(m.known_at([-5.0, 20.0, 0.0], &a), 0.0);
        assert!((m.known_at([5.0, 20.0, 0.0], &a) - 1.0).abs() < 1e-4);
        assert_eq!(m.known_at([0.0, 20.0, 0.0], &a), (32768.0 / 65535.0 / 2.0 / 0.5f32).clamp(0.0, 1.0));
        assert_eq!(m.known_at([100.0, 20.0, 0.0], &a), 1.0, "outside the area: no fog");
        assert!(object_hidden(&m, &a, [-5.0, 20.0, 0.0]) && !object_hidden(&m, &a, [15.0, 20.0, 0.0]));
    }

    #[test]
    fn closed_form_height_fog_matches_a_fine_sum() {
        let (a, b, z0, dz, len) = (0.8f32, 0.5f32, 0.3f32, 0.2f32, 12.0f32);
        let n = 20000;
        let sum: f32 = (0..n).map(|i| a * (-b * (z0 + dz * (i as f32 + 0.5) * len / n as f32)).exp() * len / n as f32).sum();
        assert!((height_fog_depth(a, b, z0, dz, len) - sum).abs() < 1e-3 * sum);
        assert!((height_fog_depth(a, b, z0, 0.0, len) - a * (-b * z0).exp() * len).abs() < 1e-5);
        assert!((henyey_greenstein(0.3, 0.0) - 1.0).abs() < 1e-6);
    }

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
