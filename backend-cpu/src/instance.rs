//! One instance on the CPU: its occlusion ([`OcclusionTextures`]), its masks
//! (one `Vec<u16>` per mask of the texture table, in [`Masks`]), and what
//! the passes keep to redo only what changed: the source windows, which
//! blocks have settled, the footprint judge, and the versions of the
//! masks' tiles for rollback states and hashes.

use crate::error::{unknown_key, CpuError};
use crate::occlusion::OcclusionTextures;
use crate::passes::dirty::{Blocks, BLOCK};
use crate::passes::footprints::{Judge, Plan, Signal};
use crate::passes::settle::SettleKey;
use crate::passes::visibility::WindowCache;
use crate::texels::Texels;
use crate::tiles::{Copies, KeptCount, KeptHash, MaskVersions};
use murk_core::{BlurKernel, InstanceDims, InstanceKey, Masks, MurkError, OcclusionBuild, Result, RevealLayer, Texture};
use std::collections::BTreeMap;

/// Textures of one instance and what the passes keep between calls.
pub(crate) struct CpuInstance {
    pub dims: InstanceDims,
    /// Coverage, heights, the pyramid and the field, with their tables.
    pub occlusion: OcclusionTextures,
    /// Source windows over the current occlusion (cleared when it is built).
    pub windows: WindowCache,
    /// Every mask, at its resolution.
    pub masks: Masks<Vec<u16>>,
    /// The scripted reveals memory and compose read (`None`: none).
    pub reveals: Option<RevealLayer>,
    /// Which blocks of the masks may still move.
    pub settling: Settling,
    /// A recompute made the final mask the start of the next blend over
    /// `settling.out_unsettled`, and the copy is not made yet: the next
    /// blend makes it block by block as it goes, anything else that reaches
    /// the instance first (through `CpuBackend::parts`) makes it whole.
    pub start_pending: bool,
    /// The last footprint judgment and the tiles of the sight signal
    /// written since (`None`: no footprint judged since the signal was made,
    /// loaded or given a new sight reveal).
    pub judge: Option<Judge>,
    /// The version of each tile of each mask; `None` until a save state is
    /// first taken from the instance or loaded into it, or a mask of it is
    /// first hashed: a game that does neither pays nothing for the versions.
    pub mask_tiles: MaskVersions,
    /// The hash last taken of each mask, with the tile versions it was
    /// taken at.
    pub hashes: Masks<Option<KeptHash>>,
    /// The explored texels last counted per tile of the memory, with the
    /// tile versions they were counted at.
    pub explored: KeptCount,
    /// What a save may share without reading: which masks are known to hold
    /// another's bytes.
    pub copies: Copies,
}

/// What an instance knows of where its masks may still move, so that a
/// recompute and a blend redo only those blocks. Facts about the masks'
/// texels (and the settings they were settled under) only: a rollback
/// state saves them beside the masks ([`CpuNotes`]), and a load of those
/// masks takes them back.
#[derive(Clone)]
pub(crate) struct Settling {
    /// Blocks of the internal grid whose memory or composed may still move
    /// with their blurred visibility unchanged, under `settled_under`
    /// (`None`: not known, every block is recomputed).
    pub unsettled: Blocks,
    pub settled_under: Option<SettleKey>,
    /// Blocks of the output grid where the blend start, the upscaled and the
    /// final mask may differ.
    pub out_unsettled: Blocks,
    /// The kernel the blurred visibility was last blurred with (`None`: not
    /// known).
    pub blurred_with: Option<BlurKernel>,
}

/// What a CPU instance saves beside its textures in a rollback state
/// ([`murk_core::Backend::save_notes`]): the [`Settling`] of the masks
/// saved, for the instance size it was made at.
pub(crate) struct CpuNotes {
    pub dims: InstanceDims,
    pub settling: Settling,
}

impl Settling {
    /// Nothing known: every block unsettled, nothing blurred (a new
    /// instance, or masks just loaded).
    pub fn unknown(dims: InstanceDims) -> Self {
        Self {
            unsettled: Blocks::new(dims.width as usize, dims.height as usize, true),
            settled_under: None,
            out_unsettled: Blocks::new(dims.out_width as usize, dims.out_height as usize, true),
            blurred_with: None,
        }
    }
}

impl CpuInstance {
    /// Every texture zero (heights at the floor).
    pub fn new(dims: InstanceDims) -> Self {
        Self {
            dims,
            occlusion: OcclusionTextures::new(dims.width, dims.height),
            windows: WindowCache::default(),
            masks: Masks::from_fn(|mask| {
                let (w, h) = mask.size(dims, OcclusionBuild::default()).expect("a mask has a size");
                vec![0; w as usize * h as usize]
            }),
            reveals: None,
            settling: Settling::unknown(dims),
            start_pending: false,
            judge: None,
            mask_tiles: None,
            hashes: Masks::default(),
            explored: KeptCount::default(),
            copies: Copies::default(),
        }
    }

