//! The premade looks' fixture, tolerances and low-resolution goldens.
//!
//! One small synthetic scene serves every look: a 48x32 mask with a visible
//! disc, an explored band and never-seen ground, over a 96x64 world area;
//! terrain with a ridge; a camera looking over it. The CPU reference renders
//! the goldens (`looks-goldens/<look>.png`, written by `murk-bless`); every
//! backend must stay within each look's tolerance of them and of the CPU.

use crate::error::{Context, HarnessError};
use murk_core::ShaderParams;
use murk_looks::{Camera, Look, Looks, MaskView, OverlayStyle, SurfaceParams, VolumeFrame, VolumeParams, VolumeScene};
use std::path::{Path, PathBuf};

/// Overlay: most an 8-bit channel may differ between backends (floats in
/// the shading: `sin`, rounding at .5).
pub const OVERLAY_TOLERANCE: u8 = 2;
/// Surface: most a vertex height or drop factor may differ (world units).
pub const SURFACE_TOLERANCE: f32 = 2.0e-3;
/// Volume: most a scattered-light channel or the transmittance may differ.
pub const VOLUME_TOLERANCE: f32 = 4.0e-3;
/// Goldens: most an 8-bit channel of a golden PNG may differ (the goldens
/// quantise the float outputs, so one step either side is allowed).
pub const GOLDEN_TOLERANCE: u8 = 2;

/// The looks goldens folder.
pub fn looks_goldens_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("looks-goldens")
}

/// The shared scene.
pub struct Fixture {
    /// Mask width.
    pub width: u32,
    /// Mask height.
    pub height: u32,
    /// The mask: visible disc, explored band, never seen elsewhere.
    pub mask: Vec<u16>,
    /// Per-texel zone tint (two zones).
    pub tint: Vec<[u8; 3]>,
    /// The area (explored value 0.5).
    pub area: ShaderParams,
    /// Surface grid settings.
    pub surface: SurfaceParams,
    /// Ground height at each surface vertex.
    pub ground: Vec<f32>,
    /// The camera of the volume look.
    pub camera: Camera,
    /// Depth from the camera to the terrain per pixel.
    pub depth: Vec<f32>,
}

/// Terrain height of the fixture at a world point: flat, with a ridge.
pub fn fixture_ground(x: f32, y: f32) -> f32 {
    let d = (x - 70.0).abs().max((y - 40.0).abs() * 0.25);
    if d < 4.0 {
        6.0 * (1.0 - d / 4.0)
    } else {
        0.0
    }
}

impl Fixture {
    /// Builds the scene.
    pub fn new() -> Self {
        let (width, height) = (48u32, 32u32);
        let mut mask = Vec::new();
        let mut tint = Vec::new();
        for y in 0..height {
            for x in 0..width {
                let (dx, dy) = (x as f32 - 14.0, y as f32 - 16.0);
                let r = (dx * dx + dy * dy).sqrt();
                mask.push(if r < 8.0 {
                    65535
                } else if x < 30 {
                    32768
                } else if x < 38 {
                    // Mapped: known from a map, never seen.
                    16384
                } else {
                    0
                });
                tint.push(if y < 16 { [170, 150, 120] } else { [120, 150, 190] });
            }
        }
        let area = ShaderParams {
            center: [48.0, 32.0, 4.0],
            enabled: 1.0,
            size: [96.0, 64.0, 8.0],
            explored_value: 0.5,
            mapped_value: 0.25,
            ..Default::default()
        };
        let mut surface = SurfaceParams::over([48.0, 32.0], [96.0, 64.0], 49, 33, 3.0);
        surface.time_s = 2.5;
        let ground = (0..surface.rows)
            .flat_map(|j| (0..surface.cols).map(move |i| (i, j)))
            .map(|(i, j)| {
                let [x, y] = surface.vertex_xy(i, j);
                fixture_ground(x, y)
            })
            .collect();
        let camera = Camera { eye: [48.0, -30.0, 40.0], target: [48.0, 34.0, 0.0], fov_y_degrees: 55.0, width: 96, height: 64 };
        let depth = depth_buffer(&camera, fixture_ground);
        Self { width, height, mask, tint, area, surface, ground, camera, depth }
    }

    /// The mask as a view.
    pub fn view(&self) -> MaskView<'_> {
        MaskView { width: self.width, height: self.height, texels: &self.mask, explored: 0.5, mapped: 0.25 }
    }

    /// The volume settings of the fixture at frame `frame`.
    pub fn volume_params(&self, frame: u32) -> VolumeParams {
        VolumeParams { time_s: frame as f32 * 0.25, frame, ..VolumeParams::ground_fog(3.0) }
    }

    /// The volume scene (no history).
    pub fn scene(&self) -> VolumeScene<'_> {
        VolumeScene { camera: &self.camera, depth: &self.depth, history: None }
    }
}

