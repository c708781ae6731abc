//! The state hash of mask textures: 64 bits, fast on a CPU, computable on a
//! GPU with 32-bit integers only, kept up to date by the square regions a
//! tick changed, and defined here well enough for another implementation to
//! compute the same value.
//!
//! A texture of `width x height` 16-bit texels (row-major) is hashed as:
//!
//! 1. **Leaves.** The texture is cut into [`LEAF_SIDE`]-sided squares (16x16),
//!    `ceil(width / 16)` across and `ceil(height / 16)` down; the squares of
//!    the right and bottom edges reach past the texture, and a texel past it
//!    reads 0.
//! 2. **Words.** A leaf reads its 16 rows top to bottom and each row as 4
//!    words of 4 texels, left to right: `t0 | t1 << 16 | t2 << 32 | t3 << 48`.
//!    Its value is `fmix(fold(LEAF_SEED, its 64 words))`.
//! 3. **Root.** The texture's hash is
//!    `fmix(fold(step(ROOT_SEED, width | height << 32), the leaf values))`,
//!    the leaves in row-major order (left to right, then top to bottom).
//!
//! with all arithmetic modulo 2^64:
//!
//! ```text
//! step(a, w) = x ^ (x >> 29)   where x = (a ^ w) * 0x9e3779b97f4a7c15
//! fold(a, w0, w1, ..) = step(..step(step(a, w0), w1)..)
//! fmix(x): x ^= x >> 33; x *= 0xff51afd7ed558ccd; x ^= x >> 33;
//!          x *= 0xc4ceb9fe1a85ec53; x ^= x >> 33
//! LEAF_SEED = 0x6d75726b6c656166 ("murkleaf"), ROOT_SEED = 0x6d75726b726f6f74 ("murkroot")
//! ```
//!
//! Leaves are independent, so they hash in parallel (threads on the CPU,
//! one invocation each on the GPU); only the root fold, one step per 256
//! texels, is sequential. Leaves are squares so that a tick that changed a
//! few regions of a mask rehashes only the leaves in them: [`LeafHashes`]
//! keeps a texture's leaf values and updates them tile by tile. `fmix` is
//! MurmurHash3's 64-bit finalizer. An instance's state hash and the
//! lockstep hash build on it (`docs/determinism.md`).

use crate::texture::{TiledImage, TILE};
use rayon::prelude::*;

/// Version of the hash functions defined here and of the state and
/// lockstep hashes built on them (`docs/determinism.md`): builds that
/// speak the same version give the same hash of the same state. 1: FNV-1a
/// 64 over the state (before snapshot format 5). 2: the block hash, its
/// leaves runs of 256 texels (snapshot format 5). 3: the mapped state and
/// each observer's sight set hashed too (snapshot formats 6 and 7). 4:
/// leaves of 16x16 texels (snapshot format 8 on).
pub const VERSION: u32 = 4;

/// The side of a leaf, in texels.
pub const LEAF_SIDE: u32 = 16;
/// Texels per leaf.
pub const LEAF_TEXELS: usize = (LEAF_SIDE * LEAF_SIDE) as usize;
/// Leaves per side of a save tile: a tile's leaves are rehashed together.
const LEAVES_PER_TILE: usize = (TILE / LEAF_SIDE) as usize;
const _: () = assert!(TILE == 2 * LEAF_SIDE, "a tile holds 2x2 leaves");
/// The odd multiplier of [`step`].
pub const MULTIPLIER: u64 = 0x9e37_79b9_7f4a_7c15;
/// The seed of every leaf fold.
pub const LEAF_SEED: u64 = 0x6d75_726b_6c65_6166;
/// The seed of the root fold.
pub const ROOT_SEED: u64 = 0x6d75_726b_726f_6f74;

/// One step of a fold.
#[inline]
pub fn step(a: u64, w: u64) -> u64 {
    let x = (a ^ w).wrapping_mul(MULTIPLIER);
    x ^ (x >> 29)
}

/// MurmurHash3's 64-bit finalizer.
#[inline]
pub fn fmix(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^ (x >> 33)
}

/// Leaves across a texture `width` texels wide.
pub fn leaves_across(width: u32) -> usize {
    width.div_ceil(LEAF_SIDE) as usize
}

