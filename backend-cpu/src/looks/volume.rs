//! Volumetric ground fog, one camera
//! frame in two steps. Twin: `backend-gpu/shaders/looks/volume.wgsl`.
//!
//! 1. **march**, at half resolution: each half pixel casts the ray through
//!    the centre of its 2x2 block to the nearest depth of the block, and
//!    from where the ray enters the fog bank (below the height where the
//!    density falls to 1 %) takes `steps` jittered samples up to the march
//!    range of the density
//!    `density * exp(-falloff * max(z, 0)) * (0.35 + 0.65 * noise) * open`
//!    (`noise` one octave of 3D value noise scrolled by the wind, `known`
//!    `1 - smoothstep(0, 0.75, known)` of the explored fraction `known` of
//!    the mask under the sample, so explored ground clears), with Beer-Lambert extinction and light from a
//!    Henyey-Greenstein lobe toward the light plus an ambient term; above
//!    the bank and past the range the analytic height fog in closed form
//!    (its noise at the mean, its height clamped at the ground) covers the
//!    ray; where the mask there is explored (or outside the area) that part
//!    adds nothing, so a sky ray never multiplies an infinite depth by zero. With `steps = 0` the analytic fog is the whole ray:
//!    the low tier. The result is blended with the previous frame
//!    (`temporal_blend` of the new one).
//! 2. **upsample**, at full resolution: the four nearest half pixels,
//!    bilinear weights times a depth-similarity weight, so fog does not bleed
//!    across silhouettes.

use murk_core::{Result, ShaderParams};
use murk_looks::{half_size, hash3, height_fog_depth, henyey_greenstein, smoothstep, value_noise3, MaskView, VolumeFrame, VolumeParams, VolumeScene};
use rayon::prelude::*;

/// Depths are clamped to this (sky).
pub const SKY_DEPTH: f32 = 1.0e5;

/// The nearest depth of half pixel `(x, y)`'s 2x2 block.
pub fn block_depth(depth: &[f32], width: u32, height: u32, x: u32, y: u32) -> f32 {
    let mut d = SKY_DEPTH;
    for (dx, dy) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
        let (px, py) = (2 * x + dx, 2 * y + dy);
        if px < width && py < height {
            d = d.min(depth[(py * width + px) as usize]);
        }
    }
    d
}

/// How much fog the mask leaves at a point: none once the ground there is
/// three quarters explored (remembered ground whose memory has faded a
/// little stays clear), all where it was never seen, smooth between.
pub fn open(mask: &MaskView, area: &ShaderParams, p: [f32; 3]) -> f32 {
    1.0 - smoothstep(0.0, 0.75, mask.known_at(p, area))
}

fn density(p: [f32; 3], mask: &MaskView, area: &ShaderParams, v: &VolumeParams) -> f32 {
    let q = [(p[0] - v.wind[0] * v.time_s) * v.noise_frequency, (p[1] - v.wind[1] * v.time_s) * v.noise_frequency, p[2] * v.noise_frequency];
    let noise = value_noise3(q);
    v.density * (-v.falloff * p[2].max(0.0)).exp() * (0.35 + 0.65 * noise) * open(mask, area, p)
}

/// The bank's ceiling: the height where the density falls to 1 % of the ground's.
pub fn ceiling(v: &VolumeParams) -> f32 {
    4.6 / v.falloff
}

/// Where the march runs along a ray from height `eye_z` with vertical
/// direction `dir_z` to a surface at `length`: from where the ray enters the
/// bank (below [`ceiling`]) for at most `range`, `(start, end)`; empty with
/// `steps = 0` or when the ray never enters the bank.
pub fn march_span(eye_z: f32, dir_z: f32, length: f32, v: &VolumeParams) -> (f32, f32) {
    let top = ceiling(v);
    let start = if eye_z <= top {
        0.0
    } else if dir_z < 0.0 {
        ((eye_z - top) / -dir_z).min(length)
    } else {
        length
    };
    if v.steps == 0 {
        (start, start)
    } else {
        (start, length.min(start + v.range))
    }
}

