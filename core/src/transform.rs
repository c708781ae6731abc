//! The one place that converts world space to texel space.
//!
//! Every position, radius, shape vertex, height and query goes through
//! [`AreaTransform`]; nothing else in murk converts. Converting in more than
//! one place lets the conversions drift apart ("transform drift"), the
//! classic bug of fog-of-war code.
//!
//! ```text
//!   world (x, y)             local (u, v)                 texel (col, row)
//!        y                        v                      (0,0)----------> col
//!        ^     area box           ^                        |  row 0 = local -v edge
//!        |    /yaw                |                        |
//!        +------> x               +------> u               v row
//! ```
//!
//! * local = rotate(-yaw) * (world - center); yaw is counter-clockwise in degrees.
//! * texel = local / texel_size + (width / 2, height / 2). Texel `(c, r)` covers
//!   `[c, c+1) x [r, r+1)`; its centre is `(c + 0.5, r + 0.5)`.
//! * Texels are square: `texel_size = extents.x / width`, and the row count
//!   follows from `extents.y` (rounded to whole internal texels).
//! * Heights are measured from the bottom of the box (`center.z - extents.z/2`)
//!   in units of `extents.z / 256`.

use crate::error::{finite, FieldName, MurkError, Result};
use crate::fixed::{HEIGHT_LIMIT, HEIGHT_UNITS_PER_SLAB, MAX_RESOLUTION, TEXEL_ONE};
use glam::Vec3;
use serde::{Deserialize, Serialize};

/// An instance's area: an oriented box in world space.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Area {
    /// Centre of the box (world XYZ).
    pub center: Vec3,
    /// Full size of the box (not half extents), world units.
    pub extents: Vec3,
    /// Rotation in the ground plane, degrees counter-clockwise.
    #[serde(default)]
    pub yaw_degrees: f32,
}

impl Area {
    /// Checks every field; `field` is the path used in errors.
    pub fn validate(&self, field: &str) -> Result<()> {
        for (axis, v) in [("x", self.center.x), ("y", self.center.y), ("z", self.center.z)] {
            finite(&format!("{field}.center.{axis}"), v)?;
        }
        for (axis, v) in [("x", self.extents.x), ("y", self.extents.y), ("z", self.extents.z)] {
            finite(&format!("{field}.extents.{axis}"), v)?;
            if v <= 0.0 {
                return Err(MurkError::invalid(format!("{field}.extents.{axis}"), v, "the area must have a positive size"));
            }
        }
        finite(&format!("{field}.yaw_degrees"), self.yaw_degrees)?;
        Ok(())
    }

    /// The smallest area with the same yaw and Z slab that also holds `point`
    /// in the ground plane (an area grown to take in a point).
    pub fn expanded_to_include(&self, point: Vec3) -> Area {
        let (s, c) = sin_cos_degrees(f64::from(self.yaw_degrees));
        let dx = f64::from(point.x) - f64::from(self.center.x);
        let dy = f64::from(point.y) - f64::from(self.center.y);
        let u = dx * c + dy * s;
        let v = -dx * s + dy * c;
        let (hx, hy) = (f64::from(self.extents.x) / 2.0, f64::from(self.extents.y) / 2.0);
        let (u0, u1) = ((-hx).min(u), hx.max(u));
        let (v0, v1) = ((-hy).min(v), hy.max(v));
        let (mu, mv) = ((u0 + u1) / 2.0, (v0 + v1) / 2.0);
        let cx = f64::from(self.center.x) + mu * c - mv * s;
        let cy = f64::from(self.center.y) + mu * s + mv * c;
        Area {
            center: Vec3::new(cx as f32, cy as f32, self.center.z),
            extents: Vec3::new((u1 - u0) as f32, (v1 - v0) as f32, self.extents.z),
            yaw_degrees: self.yaw_degrees,
        }
    }
}

