//! A readback on its way from the device: a staging buffer that a
//! submitted copy fills, mapped once the copy is on the queue, and how a
//! caller waits for it.

use crate::error::GpuError;
use murk_core::Result;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

const PENDING: u8 = 0;
const LANDED: u8 = 1;
const FAILED: u8 = 2;

/// A readback in flight.
pub(crate) struct InFlight {
    staging: wgpu::Buffer,
    bytes: u64,
    state: Arc<AtomicU8>,
}

impl InFlight {
    /// A readback of the first `bytes` of `staging` (not mapped yet).
    pub(crate) fn new(staging: wgpu::Buffer, bytes: u64) -> Self {
        Self { staging, bytes, state: Arc::new(AtomicU8::new(PENDING)) }
    }

    /// Whether the mapping has landed (or failed): collecting it then never
    /// waits.
    pub(crate) fn landed(&self) -> bool {
        self.state.load(Ordering::Acquire) != PENDING
    }

    /// Asks for the mapping; call after the copy into the staging buffer
    /// was submitted (a buffer waiting to be mapped cannot be used by a
    /// later submission).
    pub(crate) fn map(&self) {
        let state = self.state.clone();
        self.staging.map_async(wgpu::MapMode::Read, .., move |r| state.store(if r.is_ok() { LANDED } else { FAILED }, Ordering::Release));
    }

    /// The bytes, once landed (and unmapped after); an error when the
    /// mapping failed or has not landed.
    pub(crate) fn bytes(&self) -> Result<Vec<u8>> {
        match self.state.load(Ordering::Acquire) {
            LANDED => {
                let view = self.staging.get_mapped_range(..).map_err(GpuError::Mapped)?;
                let out = view[..self.bytes as usize].to_vec();
                drop(view);
                self.staging.unmap();
                Ok(out)
            }
            FAILED => Err(GpuError::ReadbackLost("a readback failed to map").into()),
            _ => Err(GpuError::ReadbackLost("a readback did not land after the device went idle").into()),
        }
    }
}

/// How a readback is collected, and what `Context::waits` counts.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Wait {
    /// Return `None` while it is in flight.
    No,
    /// Block only if it has not landed (a tick whose flag or sample fell
    /// due): counted only when it had to block, so a device that keeps up
    /// costs a tick no waits.
    IfPending,
    /// The caller asked for results now (masks, hashes, snapshots): a sync
    /// point, counted every time, whether or not the device had finished.
    Sync,
}
