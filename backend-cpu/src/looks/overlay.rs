//! The state overlay:
//! clear where visible, a light breathing haze tinted per zone over explored
//! ground, the map colour over mapped ground (known from a map, never seen),
//! near-black where never seen, with a squared fade across each boundary
//! below the explored value so the edge of known ground stays crisp.
//!
//! This is also the low-end path, all on the CPU: the mask is blurred
//! (the integer blur pass, Gaussian sigma 2 radius 4), upscaled bilinearly
//! (the integer upscale pass) and written as RGBA8. Only the shading is in
//! floats. Twin: `backend-gpu/shaders/looks/overlay.wgsl`.

use crate::passes::{blur::blur, upscale::upscale};
use murk_core::Result;
use murk_looks::{smoothstep, validate_tint, value_noise2, MaskView, OverlayStyle, RgbaImage};
use rayon::prelude::*;

/// The fog colour and opacity of one texel of the (smoothed) mask `m` in
/// `0..1` of a mask with explored value `explored` and mapped value
/// `mapped` (0: no mapped state); `noise` in `0..1` drives the breathing.
pub fn shade(m: f32, (explored, mapped): (f32, f32), tint: [u8; 3], noise: f32, style: &OverlayStyle) -> [f32; 4] {
    let e = explored.max(1e-4);
    // Above the explored value: how visible now; below: how explored.
    let vis = ((m - e) / (1.0 - e).max(1e-4)).clamp(0.0, 1.0);
    let haze_alpha = style.haze_alpha + (noise * 2.0 - 1.0) * style.breathing;
    let clarity = smoothstep(0.0, 0.85, vis);
    let alpha_light = haze_alpha * (1.0 - clarity);
    let light: [f32; 3] = tint.map(|c| f32::from(c) * (1.0 - clarity));
    let unexplored = style.unexplored.map(f32::from);
    // From the state below to the one above, squared across the boundary.
    let mix = |(c0, a0): ([f32; 3], f32), (c1, a1): ([f32; 3], f32), t: f32| {
        let t = t.clamp(0.0, 1.0);
        let k = t * t;
        let c = [0, 1, 2].map(|i| c0[i] + (c1[i] - c0[i]) * k);
        [c[0], c[1], c[2], a0 + (a1 - a0) * k]
    };
    let (dark, lit) = ((unexplored, 1.0), (light, alpha_light));
    if mapped <= 0.0 || m >= e {
        return mix(dark, lit, m / e);
    }
    let map = (style.mapped.map(f32::from), style.mapped_alpha);
    if m < mapped {
        mix(dark, map, m / mapped)
    } else {
        mix(map, lit, (m - mapped) / (e - mapped).max(1e-4))
    }
}

/// The breathing noise at output pixel `(x, y)` of an overlay upscaled `s`
/// times, at time `t`: a slow sine whose phase drifts with value noise.
pub fn breathing(x: u32, y: u32, s: u32, t: f32, style: &OverlayStyle) -> f32 {
    let phase = t * std::f32::consts::TAU / style.period_s;
    let drift = value_noise2(x as f32 * 0.03 / s as f32 + t * 0.11, y as f32 * 0.03 / s as f32 + t * 0.07);
    0.5 + 0.5 * (phase + drift * std::f32::consts::TAU).sin()
}