/// `sin` and `cos` of an angle in degrees, exact at multiples of 90 degrees.
///
/// libm keeps the value the same on every platform; the exact quarter turns
/// make the rotation metamorphic tests meaningful.
pub fn sin_cos_degrees(deg: f64) -> (f64, f64) {
    let turns = deg / 90.0;
    if turns == turns.round() {
        return match (turns.round() as i64).rem_euclid(4) {
            0 => (0.0, 1.0),
            1 => (1.0, 0.0),
            2 => (0.0, -1.0),
            _ => (-1.0, 0.0),
        };
    }
    let r = deg.to_radians();
    (libm::sin(r), libm::cos(r))
}

/// World to texel mapping of one instance at one resolution.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AreaTransform {
    center: [f64; 3],
    sin: f64,
    cos: f64,
    texel_size: f64,
    width: u32,
    height: u32,
    slab_bottom: f64,
    height_unit: f64,
}

/// Texel grid size for an area: `(width, height)` with square texels, the
/// height rounded to a multiple of `1 << lod`.
pub fn grid_size(area: &Area, resolution: u32, lod: u32) -> Result<(u32, u32)> {
    if resolution == 0 || resolution > MAX_RESOLUTION {
        return Err(MurkError::invalid("resolution", resolution, format!("must be within 1..={MAX_RESOLUTION}")));
    }
    if lod > 4 {
        return Err(MurkError::invalid("lod", lod, "must be within 0..=4"));
    }
    let step = 1u32 << lod;
    if !resolution.is_multiple_of(step) {
        return Err(MurkError::invalid("resolution", resolution, format!("must be a multiple of 2^lod = {step}")));
    }
    // Compared as a float before any integer is formed: a long thin area
    // (extents 1 x 2^60) must be an error, not a product that wraps to 0 rows.
    let internal_rows = (f64::from(area.extents.y) / f64::from(area.extents.x) * f64::from(resolution / step)).round().max(1.0);
    let rows = internal_rows * f64::from(step);
    if rows.is_nan() || rows > f64::from(MAX_RESOLUTION) {
        return Err(MurkError::invalid(
            "area.extents.y",
            area.extents.y,
            format!("gives {rows} rows at resolution {resolution}; at most {MAX_RESOLUTION}"),
        ));
    }
    Ok((resolution, rows as u32))
}

impl AreaTransform {
    /// The mapping of `area` onto a `width x height` texel grid whose X side is
    /// `width` texels. Validate the area first ([`Area::validate`]).
    pub fn new(area: &Area, width: u32, height: u32) -> Self {
        let (sin, cos) = sin_cos_degrees(f64::from(area.yaw_degrees));
        let ez = f64::from(area.extents.z);
        Self {
            center: [f64::from(area.center.x), f64::from(area.center.y), f64::from(area.center.z)],
            sin,
            cos,
            texel_size: f64::from(area.extents.x) / f64::from(width),
            width,
            height,
            slab_bottom: f64::from(area.center.z) - ez / 2.0,
            height_unit: ez / HEIGHT_UNITS_PER_SLAB,
        }
    }

    /// Grid width in texels.
    pub fn width(&self) -> u32 {
        self.width
    }
    /// Grid height in texels.
    pub fn height(&self) -> u32 {
        self.height
    }
    /// World units per texel.
    pub fn texel_size(&self) -> f64 {
        self.texel_size
    }

    /// Continuous texel coordinates of a world point (no rounding).
    pub fn world_to_texel(&self, x: f64, y: f64) -> (f64, f64) {
        let dx = x - self.center[0];
        let dy = y - self.center[1];
        let u = dx * self.cos + dy * self.sin;
        let v = -dx * self.sin + dy * self.cos;
        (u / self.texel_size + f64::from(self.width) / 2.0, v / self.texel_size + f64::from(self.height) / 2.0)
    }

    /// World point of continuous texel coordinates (inverse of [`Self::world_to_texel`]).
    pub fn texel_to_world(&self, tx: f64, ty: f64) -> (f64, f64) {
        let (u, v) = (self.texel_column_terms(tx), self.texel_row_terms(ty));
        self.texel_terms_to_world(u, v)
    }

    /// The terms [`Self::texel_to_world`] takes from the texel column `tx`:
    /// a loop over a grid computes them once per column and row, and gets
    /// the same bits as the per-point call.
    pub fn texel_column_terms(&self, tx: f64) -> (f64, f64) {
        let u = (tx - f64::from(self.width) / 2.0) * self.texel_size;
        (u * self.cos, u * self.sin)
    }

