//! Writing an instance's buffers other than by its passes: the occlusion
//! build recorded for a recompute, copies of another instance's occlusion,
//! and the textures of a snapshot.

use super::*;

/// Rasterize, then the mips and the distance field when asked: over the
/// whole grid (`changed` is `None`), or, for a local update, over the
/// changed rectangles (the mips over their bounding box; the distance
/// field's coarse coverage and columns over its field texels, and the rows
/// whose column distances changed).
pub(super) fn build_occlusion(
    ctx: &mut Context,
    enc: &mut wgpu::CommandEncoder,
    t: &mut Textures,
    input: &OcclusionInput,
    changed: Option<&[TexelRect]>,
) -> Result<Vec<wgpu::Buffer>> {
    let (w, h) = (t.dims.width, t.dims.height);
    if (input.width, input.height) != (w, h) {
        return Err(GpuError::size("occlusion input", format!("{}x{}", input.width, input.height), format!("{w}x{h}")).into());
    }
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
    let field_kept = (t.frame.df_width, t.frame.df_height, t.frame.df_scale) == (dw, dh, scale.max(1)) && t.field_scratch.is_some();
    let table = passes::mips::layout(w, h);
    if input.build_mips && changed.is_none() {
        let (o, lw, lh) = *table.last().expect("level 0 exists");
        let levels = ctx.take(u64::from(o + lw * lh) * 4);
        ctx.give(std::mem::replace(&mut t.levels, levels));
        let rows: Vec<[u32; 4]> = table.iter().map(|&(o, w, h)| [o, w, h, 0]).collect();
        let level_table = ctx.upload(bytemuck::cast_slice(&rows));
        ctx.give(std::mem::replace(&mut t.level_table, level_table));
        while t.mip_params.len() < table.len() {
            t.mip_params.push(ctx.uniform(&[0u8; passes::mips::STEP_BYTES]));
        }
        t.frame.mip_levels = table.len() as u32 - 1;
    } else if !input.build_mips {
        t.frame.mip_levels = 0;
    }
    t.frame.df_width = dw;
    t.frame.df_height = dh;
    t.frame.df_scale = scale.max(1);
    ctx.queue.write_buffer(&t.params, 0, bytemuck::bytes_of(&t.frame));
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
        passes::mips::record(ctx, enc, t, &t.levels, &t.mip_params, &bounds);
    }
    if let Some(scale) = std::num::NonZeroU32::new(scale) {
        match (changed, &t.field_scratch) {
            (Some(_), Some(scratch)) if field_kept => {
                passes::distance_field::record(ctx, enc, t, scratch, &t.field, DfRegion::covering(&bounds, scale));
            }
            _ => {
                let n = u64::from(dw * dh) * 4;
                let rows = u64::from((dw + 1) * dh) * 4;
                let scratch = [ctx.take(n), ctx.take(n), ctx.take(rows), ctx.take(rows), ctx.take(u64::from(dh) * 4)];
                let field = ctx.take(n);
                passes::distance_field::record(ctx, enc, t, &scratch, &field, DfRegion::whole(dw, dh));
                ctx.give(std::mem::replace(&mut t.field, field));
                if let Some(old) = t.field_scratch.replace(scratch) {
                    for b in old {
                        ctx.give(b);
                    }
                }
            }
        }
    }
    Ok(recycle)
}

/// Forgets the distance field's scratch: the field was replaced by other
/// means than a build (a copy, a load), so the next update builds it whole.
fn forget_field_scratch(ctx: &mut Context, t: &mut Textures) {
    for b in t.field_scratch.take().into_iter().flatten() {
        ctx.give(b);
    }
}

