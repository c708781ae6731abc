//! The state overlay's settings ([`OverlayStyle`]) and the image it makes
//! ([`RgbaImage`]).

use crate::mask::MaskView;
use murk_core::error::{MurkError, Result};

/// An 8-bit RGBA image, straight alpha, rows top to bottom.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RgbaImage {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// `width * height * 4` bytes.
    pub pixels: Vec<u8>,
}

/// How the three-state overlay looks.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OverlayStyle {
    /// Haze opacity over explored ground (default 0.30).
    pub haze_alpha: f32,
    /// Breathing amplitude around `haze_alpha` (default 0.05).
    pub breathing: f32,
    /// Breathing period in seconds (default 9; 8 to 10 is a typical range).
    pub period_s: f32,
    /// Colour of never-seen ground (default #12141a).
    pub unexplored: [u8; 3],
    /// Haze colour where no tint is given.
    pub haze: [u8; 3],
    /// Colour of mapped ground, known from a map and never seen (default
    /// #3c4150).
    pub mapped: [u8; 3],
    /// Opacity over mapped ground (default 0.75).
    pub mapped_alpha: f32,
    /// Output pixels per mask texel (default 4).
    pub upscale: u32,
}

impl Default for OverlayStyle {
    fn default() -> Self {
        Self {
            haze_alpha: 0.30,
            breathing: 0.05,
            period_s: 9.0,
            unexplored: [0x12, 0x14, 0x1a],
            haze: [150, 160, 175],
            mapped: [0x3c, 0x41, 0x50],
            mapped_alpha: 0.75,
            upscale: 4,
        }
    }
}

impl OverlayStyle {
    /// The blur the overlay puts the mask through before upscaling (the
    /// integer blur pass: Gaussian, radius 4, sigma 2), on every backend.
    pub fn kernel() -> murk_core::frame::BlurKernel {
        murk_core::frame::BlurKernel::gaussian(4, 2.0, 1)
    }

    /// Rejects NaN, negative or out-of-range settings, naming the field.
    pub fn validate(&self) -> Result<()> {
        murk_core::error::in_range("overlay haze_alpha", self.haze_alpha, 0.0, 1.0)?;
        murk_core::error::in_range("overlay breathing", self.breathing, 0.0, 1.0)?;
        murk_core::error::in_range("overlay mapped_alpha", self.mapped_alpha, 0.0, 1.0)?;
        murk_core::error::in_range("overlay period_s", self.period_s, 0.1, 1.0e6)?;
        if !(1..=16).contains(&self.upscale) {
            return Err(MurkError::invalid("overlay upscale", self.upscale, "must be within 1..=16"));
        }
        Ok(())
    }
}

/// Checks a tint table against the mask.
pub fn validate_tint(mask: &MaskView, tint: Option<&[[u8; 3]]>) -> Result<()> {
    match tint {
        Some(t) if t.len() != mask.texels.len() => {
            Err(MurkError::invalid("overlay tint", t.len(), format!("must hold one colour per mask texel ({})", mask.texels.len())))
        }
        _ => Ok(()),
    }
}
