//! The state hash of mask textures: 64 bits, fast on a CPU, computable on a
//! GPU with 32-bit integers only, and defined here well enough for another
//! implementation to compute the same value.
//!
//! A texture of `width x height` 16-bit texels (row-major) is hashed as:
//!
//! 1. **Words.** Every 4 consecutive texels make one 64-bit word,
//!    `t0 | t1 << 16 | t2 << 32 | t3 << 48`; a last word short of texels
//!    takes 0 for the missing ones.
//! 2. **Leaves.** The texels fall into leaves of [`LEAF_TEXELS`] (256) in
//!    order, the last one shorter. A leaf's value is
//!    `fmix(fold(LEAF_SEED, its words))`.
//! 3. **Root.** The texture's hash is
//!    `fmix(fold(step(ROOT_SEED, width | height << 32), the leaf values in order))`.
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
//! texels, is sequential. `fmix` is MurmurHash3's 64-bit finalizer.
//! An instance's state hash and the lockstep hash build on it
//! (`docs/determinism.md`).

use rayon::prelude::*;

/// Texels per leaf.
pub const LEAF_TEXELS: usize = 256;
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

/// Four texels as one word (missing texels are 0).
#[inline]
fn word(texels: &[u16]) -> u64 {
    texels.iter().enumerate().fold(0, |w, (i, &t)| w | u64::from(t) << (16 * i))
}

/// The value of one leaf (at most [`LEAF_TEXELS`] texels).
pub fn leaf(texels: &[u16]) -> u64 {
    fmix(texels.chunks(4).fold(LEAF_SEED, |a, c| step(a, word(c))))
}

/// The root fold over leaf values, in order, after the size word.
fn root(size: u64, leaves: impl IntoIterator<Item = u64>) -> u64 {
    fmix(leaves.into_iter().fold(step(ROOT_SEED, size), step))
}

/// The size word of a texture.
fn size_word(width: u32, height: u32) -> u64 {
    u64::from(width) | u64::from(height) << 32
}

/// The hash of a texture, leaf by leaf on one thread: the definition.
pub fn texture_hash_reference(width: u32, height: u32, texels: &[u16]) -> u64 {
    root(size_word(width, height), texels.chunks(LEAF_TEXELS).map(leaf))
}

/// Leaves hashed four at a time: four independent folds interleaved, so
/// that the multiplies of one overlap those of the others.
fn four_leaves(texels: &[u16], out: &mut [u64]) {
    let full = texels.len() / LEAF_TEXELS;
    if full >= 4 && out.len() == 4 {
        let mut a = [LEAF_SEED; 4];
        for j in 0..LEAF_TEXELS / 4 {
            for (k, a) in a.iter_mut().enumerate() {
                let t = &texels[k * LEAF_TEXELS + 4 * j..][..4];
                *a = step(*a, u64::from(t[0]) | u64::from(t[1]) << 16 | u64::from(t[2]) << 32 | u64::from(t[3]) << 48);
            }
        }
        for (o, a) in out.iter_mut().zip(a) {
            *o = fmix(a);
        }
    } else {
        for (o, c) in out.iter_mut().zip(texels.chunks(LEAF_TEXELS)) {
            *o = leaf(c);
        }
    }
}

/// The hash of a texture, its leaves in parallel on the current rayon pool;
/// equal to [`texture_hash_reference`] on every thread count.
pub fn texture_hash(width: u32, height: u32, texels: &[u16]) -> u64 {
    let mut leaves = vec![0u64; texels.len().div_ceil(LEAF_TEXELS)];
    // 64 leaves (16 K texels) per task.
    leaves.par_chunks_mut(64).zip(texels.par_chunks(64 * LEAF_TEXELS)).for_each(|(out, texels)| {
        for (out, texels) in out.chunks_mut(4).zip(texels.chunks(4 * LEAF_TEXELS)) {
            four_leaves(texels, out);
        }
    });
    root(size_word(width, height), leaves)
}

/// The hash of a byte string: the texture hash of its bytes read as
/// little-endian 16-bit texels (a last odd byte padded with 0), with the byte
/// count as the size word (for fewer than 2^32 bytes, the texture of width
/// the byte count and height 0). Snapshots use it as their checksum.
pub fn bytes_hash(bytes: &[u8]) -> u64 {
    /// Bytes per leaf: 256 texels of 2 bytes.
    const LEAF_BYTES: usize = 2 * LEAF_TEXELS;
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
    root(bytes.len() as u64, leaves)
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

    #[test]
    fn the_parallel_hash_is_the_definition_for_every_length_and_thread_count() {
        for n in [0, 1, 3, 4, 255, 256, 257, 1023, 1024, 1025, 64 * 256 + 5, 100_000] {
            let t = texels(n, n as u64);
            let want = texture_hash_reference(n as u32, 1, &t);
            for threads in [1, 3] {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
                assert_eq!(pool.install(|| texture_hash(n as u32, 1, &t)), want, "{n} texels, {threads} threads");
            }
        }
    }

    #[test]
    fn the_definition_gives_these_values() {
        // Worked by hand from the steps above, so that another implementation can check itself.
        let empty = fmix(step(ROOT_SEED, 0));
        assert_eq!(texture_hash_reference(0, 0, &[]), empty);
        let one = fmix(step(step(ROOT_SEED, 1 | 1 << 32), fmix(step(LEAF_SEED, 7))));
        assert_eq!(texture_hash_reference(1, 1, &[7]), one);
        let four = fmix(step(LEAF_SEED, 1 | 2 << 16 | 3 << 32 | 4 << 48));
        assert_eq!(leaf(&[1, 2, 3, 4]), four);
        // Pinned: the values of this definition.
        assert_eq!(format!("{:016x}", texture_hash_reference(2, 2, &[0, 1, 65535, 300])), "d8d16d200ed02ea4");
    }

    #[test]
    fn bytes_hash_as_texels_of_two_bytes() {
        for n in [0usize, 1, 2, 7, 8, 9, 511, 512, 513, 40_000] {
            let bytes: Vec<u8> = texels(n.div_ceil(2), 3).iter().flat_map(|t| t.to_le_bytes()).take(n).collect();
            let as_texels: Vec<u16> = bytes.chunks(2).map(|c| u16::from(c[0]) | c.get(1).map_or(0, |&b| u16::from(b) << 8)).collect();
            assert_eq!(bytes_hash(&bytes), texture_hash_reference(n as u32, 0, &as_texels), "{n} bytes");
        }
    }

    #[test]
    fn any_texel_its_place_and_the_size_change_the_hash() {
        let t = texels(4096, 9);
        let base = texture_hash(64, 64, &t);
        for i in [0, 1, 255, 256, 4095] {
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
    }
}
