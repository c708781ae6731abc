//! Rollback states kept on the device: a save copies every texture of an
//! instance into buffers of its own on the device (recorded behind the
//! tick's work, submitted, never waited for and never read back), and a
//! load copies them into the instance's buffers the same way. The
//! occlusion is shared: a state saved while no build, update or load has
//! written the instance's occlusion since the last state holds that
//! state's copy, and a load of a copy the instance holds copies no
//! occlusion. Such a state loads only on the device that made it.

use crate::context::Context;
use crate::error::GpuError;
use crate::instance::{Instance, OcclusionBuffers};
use crate::kept::KeptOcclusion;
use murk_core::{InstanceDims, KeptTextures, Masks, MurkError, OcclusionBuild, Result};
use std::sync::{Arc, Weak};

/// Every texture of one instance, copied on the device.
struct Kept {
    /// The context (device) whose buffers these are.
    context: u64,
    dims: InstanceDims,
    masks: Masks<wgpu::Buffer>,
    occlusion: Arc<KeptOcclusion>,
}

/// A buffer of `src`'s size holding a copy of it, recorded into `enc`.
fn copy_of(ctx: &Context, enc: &mut wgpu::CommandEncoder, src: &wgpu::Buffer) -> wgpu::Buffer {
    let copy = ctx.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("murk kept state"),
        size: src.size(),
        usage: wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    enc.copy_buffer_to_buffer(src, 0, &copy, 0, src.size());
    ctx.kept_copies.fetch_add(src.size(), std::sync::atomic::Ordering::Relaxed);
    copy
}

/// Records a copy of `size` bytes of `from` into `to` for a load.
fn load_copy(ctx: &Context, enc: &mut wgpu::CommandEncoder, from: &wgpu::Buffer, to: &wgpu::Buffer, size: u64) {
    enc.copy_buffer_to_buffer(from, 0, to, 0, size);
    ctx.kept_copies.fetch_add(size, std::sync::atomic::Ordering::Relaxed);
}

/// The occlusion copy `o` holds unwritten since it was kept or loaded.
fn held(o: &OcclusionBuffers) -> Option<Arc<KeptOcclusion>> {
    o.kept.as_ref().and_then(Weak::upgrade)
}

/// Records copies of every texture of `t` into `enc` (after the work
/// recorded there before: the copies hold what that work leaves), sharing
/// the occlusion copy `t` holds unwritten.
pub(crate) fn keep(ctx: &Context, enc: &mut wgpu::CommandEncoder, t: &mut Instance) -> KeptTextures {
    let occlusion = held(&t.occlusion).unwrap_or_else(|| {
        let o = &t.occlusion;
        let copy = Arc::new(KeptOcclusion {
            coverage: copy_of(ctx, enc, &o.coverage),
            height: copy_of(ctx, enc, &o.height),
            mips: copy_of(ctx, enc, &o.mips),
            mip_table: copy_of(ctx, enc, &o.mip_table),
            distance_field: copy_of(ctx, enc, &o.distance_field),
            mip_levels: t.frame.mip_levels,
            df_width: t.frame.df_width,
            df_height: t.frame.df_height,
        });
        t.occlusion.kept = Some(Arc::downgrade(&copy));
        copy
    });
    KeptTextures(Arc::new(Kept { context: ctx.id, dims: t.dims, masks: Masks::from_fn(|mask| copy_of(ctx, enc, &t.masks[mask])), occlusion }))
}

/// The kept textures in `kept`, when this context made them for an
/// instance of `dims`; an error says why not.
fn kept_here(context: u64, kept: &KeptTextures, dims: InstanceDims) -> Result<&Kept> {
    let Some(k) = kept.0.downcast_ref::<Kept>().filter(|k| k.context == context) else {
        return Err(MurkError::invalid(
            "state.kept",
            "textures kept on a device",
            "were kept on another device or backend: load a state where it was saved",
        ));
    };
    if k.dims != dims {
        let (was, is) = (k.dims, dims);
        return Err(GpuError::size("the kept textures", format!("{}x{}", was.width, was.height), format!("{}x{}", is.width, is.height)).into());
    }
    Ok(k)
}

/// Whether `kept` loads into an instance of `dims` on the context named
/// `context`.
pub(crate) fn check(context: u64, kept: &KeptTextures, dims: InstanceDims) -> Result<()> {
    kept_here(context, kept, dims).map(drop)
}

/// Loads `kept` into `t` (checked by [`check`]): copies recorded into a
/// fresh encoder and submitted, the frame parameters and the mask texture
/// made to follow. Call with nothing recorded and unsubmitted (the frame
/// upload goes ahead of the queue).
pub(crate) fn load(ctx: &mut Context, t: &mut Instance, kept: &KeptTextures) -> Result<()> {
    let k = kept_here(ctx.id, kept, t.dims)?;
    let mut enc = ctx.encoder();
    for (mask, buffer) in t.masks.iter() {
        let (w, h) = mask.size(t.dims, OcclusionBuild::default()).expect("a mask has a size");
        load_copy(ctx, &mut enc, &k.masks[mask], buffer, u64::from(w * h) * 4);
    }
    // The occlusion is copied unless the instance holds this copy unwritten.
    if !held(&t.occlusion).is_some_and(|o| Arc::ptr_eq(&o, &k.occlusion)) {
        let (ko, texels) = (&k.occlusion, u64::from(t.dims.width * t.dims.height) * 4);
        load_copy(ctx, &mut enc, &ko.coverage, &t.occlusion.coverage, texels);
        load_copy(ctx, &mut enc, &ko.height, &t.occlusion.height, texels);
        // The pyramid and the field are of the size they were built at then.
        for (target, from) in
            [(&mut t.occlusion.mips, &ko.mips), (&mut t.occlusion.mip_table, &ko.mip_table), (&mut t.occlusion.distance_field, &ko.distance_field)]
        {
            let fresh = ctx.take(from.size());
            load_copy(ctx, &mut enc, from, &fresh, from.size());
            ctx.give(std::mem::replace(target, fresh));
        }
        t.frame.mip_levels = ko.mip_levels;
        t.frame.df_width = ko.df_width;
        t.frame.df_height = ko.df_height;
        t.forget_field_scratch(ctx);
        t.occlusion.kept = Some(Arc::downgrade(&k.occlusion));
    }
    t.upload_frame(ctx);
    t.present(ctx, &mut enc);
    ctx.submit(enc)
}
