//! Z layering: which sources and blockers take part in an instance, and how
//! strongly (`docs/determinism.md` gives the rule and its fixed-point
//! bounds).
//!
//! The logical slab is the area's Z band widened by `z_layering_area_scale`;
//! the visual band (for materials) is never widened.

use crate::fixed::MASK_MAX;
use crate::transform::Area;

/// A vertical interval in world units.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Slab {
    /// Bottom Z.
    pub bottom: f64,
    /// Top Z.
    pub top: f64,
}

impl Slab {
    /// The logical slab of an area.
    pub fn logical(area: &Area, area_scale: f32) -> Slab {
        let half = f64::from(area.extents.z) * f64::from(area_scale) / 2.0;
        let c = f64::from(area.center.z);
        Slab { bottom: c - half, top: c + half }
    }

    /// Reveal strength of a source whose participating interval is
    /// `z ..= z + extent`: `None` when it does not overlap the slab, else the
    /// overlapping fraction of the interval on the mask scale.
    pub fn source_strength(&self, z: f64, extent: f64) -> Option<u16> {
        if extent <= 0.0 {
            return (z >= self.bottom && z <= self.top).then_some(MASK_MAX);
        }
        let overlap = (z + extent).min(self.top) - z.max(self.bottom);
        if overlap <= 0.0 {
            return None;
        }
        Some(((overlap / extent).min(1.0) * f64::from(MASK_MAX)).round() as u16)
    }

    /// Whether a blocker column `z ..= z + height` (`None`: unbounded) overlaps the slab.
    pub fn holds_column(&self, z: f64, height: Option<f64>) -> bool {
        let top = height.map_or(f64::INFINITY, |h| z + h);
        top >= self.bottom && z <= self.top
    }

    /// Whether a captured height lies inside the slab.
    pub fn holds_height(&self, z: f64) -> bool {
        z >= self.bottom && z <= self.top
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strength_follows_overlap() {
        let s = Slab { bottom: 0.0, top: 10.0 };
        assert_eq!(s.source_strength(2.0, 4.0), Some(65535));
        assert_eq!(s.source_strength(8.0, 4.0), Some(32768));
        assert_eq!(s.source_strength(11.0, 4.0), None);
        assert_eq!(s.source_strength(-4.0, 4.0), None);
        assert_eq!(s.source_strength(5.0, 0.0), Some(65535));
        assert!(s.holds_column(-5.0, None));
        assert!(!s.holds_column(-5.0, Some(4.0)));
        assert!(s.holds_column(9.0, Some(4.0)));
    }
}
