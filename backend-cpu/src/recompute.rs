//! Passes 5-10 of one instance on the CPU: a recompute (visibility, blur,
//! memory, compose, upscale) and the blend, each over the blocks that may
//! have changed, stamping a new version on the mask tiles they write.

use crate::instance::CpuInstance;
use crate::passes;
use crate::passes::compose::ComposeParams;
use crate::passes::dirty::Blocks;
use crate::passes::settle::SettleKey;
use crate::tiles::{self, next_version};
use crate::workers::Workers;
use murk_core::{RecomputeInput, Texture};

impl CpuInstance {
    /// Passes 5-9 and the blend start; returns whether memory or the
    /// composed mask changed.
    pub fn recompute(&mut self, pool: &Workers, input: &RecomputeInput) -> bool {
        // Every mask tile this recompute may write takes this version.
        let version = next_version();
        let (w, h) = (self.dims.width, self.dims.height);
        let inst = self;
        pool.install(|| {
            // The blocks whose blurred visibility changed.
            let mut blurred_marks = Blocks::new(w as usize, h as usize, false);
            if !input.reuse_visibility {
                let [visibility, blurred] = inst.masks.disjoint_mut([Texture::Visibility, Texture::Blur]);
                let (_, changed, across) = passes::visibility::visibility_changes(input, &inst.occlusion.view(), &mut inst.windows, visibility);
                if let Some(judge) = inst.judge.as_mut() {
                    judge.mark(&changed);
                }
                if let Some(v) = tiles::of(&mut inst.mask_tiles, Texture::Visibility) {
                    v.stamp(&changed, version);
                }
                // Blurred changes within the kernel's reach of what changed,
                // when the kernel and one step are what blurred was made with.
                let settling = &mut inst.settling;
                let same_kernel = settling.blurred_with.as_ref() == Some(&input.blur);
                settling.blurred_with = Some(input.blur.clone());
                if input.blur.iterations == 1 && same_kernel {
                    let reach = across.widened_rows(input.blur.radius());
                    blurred_marks = passes::blur::blur_marked(&input.blur, w, h, visibility, blurred, &reach);
                } else {
                    blurred_marks = Blocks::new(w as usize, h as usize, true);
                    passes::blur::blur(&input.blur, w, h, visibility, blurred);
                }
                if let Some(v) = tiles::of(&mut inst.mask_tiles, Texture::Blur) {
                    v.stamp(&blurred_marks, version);
                }
            }
            let params = ComposeParams {
                fade_in_step: input.fade_in_step,
                relax_step: input.relax_step,
                explored_value: input.explored_value,
                mapped_value: input.mapped_value,
                show_memory_alpha: input.show_memory_alpha,
            };
            // Memory and compose where blurred changed or a block has not
            // settled (every block when the fixed points moved).
            let key = SettleKey::new(input.forget_step, input.freeze_memory, params);
            let settling = &mut inst.settling;
            let mut todo = blurred_marks;
            let known = settling.settled_under == Some(key);
            if known {
                todo.add(&settling.unsettled);
            } else {
                todo = Blocks::new(w as usize, h as usize, true);
            }
            let (mut moved, mut remembered) = (Blocks::new(w as usize, h as usize, false), Blocks::new(w as usize, h as usize, false));
            // The upscale of scale 1 copies each block of composed that
            // moved, in the same pass.
            let scale = inst.dims.out_width / w;
            let [blurred, memory, mapped, composed, upscaled] =
                inst.masks.disjoint_mut([Texture::Blur, Texture::Memory, Texture::Mapped, Texture::Compose, Texture::Upscale]);
            let copy = (scale == 1 && known).then_some(&mut upscaled[..]);
            let changed = passes::settle::memory_compose_marked(
                blurred,
                memory,
                mapped,
                composed,
                copy,
                inst.reveals.as_ref().map(passes::settle::Planes::of),
                (input.forget_step, input.freeze_memory),
                params,
                &todo,
                &mut settling.unsettled,
                &mut moved,
                &mut remembered,
            );
            settling.settled_under = Some(key);
            // The versions follow the marks once a state was saved.
            let mut composed_tiles = Vec::new();
            if inst.mask_tiles.is_some() {
                composed_tiles = tiles::marked_tiles(&moved);
                let remembered = tiles::marked_tiles(&remembered);
                let stamps = [(Texture::Memory, &remembered), (Texture::Mapped, &remembered), (Texture::Compose, &composed_tiles)];
                for (mask, marked) in stamps {
                    if let Some(v) = tiles::of(&mut inst.mask_tiles, mask) {
                        v.stamp_tiles(marked, version);
                    }
                }
            }
            if !known {
                // After a restore the upscaled mask may not be the one of
                // composed: every block is upscaled again.
                moved = Blocks::new(w as usize, h as usize, true);
            }
            // The upscaled mask changes only where composed did.
            if scale == 1 {
                if !known {
                    upscaled.copy_from_slice(composed);
                }
                match tiles::of(&mut inst.mask_tiles, Texture::Upscale) {
                    Some(v) if known => v.stamp_tiles(&composed_tiles, version),
                    Some(v) => v.stamp_all(version),
                    None => {}
                }
                settling.out_unsettled.add(&moved);
                inst.copies.upscale_is_compose = true;
            } else if moved.any() {
                passes::upscale::upscale(composed, w, h, scale, upscaled);
                if let Some(v) = tiles::of(&mut inst.mask_tiles, Texture::Upscale) {
                    v.stamp_all(version);
                }
                settling.out_unsettled = Blocks::new(inst.dims.out_width as usize, inst.dims.out_height as usize, true);
            }
            // The blend starts from the final mask (equal to it where
            // settled): the next blend copies it as it goes.
            inst.start_pending = true;
            if let Some(v) = tiles::of(&mut inst.mask_tiles, Texture::Start) {
                v.stamp(&settling.out_unsettled, version);
            }
            changed
        })
    }

