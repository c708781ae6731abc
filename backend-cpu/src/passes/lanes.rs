//! What the `wide` kernels of the per-texel passes share: eight `u16` texels
//! as a `u16x8`, the exact mask product in lanes, and the row maximum that
//! paints source windows.
//!
//! The kernels stay in 16-bit lanes and form 32-bit products only through
//! `u16x8::widening_mul` and `mul_keep_high`, which the baseline x86-64
//! instruction set (SSE2) has; a 32-bit lane multiply does not exist there
//! and would be emulated lane by lane.

use wide::{i16x8, i32x8, u16x16, u16x8, u32x8};

/// Texels per SIMD step of the `u16x8` kernels.
pub const LANES: usize = 8;

/// Texels per parallel task of the per-texel passes (a multiple of 16, so
/// only the last task has a scalar tail).
pub const CHUNK: usize = 1 << 14;

/// Eight texels from the start of `texels`.
#[inline]
pub fn load(texels: &[u16]) -> u16x8 {
    u16x8::new(texels[..LANES].try_into().expect("eight texels"))
}

/// Eight texels into the start of `out`.
#[inline]
pub fn store(v: u16x8, out: &mut [u16]) {
    out[..LANES].copy_from_slice(v.as_array());
}

/// Eight 32-bit lanes, each below 2^16, back to 16 bits.
#[inline]
pub fn narrow(v: u32x8) -> u16x8 {
    // The lanes' bits reinterpreted, not converted lane by lane (which the
    // compiler splits into scalar moves).
    bytemuck::cast(i16x8::from_i32x8_truncate(bytemuck::cast::<u32x8, i32x8>(v)))
}

/// `murk_core::fixed::mask_mul` in lanes: `(a * b + 32767) / 65535`. The
/// division is `(p + (p >> 16) + 1) >> 16`, which equals `p / 65535` for
/// every `p` up to `65535 * 65535 + 32767` (checked over that whole range
/// when it was written; the tests compare it with the scalar product on
/// edges and random values) and stays inside 32 bits.
#[inline]
pub fn mask_mul8(a: u16x8, b: u16x8) -> u16x8 {
    let p = a.widening_mul(b) + u32x8::splat(32767);
    narrow((p + (p >> 16) + u32x8::splat(1)) >> 16)
}

/// `dst[i] = max(dst[i], src[i])`, one texel at a time: the reference.
pub fn max_into_scalar(dst: &mut [u16], src: &[u16]) {
    for (d, &s) in dst.iter_mut().zip(src) {
        *d = (*d).max(s);
    }
}

/// [`max_into_scalar`] sixteen texels at a time (the painting of source
/// windows). A tail of a slice of at least sixteen texels is done as the
/// last sixteen (a maximum taken twice is the same), a shorter slice by
/// the scalar twin.
pub fn max_into(dst: &mut [u16], src: &[u16]) {
    max_into_rising(dst, src, |_, _| {});
}

/// [`max_into`], also calling `rose(a, b)` for runs `a..b` of `dst` (of
/// sixteen texels joined where they meet, or the whole of a shorter slice)
/// that hold every texel whose value rose; a run where none rose is not
/// named.
pub fn max_into_rising(dst: &mut [u16], src: &[u16], mut rose: impl FnMut(usize, usize)) {
    const N: usize = 16;
    let n = dst.len().min(src.len());
    // The run's maximum written back; whether a value rose.
    let max16 = |d: &mut [u16], s: &[u16]| {
        let old = u16x16::new(d[..N].try_into().expect("16 texels"));
        let m = old.max(u16x16::new(s[..N].try_into().expect("16 texels")));
        d[..N].copy_from_slice(m.as_array());
        bytemuck::cast::<u16x16, [u128; 2]>(m ^ old) != [0, 0]
    };
    if n < N {
        let mut any = false;
        for (d, &s) in dst[..n].iter_mut().zip(&src[..n]) {
            any |= s > *d;
            *d = (*d).max(s);
        }
        if any {
            rose(0, n);
        }
        return;
    }
    // Neighbouring runs are named as one.
    let mut run: Option<(usize, usize)> = None;
    let mut note = |a: usize, b: usize| match run {
        Some((start, end)) if a <= end => run = Some((start, b)),
        _ => {
            if let Some((start, end)) = run {
                rose(start, end);
            }
            run = Some((a, b));
        }
    };
    let whole = n / N * N;
    for (k, (d, s)) in dst[..whole].chunks_exact_mut(N).zip(src.chunks_exact(N)).enumerate() {
        if max16(d, s) {
            note(k * N, (k + 1) * N);
        }
    }
    if whole < n && max16(&mut dst[n - N..n], &src[n - N..n]) {
        note(n - N, n);
    }
    if let Some((start, end)) = run {
        rose(start, end);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use murk_core::fixed::mask_mul;
    use proptest::prelude::*;

    fn check(a: [u16; 8], b: [u16; 8]) -> Result<(), TestCaseError> {
        let got = mask_mul8(u16x8::new(a), u16x8::new(b));
        for i in 0..8 {
            prop_assert_eq!(got.as_array()[i], mask_mul(a[i], b[i]), "{} * {}", a[i], b[i]);
        }
        Ok(())
    }

    #[test]
    fn the_lane_product_matches_the_scalar_one_at_the_edges() {
        let edges = [0u16, 1, 2, 32767, 32768, 65533, 65534, 65535];
        for &x in &edges {
            check([x; 8], edges).unwrap();
        }
    }

    proptest! {
        #[test]
        fn max_into_equals_its_scalar_twin(pairs in prop::collection::vec((any::<u16>(), any::<u16>()), 0..70)) {
            let (mut a, src): (Vec<u16>, Vec<u16>) = pairs.into_iter().unzip();
            let mut b = a.clone();
            max_into_scalar(&mut a, &src);
            max_into(&mut b, &src);
            prop_assert_eq!(a, b);
        }

        /// The runs named hold every texel that rose, and each of them holds one.
        #[test]
        fn max_into_names_the_runs_where_a_value_rose(pairs in prop::collection::vec((any::<u16>(), prop_oneof![Just(0u16), any::<u16>()]), 0..70)) {
            let (mut dst, src): (Vec<u16>, Vec<u16>) = pairs.into_iter().unzip();
            let before = dst.clone();
            let mut runs = Vec::new();
            max_into_rising(&mut dst, &src, |a, b| runs.push((a, b)));
            let mut want = before.clone();
            max_into_scalar(&mut want, &src);
            prop_assert_eq!(&dst, &want);
            let rose: Vec<usize> = (0..dst.len()).filter(|&i| dst[i] != before[i]).collect();
            prop_assert!(rose.iter().all(|i| runs.iter().any(|&(a, b)| (a..b).contains(i))), "runs {:?} miss a texel of {:?}", runs, rose);
            prop_assert!(runs.iter().all(|&(a, b)| rose.iter().any(|i| (a..b).contains(i))), "a run of {:?} holds no texel of {:?}", runs, rose);
        }

        #[test]
        fn the_lane_product_matches_the_scalar_one(a in any::<[u16; 8]>(), b in any::<[u16; 8]>()) {
            check(a, b)?;
        }
    }
}