/// One half-resolution pixel: `[r, g, b, transmittance]` before the temporal blend.
pub fn march_pixel(mask: &MaskView, area: &ShaderParams, scene: &VolumeScene, v: &VolumeParams, x: u32, y: u32) -> [f32; 4] {
    let cam = scene.camera;
    let dir = cam.ray((2 * x + 1) as f32, (2 * y + 1) as f32);
    let length = block_depth(scene.depth, cam.width, cam.height, x, y);
    let phase = henyey_greenstein(murk_looks::dot(dir, v.light_dir), v.anisotropy);
    let light: [f32; 3] = [0, 1, 2].map(|c| v.light_colour[c] * phase + v.ambient_colour[c]);
    let at = |t: f32| [0, 1, 2].map(|c| cam.eye[c] + dir[c] * t);
    let (start, end) = march_span(cam.eye[2], dir[2], length, v);
    let (mut trans, mut scatter) = (1.0f32, [0.0f32; 3]);
    let mut add = |optical_depth: f32, trans: &mut f32| {
        let step = (-optical_depth).exp();
        for c in 0..3 {
            scatter[c] += *trans * (1.0 - step) * light[c];
        }
        *trans *= step;
    };
    // Above the bank: the closed form (its noise at the mean), open as the
    // mask where the ray enters the bank.
    let open_at = |t: f32| open(mask, area, at(t));
    if start > 0.0 && open_at(start) > 0.0 {
        add(open_at(start) * 0.675 * height_fog_depth(v.density, v.falloff, cam.eye[2].max(0.0), dir[2], start), &mut trans);
    }
    if end > start {
        let dt = (end - start) / v.steps as f32;
        let jitter = (hash3(x as i32, y as i32, v.frame as i32) & 0xffff) as f32 / 65535.0;
        for i in 0..v.steps {
            let p = at(start + (i as f32 + jitter) * dt);
            add(density(p, mask, area, v) * dt, &mut trans);
        }
    }
    if length > end && open_at(length) > 0.0 {
        add(open_at(length) * 0.675 * height_fog_depth(v.density, v.falloff, at(end)[2].max(0.0), dir[2], length - end), &mut trans);
    }
    [scatter[0], scatter[1], scatter[2], trans]
}

/// One full-resolution pixel of the depth-aware upsample of `half`.
pub fn upsample_pixel(half: &VolumeFrame, depth: &[f32], width: u32, height: u32, x: u32, y: u32) -> [f32; 4] {
    let d = depth[(y * width + x) as usize].min(SKY_DEPTH);
    let hx = (x as f32 + 0.5) * 0.5 - 0.5;
    let hy = (y as f32 + 0.5) * 0.5 - 0.5;
    let (x0, y0) = (hx.floor(), hy.floor());
    let (fx, fy) = (hx - x0, hy - y0);
    let (mut acc, mut total) = ([0.0f32; 4], 0.0f32);
    for (dx, dy, wb) in [(0, 0, (1.0 - fx) * (1.0 - fy)), (1, 0, fx * (1.0 - fy)), (0, 1, (1.0 - fx) * fy), (1, 1, fx * fy)] {
        let tx = (x0 as i32 + dx).clamp(0, half.width as i32 - 1) as u32;
        let ty = (y0 as i32 + dy).clamp(0, half.height as i32 - 1) as u32;
        let dh = block_depth(depth, width, height, tx, ty);
        let w = wb / (1.0e-3 + (d - dh).abs() / d.max(1.0e-3));
        let v = half.texels[(ty * half.width + tx) as usize];
        for c in 0..4 {
            acc[c] += w * v[c];
        }
        total += w;
    }
    acc.map(|a| a / total.max(1.0e-12))
}

/// The half-resolution march (blended with the history) and its upsample.
pub fn render(mask: &MaskView, area: &ShaderParams, scene: &VolumeScene, v: &VolumeParams) -> Result<(VolumeFrame, VolumeFrame)> {
    mask.validate()?;
    scene.validate()?;
    v.validate()?;
    let cam = scene.camera;
    let (hw, hh) = half_size(cam.width, cam.height);
    let mut texels = vec![[0.0f32; 4]; (hw * hh) as usize];
    texels.par_chunks_mut(hw as usize).enumerate().for_each(|(y, row)| {
        for (x, out) in row.iter_mut().enumerate() {
            let cur = march_pixel(mask, area, scene, v, x as u32, y as u32);
            *out = match scene.history {
                Some(h) => {
                    let old = h.texels[y * hw as usize + x];
                    [0, 1, 2, 3].map(|c| old[c] + (cur[c] - old[c]) * v.temporal_blend)
                }
                None => cur,
            };
        }
    });
    let half = VolumeFrame { width: hw, height: hh, texels };
    let mut full = vec![[0.0f32; 4]; (cam.width * cam.height) as usize];
    full.par_chunks_mut(cam.width as usize).enumerate().for_each(|(y, row)| {
        for (x, out) in row.iter_mut().enumerate() {
            *out = upsample_pixel(&half, scene.depth, cam.width, cam.height, x as u32, y as u32);
        }
    });
    let full = VolumeFrame { width: cam.width, height: cam.height, texels: full };
    Ok((half, full))
}

#[cfg(test)]
mod tests {
    use super::*;
    use murk_looks::Camera;

