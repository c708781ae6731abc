//! Fog handles: creating one on a backend, freeing it, ticking it, and the
//! hashes lockstep peers compare.

#![expect(unsafe_code, reason = "the functions here are exported to C unmangled (`#[no_mangle]`); they hold no unsafe block")]

use crate::guard::call;
use crate::handle::FogHandle;
use crate::status::FfiError;
use crate::{raw, registry};
use murk_core::{Backend, BackendChoice, FogSubsystem};
use std::ffi::c_char;

/// The CPU reference backend (`murk_fog_create`).
pub const MURK_BACKEND_CPU: u32 = 0;
/// The GPU backend on any adapter, software ones included; an error where
/// none opens, or in a library built without the `gpu` feature.
pub const MURK_BACKEND_GPU: u32 = 1;
/// The GPU on a hardware adapter, else the CPU.
pub const MURK_BACKEND_AUTO: u32 = 2;

/// The GPU backend, on a hardware adapter only with `hardware`.
#[cfg(feature = "gpu")]
fn gpu(hardware: bool) -> murk_core::Result<Box<dyn Backend>> {
    let gpu = if hardware { murk_gpu::GpuBackend::new_hardware()? } else { murk_gpu::GpuBackend::new()? };
    Ok(Box::new(gpu))
}

/// Without the `gpu` feature there is no GPU backend to open.
#[cfg(not(feature = "gpu"))]
fn gpu(_hardware: bool) -> murk_core::Result<Box<dyn Backend>> {
    Err(murk_core::MurkError::NoAdapter("this murk-ffi was built without the `gpu` feature".into()))
}

/// The most worker threads `murk_fog_create` starts for the CPU backend.
pub const MURK_MAX_THREADS: u32 = 1024;

/// Creates a fog handle: an empty world and a fog subsystem over it on
/// `backend` (`MURK_BACKEND_CPU`, `MURK_BACKEND_GPU` or
/// `MURK_BACKEND_AUTO`, as `murk run --backend` chooses), the CPU backend
/// with `threads` worker threads (0: one per core; at most
/// `MURK_MAX_THREADS`). Writes the handle to `out_fog` (0 on failure).
/// Free it with `murk_fog_free`.
#[no_mangle]
pub extern "C" fn murk_fog_create(backend: u32, threads: u32, out_fog: *mut u64) -> i32 {
    call(|| {
        raw::write(out_fog, 0, "out_fog")?;
        let choice = match backend {
            MURK_BACKEND_CPU => BackendChoice::Cpu,
            MURK_BACKEND_GPU => BackendChoice::Gpu,
            MURK_BACKEND_AUTO => BackendChoice::Auto,
            other => return Err(FfiError::invalid("backend", other, "must be MURK_BACKEND_CPU (0), MURK_BACKEND_GPU (1) or MURK_BACKEND_AUTO (2)")),
        };
        let threads = match threads {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n if n > MURK_MAX_THREADS => {
                return Err(FfiError::invalid("threads", n, format!("must be at most {MURK_MAX_THREADS} (0: one per core)")))
            }
            n => n as usize,
        };
        let cpu = || -> murk_core::Result<Box<dyn Backend>> { Ok(Box::new(murk_cpu::CpuBackend::new(threads)?)) };
        let opened = choice.open(cpu, gpu)?;
        let handle = registry::insert(FogHandle::new(FogSubsystem::new(opened.backend)))?;
        raw::write(out_fog, handle, "out_fog")
    })
}

/// Frees a fog handle: its world, every entity in it, and the subsystem
/// with its backend. The handle (and every entity handle of its world) is
/// stale from then on; freeing it again is `MURK_ERR_INVALID_HANDLE`.
#[no_mangle]
pub extern "C" fn murk_fog_free(fog: u64) -> i32 {
    call(|| {
        drop(registry::remove(fog)?);
        Ok(())
    })
}

/// The backend's name with its configuration (`cpu[threads=2]`,
/// `gpu[...]`) as NUL-terminated text into `buf` of `capacity` bytes;
/// `out_len` receives its length without the NUL (`buf` must hold one
/// more). A null `buf` with capacity 0 asks for the length only.
#[no_mangle]
pub extern "C" fn murk_fog_backend_name(fog: u64, buf: *mut c_char, capacity: usize, out_len: *mut usize) -> i32 {
    call(|| {
        let name = registry::with_fog(fog, |h| Ok(h.fog.backend_name()))?;
        raw::fill_text(buf, capacity, &name, out_len, "buf").map(drop)
    })
}

/// Advances every instance by `dt_us` microseconds, reading the world's
/// entities as they are now. Inputs are checked first: on an error (a bad
/// component, named by its entity) nothing changed. The tick's stealth and
/// sight events are read with `murk_stealth_events`,
/// `murk_observer_stealth_events` and `murk_sight_events` until the next
/// tick. Transient reveals that expire are despawned by the tick.
#[no_mangle]
pub extern "C" fn murk_tick(fog: u64, dt_us: u32) -> i32 {
    call(|| {
        registry::with_fog(fog, |h| {
            h.report = h.fog.tick(&mut h.world, dt_us)?;
            Ok(())
        })
    })
}

/// The lockstep hash of the whole fog state now (every instance's masks,
/// stealth states and sight sets; `docs/determinism.md` defines it): equal
/// on every peer that ran the same inputs, on any backend and thread
/// count. On the GPU backend it waits for the device.
#[no_mangle]
pub extern "C" fn murk_lockstep_hash(fog: u64, out_hash: *mut u64) -> i32 {
    call(|| {
        let hash = registry::with_fog(fog, |h| Ok(h.fog.lockstep_hash()?))?;
        raw::write(out_hash, hash, "out_hash")
    })
}

/// One instance's state hash (its final mask, memory, mapped state and
/// composed mask).
#[no_mangle]
pub extern "C" fn murk_state_hash(fog: u64, instance: *const c_char, instance_len: usize, out_hash: *mut u64) -> i32 {
    call(|| {
        let name = raw::text(instance, instance_len, "instance")?;
        let hash = registry::with_fog(fog, |h| Ok(h.fog.state_hash(name)?))?;
        raw::write(out_hash, hash, "out_hash")
    })
}

/// Turns per-tick hashing on (`on` not 0) or off: every tick then hashes
/// the state it leaves (on the device, on the GPU backend) and the tick
/// two ticks later delivers it (`murk_landed_hash`), so that a lockstep
/// game compares a hash every tick without ever waiting for the device.
/// Off by default; snapshots do not save it.
#[no_mangle]
pub extern "C" fn murk_set_hash_every_tick(fog: u64, on: u32) -> i32 {
    call(|| {
        registry::with_fog(fog, |h| {
            h.fog.set_hash_every_tick(on != 0);
            Ok(())
        })
    })
}

/// The lockstep hash the last tick delivered (see
/// `murk_set_hash_every_tick`): `out_ticks` receives the tick count of the
/// state it hashes (the state after the tick numbered `ticks - 1` from 0;
/// 0: no hash landed this tick, `out_hash` is then 0) and `out_hash` the
/// hash, what `murk_lockstep_hash` answered then. Peers compare the hashes
/// of equal tick counts.
#[no_mangle]
pub extern "C" fn murk_landed_hash(fog: u64, out_ticks: *mut u64, out_hash: *mut u64) -> i32 {
    call(|| {
        let landed = registry::with_fog(fog, |h| Ok(h.report.lockstep))?;
        raw::write(out_ticks, landed.map_or(0, |l| l.ticks), "out_ticks")?;
        raw::write(out_hash, landed.map_or(0, |l| l.hash), "out_hash")
    })
}
