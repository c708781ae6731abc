//! # murk-cli
//!
//! The `murk` command line, and the one place that knows every backend:
//! [`select_backend`] turns a run-time choice (`cpu`, `gpu`, `auto`) into a
//! backend. (Backends never depend on each other, so the choice lives above
//! them.)

use murk_core::{Backend, BackendChoice, MurkError};

/// A backend for `choice`, and a line saying what was chosen and why.
///
/// `gpu` with no adapter is an error naming the reason; `auto` falls back to
/// the CPU and says why.
pub fn select_backend(choice: BackendChoice, threads: usize) -> Result<(Box<dyn Backend>, String), MurkError> {
    let cpu = |why: String| -> Result<(Box<dyn Backend>, String), MurkError> {
        let b = murk_cpu::CpuBackend::new(threads)?;
        Ok((Box::new(b), why))
    };
    match choice {
        BackendChoice::Cpu => cpu(format!("cpu with {threads} thread(s)")),
        BackendChoice::Gpu => {
            let g = murk_gpu::GpuBackend::new()?;
            let line = format!("gpu on {}", g.adapter());
            Ok((Box::new(g), line))
        }
        BackendChoice::Auto => match murk_gpu::GpuBackend::new() {
            Ok(g) => {
                let line = format!("auto: gpu on {}", g.adapter());
                Ok((Box::new(g), line))
            }
            Err(e) => cpu(format!("auto: no usable GPU ({e}); running on the cpu with {threads} thread(s)")),
        },
    }
}
