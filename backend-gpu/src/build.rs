//! Writing an instance's buffers other than by its passes: the occlusion
//! build recorded for a recompute, copies of another instance's occlusion,
//! and the textures of a snapshot.

use crate::context::Context;
use crate::error::GpuError;
use crate::instance::{mip_layout, Instance};
use crate::passes;
use crate::passes::distance_field::DfRegion;
use murk_core::{MurkError, OcclusionInput, Resolution, Result, TexelRect, Texture, TextureData, TextureImage, TextureSet};

/// Rasterize, then the mips and the distance field when asked: over the
/// whole grid (`changed` is `None`), or, for a local update, over the
/// changed rectangles (the mips over their bounding box; the distance
/// field's coarse coverage and columns over its field texels, and the rows
/// whose column distances changed).
pub(crate) fn build_occlusion(
    ctx: &mut Context,
    enc: &mut wgpu::CommandEncoder,
    t: &mut Instance,
    input: &OcclusionInput,
    changed: Option<&[TexelRect]>,
) -> Result<Vec<wgpu::Buffer>> {
    let (w, h) = (t.dims.width, t.dims.height);
    if (input.width, input.height) != (w, h) {
        return Err(GpuError::size("occlusion input", format!("{}x{}", input.width, input.height), format!("{w}x{h}")).into());
    }
    // Written below: no kept copy holds it any more.
    t.occlusion.kept = None;
    let grid = TexelRect::grid(w, h);
    let regions: &[TexelRect] = match changed {
        Some(rects) => {
            if let Some(r) = rects.iter().find(|r| r.is_empty() || r.x1 > w || r.y1 > h) {
                return Err(MurkError::invalid("changed rectangle", format!("{r:?}"), format!("must be a non-empty part of the {w}x{h} grid")));
            }
            let built_as_asked = (input.build_mips == (t.frame.mip_levels > 0 || (w, h) == (1, 1)))
                && (input.distance_field_scale > 0) == (t.frame.df_width > 0)
                && t.frame.has_capture == u32::from(input.capture.is_some());
            if !built_as_asked {
                // What is built differs from what is asked: built whole.
                return build_occlusion(ctx, enc, t, input, None);
            }
            rects
        }
        None => std::slice::from_ref(&grid),
    };
    t.frame.has_capture = u32::from(input.capture.is_some());
    let scale = input.distance_field_scale;
    let (dw, dh) = if scale > 0 { (w.div_ceil(scale), h.div_ceil(scale)) } else { (0, 0) };
    // The field held is of this size and scale (its scratch is kept).
    let field_kept = (t.frame.df_width, t.frame.df_height, t.frame.df_scale) == (dw, dh, scale.max(1)) && t.occlusion.field_scratch.is_some();
    let table = mip_layout(w, h);
    if input.build_mips && changed.is_none() {
        let (o, lw, lh) = *table.last().expect("level 0 exists");
        let mips = ctx.take(u64::from(o + lw * lh) * 4);
        ctx.give(std::mem::replace(&mut t.occlusion.mips, mips));
        let rows: Vec<[u32; 4]> = table.iter().map(|&(o, w, h)| [o, w, h, 0]).collect();
        let mip_table = ctx.upload(bytemuck::cast_slice(&rows));
        ctx.give(std::mem::replace(&mut t.occlusion.mip_table, mip_table));
        while t.occlusion.mip_steps.len() < table.len() {
            t.occlusion.mip_steps.push(ctx.uniform(&[0u8; passes::mips::STEP_BYTES]));
        }
        t.frame.mip_levels = table.len() as u32 - 1;
    } else if !input.build_mips {
        t.frame.mip_levels = 0;
    }
    t.frame.df_width = dw;
    t.frame.df_height = dh;
    t.frame.df_scale = scale.max(1);
    t.upload_frame(ctx);
    let mut recycle = Vec::new();
    for region in regions {
        // The shapes that may cover the region's texels (every shape for
        // the whole grid).
        let part;
        let shapes = if changed.is_some() {
            part = murk_core::raster::shapes_meeting(input, region);
            &part
        } else {
            input
        };
        recycle.extend(passes::rasterize::record(ctx, enc, t, shapes, input.capture.as_deref(), region));
    }
    let bounds = regions.iter().fold(TexelRect::default(), |acc, r| acc.union(r));
    if input.build_mips {
        passes::mips::record(ctx, enc, t, &t.occlusion.mips, &t.occlusion.mip_steps, &bounds);
    }
    if let Some(scale) = std::num::NonZeroU32::new(scale) {
        match (changed, &t.occlusion.field_scratch) {
            (Some(_), Some(scratch)) if field_kept => {
                passes::distance_field::record(ctx, enc, t, scratch, &t.occlusion.distance_field, DfRegion::covering(&bounds, scale));
            }
            _ => {
                let n = u64::from(dw * dh) * 4;
                let rows = u64::from((dw + 1) * dh) * 4;
                let scratch = [ctx.take(n), ctx.take(n), ctx.take(rows), ctx.take(rows), ctx.take(u64::from(dh) * 4)];
                let field = ctx.take(n);
                passes::distance_field::record(ctx, enc, t, &scratch, &field, DfRegion::whole(dw, dh));
                ctx.give(std::mem::replace(&mut t.occlusion.distance_field, field));
                if let Some(old) = t.occlusion.field_scratch.replace(scratch) {
                    for b in old {
                        ctx.give(b);
                    }
                }
            }
        }
    }
    Ok(recycle)
}

