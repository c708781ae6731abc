//! Premade fog looks over the final mask, the CPU references of
//! [`murk_looks`] (presentation: floats allowed; gameplay never reads
//! these). The GPU twins are `backend-gpu/shaders/looks/*.wgsl`.

pub mod overlay;
pub mod surface;
pub mod volume;

use murk_core::{Result, ShaderParams};
use murk_looks::{Looks, MaskView, OverlayStyle, RgbaImage, SurfaceGrid, SurfaceParams, VolumeFrame, VolumeParams, VolumeScene};

/// The CPU reference of every look (rayon-parallel over rows).
#[derive(Clone, Copy, Debug, Default)]
pub struct CpuLooks;

impl Looks for CpuLooks {
    fn overlay(&mut self, mask: &MaskView, tint: Option<&[[u8; 3]]>, time_s: f32, style: &OverlayStyle) -> Result<RgbaImage> {
        overlay::render(mask, tint, time_s, style)
    }
    fn surface(&mut self, mask: &MaskView, area: &ShaderParams, ground: &[f32], params: &SurfaceParams) -> Result<SurfaceGrid> {
        surface::evaluate(mask, area, ground, params)
    }
    fn volume(&mut self, mask: &MaskView, area: &ShaderParams, scene: &VolumeScene, params: &VolumeParams) -> Result<(VolumeFrame, VolumeFrame)> {
        volume::render(mask, area, scene, params)
    }
}