/// The value of leaf `(lx, ly)` of a `width x height` texture, texel by
/// texel: the definition.
pub fn leaf_reference(width: u32, height: u32, texels: &[u16], lx: usize, ly: usize) -> u64 {
    let side = LEAF_SIDE as usize;
    let (w, h) = (width as usize, height as usize);
    let texel = |x: usize, y: usize| if x < w && y < h { u64::from(texels[y * w + x]) } else { 0 };
    let mut a = LEAF_SEED;
    for y in ly * side..(ly + 1) * side {
        for x in (lx * side..(lx + 1) * side).step_by(4) {
            a = step(a, texel(x, y) | texel(x + 1, y) << 16 | texel(x + 2, y) << 32 | texel(x + 3, y) << 48);
        }
    }
    fmix(a)
}

/// The root fold over leaf values, in order, after the size word.
fn root(width: u32, height: u32, leaves: &[u64]) -> u64 {
    fmix(leaves.iter().fold(step(ROOT_SEED, u64::from(width) | u64::from(height) << 32), |a, &l| step(a, l)))
}

/// The hash of a texture, leaf by leaf on one thread: the definition.
pub fn texture_hash_reference(width: u32, height: u32, texels: &[u16]) -> u64 {
    let down = height.div_ceil(LEAF_SIDE) as usize;
    let leaves: Vec<u64> = (0..down)
        .flat_map(|ly| (0..leaves_across(width)).map(move |lx| (lx, ly)))
        .map(|(lx, ly)| leaf_reference(width, height, texels, lx, ly))
        .collect();
    root(width, height, &leaves)
}

/// The four texels of one word, 0 past `row`'s end.
#[inline]
fn word(row: &[u16], x: usize) -> u64 {
    match row.get(x..x + 4) {
        Some(t) => u64::from(t[0]) | u64::from(t[1]) << 16 | u64::from(t[2]) << 32 | u64::from(t[3]) << 48,
        None => (0..4).fold(0, |w, i| w | row.get(x + i).map_or(0, |&t| u64::from(t)) << (16 * i)),
    }
}

/// The hash of a texture, its tiles in parallel on the current rayon pool;
/// equal to [`texture_hash_reference`] on every thread count.
pub fn texture_hash(width: u32, height: u32, texels: &[u16]) -> u64 {
    LeafHashes::new(width, height, texels).hash()
}

/// The leaf values of one texture, kept so that a change of a few of its
/// [`TILE`]-sided tiles rehashes only the leaves in them.
#[derive(Clone, Debug, Default)]
pub struct LeafHashes {
    width: u32,
    height: u32,
    leaves: Vec<u64>,
}

impl LeafHashes {
    /// Every leaf of a `width x height` texture, tiles in parallel.
    pub fn new(width: u32, height: u32, texels: &[u16]) -> Self {
        let across = leaves_across(width);
        let mut hashes = Self { width, height, leaves: vec![0; across * height.div_ceil(LEAF_SIDE) as usize] };
        let tiles: Vec<usize> = (0..TiledImage::tile_count(width, height)).collect();
        hashes.update(texels, &tiles);
        hashes
    }

    /// Whether these are the leaves of a `width x height` texture.
    pub fn fits(&self, width: u32, height: u32) -> bool {
        (self.width, self.height) == (width, height)
    }

    /// Rehashes the leaves of the tiles `tiles` (indices into the
    /// row-major tile grid of [`TiledImage`]) from `texels`, the texture
    /// of this size, in parallel.
    pub fn update(&mut self, texels: &[u16], tiles: &[usize]) {
        rehash(&mut [(self, texels, tiles.to_vec())]);
    }

