//! Opening the browser's WebGPU device with the limits murk needs. murk
//! opens the device itself: wgpu 30 can wrap a `GPUTexture` of a device it
//! opened, but has no way to adopt a `GPUDevice` the page already holds (its
//! WebGPU device type has no public constructor), so a renderer that is to
//! sample murk's mask textures uses murk's device (`Fog.device`), as
//! three.js's `WebGPURenderer` does when given a `device`.

use super::js;
use murk_gpu::GpuBackend;
use std::sync::{Arc, Mutex, PoisonError};
use wasm_bindgen::JsError;

/// The browser's device, opened for murk, and what the page may want to
/// know of it.
pub(super) struct WebGpu {
    /// murk's backend on the device.
    pub(super) backend: GpuBackend,
    /// The adapter's name, where the browser gives one.
    pub(super) adapter: String,
    /// Whether the browser marks the adapter a fallback (software) adapter.
    pub(super) software: bool,
    /// Why the browser took the device away, once it has.
    pub(super) lost: Arc<Mutex<Option<String>>>,
}

impl WebGpu {
    /// Why the device was lost, once it has been.
    pub(super) fn lost(&self) -> Option<String> {
        self.lost.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }
}

/// Opens the browser's WebGPU adapter and a device with murk's limits; an
/// adapter below them is an error naming each limit that falls short.
pub(super) async fn open() -> Result<WebGpu, JsError> {
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
    desc.backends = wgpu::Backends::BROWSER_WEBGPU;
    let instance = wgpu::Instance::new(desc);
    let adapter = instance
        .request_adapter(&wgpu::RequestAdapterOptions::default())
        .await
        .map_err(|e| js(format!("no WebGPU adapter (a browser needs WebGPU for the GPU backend; Fog.cpu() works without it): {e}")))?;
    let info = adapter.get_info();
    let required_limits = murk_gpu::limits_for(&adapter.limits(), &info).map_err(js)?;
    let (device, queue) =
        adapter.request_device(&wgpu::DeviceDescriptor { label: Some("murk"), required_limits, ..Default::default() }).await.map_err(js)?;
    let lost = Arc::new(Mutex::new(None));
    let record = lost.clone();
    device.set_device_lost_callback(move |reason, message| {
        *record.lock().unwrap_or_else(PoisonError::into_inner) = Some(format!("the browser took the WebGPU device away ({reason:?}): {message}"));
    });
    let name = if info.name.is_empty() { "the browser's WebGPU adapter (unnamed)".to_string() } else { format!("{} (WebGPU)", info.name) };
    let software = info.device_type == wgpu::DeviceType::Cpu;
    let backend = GpuBackend::from_device(device, queue, info).map_err(js)?;
    Ok(WebGpu { backend, adapter: name, software, lost })
}
