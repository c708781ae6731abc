//! Fog handles: the registry that maps the `uint64_t` a caller holds to
//! the state behind it, so that a null, freed or made-up handle is an
//! error, never a dangling pointer.
//!
//! ```text
//! handle = generation << 32 | (slot index + 1)
//!          ^ bumped when the slot is freed, so an old handle of a
//!            reused slot no longer matches
//! ```
//!
//! A handle's state sits behind its own mutex: calls on different handles
//! run in parallel, calls on one handle one after another. The registry's
//! lock is held only to look a handle up, never while murk works.

use crate::handle::FogHandle;
use crate::status::{FfiError, Result};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// One place for a handle.
struct Slot {
    /// The generation of the handle that may use it now.
    generation: u32,
    /// The state, while the handle is live.
    fog: Option<Arc<Mutex<FogHandle>>>,
}

/// Every slot, and the free ones.
struct Registry {
    slots: Vec<Slot>,
    free: Vec<u32>,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry { slots: Vec::new(), free: Vec::new() });

fn registry() -> MutexGuard<'static, Registry> {
    // Nothing panics while the lock is held: a poisoned lock holds whole slots.
    REGISTRY.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The slot index and generation a handle names, if it is well formed.
fn split(handle: u64) -> Option<(usize, u32)> {
    let index = (handle & 0xffff_ffff) as u32;
    let generation = (handle >> 32) as u32;
    (index > 0 && generation > 0).then(|| ((index - 1) as usize, generation))
}

/// Registers a new handle's state; its handle.
pub(crate) fn insert(fog: FogHandle) -> Result<u64> {
    let mut r = registry();
    let fog = Some(Arc::new(Mutex::new(fog)));
    let index = match r.free.pop() {
        Some(i) => {
            r.slots[i as usize].fog = fog;
            i
        }
        None => {
            let i = u32::try_from(r.slots.len())
                .ok()
                .filter(|&i| i < u32::MAX)
                .ok_or_else(|| FfiError::invalid("handle", r.slots.len(), "cannot be given out: every one of the 2^32 - 1 slots is live"))?;
            r.slots.push(Slot { generation: 1, fog });
            i
        }
    };
    Ok(u64::from(r.slots[index as usize].generation) << 32 | u64::from(index + 1))
}

/// The state of a live handle.
fn lookup(handle: u64) -> Result<Arc<Mutex<FogHandle>>> {
    let r = registry();
    split(handle)
        .and_then(|(i, generation)| r.slots.get(i).filter(|s| s.generation == generation))
        .and_then(|s| s.fog.clone())
        .ok_or(FfiError::InvalidHandle(handle))
}

/// Unregisters a live handle and hands its state back (to be dropped by
/// the caller, outside the registry's lock: a GPU backend's teardown
/// waits for its device). A call still running on it from another thread
/// keeps the state alive until it returns.
pub(crate) fn remove(handle: u64) -> Result<Arc<Mutex<FogHandle>>> {
    let mut r = registry();
    let (i, generation) = split(handle).ok_or(FfiError::InvalidHandle(handle))?;
    let slot = r.slots.get_mut(i).filter(|s| s.generation == generation && s.fog.is_some()).ok_or(FfiError::InvalidHandle(handle))?;
    let fog = slot.fog.take().ok_or(FfiError::InvalidHandle(handle))?;
    // A slot whose generations are used up is retired, never reused.
    if let Some(next) = slot.generation.checked_add(1) {
        slot.generation = next;
        r.free.push(i as u32);
    }
    Ok(fog)
}

/// Runs `f` on a live handle's state, with what the previous call on it
/// staged (see [`FogHandle::staged`]): taken here, so that any call in
/// between drops it.
pub(crate) fn with_fog_staged<T>(handle: u64, f: impl FnOnce(&mut FogHandle, Option<crate::handle::Staged>) -> Result<T>) -> Result<T> {
    let fog = lookup(handle)?;
    let mut fog = fog.lock().map_err(|_| FfiError::Poisoned(handle))?;
    let staged = fog.staged.take();
    f(&mut fog, staged)
}

/// Runs `f` on a live handle's state.
pub(crate) fn with_fog<T>(handle: u64, f: impl FnOnce(&mut FogHandle) -> Result<T>) -> Result<T> {
    with_fog_staged(handle, |fog, _| f(fog))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guard::call;
    use crate::last_error;
    use crate::status::{MURK_ERR_INVALID_HANDLE, MURK_ERR_PANIC, MURK_OK};
    use murk_core::FogSubsystem;

    fn new_handle() -> u64 {
        let backend = murk_cpu::CpuBackend::new(1).expect("the CPU backend opens");
        insert(FogHandle::new(FogSubsystem::new(Box::new(backend)))).expect("a handle is given out")
    }

    #[test]
    fn a_freed_slot_is_reused_under_another_generation() {
        let first = new_handle();
        remove(first).expect("live");
        assert!(matches!(remove(first), Err(FfiError::InvalidHandle(h)) if h == first), "freed once only");
        // Other tests give out handles at once: look for one in the same slot.
        let mut seen = Vec::new();
        let reused = loop {
            let h = new_handle();
            seen.push(h);
            if h & 0xffff_ffff == first & 0xffff_ffff || seen.len() > 64 {
                break h;
            }
        };
        assert_eq!(reused & 0xffff_ffff, first & 0xffff_ffff, "the slot is reused");
        assert!(reused >> 32 > first >> 32, "under a newer generation: {reused:#x} after {first:#x}");
        assert!(lookup(first).is_err() && lookup(reused).is_ok());
        for h in seen {
            remove(h).expect("live");
        }
    }

    #[test]
    fn a_panic_inside_a_handle_leaves_it_unusable_but_freeable() {
        let h = new_handle();
        assert_eq!(call(|| with_fog(h, |_| panic!("inside"))), MURK_ERR_PANIC);
        assert_eq!(last_error::message(), "murk panicked: inside");
        assert_eq!(call(|| with_fog(h, |_| Ok(()))), MURK_ERR_PANIC);
        assert!(last_error::message().contains("is unusable: an earlier call panicked inside it; free it"), "{}", last_error::message());
        assert_eq!(call(|| remove(h).map(drop)), MURK_OK);
        assert_eq!(call(|| with_fog(h, |_| Ok(()))), MURK_ERR_INVALID_HANDLE);
    }

    #[test]
    fn malformed_handles_name_no_slot() {
        for h in [0, 1 << 32, 1, u64::MAX] {
            assert!(matches!(lookup(h), Err(FfiError::InvalidHandle(x)) if x == h), "{h:#x}");
        }
    }
}
