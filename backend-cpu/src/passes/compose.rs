//! Pass 8, compose: the composed mask moves toward its target each recompute.
//!
//! Inputs: blurred visibility, memory, previous composed, fade-in and relax
//! steps, explored value and show-memory alpha. Output: composed.
//! Target = `max(visibility, explored * memory * alpha)` (mask products,
//! rounded). Below the target the texel rises by at most the fade-in step;
//! above it falls by at most the relax step.
//! Returns whether any texel changed. Twin: `backend-gpu/shaders/compose.wgsl`.

use murk_core::fixed::mask_mul;
use rayon::prelude::*;

/// Compose parameters, mask units.
#[derive(Clone, Copy, Debug)]
pub struct ComposeParams {
    /// Largest rise per recompute.
    pub fade_in_step: u32,
    /// Largest fall per recompute.
    pub relax_step: u32,
    /// Explored baseline.
    pub explored_value: u16,
    /// Memory contribution.
    pub show_memory_alpha: u16,
}

/// Updates `composed` in place.
pub fn compose(visibility: &[u16], memory: &[u16], composed: &mut [u16], p: ComposeParams) -> bool {
    composed
        .par_iter_mut()
        .zip(visibility.par_iter().zip(memory.par_iter()))
        .map(|(c, (&v, &m))| {
            let baseline = mask_mul(mask_mul(p.explored_value, m), p.show_memory_alpha);
            let target = v.max(baseline);
            let cur = u32::from(*c);
            let t = u32::from(target);
            let next = if t > cur { cur + (t - cur).min(p.fade_in_step) } else { cur - (cur - t).min(p.relax_step) };
            let changed = next != cur;
            *c = next as u16;
            changed
        })
        .reduce(|| false, |a, b| a | b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fades_in_and_relaxes_to_the_explored_baseline() {
        let p = ComposeParams { fade_in_step: 20000, relax_step: 10000, explored_value: 32768, show_memory_alpha: 65535 };
        let mut c = [0u16];
        compose(&[65535], &[65535], &mut c, p);
        assert_eq!(c[0], 20000);
        for _ in 0..3 {
            compose(&[65535], &[65535], &mut c, p);
        }
        assert_eq!(c[0], 65535);
        // Vision lost: relax toward explored (0.5 of memory 1.0).
        compose(&[0], &[65535], &mut c, p);
        assert_eq!(c[0], 55535);
        for _ in 0..5 {
            compose(&[0], &[65535], &mut c, p);
        }
        assert_eq!(c[0], 32768);
        assert!(!compose(&[0], &[65535], &mut c, p));
    }
}
