//! The mask a look is drawn from ([`MaskView`]: a final mask and the
//! explored and mapped values it was made with), and the mapping of world
//! points onto it ([`fog_uv`]: the area transform of the engine include).

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
    }
}
