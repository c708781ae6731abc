//! The 3D fog surface: per vertex of a grid
//! over the area, the sheet floats at the fog level plus noise waves, and
//! sinks toward the ground below it as the mask there is explored:
//! `z = mix(fog_level + elevation * amplitude, ground - sink, drop)` with
//! `drop` the explored fraction (mask / explored value, clamped) around the
//! vertex (a 3x3 tent over the neighbouring vertices, then an S-curve, so
//! the edges taper). Twin: `backend-gpu/shaders/looks/surface.wgsl`.

use murk_core::{Result, ShaderParams};
use murk_looks::{smoothstep, surface_elevation, validate_surface, MaskView, SurfaceGrid, SurfaceParams};
use rayon::prelude::*;

/// One vertex: `(z, drop)`.
pub fn vertex(mask: &MaskView, area: &ShaderParams, ground: f32, params: &SurfaceParams, i: u32, j: u32) -> (f32, f32) {
    let [x, y] = params.vertex_xy(i, j);
    // A 3x3 tent over the neighbouring vertices, then an S-curve: the sheet
    // tapers to the ground over about two vertices, not in one step.
    let mut known = 0.0;
    for (b, wy) in [(-1.0f32, 0.25f32), (0.0, 0.5), (1.0, 0.25)] {
        for (a, wx) in [(-1.0f32, 0.25f32), (0.0, 0.5), (1.0, 0.25)] {
            known += wx * wy * mask.known_at([x + a * params.spacing[0], y + b * params.spacing[1], ground], area);
        }
    }
    let drop = smoothstep(0.0, 1.0, known);
    let top = params.fog_level + surface_elevation(x, y, params) * params.amplitude;
    let bottom = ground - params.sink;
    (top + (bottom - top) * drop, drop)
}

/// Evaluates the whole grid.
pub fn evaluate(mask: &MaskView, area: &ShaderParams, ground: &[f32], params: &SurfaceParams) -> Result<SurfaceGrid> {
    validate_surface(mask, ground, params)?;
    let cols = params.cols as usize;
    let mut pairs = vec![(0.0f32, 0.0f32); ground.len()];
    pairs.par_chunks_mut(cols).enumerate().for_each(|(j, row)| {
        for (i, v) in row.iter_mut().enumerate() {
            *v = vertex(mask, area, ground[j * cols + i], params, i as u32, j as u32);
        }
    });
    let (z, drop) = pairs.into_iter().unzip();
    Ok(SurfaceGrid { cols: params.cols, rows: params.rows, z, drop })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explored_ground_sinks_and_unexplored_floats() {
        // Left half explored (mask = explored value), right half never seen.
        let mask: Vec<u16> = (0..64 * 32).map(|i| if i % 64 < 32 { 32768 } else { 0 }).collect();
        let view = MaskView { width: 64, height: 32, texels: &mask, explored: 0.5, mapped: 0.0 };
        let area = ShaderParams { center: [32.0, 16.0, 0.0], enabled: 1.0, size: [64.0, 32.0, 8.0], explored_value: 0.5, ..Default::default() };
        let params = SurfaceParams::over([32.0, 16.0], [64.0, 32.0], 65, 33, 3.0);
        let ground = vec![0.5; 65 * 33];
        let grid = evaluate(&view, &area, &ground, &params).unwrap();
        let at = |i: usize, j: usize| (grid.z[j * 65 + i], grid.drop[j * 65 + i]);
        let (z, d) = at(8, 16);
        assert!(d > 0.99 && (z - (0.5 - params.sink)).abs() < 0.05, "explored: on the ground ({z}, {d})");
        let (z, d) = at(56, 16);
        assert!(d == 0.0 && z >= 3.0 && z <= 3.0 + 1.2 * params.amplitude, "unexplored: floating ({z}, {d})");
        // The waves move with time.
        let later = evaluate(&view, &area, &ground, &SurfaceParams { time_s: 3.0, ..params }).unwrap();
        assert_ne!(later.z[16 * 65 + 56], grid.z[16 * 65 + 56]);
        let short = evaluate(&view, &area, &ground[1..], &params).unwrap_err();
        assert!(short.to_string().contains("surface ground"));
    }
}