    /// The terms [`Self::texel_to_world`] takes from the texel row `ty`.
    pub fn texel_row_terms(&self, ty: f64) -> (f64, f64) {
        let v = (ty - f64::from(self.height) / 2.0) * self.texel_size;
        (v * self.sin, v * self.cos)
    }

    /// [`Self::texel_to_world`] from the terms of a column and a row.
    pub fn texel_terms_to_world(&self, column: (f64, f64), row: (f64, f64)) -> (f64, f64) {
        (self.center[0] + column.0 - row.0, self.center[1] + column.1 + row.1)
    }

    /// Ground-plane direction `(dx, dy)` (world) rotated into texel axes.
    pub fn direction_to_texel(&self, dx: f64, dy: f64) -> (f64, f64) {
        (dx * self.cos + dy * self.sin, -dx * self.sin + dy * self.cos)
    }

    /// Continuous texel coordinates to Q3, for points already in range.
    pub fn texel_q(tx: f64, ty: f64) -> [i32; 2] {
        [to_q(tx), to_q(ty)]
    }

    /// A world length in fixed-point texels (Q3).
    pub fn length_q(&self, field: impl FieldName, len: f32) -> Result<i32> {
        if !len.is_finite() {
            return Err(MurkError::invalid(field.field_name(), len, "must be a finite number"));
        }
        let l = f64::from(len);
        if l < 0.0 {
            return Err(MurkError::invalid(field.field_name(), len, "must not be negative"));
        }
        let q = (l / self.texel_size * f64::from(TEXEL_ONE)).round();
        if q > f64::from(i32::MAX / 2) {
            return Err(MurkError::invalid(field.field_name(), len, "is too long for this instance's resolution"));
        }
        Ok(q as i32)
    }

    /// [`Self::height_q`] without the error: `None` when `z` is not finite
    /// or out of range (for hot loops that format the field only on error).
    pub fn height_units(&self, z: f64) -> Option<i32> {
        let h = ((z - self.slab_bottom) / self.height_unit).round();
        (z.is_finite() && h.abs() <= f64::from(HEIGHT_LIMIT)).then_some(h as i32)
    }

    /// A vertical length (world units) in height units, within the height
    /// range.
    pub fn length_units(&self, field: impl FieldName, length: f64) -> Result<i32> {
        let h = (length / self.height_unit).round();
        if !h.is_finite() || h.abs() > f64::from(HEIGHT_LIMIT) {
            return Err(MurkError::invalid(field.field_name(), length, "must stay within 256 slab heights (extents.z)"));
        }
        Ok(h as i32)
    }

    /// A world height (Z) in height units above the bottom of the area box.
    pub fn height_q(&self, field: impl FieldName, z: f64) -> Result<i32> {
        if !z.is_finite() {
            return Err(MurkError::invalid(field.field_name(), z, "must be a finite number"));
        }
        let h = ((z - self.slab_bottom) / self.height_unit).round();
        if h.abs() > f64::from(HEIGHT_LIMIT) {
            return Err(MurkError::invalid(
                field.field_name(),
                z,
                format!(
                    "lies {:.0} slab heights from the instance area; heights must stay within 256 slab heights (extents.z) of its bottom",
                    (z - self.slab_bottom) / (self.height_unit * HEIGHT_UNITS_PER_SLAB)
                ),
            ));
        }
        Ok(h as i32)
    }
}

