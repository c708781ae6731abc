//! The exact rasterizer of shapes in Q3 texel space: pass 1 of the CPU
//! backend (blockers and the height capture -> coverage + height) and the
//! coverage of scripted reveals (`FogSubsystem::reveal`), one rule for both.
//!
//! Inputs: circles and polygons in Q3 texel space, captured heights per texel.
//! Outputs: `coverage` (1 where a shape holds the texel centre, outline
//! included, or the capture has a height) and `height` (the highest top there, `HEIGHT_FLOOR` elsewhere).
//! Invariant: the result does not depend on shape order (OR and max).
//! Twin: `backend-gpu/shaders/rasterize.wgsl`.

use crate::fixed::{HEIGHT_FLOOR, TEXEL_ONE};
use crate::frame::{CircleTexel, OcclusionInput, PolygonTexel, CAPTURE_EMPTY};
use crate::texture::TexelRect;
use rayon::prelude::*;

/// Q3 coordinate of the centre of texel `i`.
pub fn centre_q(i: u32) -> i64 {
    i64::from(i) * i64::from(TEXEL_ONE) + i64::from(TEXEL_ONE / 2)
}

/// Whether `(px, py)` lies inside the polygon or on its outline (a closed
/// set, even-odd rule), in exact integers.
///
/// The outline test comes first: the crossing count alone would decide
/// points on the outline by which way its half-open rule leans, which is not
/// symmetric under mirroring. With it, the answer is the exact geometric one,
/// so mirrored or rotated inputs cover mirrored or rotated texels.
pub fn polygon_contains(vertices: &[[i32; 2]], px: i64, py: i64) -> bool {
    let mut inside = false;
    let n = vertices.len();
    for i in 0..n {
        let a = vertices[i];
        let b = vertices[(i + 1) % n];
        let (ax, ay, bx, by) = (i64::from(a[0]), i64::from(a[1]), i64::from(b[0]), i64::from(b[1]));
        // On this edge: collinear and inside its bounding box.
        if (px - ax) * (by - ay) == (py - ay) * (bx - ax) && px >= ax.min(bx) && px <= ax.max(bx) && py >= ay.min(by) && py <= ay.max(by) {
            return true;
        }
        if (ay > py) != (by > py) {
            // Crossing x of the edge at py lies right of px?
            let lhs = (px - ax) * (by - ay);
            let rhs = (py - ay) * (bx - ax);
            let right = if by > ay { lhs < rhs } else { lhs > rhs };
            if right {
                inside = !inside;
            }
        }
    }
    inside
}

/// Rasterizes `input` into `coverage` and `height` (row-major, `width * height`).
pub fn rasterize(input: &OcclusionInput, coverage: &mut [u8], height: &mut [i32]) {
    let w = input.width as usize;
    coverage.par_chunks_mut(w).zip(height.par_chunks_mut(w)).enumerate().for_each(|(row, (cov, hgt))| rasterize_row(input, row as u32, cov, hgt));
}

/// Row `row` of [`rasterize`]: `cov` and `hgt` are that row.
pub fn rasterize_row(input: &OcclusionInput, row: u32, cov: &mut [u8], hgt: &mut [i32]) {
    rasterize_span(input, input.capture.as_deref(), row, 0, cov, hgt);
}

