//! Reading an instance's textures back from the device (each read waits):
//! one texture whole, in its texel type, and the state hash's sources.

use crate::context::Context;
use crate::error::GpuError;
use crate::hash::Source;
use crate::instance::{mip_layout, Instance};
use murk_core::{OcclusionBuild, Result, TexelKind, Texture, TextureData, TextureImage};

/// One texture of `t` as it stands once the work submitted so far has run;
/// a pyramid level not built is an error naming it.
pub(crate) fn read_texture(ctx: &mut Context, t: &Instance, texture: Texture) -> Result<TextureImage> {
    let (buffer, offset, (width, height)) = match texture {
        Texture::Mip(level) => {
            let layout = if t.frame.mip_levels > 0 { mip_layout(t.dims.width, t.dims.height) } else { Vec::new() };
            let Some(&(offset, w, h)) = layout.get(level as usize).filter(|_| level >= 1) else {
                return Err(GpuError::NotBuilt(format!("mip level {level} is not built ({} levels are)", layout.len().saturating_sub(1))).into());
            };
            (&t.occlusion.mips, offset, (w, h))
        }
        Texture::DistanceField => (&t.occlusion.distance_field, 0, (t.frame.df_width, t.frame.df_height)),
        Texture::Coverage => (&t.occlusion.coverage, 0, (t.dims.width, t.dims.height)),
        Texture::Height => (&t.occlusion.height, 0, (t.dims.width, t.dims.height)),
        mask => (&t.masks[mask], 0, mask.size(t.dims, OcclusionBuild::default()).expect("a mask has a size")),
    };
    let words = ctx.read_u32(buffer, u64::from(offset) * 4, width as usize * height as usize)?;
    let data = match texture.kind() {
        TexelKind::U8 => TextureData::U8(words.into_iter().map(|v| v as u8).collect()),
        TexelKind::U16 => TextureData::U16(words.into_iter().map(|v| v as u16).collect()),
        TexelKind::I32 => TextureData::I32(words.into_iter().map(|v| v as i32).collect()),
        TexelKind::U32 => TextureData::U32(words),
    };
    Ok(TextureImage { width, height, data })
}

/// The buffer and size of each of `textures` (16-bit masks) for the state
/// hash; a texture of another texel type is an error naming it.
pub(crate) fn hash_sources<'a>(t: &'a Instance, textures: &[Texture]) -> Result<Vec<Source<'a>>> {
    textures
        .iter()
        .map(|&texture| match t.masks.get(texture) {
            Some(buffer) => {
                let (width, height) = texture.size(t.dims, OcclusionBuild::default()).expect("a mask has a size");
                Ok(Source { buffer, width, height })
            }
            None => Err(GpuError::TexelType { texture: texture.name(), kind: texture.kind().name(), needs: "the state hash takes u16" }.into()),
        })
        .collect()
}