fn to_q(t: f64) -> i32 {
    (t * f64::from(TEXEL_ONE)).round() as i32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn area(yaw: f32) -> Area {
        Area { center: Vec3::new(10.0, -4.0, 5.0), extents: Vec3::new(64.0, 32.0, 10.0), yaw_degrees: yaw }
    }

    #[test]
    fn round_trip() {
        for yaw in [0.0, 30.0, 90.0, -45.0, 180.0] {
            let a = area(yaw);
            let (w, h) = grid_size(&a, 128, 0).unwrap();
            assert_eq!((w, h), (128, 64));
            let t = AreaTransform::new(&a, w, h);
            let (tx, ty) = t.world_to_texel(3.25, 7.5);
            let (x, y) = t.texel_to_world(tx, ty);
            assert!((x - 3.25).abs() < 1e-9 && (y - 7.5).abs() < 1e-9, "yaw {yaw}");
        }
    }

    #[test]
    fn centre_maps_to_grid_middle_and_axes_follow_yaw() {
        let t = AreaTransform::new(&area(90.0), 128, 64);
        assert_eq!(t.world_to_texel(10.0, -4.0), (64.0, 32.0));
        // Local +u points along world +y at yaw 90.
        let (tx, ty) = t.world_to_texel(10.0, -3.5);
        assert_eq!((tx, ty), (65.0, 32.0));
    }

    #[test]
    fn zero_size_area_is_rejected_with_field() {
        let mut a = area(0.0);
        a.extents.y = 0.0;
        let e = a.validate("instances[0].area").unwrap_err();
        assert!(e.to_string().contains("instances[0].area.extents.y = 0"), "{e}");
        a.extents.y = f32::NAN;
        assert!(a.validate("a").unwrap_err().to_string().contains("a.extents.y = NaN"));
    }

    #[test]
    fn over_bound_resolution_is_rejected() {
        let e = grid_size(&area(0.0), 8192, 0).unwrap_err();
        assert!(e.to_string().contains("resolution = 8192"), "{e}");
        assert!(grid_size(&area(0.0), 0, 0).is_err());
        assert!(grid_size(&area(0.0), 100, 3).unwrap_err().to_string().contains("multiple"));
    }

    #[test]
    fn a_long_thin_area_is_an_error_not_a_wrapped_row_count() {
        let mut a = area(0.0);
        a.extents = Vec3::new(1.0, 2f32.powi(60), 10.0);
        let e = grid_size(&a, 16, 4).unwrap_err().to_string();
        assert!(e.contains("area.extents.y = 1152921500000000000") && e.contains("at most 4096"), "{e}");
        a.extents = Vec3::new(1.0, f32::MAX, 10.0);
        assert!(grid_size(&a, 4096, 0).is_err());
        // The largest grid still fits.
        a.extents = Vec3::new(1.0, 1.0, 10.0);
        assert_eq!(grid_size(&a, 4096, 4).unwrap(), (4096, 4096));
    }

    #[test]
    fn heights_are_relative_to_slab_bottom() {
        let t = AreaTransform::new(&area(0.0), 128, 64);
        assert_eq!(t.height_q("z", 0.0).unwrap(), 0);
        assert_eq!(t.height_q("z", 10.0).unwrap(), 256);
        assert!(t.height_q("z", 1.0e6).unwrap_err().to_string().contains("z = 1000000"));
    }

    #[test]
    fn expand_keeps_yaw_and_contains_point() {
        let a = area(30.0);
        let b = a.expanded_to_include(Vec3::new(100.0, 50.0, 0.0));
        // The point lies on the grown box's edge (within rounding of f32 extents).
        let (w, h) = grid_size(&b, 256, 0).unwrap();
        let t = AreaTransform::new(&b, w, h);
        let (tx, ty) = t.world_to_texel(100.0, 50.0);
        let slack = 0.01 * f64::from(h);
        assert!(tx >= -slack && tx <= f64::from(w) + slack && ty >= -slack && ty <= f64::from(h) + slack, "{tx} {ty} in {w}x{h}");
        // The old box's corners are inside the new one.
        let (sn, cs) = sin_cos_degrees(30.0);
        for (u, v) in [(-32.0, -16.0), (32.0, -16.0), (32.0, 16.0), (-32.0, 16.0)] {
            let (x, y) = (10.0 + u * cs - v * sn, -4.0 + u * sn + v * cs);
            let (tx, ty) = t.world_to_texel(x, y);
            assert!(tx >= -slack && tx <= f64::from(w) + slack && ty >= -slack && ty <= f64::from(h) + slack, "corner {u},{v}: {tx} {ty}");
        }
        assert_eq!(b.yaw_degrees, 30.0);
    }
}