/// Texels `x0..x0 + cov.len()` of row `row` of [`rasterize`], with the
/// shapes of `shapes` and the captured heights `capture` (one per texel of
/// the whole grid): the same bytes as the whole row gives there, when
/// `shapes` holds every shape that may cover one of those texels.
pub fn rasterize_span(shapes: &OcclusionInput, capture: Option<&[i32]>, row: u32, x0: u32, cov: &mut [u8], hgt: &mut [i32]) {
    let w = shapes.width;
    let (n, x_end) = (cov.len(), x0 + cov.len() as u32);
    let py = centre_q(row);
    // The capture first, over an empty span: a texel with a captured height
    // is covered that high (one pass over the span, no branch per texel).
    if let Some(capture) = capture {
        let base = (row * w + x0) as usize;
        for ((c, h), &q) in cov.iter_mut().zip(hgt.iter_mut()).zip(&capture[base..base + n]) {
            let held = q != CAPTURE_EMPTY;
            *c = u8::from(held);
            *h = if held { q } else { HEIGHT_FLOOR };
        }
    } else {
        cov.fill(0);
        hgt.fill(HEIGHT_FLOOR);
    }
    let mut mark = |x: u32, top: i32| {
        let i = (x - x0) as usize;
        if cov[i] == 0 || hgt[i] < top {
            hgt[i] = if cov[i] == 0 { top } else { hgt[i].max(top) };
        }
        cov[i] = 1;
    };
    for c in &shapes.circles {
        let (cx, cy, r) = (i64::from(c.x), i64::from(c.y), i64::from(c.radius));
        let dy = py - cy;
        if dy.abs() > r {
            continue;
        }
        let Some((lo, hi)) = crate::binning::texel_span(c.x, c.radius, w) else {
            continue;
        };
        for x in lo.max(x0)..=hi.min(x_end.saturating_sub(1)) {
            let dx = centre_q(x) - cx;
            if dx * dx + dy * dy <= r * r {
                mark(x, c.height);
            }
        }
    }
    for p in &shapes.polygons {
        let verts = &shapes.vertices[p.first as usize..(p.first + p.count) as usize];
        let (x_lo, x_hi, y_lo, y_hi) = vertex_bounds(verts);
        if py < i64::from(y_lo) || py > i64::from(y_hi) {
            continue;
        }
        let Some((lo, hi)) = centre_span(i64::from(x_lo), i64::from(x_hi), w) else {
            continue;
        };
        for x in lo.max(x0)..hi.min(x_end) {
            if polygon_contains(verts, centre_q(x), py) {
                mark(x, p.height);
            }
        }
    }
}

/// Texels `lo..hi` (clipped to `0..n`) whose centres may lie in `[a, b]`
/// (Q3): every centre of the closed range, and one texel more on each side.
fn centre_span(a: i64, b: i64, n: u32) -> Option<(u32, u32)> {
    let one = i64::from(TEXEL_ONE);
    let lo = (a - one / 2).div_euclid(one).max(0);
    let hi = ((b - one / 2).div_euclid(one) + 2).min(i64::from(n));
    (lo < hi).then_some((lo as u32, hi as u32))
}

/// The texels a circle may cover on a `width x height` grid: every texel
/// [`rasterize_row`] can mark for it lies inside (`None`: none at all).
pub fn circle_rect(c: &CircleTexel, width: u32, height: u32) -> Option<TexelRect> {
    let (x, y, r) = (i64::from(c.x), i64::from(c.y), i64::from(c.radius));
    let (x0, x1) = centre_span(x - r, x + r, width)?;
    let (y0, y1) = centre_span(y - r, y + r, height)?;
    Some(TexelRect { x0, y0, x1, y1 })
}

/// The lowest and highest X, then Y, of `vertices` (Q3).
fn vertex_bounds(vertices: &[[i32; 2]]) -> (i32, i32, i32, i32) {
    vertices.iter().fold((i32::MAX, i32::MIN, i32::MAX, i32::MIN), |(x0, x1, y0, y1), v| (x0.min(v[0]), x1.max(v[0]), y0.min(v[1]), y1.max(v[1])))
}

/// The texels a polygon (its vertices, Q3) may cover on a `width x height`
/// grid, as [`circle_rect`].
pub fn polygon_rect(vertices: &[[i32; 2]], width: u32, height: u32) -> Option<TexelRect> {
    let (x_lo, x_hi, y_lo, y_hi) = vertex_bounds(vertices);
    let (x0, x1) = centre_span(i64::from(x_lo), i64::from(x_hi), width)?;
    let (y0, y1) = centre_span(i64::from(y_lo), i64::from(y_hi), height)?;
    Some(TexelRect { x0, y0, x1, y1 })
}