impl Default for Fixture {
    fn default() -> Self {
        Self::new()
    }
}

/// Distance along each pixel's ray to a heightfield (marched in small steps
/// and refined by bisection); `f32::INFINITY` where the ray misses.
pub fn depth_buffer(camera: &Camera, height: impl Fn(f32, f32) -> f32) -> Vec<f32> {
    let mut out = Vec::with_capacity((camera.width * camera.height) as usize);
    for y in 0..camera.height {
        for x in 0..camera.width {
            let d = camera.ray(x as f32 + 0.5, y as f32 + 0.5);
            let above = |t: f32| camera.eye[2] + d[2] * t - height(camera.eye[0] + d[0] * t, camera.eye[1] + d[1] * t);
            let (mut t, step) = (0.0f32, 0.5f32);
            let mut hit = f32::INFINITY;
            while t < 600.0 {
                if above(t + step) <= 0.0 {
                    let (mut lo, mut hi) = (t, t + step);
                    for _ in 0..20 {
                        let mid = 0.5 * (lo + hi);
                        if above(mid) > 0.0 {
                            lo = mid;
                        } else {
                            hi = mid;
                        }
                    }
                    hit = hi;
                    break;
                }
                t += step;
            }
            out.push(hit);
        }
    }
    out
}

/// A look rendered as an 8-bit RGBA image.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LookImage {
    /// The look.
    pub look: Look,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// `width * height * 4` bytes.
    pub pixels: Vec<u8>,
}

/// The three looks of the fixture rendered as 8-bit RGBA images: the
/// overlay as it is; the surface as (height, drop, 0, 255) per vertex with
/// heights over 0..8 world units; the volume's full frame as scattered
/// light and transmittance.
pub fn render_looks(looks: &mut dyn Looks, fx: &Fixture) -> Result<Vec<LookImage>, HarnessError> {
    let overlay = looks.overlay(&fx.view(), Some(&fx.tint), 1.5, &OverlayStyle::default()).context(|| "the overlay look".into())?;
    let surface = looks.surface(&fx.view(), &fx.area, &fx.ground, &fx.surface).context(|| "the surface look".into())?;
    let (_, full) = looks.volume(&fx.view(), &fx.area, &fx.scene(), &fx.volume_params(0)).context(|| "the volume look".into())?;
    let q = |v: f32| (v * 255.0 + 0.5).floor().clamp(0.0, 255.0) as u8;
    let surface_px = surface.z.iter().zip(&surface.drop).flat_map(|(z, d)| [q(z / 8.0), q(*d), 0, 255]).collect();
    Ok(vec![
        LookImage { look: Look::Overlay, width: overlay.width, height: overlay.height, pixels: overlay.pixels },
        LookImage { look: Look::Surface, width: surface.cols, height: surface.rows, pixels: surface_px },
        LookImage { look: Look::Volume, width: full.width, height: full.height, pixels: volume_rgba(&full) },
    ])
}

/// A volume frame as 8-bit RGBA (scattered light clamped to 0..1, alpha =
/// transmittance).
pub fn volume_rgba(frame: &VolumeFrame) -> Vec<u8> {
    let q = |v: f32| (v * 255.0 + 0.5).floor().clamp(0.0, 255.0) as u8;
    frame.texels.iter().flat_map(|t| t.map(q)).collect()
}

/// Compares two RGBA8 images channel by channel: `Err` names the largest
/// difference and the first pixel over `tolerance`.
pub fn compare_rgba(what: &str, width: u32, a: &[u8], b: &[u8], tolerance: u8) -> Result<u8, HarnessError> {
    if a.len() != b.len() {
        return Err(HarnessError::Mismatch(format!("{what}: sizes differ ({} vs {} bytes)", a.len(), b.len())));
    }
    let worst = a.iter().zip(b).map(|(x, y)| x.abs_diff(*y)).max().unwrap_or(0);
    if let Some(i) = a.iter().zip(b).position(|(x, y)| x.abs_diff(*y) > tolerance) {
        let p = (i / 4) as u32;
        return Err(HarnessError::Mismatch(format!(
            "{what}: largest channel difference {worst} > {tolerance}; first at pixel ({}, {}) channel {}: {} vs {}",
            p % width,
            p / width,
            i % 4,
            a[i],
            b[i]
        )));
    }
    Ok(worst)
}