/// Copies the occlusion buffers of `src` into `dst` on the device (no
/// readback): coverage, height, the mip chain and the distance field.
pub(crate) fn copy_occlusion(ctx: &mut Context, src: &Instance, dst: &mut Instance) -> Result<()> {
    if (src.dims.width, src.dims.height) != (dst.dims.width, dst.dims.height) {
        let (size, instance) = (format!("{}x{}", src.dims.width, src.dims.height), format!("{}x{}", dst.dims.width, dst.dims.height));
        return Err(GpuError::size("the occlusion to share", size, instance).into());
    }
    let mut enc = ctx.encoder();
    let n = src.texels() * 4;
    let (from, to) = (&src.occlusion, &mut dst.occlusion);
    to.kept = None;
    enc.copy_buffer_to_buffer(&from.coverage, 0, &to.coverage, 0, n);
    enc.copy_buffer_to_buffer(&from.height, 0, &to.height, 0, n);
    // Same-size copies of the variable-size buffers, from the pool.
    let clone = |ctx: &mut Context, enc: &mut wgpu::CommandEncoder, from: &wgpu::Buffer, into: &mut wgpu::Buffer| {
        let b = ctx.take(from.size());
        enc.copy_buffer_to_buffer(from, 0, &b, 0, from.size());
        ctx.give(std::mem::replace(into, b));
    };
    clone(ctx, &mut enc, &from.mips, &mut to.mips);
    clone(ctx, &mut enc, &from.mip_table, &mut to.mip_table);
    clone(ctx, &mut enc, &from.distance_field, &mut to.distance_field);
    while to.mip_steps.len() < from.mip_steps.len() {
        to.mip_steps.push(ctx.uniform(&[0u8; passes::mips::STEP_BYTES]));
    }
    dst.forget_field_scratch(ctx);
    let f = &mut dst.frame;
    f.mip_levels = src.frame.mip_levels;
    f.df_width = src.frame.df_width;
    f.df_height = src.frame.df_height;
    f.df_scale = src.frame.df_scale;
    dst.upload_frame(ctx);
    ctx.submit(enc)
}

fn image_u32(img: &TextureImage) -> Vec<u32> {
    match &img.data {
        TextureData::U8(v) => v.iter().map(|&x| u32::from(x)).collect(),
        TextureData::U16(v) => v.iter().map(|&x| u32::from(x)).collect(),
        TextureData::I32(v) => v.iter().map(|&x| x as u32).collect(),
        TextureData::U32(v) => v.clone(),
    }
}

/// Loads a checked texture set: the occlusion (coverage, height, the
/// pyramid with its level table, the distance field) and every mask.
pub(crate) fn import_all(ctx: &mut Context, t: &mut Instance, set: &TextureSet) -> Result<()> {
    // Its occlusion is written here (or, on an error, may be in part).
    t.occlusion.kept = None;
    let d = t.dims;
    let mips = set.mips();
    let table = mip_layout(d.width, d.height);
    if !mips.is_empty() && (mips.len() != table.len() - 1 || mips.iter().zip(&table[1..]).any(|(m, l)| (m.width, m.height) != (l.1, l.2))) {
        return Err(GpuError::size("the texture set's mip pyramid", format!("{} levels", mips.len()), format!("{}x{}", d.width, d.height)).into());
    }
    for (texture, img) in set.textures() {
        let expected = match texture.resolution() {
            Resolution::Internal | Resolution::Output => texture.size(d, Default::default()).expect("a texture of the grid has a size"),
            Resolution::Pyramid | Resolution::DistanceField => (img.width, img.height),
        };
        if (img.width, img.height) != expected {
            let (ew, eh) = expected;
            return Err(GpuError::size(format!("texture `{}`", texture.name()), format!("{}x{}", img.width, img.height), format!("{ew}x{eh}")).into());
        }
    }
    let o = &mut t.occlusion;
    for (texture, img) in set.textures() {
        let target = match texture {
            Texture::Coverage => &o.coverage,
            Texture::Height => &o.height,
            // Written with the whole pyramid below.
            Texture::Mip(_) => continue,
            Texture::DistanceField => {
                let v = image_u32(img);
                if !v.is_empty() {
                    let b = ctx.upload(bytemuck::cast_slice(&v));
                    ctx.give(std::mem::replace(&mut o.distance_field, b));
                }
                t.frame.df_width = img.width;
                t.frame.df_height = img.height;
                continue;
            }
            mask => &t.masks[mask],
        };
        ctx.queue.write_buffer(target, 0, bytemuck::cast_slice(&image_u32(img)));
    }
    if mips.is_empty() {
        t.frame.mip_levels = 0;
    } else {
        let mut all = set.get(Texture::Coverage).map(image_u32).unwrap_or_default();
        for m in &mips {
            all.extend(m.texels.iter().map(|&v| u32::from(v)));
        }
        let levels = ctx.upload(bytemuck::cast_slice(&all));
        ctx.give(std::mem::replace(&mut o.mips, levels));
        let rows: Vec<[u32; 4]> = table.iter().map(|&(o, w, h)| [o, w, h, 0]).collect();
        let mip_table = ctx.upload(bytemuck::cast_slice(&rows));
        ctx.give(std::mem::replace(&mut o.mip_table, mip_table));
        t.frame.mip_levels = table.len() as u32 - 1;
    }
    t.upload_frame(ctx);
    t.forget_field_scratch(ctx);
    let mut enc = ctx.encoder();
    t.present(ctx, &mut enc);
    ctx.submit(enc)
}
