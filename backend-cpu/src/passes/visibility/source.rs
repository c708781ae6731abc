//! The per-source steps of the visibility pass: one source's reveal at one
//! texel, steps 1-4 (range, cone, falloff, Z strength) and step 5 (the ray
//! over the occlusion, by the profile's method), as the pass's header
//! numbers them. The windows (`window.rs`) and the tests use these.

use super::march::{dda, distance_field_march, hard, step_scan, Ray};
use super::occlusion::Occlusion;
use super::shadowcast::RayBits;
use crate::passes::rasterize::centre_q;
use murk_core::fixed::{isqrt, mask_mul};
use murk_core::frame::{SOURCE_HAS_CONE, SOURCE_SEE_THROUGH};
use murk_core::{LineTexels, RayMethod, RayRule, RecomputeInput, SourceTexel};

/// The reveal of one source at one texel.
pub fn source_value(input: &RecomputeInput, occ: &Occlusion, s: &SourceTexel, x: u32, y: u32) -> u16 {
    source_value_with(input, occ, s, None, x, y)
}

/// [`source_value`], answered from the source's shadowcast window where it
/// settles the ray (see [`super::shadowcast`]), by the march otherwise.
pub(super) fn source_value_with(input: &RecomputeInput, occ: &Occlusion, s: &SourceTexel, bits: Option<&RayBits>, x: u32, y: u32) -> u16 {
    occluded_value(input, occ, s, bits, x, y, falloff_value(s, x, y))
}

/// Step 5 applied to `v`, the source's falloff at the texel.
pub(super) fn occluded_value(input: &RecomputeInput, occ: &Occlusion, s: &SourceTexel, bits: Option<&RayBits>, x: u32, y: u32, v: u16) -> u16 {
    if v == 0 || s.flags & SOURCE_SEE_THROUGH != 0 {
        return v;
    }
    let (sx, sy) = (s.x >> 3, s.y >> 3);
    let (tx, ty) = (x as i32, y as i32);
    if (sx, sy) == (tx, ty) {
        return v;
    }
    let target = i64::from(occ.height_at(tx, ty)) + i64::from(input.target_height);
    let eye = i64::from(s.eye);
    let ray = Ray { sx, sy, tx, ty, n: i64::from((tx - sx).abs().max((ty - sy).abs())), eye, rise: target - eye };
    match bits.and_then(|b| b.blocked(occ, tx, ty, target as i32, s.eye)) {
        Some(false) => return v,
        Some(true) => return 0,
        None => {}
    }
    mask_mul(v, march(&input.ray_rule(), occ, &ray))
}

/// The light `ray` lets through by `rule`'s march, `0..=65535`.
fn march(rule: &RayRule, occ: &Occlusion, ray: &Ray) -> u16 {
    let binary = matches!(rule.method, RayMethod::StepScan | RayMethod::Dda | RayMethod::HierarchicalDda);
    if binary && occ.empty_box(ray.sx, ray.sy, ray.tx, ray.ty) {
        return u16::MAX;
    }
    match rule.method {
        RayMethod::None => u16::MAX,
        RayMethod::StepScan => hard(step_scan(ray, occ)),
        RayMethod::Dda => hard(dda(ray, occ, false)),
        RayMethod::HierarchicalDda => hard(dda(ray, occ, true)),
        RayMethod::DistanceField => distance_field_march(ray, occ, rule),
    }
}

/// The light a sight line lets through, `0..=65535`: step 5 for a source
/// in texel `line.from` with its eye at `line.eye` and a target texel
/// `line.to` (a line within one texel lets everything through).
pub fn line_light(rule: &RayRule, occ: &Occlusion, line: &LineTexels) -> u16 {
    let ([sx, sy], [tx, ty]) = (line.from.map(|v| v as i32), line.to.map(|v| v as i32));
    if (sx, sy) == (tx, ty) {
        return u16::MAX;
    }
    let target = i64::from(occ.height_at(tx, ty)) + i64::from(rule.target_height);
    let eye = i64::from(line.eye);
    let ray = Ray { sx, sy, tx, ty, n: i64::from((tx - sx).abs().max((ty - sy).abs())), eye, rise: target - eye };
    march(rule, occ, &ray)
}

/// Steps 1-4 of a source at a texel: range, cone, falloff and Z strength
/// (no occlusion).
pub fn falloff_value(s: &SourceTexel, x: u32, y: u32) -> u16 {
    falloff_at(s, centre_q(x) - i64::from(s.x), centre_q(y) - i64::from(s.y))
}

/// [`falloff_value`] of a texel centre `(dx, dy)` Q3 texels from the source.
pub(super) fn falloff_at(s: &SourceTexel, dx: i64, dy: i64) -> u16 {
    let r = i64::from(s.radius);
    if dx.abs() >= r || dy.abs() >= r {
        return 0;
    }
    let d2 = dx * dx + dy * dy;
    if d2 >= r * r {
        return 0;
    }
    if s.flags & SOURCE_HAS_CONE != 0 && d2 > 0 {
        let d = i64::from(isqrt(d2 as u32));
        if dx * i64::from(s.cone_x) + dy * i64::from(s.cone_y) < i64::from(s.cone_cos) * d {
            return 0;
        }
    }
    let inner = i64::from(s.inner_radius);
    let v = if d2 <= inner * inner {
        u16::MAX
    } else {
        let d = i64::from(isqrt(d2 as u32));
        ((r - d) * 65535 / (r - inner)) as u16
    };
    mask_mul(v, s.strength as u16)
}
