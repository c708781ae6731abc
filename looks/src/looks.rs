//! The three premade looks a backend computes ([`Looks`]).

use crate::mask::MaskView;
use crate::overlay::{OverlayStyle, RgbaImage};
use crate::surface::{SurfaceGrid, SurfaceParams};
use crate::volume::{VolumeFrame, VolumeParams, VolumeScene};
use murk_core::error::Result;
use murk_core::frame::ShaderParams;

/// Premade fog looks, computed by a backend. Presentation only: the answers
/// are floats and agree across backends within each look's tolerance.
pub trait Looks {
    /// The three-state overlay of `mask`, `style.upscale` times its size:
    /// the mask blurred (integer, as the blur pass), upscaled bilinearly (as
    /// the upscale pass), then shaded. `tint` gives one RGB per mask texel.
    fn overlay(&mut self, mask: &MaskView, tint: Option<&[[u8; 3]]>, time_s: f32, style: &OverlayStyle) -> Result<RgbaImage>;

    /// The fog surface's vertex heights over `params`' grid; `ground` holds
    /// the terrain's world Z at each vertex, row-major.
    fn surface(&mut self, mask: &MaskView, area: &ShaderParams, ground: &[f32], params: &SurfaceParams) -> Result<SurfaceGrid>;

    /// The volumetric fog of one camera frame: the half-resolution march
    /// (temporally blended with `scene.history`) and its depth-aware
    /// upsample to the camera's size. Returns `(half, full)`.
    fn volume(&mut self, mask: &MaskView, area: &ShaderParams, scene: &VolumeScene, params: &VolumeParams) -> Result<(VolumeFrame, VolumeFrame)>;
}