    /// Makes the blend start a recompute left pending (the final mask where
    /// the two may differ), for anything but the blend that reaches the
    /// instance.
    pub fn make_pending_start(&mut self, pool: &Workers) {
        if std::mem::take(&mut self.start_pending) {
            let [fin, start] = self.masks.disjoint_mut([Texture::Final, Texture::Start]);
            pool.install(|| passes::settle::copy_marked(fin, start, &self.settling.out_unsettled));
            self.copies.start_made(&self.mask_tiles);
        }
    }

    /// Pass 10: the final mask `t / 65536` of the way from the blend start
    /// to the upscaled mask, over the blocks that may still move.
    pub fn blend(&mut self, pool: &Workers, t: u32) {
        let restart = std::mem::take(&mut self.start_pending);
        if restart {
            // The start takes the final mask's values below (where the two
            // may differ; elsewhere they are equal), before its tiles move.
            self.copies.start_made(&self.mask_tiles);
        }
        // A settled instance has nothing to blend: the pool is not woken.
        if !self.settling.out_unsettled.any() {
            return;
        }
        let inst = self;
        pool.install(|| {
            // Changes matter only to versioned masks.
            let versioned = inst.mask_tiles.is_some();
            let (ow, oh) = (inst.dims.out_width, inst.dims.out_height);
            let grid = |on: bool| vec![false; if on { tiles::band_marks_len(ow, oh) } else { 0 }];
            let (mut changed, mut apart) = (grid(versioned), grid(versioned));
            let marks = passes::settle::BandMarks { changed: versioned.then_some(&mut changed[..]), apart: versioned.then_some(&mut apart[..]) };
            let [start, upscaled, fin] = inst.masks.disjoint_mut([Texture::Start, Texture::Upscale, Texture::Final]);
            passes::settle::blend_marked(start, upscaled, t, fin, &mut inst.settling.out_unsettled, restart, marks);
            // The final mask's tiles whose bytes changed take a new
            // version; those left equal to the upscaled mask's are known
            // to be its copies.
            if versioned {
                let written = tiles::band_tiles(&changed, ow);
                if let Some(v) = tiles::of(&mut inst.mask_tiles, Texture::Final) {
                    v.stamp_tiles(&written, next_version());
                }
                inst.copies.final_written(&written, &tiles::band_tiles(&apart, ow), &inst.mask_tiles);
            }
        });
    }
}