    /// The values of the leaves of tile `tile` (the leaves of its top row,
    /// left to right, then those of its bottom row) of `texels`, the texture
    /// of this size; a leaf past the texture's leaves comes out as if it
    /// were one, and [`Self::set_tile`] passes it by.
    fn tile_leaves(&self, texels: &[u16], tile: usize) -> [u64; 4] {
        let (w, h, side) = (self.width as usize, self.height as usize, LEAF_SIDE as usize);
        assert_eq!(texels.len(), w * h, "{w}x{h} texels");
        let across = TiledImage::tiles_across(self.width) as usize;
        let (x0, y0) = (tile % across * TILE as usize, tile / across * TILE as usize);
        // Four folds interleaved, so that the multiplies of one overlap
        // those of the others.
        let mut a = [LEAF_SEED; 4];
        let t = TILE as usize;
        if x0 + t <= w && y0 + t <= h {
            // A whole tile: rows of 32 texels, no edge to mind.
            let row = |y: usize| -> &[u16; TILE as usize] { texels[y * w + x0..][..t].try_into().expect("32 texels") };
            let word = |r: &[u16; TILE as usize], x: usize| {
                u64::from(r[x]) | u64::from(r[x + 1]) << 16 | u64::from(r[x + 2]) << 32 | u64::from(r[x + 3]) << 48
            };
            for r in 0..side {
                let (top, bottom) = (row(y0 + r), row(y0 + side + r));
                for x in (0..side).step_by(4) {
                    a[0] = step(a[0], word(top, x));
                    a[1] = step(a[1], word(top, side + x));
                    a[2] = step(a[2], word(bottom, x));
                    a[3] = step(a[3], word(bottom, side + x));
                }
            }
            return a.map(fmix);
        }
        let row = |y: usize| if y < h { &texels[y * w..(y + 1) * w] } else { &[][..] };
        for r in 0..side {
            let rows = [row(y0 + r), row(y0 + side + r)];
            for j in 0..side / 4 {
                for (k, a) in a.iter_mut().enumerate() {
                    *a = step(*a, word(rows[k / 2], x0 + (k % 2) * side + 4 * j));
                }
            }
        }
        a.map(fmix)
    }

    /// Writes the values [`Self::tile_leaves`] gave for tile `tile`.
    fn set_tile(&mut self, tile: usize, values: [u64; 4]) {
        let (across, down) = (leaves_across(self.width), self.height.div_ceil(LEAF_SIDE) as usize);
        let tiles_across = TiledImage::tiles_across(self.width) as usize;
        let (lx, ly) = (tile % tiles_across * LEAVES_PER_TILE, tile / tiles_across * LEAVES_PER_TILE);
        for (k, v) in values.into_iter().enumerate() {
            let (x, y) = (lx + k % 2, ly + k / 2);
            if x < across && y < down {
                self.leaves[y * across + x] = v;
            }
        }
    }

    /// The texture's hash: the root fold over the leaves.
    pub fn hash(&self) -> u64 {
        root(self.width, self.height, &self.leaves)
    }
}

/// [`LeafHashes::update`] of several textures at once, each
/// `(leaves, texels, tiles)`: the tiles of all of them in one parallel run.
pub fn rehash(textures: &mut [(&mut LeafHashes, &[u16], Vec<usize>)]) {
    let work: Vec<(usize, usize)> = textures.iter().enumerate().flat_map(|(k, (_, _, tiles))| tiles.iter().map(move |&t| (k, t))).collect();
    let values: Vec<[u64; 4]> = {
        let textures = &*textures;
        work.par_iter().with_min_len(8).map(|&(k, tile)| textures[k].0.tile_leaves(textures[k].1, tile)).collect()
    };
    for (&(k, tile), values) in work.iter().zip(values) {
        textures[k].0.set_tile(tile, values);
    }
}

/// The hashes of several textures ([`LeafHashes::hash`] of each), their
/// root folds run four at a time, interleaved: each fold is a chain of
/// dependent multiplies, which alone leaves the multiplier idle.
pub fn hashes(textures: &[&LeafHashes]) -> Vec<u64> {
    let mut out = Vec::with_capacity(textures.len());
    for four in textures.chunks(4) {
        let mut a = [0; 4];
        for (a, t) in a.iter_mut().zip(four) {
            *a = step(ROOT_SEED, u64::from(t.width) | u64::from(t.height) << 32);
        }
        let longest = four.iter().map(|t| t.leaves.len()).max().unwrap_or(0);
        for i in 0..longest {
            for (a, t) in a.iter_mut().zip(four) {
                if let Some(&leaf) = t.leaves.get(i) {
                    *a = step(*a, leaf);
                }
            }
        }
        out.extend(a.iter().take(four.len()).map(|&a| fmix(a)));
    }
    out
}

/// A hash of a run of 64-bit words, for telling inputs apart from one tick
/// to the next (the sources and blockers an instance was recomputed and
/// built from): `fmix(fold(LEAF_SEED, words))`, a word at a time where
/// FNV-1a goes a byte at a time. Not part of the lockstep hash.
#[derive(Clone, Copy, Debug)]
pub struct WordFold(u64);