/// Renders the overlay of `mask` at time `time_s`. `tint` (one RGB per mask
/// texel) colours the haze per zone.
pub fn render(mask: &MaskView, tint: Option<&[[u8; 3]]>, time_s: f32, style: &OverlayStyle) -> Result<RgbaImage> {
    mask.validate()?;
    style.validate()?;
    validate_tint(mask, tint)?;
    murk_core::error::finite("overlay time_s", time_s)?;
    let (width, height) = (mask.width, mask.height);
    let n = mask.texels.len();
    let mut smooth = vec![0u16; n];
    blur(&OverlayStyle::kernel(), width, height, mask.texels, &mut smooth);
    let s = style.upscale;
    let (ow, oh) = (width * s, height * s);
    let mut big = vec![0u16; (ow * oh) as usize];
    upscale(&smooth, width, height, s, &mut big);
    let mut pixels = vec![0u8; big.len() * 4];
    pixels.par_chunks_mut(ow as usize * 4).enumerate().for_each(|(y, row)| {
        let y = y as u32;
        for x in 0..ow {
            let m = f32::from(big[(y * ow + x) as usize]) / 65535.0;
            let tint = tint.map_or(style.haze, |t| t[((y / s) * width + x / s) as usize]);
            let [r, g, b, a] = shade(m, (mask.explored, mask.mapped), tint, breathing(x, y, s, time_s, style), style);
            let px = [r, g, b, a * 255.0].map(|v| (v + 0.5).floor().clamp(0.0, 255.0) as u8);
            row[x as usize * 4..x as usize * 4 + 4].copy_from_slice(&px);
        }
    });
    Ok(RgbaImage { width: ow, height: oh, pixels })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn visible_is_clear_explored_is_hazy_unexplored_is_opaque() {
        let style = OverlayStyle::default();
        for noise in [0.0, 0.5, 1.0] {
            let clear = shade(1.0, (0.5, 0.0), style.haze, noise, &style);
            assert!(clear[3] < 1e-6, "visible texels carry no fog: {clear:?}");
            let haze = shade(0.5, (0.5, 0.0), style.haze, noise, &style);
            assert!((0.249..=0.351).contains(&haze[3]), "explored haze alpha {}", haze[3]);
            let dark = shade(0.0, (0.5, 0.0), style.haze, noise, &style);
            assert_eq!(dark, [18.0, 20.0, 26.0, 1.0], "never seen: opaque near-black");
        }
        // The squared fade keeps the boundary mostly opaque halfway across.
        assert!(shade(0.25, (0.5, 0.0), style.haze, 0.5, &style)[3] > 0.7);
    }

    #[test]
    fn mapped_ground_has_its_own_state_between_unexplored_and_explored() {
        let style = OverlayStyle::default();
        let four = (0.5, 0.25);
        let map = shade(0.25, four, style.haze, 0.5, &style);
        assert_eq!(map, [60.0, 65.0, 80.0, 0.75], "mapped: the map colour at its opacity");
        assert_eq!(shade(0.0, four, style.haze, 0.5, &style), shade(0.0, (0.5, 0.0), style.haze, 0.5, &style), "unexplored as before");
        assert_eq!(shade(0.5, four, style.haze, 0.5, &style), shade(0.5, (0.5, 0.0), style.haze, 0.5, &style), "explored as before");
        assert_eq!(shade(0.8, four, style.haze, 0.5, &style), shade(0.8, (0.5, 0.0), style.haze, 0.5, &style), "visible as before");
        // Each boundary fades monotonically in opacity.
        let alphas: Vec<f32> = (0..=50).map(|i| shade(i as f32 / 100.0, four, style.haze, 0.5, &style)[3]).collect();
        assert!(alphas.windows(2).all(|w| w[1] <= w[0]), "{alphas:?}");
    }

    #[test]
    fn render_upscales_and_keeps_the_three_states_apart() {
        let (w, h) = (32u32, 16u32);
        let mask: Vec<u16> = (0..w * h)
            .map(|i| match i % w {
                0..10 => 65535,
                10..21 => 32768,
                _ => 0,
            })
            .collect();
        let view = MaskView { width: w, height: h, texels: &mask, explored: 0.5, mapped: 0.0 };
        let style = OverlayStyle::default();
        let img = render(&view, None, 1.0, &style).unwrap();
        assert_eq!((img.width, img.height, img.pixels.len()), (128, 64, 128 * 64 * 4));
        let alpha = |x: u32, y: u32| img.pixels[((y * img.width + x) * 4 + 3) as usize];
        assert_eq!(alpha(8, 32), 0, "deep in the visible band");
        assert!((60..=92).contains(&alpha(62, 32)), "explored band: {}", alpha(62, 32));
        assert_eq!(alpha(120, 32), 255, "deep in the unexplored band");
        // Deterministic: the same frame twice.
        assert_eq!(render(&view, None, 1.0, &style).unwrap(), img);
        // A per-zone tint colours the haze.
        let tint = vec![[200u8, 40, 40]; mask.len()];
        let red = render(&view, Some(&tint), 1.0, &style).unwrap();
        let px = |img: &RgbaImage, x: u32| img.pixels[((32 * img.width + x) * 4) as usize];
        assert!(px(&red, 62) > px(&img, 62), "tinted haze is redder");
    }

    #[test]
    fn bad_input_is_named() {
        let mask = [0u16; 6];
        let style = OverlayStyle::default();
        let short = MaskView { width: 4, height: 2, texels: &mask, explored: 0.5, mapped: 0.0 };
        assert!(render(&short, None, 0.0, &style).unwrap_err().to_string().contains("mask texels"));
        let ok = MaskView { width: 3, height: 2, texels: &mask, explored: 0.5, mapped: 0.0 };
        assert!(render(&ok, Some(&[[0, 0, 0]]), 0.0, &style).unwrap_err().to_string().contains("overlay tint"));
        assert!(render(&ok, None, f32::NAN, &style).unwrap_err().to_string().contains("overlay time_s"));
        let bad = OverlayStyle { upscale: 0, ..style };
        assert!(render(&ok, None, 0.0, &bad).unwrap_err().to_string().contains("overlay upscale"));
    }
}
