//! Pass 7, memory: explored memory rises with visibility and decays where unseen.
//!
//! Inputs: blurred visibility, previous memory, forget step, freeze flag.
//! Output: memory. Where visibility is above 0 memory becomes
//! `max(memory, visibility)`; elsewhere it falls by the forget step (not
//! below 0). Frozen memory does not change at all.
//! Returns whether any texel changed. Twin: `backend-gpu/shaders/memory.wgsl`.

use rayon::prelude::*;

/// Updates `memory` in place from `visibility`.
pub fn memory(visibility: &[u16], memory: &mut [u16], forget_step: u32, freeze: bool) -> bool {
    if freeze {
        return false;
    }
    let step = forget_step.min(u32::from(u16::MAX)) as u16;
    memory
        .par_iter_mut()
        .zip(visibility.par_iter())
        .map(|(m, &v)| {
            let next = if v > 0 { (*m).max(v) } else { m.saturating_sub(step) };
            let changed = next != *m;
            *m = next;
            changed
        })
        .reduce(|| false, |a, b| a | b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rises_keeps_decays_and_freezes() {
        let vis = [0u16, 30000, 10000, 0];
        let mut mem = [0u16, 20000, 20000, 500];
        assert!(memory(&vis, &mut mem, 300, false));
        assert_eq!(mem, [0, 30000, 20000, 200]);
        assert!(memory(&vis, &mut mem, 300, false));
        assert_eq!(mem, [0, 30000, 20000, 0]);
        let before = mem;
        assert!(!memory(&[65535; 4], &mut mem, 300, true));
        assert_eq!(mem, before);
    }
}
