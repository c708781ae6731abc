//! Pass 7, memory: explored memory rises with visibility and decays where unseen.
//!
//! Inputs: blurred visibility, previous memory, forget step, freeze flag.
//! Output: memory. Where visibility is above 0 memory becomes
//! `max(memory, visibility)`; elsewhere it falls by the forget step (not
//! below 0). Frozen memory does not change at all.
//! Returns whether any texel changed. [`memory_scalar`] is the reference;
//! [`memory_simd`] does sixteen texels at a time with `wide` and is tested
//! equal to it. Twin: `backend-gpu/shaders/memory.wgsl`.

use super::lanes::CHUNK;
use rayon::prelude::*;
use wide::u16x16;

/// Updates `memory` in place from `visibility`, in parallel chunks of
/// [`CHUNK`] texels.
pub fn memory(visibility: &[u16], memory: &mut [u16], forget_step: u32, freeze: bool) -> bool {
    if freeze {
        return false;
    }
    let step = forget_step.min(u32::from(u16::MAX)) as u16;
    memory.par_chunks_mut(CHUNK).zip(visibility.par_chunks(CHUNK)).map(|(m, v)| memory_simd(v, m, step)).reduce(|| false, |a, b| a | b)
}

/// The reference, one texel at a time; `step` is the forget step.
pub fn memory_scalar(visibility: &[u16], memory: &mut [u16], step: u16) -> bool {
    let mut changed = false;
    for (m, &v) in memory.iter_mut().zip(visibility) {
        let next = if v > 0 { (*m).max(v) } else { m.saturating_sub(step) };
        changed |= next != *m;
        *m = next;
    }
    changed
}

/// [`memory_scalar`] sixteen texels at a time; the tail goes through the
/// scalar twin.
pub fn memory_simd(visibility: &[u16], memory: &mut [u16], step: u16) -> bool {
    const N: usize = 16;
    let whole = memory.len() / N * N;
    let (zero, step) = (u16x16::splat(0), u16x16::splat(step));
    let mut changed = false;
    for (m, v) in memory[..whole].chunks_exact_mut(N).zip(visibility.chunks_exact(N)) {
        let cur = u16x16::new(m.try_into().expect("16 texels"));
        let seen = u16x16::new(v.try_into().expect("16 texels"));
        let next = seen.simd_eq(zero).select(cur.saturating_sub(step), cur.max(seen));
        changed |= bytemuck::cast::<u16x16, [u128; 2]>(next ^ cur) != [0, 0];
        m.copy_from_slice(next.as_array());
    }
    memory_scalar(&visibility[whole..], &mut memory[whole..], step.as_array()[0]) | changed
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

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

    proptest! {
        #[test]
        fn simd_equals_scalar(texels in prop::collection::vec((prop_oneof![Just(0u16), any::<u16>()], any::<u16>()), 0..70), step in any::<u16>()) {
            let v: Vec<u16> = texels.iter().map(|t| t.0).collect();
            let mut s: Vec<u16> = texels.iter().map(|t| t.1).collect();
            let mut w = s.clone();
            let (a, b) = (memory_scalar(&v, &mut s, step), memory_simd(&v, &mut w, step));
            prop_assert_eq!(s, w);
            prop_assert_eq!(a, b);
        }
    }
}