/// `input` with only the shapes that may cover a texel of `rect`: what
/// [`rasterize_row`] needs to redo the texels of `rect` (the capture, if
/// any, is left out: the caller lends it).
pub fn shapes_meeting(input: &OcclusionInput, rect: &TexelRect) -> OcclusionInput {
    let (w, h) = (input.width, input.height);
    let mut out = OcclusionInput {
        width: w,
        height: h,
        build_mips: input.build_mips,
        distance_field_scale: input.distance_field_scale,
        ..OcclusionInput::default()
    };
    out.circles.extend(input.circles.iter().filter(|c| circle_rect(c, w, h).is_some_and(|r| r.meets(rect))));
    for p in &input.polygons {
        let verts = &input.vertices[p.first as usize..(p.first + p.count) as usize];
        if polygon_rect(verts, w, h).is_some_and(|r| r.meets(rect)) {
            out.polygons.push(PolygonTexel { first: out.vertices.len() as u32, ..*p });
            out.vertices.extend_from_slice(verts);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::{CircleTexel, PolygonTexel};

    #[test]
    fn circle_and_square_cover_expected_texels() {
        let input = OcclusionInput {
            width: 16,
            height: 16,
            circles: vec![CircleTexel { x: 4 * 8 + 4, y: 4 * 8 + 4, radius: 8 + 4, height: 7 }],
            polygons: vec![PolygonTexel { first: 0, count: 4, height: 9, pad: 0 }],
            vertices: vec![[80, 80], [112, 80], [112, 112], [80, 112]],
            ..Default::default()
        };
        let mut cov = vec![0u8; 256];
        let mut hgt = vec![0i32; 256];
        rasterize(&input, &mut cov, &mut hgt);
        // Circle of radius 1.5 texels around texel (4,4): the 3x3 block minus nothing
        // (corners are at sqrt(2) < 1.5).
        for y in 0..16 {
            for x in 0..16 {
                let in_circle = (3..=5).contains(&x) && (3..=5).contains(&y);
                let in_square = (10..14).contains(&x) && (10..14).contains(&y);
                let i = y * 16 + x;
                assert_eq!(cov[i] == 1, in_circle || in_square, "texel {x},{y}");
                let expect = if in_circle {
                    7
                } else if in_square {
                    9
                } else {
                    HEIGHT_FLOOR
                };
                assert_eq!(hgt[i], expect, "height at {x},{y}");
            }
        }
    }

    /// The capture written in one pass is what marking each captured texel
    /// over an empty row gives, with shapes above and below it and over
    /// captured and empty texels.
    #[test]
    fn capture_then_shapes_as_texel_marks() {
        let (w, h) = (13u32, 9u32);
        let capture: Vec<i32> = (0..w * h).map(|i| if (i * 7) % 5 == 0 { CAPTURE_EMPTY } else { (i as i32 * 37) % 23 - 11 }).collect();
        let input = OcclusionInput {
            width: w,
            height: h,
            circles: vec![CircleTexel { x: 4 * 8 + 4, y: 4 * 8 + 4, radius: 8 * 3, height: 0 }],
            polygons: vec![PolygonTexel { first: 0, count: 4, height: 5, pad: 0 }],
            vertices: vec![[40, 8], [96, 8], [96, 56], [40, 56]],
            capture: Some(capture.clone()),
            ..Default::default()
        };
        let (mut cov, mut hgt) = (vec![7u8; (w * h) as usize], vec![3i32; (w * h) as usize]);
        rasterize(&input, &mut cov, &mut hgt);
        // The shapes alone, then each captured texel marked over them.
        let (mut want_cov, mut want_hgt) = (vec![0u8; (w * h) as usize], vec![0i32; (w * h) as usize]);
        rasterize(&OcclusionInput { capture: None, ..input.clone() }, &mut want_cov, &mut want_hgt);
        for (i, &q) in capture.iter().enumerate() {
            if q != CAPTURE_EMPTY {
                want_hgt[i] = if want_cov[i] == 0 { q } else { want_hgt[i].max(q) };
                want_cov[i] = 1;
            }
        }
        assert_eq!((cov, hgt), (want_cov, want_hgt));
    }

    #[test]
    fn concave_polygon_even_odd() {
        // An L shape.
        let v = [[0, 0], [24, 0], [24, 8], [8, 8], [8, 24], [0, 24]];
        assert!(polygon_contains(&v, 4, 4));
        assert!(polygon_contains(&v, 20, 4));
        assert!(polygon_contains(&v, 4, 20));
        assert!(!polygon_contains(&v, 20, 20));
        // The outline belongs to the shape, from either side.
        assert!(polygon_contains(&v, 24, 4) && polygon_contains(&v, 16, 8) && polygon_contains(&v, 0, 24) && polygon_contains(&v, 8, 16));
        assert!(!polygon_contains(&v, 25, 4) && !polygon_contains(&v, 16, 9));
    }
}
