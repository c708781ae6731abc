//! Moving or resizing an instance's area, and the world-space resample of its
//! masks into the new grid.

use super::fog::FogSubsystem;
use super::reveal::check_reveals;
use crate::backend::{InstanceDims, InstanceKey};
use crate::error::{finite, MurkError, Result};
use crate::fixed::HEIGHT_FLOOR;
use crate::texture::{instance_textures, Grid, Resolution, Texture, TextureSet};
use crate::transform::{Area, AreaTransform};

impl FogSubsystem {
    /// Moves or resizes an instance's area.
    ///
    /// With the profile's `resample_on_area_change`, every mask texture
    /// (visibility, blur, explored memory, composed fade state; upscaled,
    /// blend start and final at the output resolution) is resampled into the
    /// new area in world space: each new texel takes the old texel under its
    /// centre, through an integer mapping (see [`resample_mask`]); texels of
    /// the new area that the old one did not cover start unexplored (0), and
    /// old texels that the new area does not cover are dropped. Without it,
    /// the masks are kept in texel space when the texture size is unchanged
    /// and start over when it changes. Occlusion is rebuilt on the next tick
    /// either way. An error changes nothing.
    pub fn set_area(&mut self, name: &str, area: Area) -> Result<()> {
        let slot = self.slot(name)?;
        let mut desc = slot.desc.clone();
        desc.area = area;
        let checked = desc.checked(&format!("instance `{name}`"))?;
        let (transform, dims) = (checked.transform, checked.dims);
        check_reveals(&slot.state.reveals, &transform)?;
        let (key, old_area, old_dims) = (slot.key, slot.desc.area, slot.dims);
        let resample = slot.desc.profile.resample_on_area_change && old_area != area;
        if resample {
            let textures = self.resample_textures(key, (&old_area, old_dims), (&area, dims))?;
            let new_key = self.next_key;
            let next_key = new_key
                .checked_add(1)
                .ok_or_else(|| MurkError::invalid("instance keys", new_key, "are used up: every key up to u32::MAX was given out"))?;
            self.backend.create_instance(new_key, dims)?;
            if let Err(e) = self.backend.write_textures(new_key, &textures) {
                self.backend.destroy_instance(new_key);
                return Err(e);
            }
            self.backend.destroy_instance(key);
            self.next_key = next_key;
            let slot = self.slot_mut(name)?;
            slot.key = new_key;
            // Fresh occlusion textures: nothing is built for them yet.
            slot.state.built_for = None;
            slot.state.capture = None;
            slot.caches.saved_capture = None;
        } else if dims != old_dims {
            self.backend.destroy_instance(key);
            self.backend.create_instance(key, dims)?;
            let slot = self.slot_mut(name)?;
            slot.state.has_recomputed = false;
            slot.state.built_for = None;
            slot.state.capture = None;
            slot.caches.saved_capture = None;
        }
        let slot = self.slot_mut(name)?;
        slot.desc = desc;
        slot.transform = transform;
        slot.dims = dims;
        slot.state.capture_dirty = true;
        slot.state.occlusion_dirty = true;
        // The reveals are measured again in the new grid.
        slot.reveal_stale = true;
        slot.unsettle();
        Ok(())
    }

    /// Grows an instance's area to include a world point (yaw and slab kept).
    pub fn expand_area_to_include(&mut self, name: &str, point: glam::Vec3) -> Result<()> {
        for (axis, v) in [("x", point.x), ("y", point.y), ("z", point.z)] {
            finite(|| format!("point.{axis}"), v)?;
        }
        let area = self.slot(name)?.desc.area.expanded_to_include(point);
        self.set_area(name, area)
    }
}

