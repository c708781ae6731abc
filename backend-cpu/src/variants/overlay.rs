//! The three-state overlay (after `godot-fog-shader-architecture.md`):
//! clear where visible, a light breathing haze tinted per zone over explored
//! ground, near-black where never seen, with a squared fade across the
//! explored boundary so the edge of known ground stays crisp.
//!
//! This is the low-end path of the seed: the mask is blurred on the CPU
//! (Gaussian, sigma 2, radius 4), upscaled bilinearly and written as RGBA8.
//! Inputs: the final mask, the explored value, optional per-texel tint, time.
//! Output: a straight-alpha RGBA8 fog layer to draw over the world.

use crate::passes::{blur::blur, upscale::upscale};
use murk_core::fixed::hash2;
use murk_core::BlurKernel;

/// How the overlay looks.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OverlayStyle {
    /// Haze opacity over explored ground (the seed: 0.30).
    pub haze_alpha: f32,
    /// Breathing amplitude around `haze_alpha` (the seed: 0.05).
    pub breathing: f32,
    /// Breathing period in seconds (the seed: 8 to 10).
    pub period_s: f32,
    /// Colour of never-seen ground (the seed: #12141a).
    pub unexplored: [u8; 3],
    /// Haze colour where no tint is given.
    pub haze: [u8; 3],
    /// Upscale factor of the low-end path (the seed: 4).
    pub upscale: u32,
}

impl Default for OverlayStyle {
    fn default() -> Self {
        Self { haze_alpha: 0.30, breathing: 0.05, period_s: 9.0, unexplored: [0x12, 0x14, 0x1a], haze: [150, 160, 175], upscale: 4 }
    }
}

/// Smooth value noise in `0..1` from the integer hash (deterministic).
fn value_noise(x: f32, y: f32) -> f32 {
    let (x0, y0) = (x.floor(), y.floor());
    let (fx, fy) = (x - x0, y - y0);
    let h = |dx: i32, dy: i32| (hash2(x0 as i32 + dx, y0 as i32 + dy) & 0xffff) as f32 / 65535.0;
    let (sx, sy) = (fx * fx * (3.0 - 2.0 * fx), fy * fy * (3.0 - 2.0 * fy));
    let top = h(0, 0) + (h(1, 0) - h(0, 0)) * sx;
    let bottom = h(0, 1) + (h(1, 1) - h(0, 1)) * sx;
    top + (bottom - top) * sy
}

fn smoothstep(e0: f32, e1: f32, x: f32) -> f32 {
    let t = ((x - e0) / (e1 - e0)).clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

/// The fog opacity and colour of one texel of the (smoothed) mask `m` in `0..1`.
pub fn shade(m: f32, explored: f32, tint: [u8; 3], noise: f32, style: &OverlayStyle) -> [f32; 4] {
    let e = explored.max(1e-4);
    // Above the explored value: how visible now; below: how explored.
    let vis = ((m - e) / (1.0 - e).max(1e-4)).clamp(0.0, 1.0);
    let known = (m / e).clamp(0.0, 1.0);
    let haze_alpha = style.haze_alpha + (noise * 2.0 - 1.0) * style.breathing;
    let clarity = smoothstep(0.0, 0.85, vis);
    let alpha_light = haze_alpha * (1.0 - clarity);
    let light: [f32; 3] = tint.map(|c| f32::from(c) * (1.0 - clarity));
    // Squared fade across the explored boundary.
    let k = known * known;
    let alpha = 1.0 + (alpha_light - 1.0) * k;
    let colour: [f32; 3] = [0, 1, 2].map(|i| f32::from(style.unexplored[i]) + (light[i] - f32::from(style.unexplored[i])) * k);
    [colour[0], colour[1], colour[2], alpha]
}

/// Renders the overlay of a `width x height` final mask at time `time_s`.
/// `tint` (one RGB per mask texel) colours the haze per zone. Returns the
/// RGBA8 layer and its size (`upscale` times the mask's).
pub fn render(
    mask: &[u16],
    width: u32,
    height: u32,
    explored: f32,
    tint: Option<&[[u8; 3]]>,
    time_s: f32,
    style: &OverlayStyle,
) -> (u32, u32, Vec<u8>) {
    let n = (width * height) as usize;
    let kernel = BlurKernel::gaussian(4, 2.0, 1);
    let (mut smooth, mut scratch) = (vec![0u16; n], vec![0u16; n]);
    blur(&kernel, width, height, mask, &mut smooth, &mut scratch);
    let s = style.upscale.max(1);
    let (ow, oh) = (width * s, height * s);
    let mut big = vec![0u16; (ow * oh) as usize];
    upscale(&smooth, width, height, s, &mut big);
    let phase = time_s * std::f32::consts::TAU / style.period_s.max(0.1);
    let mut out = Vec::with_capacity(big.len() * 4);
    for y in 0..oh {
        for x in 0..ow {
            let m = f32::from(big[(y * ow + x) as usize]) / 65535.0;
            let tint = tint.map_or(style.haze, |t| t[((y / s) * width + x / s) as usize]);
            let drift = value_noise(x as f32 * 0.03 / s as f32 + time_s * 0.11, y as f32 * 0.03 / s as f32 + time_s * 0.07);
            let noise = 0.5 + 0.5 * (phase + drift * std::f32::consts::TAU).sin();
            let [r, g, b, a] = shade(m, explored, tint, noise, style);
            out.extend([r, g, b, a * 255.0].map(|v| v.round().clamp(0.0, 255.0) as u8));
        }
    }
    (ow, oh, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn visible_is_clear_explored_is_hazy_unexplored_is_opaque() {
        let style = OverlayStyle::default();
        for noise in [0.0, 0.5, 1.0] {
            let clear = shade(1.0, 0.5, style.haze, noise, &style);
            assert!(clear[3] < 1e-6, "visible texels carry no fog: {clear:?}");
            let haze = shade(0.5, 0.5, style.haze, noise, &style);
            assert!((0.249..=0.351).contains(&haze[3]), "explored haze alpha {}", haze[3]);
            let dark = shade(0.0, 0.5, style.haze, noise, &style);
            assert_eq!(dark, [18.0, 20.0, 26.0, 1.0], "never seen: opaque near-black");
        }
        // The squared fade keeps the boundary mostly opaque halfway across.
        assert!(shade(0.25, 0.5, style.haze, 0.5, &style)[3] > 0.7);
    }

    #[test]
    fn render_upscales_and_keeps_the_three_states_apart() {
        let (w, h) = (32u32, 16u32);
        let mut mask = vec![0u16; (w * h) as usize];
        for y in 0..h {
            for x in 0..w {
                mask[(y * w + x) as usize] = if x < 10 {
                    65535
                } else if x < 21 {
                    32768
                } else {
                    0
                };
            }
        }
        let style = OverlayStyle::default();
        let (ow, oh, px) = render(&mask, w, h, 0.5, None, 1.0, &style);
        assert_eq!((ow, oh, px.len()), (128, 64, 128 * 64 * 4));
        let alpha = |x: u32, y: u32| px[((y * ow + x) * 4 + 3) as usize];
        assert_eq!(alpha(8, 32), 0, "deep in the visible band");
        assert!((60..=92).contains(&alpha(62, 32)), "explored band: {}", alpha(62, 32));
        assert_eq!(alpha(120, 32), 255, "deep in the unexplored band");
        // Deterministic: the same frame twice.
        assert_eq!(render(&mask, w, h, 0.5, None, 1.0, &style).2, px);
    }
}
