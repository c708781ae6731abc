//! A rollback state's save on the CPU: the textures asked for, in tiles,
//! sharing every tile whose version says it holds a tile already saved (the
//! base's, or an equal mask's beside it), and the state hash and the
//! explored count over the same versions.

use crate::error::CpuError;
use crate::instance::CpuInstance;
use crate::texels::Texels;
use crate::tiles::{self, next_version, TileVersions};
use crate::workers::Workers;
use murk_core::{Result, Texture, TileData, TiledImage};
use rayon::prelude::*;

/// One texture a save asks for: its size and texels, the versions of its
/// tiles (a mask's; `None`: the occlusion's, versioned all together) and
/// the state's image to share tiles with.
struct SaveWork<'a> {
    texture: Texture,
    width: u32,
    height: u32,
    texels: Texels<'a>,
    masks: Option<&'a TileVersions>,
    base: Option<&'a TiledImage>,
}

impl CpuInstance {
    /// The textures asked for in tiles, each with its base (see
    /// `Backend::save_tiles`): a tile under its base's version is shared
    /// from there, and a mask's tile taken anew is shared with an equal one
    /// taken beside it.
    pub fn save_tiles(&mut self, pool: &Workers, textures: &[(Texture, Option<&TiledImage>)]) -> Result<Vec<Option<TiledImage>>> {
        let inst = self;
        // The first save versions the masks from here on: what they hold
        // now takes new versions.
        let dims = inst.dims;
        inst.mask_tiles.get_or_insert_with(|| tiles::every_mask_at(dims, next_version()));
        let mut work = Vec::with_capacity(textures.len());
        for &(texture, base) in textures {
            let (w, h, texels) = inst.texels(texture)?;
            let masks = inst.mask_tiles.as_ref().and_then(|m| m.get(texture));
            let count = TiledImage::tile_count(w, h);
            let base = base.filter(|b| (b.width, b.height) == (w, h) && b.tiles.len() == count && b.versions.len() == count);
            work.push(SaveWork { texture, width: w, height: h, texels, masks, base });
        }
        // The blend starts from the final mask of the tick before: the
        // start's tiles taken anew are those of the last save's final mask.
        let last_final = work.iter().find(|wk| wk.texture == Texture::Final).and_then(|wk| wk.base);
        let occlusion = inst.occlusion.version;
        let copies = &inst.copies;
        // A tile under the version the base's tile has holds its bytes. A
        // mask's tile taken anew is first compared with the tiles taken anew
        // at the same place of the masks of its size before it (composed,
        // upscaled and final are often equal there), a start tile also with
        // the last final one, and shares an equal one. A mask that copies
        // another at every place shares the other's whole list of tiles.
        let saved = pool.install(|| {
            let mut saved: Vec<Option<(TiledImage, Vec<bool>)>> = Vec::with_capacity(work.len());
            for &SaveWork { texture, width: w, height: h, ref texels, masks, base } in &work {
                let count = TiledImage::tile_count(w, h);
                let versions = masks.map_or_else(|| vec![occlusion; count], |m| m.all().to_vec());
                if base.is_some_and(|b| b.versions == versions) {
                    saved.push(None);
                    continue;
                }
                let twins: Vec<_> = match masks {
                    Some(_) => work
                        .iter()
                        .zip(&saved)
                        .filter(|(other, _)| other.masks.is_some() && (other.width, other.height) == (w, h))
                        .filter_map(|(_, s)| s.as_ref())
                        .collect(),
                    None => Vec::new(),
                };
                let before = last_final.filter(|f| texture == Texture::Start && (f.width, f.height) == (w, h));
                // The image this mask is known to copy, with the version each
                // tile of it had when copied (`None`: the copy is whole): a
                // tile of the image still under that version is shared
                // unread.
                let taken = |texture: Texture| {
                    let k = work.iter().position(|wk| wk.texture == texture)?;
                    saved[k].as_ref().map(|(image, _)| image).or(work[k].base)
                };
                let copied: Option<(&TiledImage, Option<&[u64]>)> = match texture {
                    Texture::Upscale if copies.upscale_is_compose => taken(Texture::Compose).map(|c| (c, None)),
                    Texture::Start => before.zip(copies.start_from.as_deref().map(Some)),
                    Texture::Final => taken(Texture::Upscale).zip(copies.final_from.as_deref().map(Some)),
                    _ => None,
                };
                let copied = copied.filter(|(image, _)| (image.width, image.height) == (w, h) && image.tiles.len() == count);
                let copies = |(image, from): (&TiledImage, Option<&[u64]>), i: usize| from.is_none_or(|from| from.get(i) == Some(&image.versions[i]));
                // A tile under the base's version is not taken anew (its
                // bytes are the base's), wherever else it is shared from.
                let fresh: Vec<bool> = match base {
                    Some(b) => b.versions.iter().zip(&versions).map(|(b, v)| b != v).collect(),
                    None => vec![true; count],
                };
                // The tile a place takes unread: the base's, or the copied
                // image's; the others are read.
                let unread = |i: usize| match base {
                    Some(b) if !fresh[i] => Some(&b.tiles[i]),
                    _ => copied.filter(|&c| copies(c, i)).map(|(image, _)| &image.tiles[i]),
                };
                let mut lists = copied.map(|(image, _)| image).into_iter().chain(base);
                if let Some(whole) = lists.find(|list| (0..count).all(|i| unread(i).is_some_and(|t| t.same(&list.tiles[i])))) {
                    saved.push(Some((TiledImage { width: w, height: h, versions, tiles: whole.tiles.clone() }, fresh)));
                    continue;
                }
                let tiles: Vec<TileData> = (0..count)
                    .into_par_iter()
                    .map(|i| match unread(i) {
                        Some(tile) => tile.clone(),
                        None => {
                            let taken = twins.iter().filter(|(_, fresh)| fresh[i]).map(|(image, _)| &image.tiles[i]);
                            let twins = taken.chain(before.map(|f| &f.tiles[i]));
                            texels.tile(w, h, i, twins)
                        }
                    })
                    .collect();
                saved.push(Some((TiledImage { width: w, height: h, versions, tiles: tiles.into() }, fresh)));
            }
            saved
        });
        Ok(saved.into_iter().map(|s| s.map(|(image, _)| image)).collect())
    }

