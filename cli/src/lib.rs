//! # murk-cli
//!
//! The `murk` command line, and the one place that knows every backend:
//! [`select_backend`] turns a run-time choice (`cpu`, `gpu`, `auto`) into a
//! backend, [`select_renderer`] into a backend and the premade looks on the
//! same device. (Backends never depend on each other, so the choice lives above
//! them.)

use murk_core::{Backend, BackendChoice, MurkError};
use murk_looks::Looks;

/// A backend for `choice`, and a line saying what was chosen and why.
///
/// `gpu` with no adapter is an error naming the reason; `auto` runs on a
/// hardware adapter only, else falls back to the CPU and says why. (The same choice as [`select_renderer`], without
/// the looks.)
pub fn select_backend(choice: BackendChoice, threads: usize) -> Result<(Box<dyn Backend>, String), MurkError> {
    select_renderer(choice, threads).map(|r| (r.backend, r.line))
}

/// What [`select_renderer`] returns: a simulation backend and the premade
/// looks on the same device.
pub struct Renderer {
    /// The simulation backend.
    pub backend: Box<dyn Backend>,
    /// The premade looks, on the backend's device.
    pub looks: Box<dyn Looks>,
    /// What was chosen and why (`gpu on <adapter>`, `cpu with 4 thread(s)`,
    /// `auto: no usable GPU (...)`).
    pub line: String,
}

/// A simulation backend and a [`Looks`] renderer on the same device for
/// `choice` (`murk render`), and a line saying what was chosen and why.
pub fn select_renderer(choice: BackendChoice, threads: usize) -> Result<Renderer, MurkError> {
    let cpu = || -> Result<Renderer, MurkError> {
        Ok(Renderer { backend: Box::new(murk_cpu::CpuBackend::new(threads)?), looks: Box::new(murk_cpu::looks::CpuLooks), line: String::new() })
    };
    let prefix = if choice == BackendChoice::Auto { "auto: " } else { "" };
    let opened = choice.open(cpu, |hardware| gpu(prefix, hardware))?;
    let Renderer { backend, looks, line } = opened.backend;
    let line = match opened.fallback {
        Some(e) => format!("auto: no usable GPU ({e}); running on the cpu with {threads} thread(s)"),
        None if line.is_empty() => format!("cpu with {threads} thread(s)"),
        None => line,
    };
    Ok(Renderer { backend, looks, line })
}

/// The GPU backend and its looks on the first adapter (a hardware one only,
/// with `hardware`); `prefix` starts the line saying what was chosen.
#[cfg(feature = "gpu")]
fn gpu(prefix: &str, hardware: bool) -> Result<Renderer, MurkError> {
    let gpu = if hardware { murk_gpu::GpuBackend::new_hardware()? } else { murk_gpu::GpuBackend::new()? };
    let line = format!("{prefix}gpu on {}", gpu.adapter());
    Ok(Renderer { backend: Box::new(gpu.clone()), looks: Box::new(gpu), line })
}

/// Without the `gpu` feature there is no GPU backend to choose.
#[cfg(not(feature = "gpu"))]
fn gpu(_prefix: &str, _hardware: bool) -> Result<Renderer, MurkError> {
    Err(MurkError::backend_message("gpu", "this murk was built without the `gpu` feature"))
}