/// Compares float arrays: `Err` names the largest difference and the first
/// index over `tolerance`.
pub fn compare_f32(what: &str, a: &[f32], b: &[f32], tolerance: f32) -> Result<f32, HarnessError> {
    if a.len() != b.len() {
        return Err(HarnessError::Mismatch(format!("{what}: lengths differ ({} vs {})", a.len(), b.len())));
    }
    let worst = a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0f32, f32::max);
    if let Some(i) = a
        .iter()
        .zip(b)
        .position(|(x, y)| !matches!((x - y).abs().partial_cmp(&tolerance), Some(std::cmp::Ordering::Less | std::cmp::Ordering::Equal)))
    {
        return Err(HarnessError::Mismatch(format!("{what}: largest difference {worst} > {tolerance}; first at index {i}: {} vs {}", a[i], b[i])));
    }
    Ok(worst)
}

/// Writes an RGBA8 PNG.
pub fn write_rgba(path: &Path, width: u32, height: u32, px: &[u8]) -> Result<(), HarnessError> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| HarnessError::file(dir, format!("cannot create: {e}")))?;
    }
    let file = std::fs::File::create(path).map_err(|e| HarnessError::file(path, format!("cannot create: {e}")))?;
    let mut enc = png::Encoder::new(std::io::BufWriter::new(file), width, height);
    enc.set_color(png::ColorType::Rgba);
    enc.set_depth(png::BitDepth::Eight);
    enc.write_header().and_then(|mut w| w.write_image_data(px)).map_err(|e| HarnessError::file(path, format!("cannot write: {e}")))
}

/// Reads an RGBA8 PNG.
pub fn read_rgba(path: &Path) -> Result<(u32, u32, Vec<u8>), HarnessError> {
    crate::harness::read_png(path, png::ColorType::Rgba, png::BitDepth::Eight)
}

/// Checks every look of `looks` against the goldens; on a mismatch writes
/// `<look>.actual.png` and `<look>.diff.png` (differences x16) under
/// `target/conformance-failures/looks-<label>/`.
pub fn check_goldens(looks: &mut dyn Looks, label: &str) -> Result<Vec<(Look, u8)>, HarnessError> {
    let fx = Fixture::new();
    let mut report = Vec::new();
    let mut failures = Vec::new();
    for LookImage { look, width: w, height: h, pixels: px } in render_looks(looks, &fx)? {
        let name = look.name();
        let (gw, gh, golden) = read_rgba(&looks_goldens_dir().join(format!("{name}.png")))?;
        if (gw, gh) != (w, h) {
            failures.push(format!("{name}: {w}x{h} vs golden {gw}x{gh}"));
            continue;
        }
        match compare_rgba(&format!("{label} {name} vs golden"), w, &px, &golden, GOLDEN_TOLERANCE) {
            Ok(worst) => report.push((look, worst)),
            Err(e) => {
                let dir = crate::harness::failures_dir().join(format!("looks-{label}"));
                let diff: Vec<u8> =
                    px.iter().zip(&golden).enumerate().map(|(i, (a, b))| if i % 4 == 3 { 255 } else { a.abs_diff(*b).saturating_mul(16) }).collect();
                write_rgba(&dir.join(format!("{name}.actual.png")), w, h, &px)?;
                write_rgba(&dir.join(format!("{name}.diff.png")), w, h, &diff)?;
                failures.push(format!("{e} (images in {})", dir.display()));
            }
        }
    }
    if failures.is_empty() {
        Ok(report)
    } else {
        Err(HarnessError::Mismatch(failures.join("\n")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comparisons_fail_past_the_tolerance_and_name_the_first_texel() {
        let a = [10u8, 20, 30, 255, 10, 20, 30, 255];
        let mut b = a;
        assert_eq!(compare_rgba("x", 2, &a, &b, 0).unwrap(), 0);
        b[5] = 23;
        assert_eq!(compare_rgba("x", 2, &a, &b, 3).unwrap(), 3);
        let e = compare_rgba("x", 2, &a, &b, 2).unwrap_err().to_string();
        assert!(e.contains("pixel (1, 0) channel 1: 20 vs 23"), "{e}");
        assert!(compare_f32("y", &[0.0, 1.0], &[0.0, 1.01], 0.001).unwrap_err().to_string().contains("index 1"));
        assert!(compare_f32("y", &[f32::NAN], &[0.0], 1.0).is_err(), "NaN never passes");
    }
}