    /// The state hash of each of `textures` (16-bit masks), rehashing only
    /// the tiles whose version moved since the mask's last hash.
    pub fn hash_textures(&mut self, pool: &Workers, textures: &[Texture]) -> Result<Vec<u64>> {
        let inst = self;
        // The first hash versions the masks from here on, as a save does:
        // the next hash rehashes only the tiles a pass wrote since.
        let dims = inst.dims;
        inst.mask_tiles.get_or_insert_with(|| tiles::every_mask_at(dims, next_version()));
        // The kept hashes are taken out while the masks are borrowed, and
        // put back whatever happens.
        let mut kept = std::mem::take(&mut inst.hashes);
        let masks = &*inst;
        let hashes = (|| {
            let mut asks = Vec::with_capacity(textures.len());
            for &texture in textures {
                let (w, h, texels) = masks.texels(texture)?;
                let (Texels::U16(texels), Some(versions)) = (texels, masks.mask_tiles.as_ref().and_then(|m| m.get(texture))) else {
                    return Err(CpuError::TexelType {
                        texture: texture.name(),
                        problem: format!("holds {} texels, the state hash takes u16", texture.kind().name()),
                    }
                    .into());
                };
                asks.push((texture, w, h, texels, versions));
            }
            Ok(pool.install(|| tiles::KeptHash::hash_all(&mut kept, &asks)))
        })();
        inst.hashes = kept;
        hashes
    }

    /// The texels of the memory above 0, recounting only the tiles a pass
    /// or a load wrote since the last count (the first count versions the
    /// masks from here on, as a hash does).
    pub fn count_explored(&mut self, pool: &Workers) -> Result<u64> {
        let dims = self.dims;
        self.mask_tiles.get_or_insert_with(|| tiles::every_mask_at(dims, next_version()));
        // The kept counts are taken out while the masks are borrowed, and
        // put back whatever happens.
        let mut kept = std::mem::take(&mut self.explored);
        let masks = &*self;
        let count = (|| {
            let (w, _, texels) = masks.texels(Texture::Memory)?;
            let (Texels::U16(memory), Some(versions)) = (texels, masks.mask_tiles.as_ref().and_then(|m| m.get(Texture::Memory))) else {
                return Err(CpuError::TexelType { texture: Texture::Memory.name(), problem: "does not hold u16 texels".into() }.into());
            };
            Ok(pool.install(|| kept.count(w, memory, versions)))
        })();
        self.explored = kept;
        count
    }
}