    /// A camera over flat ground at Z = 0, the depth buffer of that ground,
    /// and a mask explored on the left half of the area.
    fn scene() -> (Camera, Vec<f32>, Vec<u16>, ShaderParams) {
        let cam = Camera { eye: [32.0, -20.0, 30.0], target: [32.0, 32.0, 0.0], fov_y_degrees: 50.0, width: 64, height: 48 };
        let mut depth = Vec::new();
        for y in 0..cam.height {
            for x in 0..cam.width {
                let d = cam.ray(x as f32 + 0.5, y as f32 + 0.5);
                depth.push(if d[2] < 0.0 { -cam.eye[2] / d[2] } else { f32::INFINITY });
            }
        }
        let mask: Vec<u16> = (0..64 * 64).map(|i| if i % 64 < 32 { 32768 } else { 0 }).collect();
        let area = ShaderParams { center: [32.0, 32.0, 0.0], enabled: 1.0, size: [64.0, 64.0, 8.0], explored_value: 0.5, ..Default::default() };
        (cam, depth, mask, area)
    }

    fn ground_point(cam: &Camera, depth: &[f32], x: u32, y: u32) -> [f32; 3] {
        let d = cam.ray(x as f32 + 0.5, y as f32 + 0.5);
        let t = depth[(y * cam.width + x) as usize];
        [0, 1, 2].map(|c| cam.eye[c] + d[c] * t)
    }

    #[test]
    fn explored_ground_is_clear_and_unexplored_ground_is_fogged() {
        let (cam, depth, mask, area) = scene();
        let view = MaskView { width: 64, height: 64, texels: &mask, explored: 0.5, mapped: 0.0 };
        let params = VolumeParams::ground_fog(4.0);
        let (_, full) = render(&view, &area, &VolumeScene { camera: &cam, depth: &depth, history: None }, &params).unwrap();
        // Compare pixels whose whole ray stays over one half of the area.
        let (mut clear, mut foggy) = (0, 0);
        for y in 24..cam.height {
            for x in 0..cam.width {
                let p = ground_point(&cam, &depth, x, y);
                let t = full.texels[(y * cam.width + x) as usize][3];
                if p[0] < 20.0 && p[1] > 0.0 {
                    assert!(t > 0.97, "explored ground at {p:?} is clear: transmittance {t}");
                    clear += 1;
                } else if (48.0..60.0).contains(&p[0]) && (16.0..56.0).contains(&p[1]) {
                    assert!(t < 0.1, "never-seen ground at {p:?} is fogged: transmittance {t}");
                    foggy += 1;
                }
            }
        }
        assert!(clear > 100 && foggy > 100, "{clear} clear and {foggy} foggy pixels checked");
    }

    #[test]
    fn low_tier_and_temporal_blend() {
        let (cam, depth, mask, area) = scene();
        let view = MaskView { width: 64, height: 64, texels: &mask, explored: 0.5, mapped: 0.0 };
        let scene = VolumeScene { camera: &cam, depth: &depth, history: None };
        let marched = VolumeParams::ground_fog(4.0);
        let analytic = VolumeParams { steps: 0, ..marched };
        let (a, _) = render(&view, &area, &scene, &marched).unwrap();
        let (b, _) = render(&view, &area, &scene, &analytic).unwrap();
        // Over never-seen ground both tiers fog; they differ (noise) but agree roughly.
        let k = (20 * a.width + 28) as usize;
        assert!(a.texels[k][3] < 0.5 && b.texels[k][3] < 0.5, "{:?} {:?}", a.texels[k], b.texels[k]);
        // The temporal blend moves 10 % of the way from the history.
        let zero = VolumeFrame { width: a.width, height: a.height, texels: vec![[0.0; 4]; a.texels.len()] };
        let blended = VolumeScene { history: Some(&zero), ..scene };
        let (c, _) = render(&view, &area, &blended, &marched).unwrap();
        assert!((c.texels[k][3] - 0.1 * a.texels[k][3]).abs() < 1e-6);
        // Bad input names the field.
        let bad = VolumeParams { anisotropy: 1.5, ..marched };
        assert!(render(&view, &area, &scene, &bad).unwrap_err().to_string().contains("volume anisotropy"));
        let short = VolumeScene { depth: &depth[1..], ..scene };
        assert!(render(&view, &area, &short, &marched).unwrap_err().to_string().contains("volume depth"));
    }

    #[test]
    fn upsample_keeps_fog_off_a_nearer_silhouette() {
        // Half frame: left column fog-free (T = 1), right column foggy (T = 0).
        let (w, h) = (4u32, 2u32);
        let half = VolumeFrame { width: 2, height: 1, texels: vec![[0.0, 0.0, 0.0, 1.0], [0.0, 0.0, 0.0, 0.0]] };
        // Left block near (depth 5), right block far (depth 100).
        let depth: Vec<f32> = (0..w * h).map(|i| if i % w < 2 { 5.0 } else { 100.0 }).collect();
        let edge = upsample_pixel(&half, &depth, w, h, 1, 0);
        assert!(edge[3] > 0.99, "a near pixel next to far fog stays clear: {edge:?}");
        let other = upsample_pixel(&half, &depth, w, h, 2, 0);
        assert!(other[3] < 0.01, "{other:?}");
    }
}
