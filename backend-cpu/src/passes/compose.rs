//! Pass 8, compose: the composed mask moves toward its target each recompute.
//!
//! Inputs: blurred visibility, memory, previous composed, fade-in and relax
//! steps, explored value and show-memory alpha. Output: composed.
//! Target = `max(visibility, explored * memory * alpha)` (mask products,
//! rounded). Below the target the texel rises by at most the fade-in step;
//! above it falls by at most the relax step.
//! Returns whether any texel changed. [`compose_scalar`] is the reference;
//! [`compose_simd`] does eight texels at a time with `wide` and is tested
//! equal to it. Twin: `backend-gpu/shaders/compose.wgsl`.

use super::lanes::{load, mask_mul8, store, CHUNK, LANES};
use murk_core::fixed::mask_mul;
use rayon::prelude::*;
use wide::u16x8;

/// Compose parameters, mask units.
#[derive(Clone, Copy, Debug)]
pub struct ComposeParams {
    /// Largest rise per recompute.
    pub fade_in_step: u32,
    /// Largest fall per recompute.
    pub relax_step: u32,
    /// Explored baseline.
    pub explored_value: u16,
    /// Mapped baseline (read by [`super::settle`], which folds the mapped
    /// state into the visibility compose is given).
    pub mapped_value: u16,
    /// Memory's weight.
    pub show_memory_alpha: u16,
}

/// Moves `composed` toward its target, in parallel chunks of [`CHUNK`]
/// texels; returns whether any texel changed.
pub fn compose(visibility: &[u16], memory: &[u16], composed: &mut [u16], p: ComposeParams) -> bool {
    composed
        .par_chunks_mut(CHUNK)
        .zip(visibility.par_chunks(CHUNK).zip(memory.par_chunks(CHUNK)))
        .map(|(c, (v, m))| compose_simd(v, m, c, p))
        .reduce(|| false, |a, b| a | b)
}

/// The reference, one texel at a time.
pub fn compose_scalar(visibility: &[u16], memory: &[u16], composed: &mut [u16], p: ComposeParams) -> bool {
    let mut changed = false;
    for (c, (&v, &m)) in composed.iter_mut().zip(visibility.iter().zip(memory)) {
        let baseline = mask_mul(mask_mul(p.explored_value, m), p.show_memory_alpha);
        let target = u32::from(v.max(baseline));
        let cur = u32::from(*c);
        let next = if target > cur { cur + (target - cur).min(p.fade_in_step) } else { cur - (cur - target).min(p.relax_step) };
        changed |= next != cur;
        *c = next as u16;
    }
    changed
}

/// [`compose_scalar`] eight texels at a time. At most one of the distances
/// up to and down to the target is non-zero, so adding the capped rise and
/// subtracting the capped fall never leaves the 16-bit range. The tail goes
/// through the scalar twin.
pub fn compose_simd(visibility: &[u16], memory: &[u16], composed: &mut [u16], p: ComposeParams) -> bool {
    let whole = composed.len() / LANES * LANES;
    let (explored, alpha) = (u16x8::splat(p.explored_value), u16x8::splat(p.show_memory_alpha));
    // A step above the mask range moves as far as the range allows.
    let cap = |step: u32| u16x8::splat(step.min(u32::from(u16::MAX)) as u16);
    let (fade_in, relax) = (cap(p.fade_in_step), cap(p.relax_step));
    let mut changed = false;
    for x in (0..whole).step_by(LANES) {
        let baseline = mask_mul8(mask_mul8(explored, load(&memory[x..])), alpha);
        let target = load(&visibility[x..]).max(baseline);
        let cur = load(&composed[x..]);
        let next = cur + target.saturating_sub(cur).min(fade_in) - cur.saturating_sub(target).min(relax);
        changed |= bytemuck::cast::<u16x8, u128>(next ^ cur) != 0;
        store(next, &mut composed[x..]);
    }
    compose_scalar(&visibility[whole..], &memory[whole..], &mut composed[whole..], p) | changed
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn fades_in_and_relaxes_to_the_explored_baseline() {
        let p = ComposeParams { fade_in_step: 20000, relax_step: 10000, explored_value: 32768, mapped_value: 0, show_memory_alpha: 65535 };
        let mut c = [0u16];
        compose(&[65535], &[65535], &mut c, p);
        assert_eq!(c[0], 20000);
        for _ in 0..3 {
            compose(&[65535], &[65535], &mut c, p);
        }
        assert_eq!(c[0], 65535);
        compose(&[0], &[65535], &mut c, p);
        assert_eq!(c[0], 55535);
        for _ in 0..5 {
            compose(&[0], &[65535], &mut c, p);
        }
        assert_eq!(c[0], 32768);
        assert!(!compose(&[0], &[65535], &mut c, p));
    }

    proptest! {
        #[test]
        fn simd_equals_scalar(
            texels in prop::collection::vec((any::<u16>(), any::<u16>(), any::<u16>()), 0..70),
            fade_in_step in prop_oneof![Just(0u32), Just(u32::MAX), 0u32..70000],
            relax_step in prop_oneof![Just(0u32), Just(u32::MAX), 0u32..70000],
            explored_value in any::<u16>(), show_memory_alpha in any::<u16>(), settle in any::<bool>(),
        ) {
            let p = ComposeParams { fade_in_step, relax_step, explored_value, mapped_value: 0, show_memory_alpha };
            let v: Vec<u16> = texels.iter().map(|t| t.0).collect();
            let m: Vec<u16> = texels.iter().map(|t| t.1).collect();
            let mut s: Vec<u16> = texels.iter().map(|t| t.2).collect();
            if settle {
                // Composed already at its target: neither kernel reports a change.
                compose_scalar(&v, &m, &mut s, ComposeParams { fade_in_step: u32::MAX, relax_step: u32::MAX, ..p });
            }
            let mut w = s.clone();
            let (a, b) = (compose_scalar(&v, &m, &mut s, p), compose_simd(&v, &m, &mut w, p));
            prop_assert_eq!(s, w);
            prop_assert_eq!(a, b);
        }
    }
}