impl Default for WordFold {
    fn default() -> Self {
        Self(LEAF_SEED)
    }
}

impl WordFold {
    /// Feeds one word.
    #[inline]
    pub fn word(&mut self, w: u64) {
        self.0 = step(self.0, w);
    }

    /// Feeds two 32-bit values as one word, `a` in the low half.
    #[inline]
    pub fn pair(&mut self, a: u32, b: u32) {
        self.word(u64::from(a) | u64::from(b) << 32);
    }

    /// The hash so far.
    pub fn finish(&self) -> u64 {
        fmix(self.0)
    }
}

/// The hash of a byte string, for snapshot checksums: the bytes fall into
/// leaves of 512, each read as 8-byte little-endian words (a last word
/// short of bytes takes 0 for the missing ones); a leaf is
/// `fmix(fold(LEAF_SEED, its words))` and the string is
/// `fmix(fold(step(ROOT_SEED, its byte count), its leaves in order))`.
pub fn bytes_hash(bytes: &[u8]) -> u64 {
    /// Bytes per leaf.
    const LEAF_BYTES: usize = 512;
    let word = |c: &[u8]| {
        let mut w = [0u8; 8];
        w[..c.len()].copy_from_slice(c);
        u64::from_le_bytes(w)
    };
    let mut leaves = vec![0u64; bytes.len().div_ceil(LEAF_BYTES)];
    leaves.par_chunks_mut(64).zip(bytes.par_chunks(64 * LEAF_BYTES)).for_each(|(out, bytes)| {
        for (out, leaf) in out.iter_mut().zip(bytes.chunks(LEAF_BYTES)) {
            *out = fmix(leaf.chunks(8).fold(LEAF_SEED, |a, c| step(a, word(c))));
        }
    });
    fmix(leaves.into_iter().fold(step(ROOT_SEED, bytes.len() as u64), step))
}

/// An instance's state hash from the hashes of its final mask, explored
/// memory, mapped state and composed mask:
/// `fmix(fold(ROOT_SEED, final, memory, mapped, composed))`.
pub fn state_hash(textures: [u64; 4]) -> u64 {
    fmix(textures.into_iter().fold(ROOT_SEED, step))
}