impl FogSubsystem {
    /// The textures of instance `key` moved from one area and size to
    /// another: every mask resampled with [`resample_mask`], occlusion empty
    /// and unbuilt (it is rebuilt on the next tick).
    fn resample_textures(&mut self, key: InstanceKey, from: (&Area, InstanceDims), to: (&Area, InstanceDims)) -> Result<TextureSet> {
        let ((old_area, old_dims), (area, dims)) = (from, to);
        let internal = (AreaTransform::new(old_area, old_dims.width, old_dims.height), AreaTransform::new(area, dims.width, dims.height));
        let output =
            (AreaTransform::new(old_area, old_dims.out_width, old_dims.out_height), AreaTransform::new(area, dims.out_width, dims.out_height));
        let mut out = Vec::new();
        for entry in instance_textures(dims, None) {
            let image = match entry.texture {
                Texture::Coverage => Grid::filled(entry.width, entry.height, 0u8).image(),
                Texture::Height => Grid::filled(entry.width, entry.height, HEIGHT_FLOOR).image(),
                Texture::DistanceField => Grid::<u32>::default().image(),
                mask => {
                    let (from, to) = if mask.resolution() == Resolution::Output { &output } else { &internal };
                    let old = self.backend.read_texture(key, mask)?;
                    let old = Grid::<u16>::from_image(&old).filter(|g| (g.width, g.height) == (from.width(), from.height())).ok_or_else(|| {
                        MurkError::backend_message(
                            self.backend.name(),
                            format!("texture `{}` is not a {}x{} mask", mask.name(), from.width(), from.height()),
                        )
                    })?;
                    Grid { width: to.width(), height: to.height(), texels: resample_mask(&old.texels, from, to) }.image()
                }
            };
            out.push((entry.texture, image));
        }
        TextureSet::new(dims, None, out, "resampled instance")
    }
}

/// Fractional bits of the resampling map.
const RESAMPLE_FRAC_BITS: u32 = 32;

/// Resamples a mask from the grid of `from` into the grid of `to` in world
/// space: each texel of `to` takes the texel of `from` that holds its centre,
/// or 0 where `from` does not reach.
///
/// The map from new texel coordinates to old ones is affine; its six
/// coefficients are computed once in `f64` (through the two transforms) and
/// rounded to 32 fractional bits; every texel then follows in 128-bit
/// integers, so the result is the same on every machine, and exact whenever
/// the coefficients are (a move by whole texels, a quarter turn, a texel
/// size ratio that is a power of two). Coefficients beyond 2^40 texels (an
/// area moved that far, or texels that many times larger) map nothing.
pub fn resample_mask(values: &[u16], from: &AreaTransform, to: &AreaTransform) -> Vec<u16> {
    let (ow, oh) = (from.width(), from.height());
    let (nw, nh) = (to.width(), to.height());
    let map = |tx: f64, ty: f64| {
        let (x, y) = to.texel_to_world(tx, ty);
        from.world_to_texel(x, y)
    };
    // The centre of new texel (0, 0), and the steps along a row and a column.
    let o = map(0.5, 0.5);
    let c = map(1.5, 0.5);
    let r = map(0.5, 1.5);
    let coefficients = [o.0, o.1, c.0 - o.0, c.1 - o.1, r.0 - o.0, r.1 - o.1];
    let limit = f64::from(1u32 << 20) * f64::from(1u32 << 20);
    let mut out = vec![0u16; (nw * nh) as usize];
    if coefficients.iter().any(|v| !v.is_finite() || v.abs() > limit) {
        return out;
    }
    let one = f64::from(1u32 << 16) * f64::from(1u32 << 16);
    let q: Vec<i128> = coefficients.iter().map(|v| (v * one).round() as i128).collect();
    for row in 0..nh {
        for col in 0..nw {
            let (cc, rr) = (i128::from(col), i128::from(row));
            let x = (q[0] + q[2] * cc + q[4] * rr) >> RESAMPLE_FRAC_BITS;
            let y = (q[1] + q[3] * cc + q[5] * rr) >> RESAMPLE_FRAC_BITS;
            if (0..i128::from(ow)).contains(&x) && (0..i128::from(oh)).contains(&y) {
                out[(row * nw + col) as usize] = values[(y as u32 * ow + x as u32) as usize];
            }
        }
    }
    out
}