    /// One texture's width, height and texels; a pyramid level not built is
    /// an error naming it.
    pub fn texels(&self, texture: Texture) -> Result<(u32, u32, Texels<'_>)> {
        if let Some(texels) = self.occlusion.texels(texture) {
            return texels;
        }
        let (w, h) = texture.size(self.dims, OcclusionBuild::default()).expect("a mask has a size");
        Ok((w, h, Texels::U16(&self.masks[texture])))
    }

    /// The final mask at `texels` (output texels, each inside the grid).
    pub fn sample_final(&self, texels: &[[u32; 2]]) -> Result<Vec<u16>> {
        check_inside((self.dims.out_width, self.dims.out_height), texels)?;
        let (w, fin) = (self.dims.out_width, &self.masks[Texture::Final]);
        Ok(texels.iter().map(|&[x, y]| fin[(y * w + x) as usize]).collect())
    }

    /// Judges the footprints of `plan`'s list in the sight signal into
    /// `out`, one value per footprint.
    pub fn judge_into(&mut self, plan: &Plan, cutoff: u16, out: &mut [u16]) {
        let w = self.dims.width as usize;
        let signal = Signal { visibility: &self.masks[Texture::Visibility], sight: self.reveals.as_ref().map(|l| &l.sight[..]), width: w };
        let judge = self.judge.as_mut().expect("a judge is made for every instance before judging");
        out.copy_from_slice(judge.judge(signal, plan, cutoff));
    }

    /// Replaces the scripted reveals: memory and compose run again where
    /// the planes changed, and footprints are judged again where the sight
    /// plane did.
    pub fn set_reveals(&mut self, layer: Option<&RevealLayer>) -> Result<()> {
        let (w, h) = (self.dims.width as usize, self.dims.height as usize);
        if let Some(l) = layer {
            for (name, plane) in [("sight", &l.sight), ("kept", &l.kept), ("map", &l.map)] {
                if plane.len() != w * h {
                    return Err(CpuError::SizeMismatch {
                        what: format!("reveal plane `{name}`"),
                        size: format!("{} texels", plane.len()),
                        instance: format!("{w}x{h}"),
                    }
                    .into());
                }
            }
        }
        if layer.is_none() && self.reveals.is_none() {
            // No layer before and none now: nothing to compare.
            return Ok(());
        }
        let old = self.reveals.take();
        let plane = |l: Option<&RevealLayer>, i: usize| l.map_or((0, 0, 0), |l| (l.sight[i], l.kept[i], l.map[i]));
        let mut sight = Blocks::new(w, h, false);
        let unsettled = &mut self.settling.unsettled;
        for y in 0..h {
            for b in 0..w.div_ceil(BLOCK) {
                let span = y * w + b * BLOCK..y * w + ((b + 1) * BLOCK).min(w);
                if span.clone().any(|i| plane(old.as_ref(), i) != plane(layer, i)) {
                    unsettled.marks[y * unsettled.per_row + b] = true;
                }
                if span.clone().any(|i| plane(old.as_ref(), i).0 != plane(layer, i).0) {
                    sight.marks[y * sight.per_row + b] = true;
                }
            }
        }
        if let Some(judge) = self.judge.as_mut() {
            judge.mark(&sight);
        }
        self.reveals = layer.cloned();
        Ok(())
    }
}

/// The instance of `key` among `instances`, or the typed error.
pub(crate) fn instance(instances: &mut BTreeMap<InstanceKey, CpuInstance>, key: InstanceKey) -> Result<&mut CpuInstance> {
    instances.get_mut(&key).ok_or_else(|| unknown_key(key))
}

/// Whether every one of `texels` lies inside a `w x h` grid.
pub(crate) fn check_inside((w, h): (u32, u32), texels: &[[u32; 2]]) -> Result<()> {
    // The largest column and row first (a loop without a branch); the texel
    // outside is looked for only when there is one.
    let [mx, my] = texels.iter().fold([0, 0], |[mx, my], &[x, y]| [mx.max(x), my.max(y)]);
    if texels.is_empty() || mx < w && my < h {
        return Ok(());
    }
    match texels.iter().find(|&&[x, y]| x >= w || y >= h) {
        Some([x, y]) => Err(MurkError::invalid("texel", format!("({x}, {y})"), format!("must lie inside {w}x{h}"))),
        None => Ok(()),
    }
}