/// The lockstep hash of a whole subsystem from each instance's state hash
/// (in name order) and the FNV-1a 64 hash of its stealth states:
/// `fmix(step(fold(ROOT_SEED, fnv(name0), state0, fnv(name1), state1, ..), stealth))`,
/// where `fnv` is FNV-1a 64 over the name's UTF-8 bytes.
pub fn lockstep_hash<'a>(instances: impl IntoIterator<Item = (&'a str, u64)>, stealth: u64) -> u64 {
    let mut a = ROOT_SEED;
    for (name, state) in instances {
        let mut f = crate::fixed::Fnv64::default();
        f.write(name.as_bytes());
        a = step(step(a, f.finish()), state);
    }
    fmix(step(a, stealth))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texels(n: usize, seed: u64) -> Vec<u16> {
        let mut x = seed;
        (0..n)
            .map(|_| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                (x >> 48) as u16
            })
            .collect()
    }

    /// Sizes with cut edges, thin ones and none.
    const SIZES: [(u32, u32); 9] = [(0, 0), (1, 1), (3, 5), (16, 16), (17, 1), (1, 33), (33, 47), (64, 64), (100, 70)];

    #[test]
    fn the_parallel_hash_is_the_definition_for_every_size_and_thread_count() {
        for (w, h) in SIZES {
            let t = texels((w * h) as usize, u64::from(w * 131 + h));
            let want = texture_hash_reference(w, h, &t);
            for threads in [1, 3] {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
                assert_eq!(pool.install(|| texture_hash(w, h, &t)), want, "{w}x{h}, {threads} threads");
            }
        }
    }

    #[test]
    fn the_definition_gives_these_values() {
        // Worked by hand from the steps above, so that another implementation can check itself.
        assert_eq!(texture_hash_reference(0, 0, &[]), fmix(step(ROOT_SEED, 0)));
        let mut lone = step(LEAF_SEED, 7);
        for _ in 1..64 {
            lone = step(lone, 0);
        }
        assert_eq!(leaf_reference(1, 1, &[7], 0, 0), fmix(lone));
        assert_eq!(texture_hash_reference(1, 1, &[7]), fmix(step(step(ROOT_SEED, 1 | 1 << 32), fmix(lone))));
        // Pinned: the values of this definition, also computed by a
        // separate implementation written from the text above.
        assert_eq!(format!("{:016x}", texture_hash_reference(0, 0, &[])), "5590ffdc7c143564");
        assert_eq!(format!("{:016x}", texture_hash_reference(2, 2, &[0, 1, 65535, 300])), "bccc8161a9e68814");
        let ramp: Vec<u16> = (0..51u32).map(|i| (i * 7919) as u16).collect();
        assert_eq!(format!("{:016x}", texture_hash_reference(17, 3, &ramp)), "dc664a8292280c50");
        assert_eq!(format!("{:016x}", bytes_hash(b"murk")), "48b4bc4c08429cdb");
        let bytes: Vec<u8> = (0..768).map(|i| i as u8).collect();
        assert_eq!(format!("{:016x}", bytes_hash(&bytes)), "385211a8e3d3d567");
    }

    /// Changed texels in some tiles, and only those tiles rehashed, give
    /// the hash of the whole texture, on 1 and 3 threads.
    #[test]
    fn rehashing_the_changed_tiles_gives_the_whole_hash() {
        for (w, h) in [(33u32, 47u32), (100, 70), (64, 96), (1, 65)] {
            let (across, down) = (TiledImage::tiles_across(w) as usize, h.div_ceil(TILE) as usize);
            let mut t = texels((w * h) as usize, 5);
            let mut kept = LeafHashes::new(w, h, &t);
            for round in 0..6u64 {
                // Change a few texels, each in a tile it names.
                let picks = texels(4, round + 11);
                let mut tiles: Vec<usize> = Vec::new();
                for p in picks {
                    let i = p as usize % t.len();
                    t[i] = t[i].wrapping_add(1 + round as u16);
                    let (x, y) = (i % w as usize, i / w as usize);
                    tiles.push(y / TILE as usize * across + x / TILE as usize);
                }
                tiles.sort_unstable();
                tiles.dedup();
                assert!(tiles.iter().all(|&i| i < across * down));
                let threads = if round % 2 == 0 { 1 } else { 3 };
                let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
                pool.install(|| kept.update(&t, &tiles));
                assert_eq!(kept.hash(), texture_hash_reference(w, h, &t), "{w}x{h}, round {round}");
            }
            // A tile changed but not named stays stale: the kept leaves are
            // what the hash reads.
            t[0] ^= 1;
            assert_ne!(kept.hash(), texture_hash_reference(w, h, &t), "{w}x{h}");
            kept.update(&t, &[0]);
            assert_eq!(kept.hash(), texture_hash_reference(w, h, &t));
        }
    }

    /// Roots folded together are each texture's own, whatever the sizes
    /// and however many.
    #[test]
    fn roots_folded_together_are_each_textures_own() {
        let kept: Vec<LeafHashes> = SIZES.iter().map(|&(w, h)| LeafHashes::new(w, h, &texels((w * h) as usize, u64::from(w + h)))).collect();
        for n in 0..=kept.len() {
            let some: Vec<&LeafHashes> = kept.iter().take(n).collect();
            assert_eq!(hashes(&some), some.iter().map(|k| k.hash()).collect::<Vec<_>>(), "{n} textures");
        }
    }

    #[test]
    fn any_texel_its_place_and_the_size_change_the_hash() {
        let t = texels(4096, 9);
        let base = texture_hash(64, 64, &t);
        for i in [0, 1, 15, 16, 255, 256, 1024, 4095] {
            let mut u = t.clone();
            u[i] ^= 1;
            assert_ne!(texture_hash(64, 64, &u), base, "texel {i}");
        }
        let mut swapped = t.clone();
        swapped.swap(0, 300);
        if t[0] != t[300] {
            assert_ne!(texture_hash(64, 64, &swapped), base);
        }
        assert_ne!(texture_hash(32, 128, &t), base);
        // A texel past the edge reads 0, yet the size still tells a
        // texture from one padded with zeros.
        assert_ne!(texture_hash(1, 1, &[5]), texture_hash(2, 1, &[5, 0]));
    }
}