/// Copies the occlusion buffers of `src` into `dst` on the device (no
/// readback): coverage, height, the mip chain and the distance field.
pub(super) fn copy_occlusion(ctx: &mut Context, src: &Textures, dst: &mut Textures) -> Result<()> {
    if (src.dims.width, src.dims.height) != (dst.dims.width, dst.dims.height) {
        let (size, instance) = (format!("{}x{}", src.dims.width, src.dims.height), format!("{}x{}", dst.dims.width, dst.dims.height));
        return Err(GpuError::size("the occlusion to share", size, instance).into());
    }
    let mut enc = ctx.encoder();
    let n = src.texels() * 4;
    enc.copy_buffer_to_buffer(&src.coverage, 0, &dst.coverage, 0, n);
    enc.copy_buffer_to_buffer(&src.height, 0, &dst.height, 0, n);
    // Same-size copies of the variable-size buffers, from the pool.
    let clone = |ctx: &mut Context, enc: &mut wgpu::CommandEncoder, from: &wgpu::Buffer, into: &mut wgpu::Buffer| {
        let b = ctx.take(from.size());
        enc.copy_buffer_to_buffer(from, 0, &b, 0, from.size());
        ctx.give(std::mem::replace(into, b));
    };
    clone(ctx, &mut enc, &src.levels, &mut dst.levels);
    clone(ctx, &mut enc, &src.level_table, &mut dst.level_table);
    clone(ctx, &mut enc, &src.field, &mut dst.field);
    forget_field_scratch(ctx, dst);
    while dst.mip_params.len() < src.mip_params.len() {
        dst.mip_params.push(ctx.uniform(&[0u8; passes::mips::STEP_BYTES]));
    }
    let f = &mut dst.frame;
    f.mip_levels = src.frame.mip_levels;
    f.df_width = src.frame.df_width;
    f.df_height = src.frame.df_height;
    f.df_scale = src.frame.df_scale;
    ctx.queue.write_buffer(&dst.params, 0, bytemuck::bytes_of(&dst.frame));
    ctx.submit(enc)
}

pub(super) fn image_u32(img: &StageImage) -> Vec<u32> {
    match &img.data {
        StageData::U8(v) => v.iter().map(|&x| u32::from(x)).collect(),
        StageData::U16(v) => v.iter().map(|&x| u32::from(x)).collect(),
        StageData::I32(v) => v.iter().map(|&x| x as u32).collect(),
        StageData::U32(v) => v.clone(),
    }
}

/// Loads a checked texture set: the occlusion (coverage, height, the
/// pyramid with its level table, the distance field) and every mask.
pub(super) fn import_all(ctx: &mut Context, t: &mut Textures, set: &TextureSet) -> Result<()> {
    let d = t.dims;
    let mips = set.mips();
    let table = passes::mips::layout(d.width, d.height);
    if !mips.is_empty() && (mips.len() != table.len() - 1 || mips.iter().zip(&table[1..]).any(|(m, l)| (m.width, m.height) != (l.1, l.2))) {
        return Err(GpuError::size("the texture set's mip pyramid", format!("{} levels", mips.len()), format!("{}x{}", d.width, d.height)).into());
    }
    for (texture, img) in set.textures() {
        let expected = match texture {
            Texture::Mip(_) | Texture::DistanceField => (img.width, img.height),
            Texture::Upscale | Texture::Start | Texture::Final => (d.out_width, d.out_height),
            _ => (d.width, d.height),
        };
        if (img.width, img.height) != expected {
            let (size, instance) = (format!("{}x{}", img.width, img.height), format!("{}x{}", expected.0, expected.1));
            return Err(GpuError::size(format!("texture `{}`", texture.name()), size, instance).into());
        }
    }
    for (texture, img) in set.textures() {
        let target = match texture {
            Texture::Coverage => &t.coverage,
            Texture::Height => &t.height,
            Texture::Visibility => &t.visibility,
            Texture::Blur => &t.blurred,
            Texture::Memory => &t.memory,
            Texture::Mapped => &t.mapped,
            Texture::Compose => &t.composed,
            Texture::Upscale => &t.upscaled,
            Texture::Start => &t.start,
            Texture::Final => &t.final_mask,
            Texture::Mip(_) => continue,
            Texture::DistanceField => {
                let v = image_u32(img);
                if !v.is_empty() {
                    let b = ctx.upload(bytemuck::cast_slice(&v));
                    ctx.give(std::mem::replace(&mut t.field, b));
                }
                t.frame.df_width = img.width;
                t.frame.df_height = img.height;
                continue;
            }
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
        ctx.give(std::mem::replace(&mut t.levels, levels));
        let rows: Vec<[u32; 4]> = table.iter().map(|&(o, w, h)| [o, w, h, 0]).collect();
        let lt = ctx.upload(bytemuck::cast_slice(&rows));
        ctx.give(std::mem::replace(&mut t.level_table, lt));
        t.frame.mip_levels = table.len() as u32 - 1;
    }
    ctx.queue.write_buffer(&t.params, 0, bytemuck::bytes_of(&t.frame));
    forget_field_scratch(ctx, t);
    let mut enc = ctx.encoder();
    present(ctx, &mut enc, t);
    ctx.submit(enc)
}
