//! What murk asks of a device, and opening its own: the limits its
//! pipelines need, checked against an adapter or a host's device, and the
//! wgpu backends tried in turn.

use crate::error::GpuError;
use murk_core::{MurkError, Result};

/// The environment variable that picks the wgpu backends murk's own device
/// may open (`vulkan`, `metal`, `dx12`, `gl`, comma-separated).
pub const BACKEND_VAR: &str = "MURK_WGPU_BACKEND";

/// The limits murk's pipelines need beyond WebGPU's downlevel defaults:
/// ten storage buffers in one compute stage, and buffers as large as the
/// adapter allows (checked per instance when it is created).
pub fn required_limits(adapter: &wgpu::Limits) -> wgpu::Limits {
    wgpu::Limits {
        max_storage_buffers_per_shader_stage: 10,
        max_storage_buffer_binding_size: adapter.max_storage_buffer_binding_size,
        max_buffer_size: adapter.max_buffer_size,
        max_texture_dimension_2d: adapter.max_texture_dimension_2d,
        ..wgpu::Limits::downlevel_defaults()
    }
}

/// The limits to open a device with on an adapter that has `have`
/// ([`required_limits`]), or an error naming each limit of the adapter
/// below what murk needs (in a browser, WebGPU's defaults give 8 storage
/// buffers per stage where murk needs 10: ask the adapter for its own).
pub fn limits_for(have: &wgpu::Limits, adapter: &wgpu::AdapterInfo) -> Result<wgpu::Limits> {
    // Buffer and texture sizes are checked per instance, against what the device has.
    let need = required_limits(&wgpu::Limits { max_texture_dimension_2d: 0, ..have.clone() });
    let mut short = Vec::new();
    need.check_limits_with_fail_fn(have, false, |name, wanted, got| short.push(format!("{name} is {got}, murk needs {wanted}")));
    if !short.is_empty() {
        return Err(MurkError::DeviceTooWeak { adapter: format!("{} ({:?})", adapter.name, adapter.backend), missing: short.join("; ") });
    }
    Ok(required_limits(have))
}

/// The wgpu backends to try for murk's own device: those named by
/// [`BACKEND_VAR`], else Vulkan, Metal and DX12 first and GL when none of
/// those has an adapter.
fn backends_to_try() -> Result<Vec<wgpu::Backends>> {
    match std::env::var(BACKEND_VAR) {
        Ok(list) => {
            let chosen = wgpu::Backends::from_comma_list(&list);
            if chosen.is_empty() {
                return Err(MurkError::invalid(BACKEND_VAR, &list, "names no wgpu backend (vulkan, metal, dx12, gl)"));
            }
            Ok(vec![chosen])
        }
        Err(_) => Ok(vec![wgpu::Backends::PRIMARY, wgpu::Backends::SECONDARY]),
    }
}

/// Opens murk's own device on the first adapter of the backends allowed
/// (see [`BACKEND_VAR`]) with [`required_limits`], or says why it cannot. With `hardware`, an
/// adapter that runs on the CPU (`DeviceType::Cpu`: lavapipe,
/// llvmpipe, SwiftShader, WARP) is passed over.
pub(crate) fn open_device(hardware: bool) -> Result<(wgpu::Device, wgpu::Queue, wgpu::AdapterInfo)> {
    let mut last_error = String::from("no wgpu backend was tried");
    let mut software = Vec::new();
    for backends in backends_to_try()? {
        let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
        desc.backends = backends;
        let instance = wgpu::Instance::new(desc);
        let options = wgpu::RequestAdapterOptions { power_preference: wgpu::PowerPreference::HighPerformance, ..Default::default() };
        let adapter = match pollster::block_on(instance.request_adapter(&options)) {
            Ok(a) => a,
            Err(e) => {
                last_error = format!("none among {backends:?}: {e}");
                continue;
            }
        };
        let info = adapter.get_info();
        if hardware && info.device_type == wgpu::DeviceType::Cpu {
            software.push(format!("{} ({:?})", info.name, info.backend));
            last_error = format!("only software adapters, which run on the CPU: {}", software.join(", "));
            continue;
        }
        let features = adapter.features() & wgpu::Features::TIMESTAMP_QUERY;
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("murk"),
            required_limits: required_limits(&adapter.limits()),
            required_features: features,
            ..Default::default()
        }))
        .map_err(|source| GpuError::Device { adapter: format!("{} ({:?})", info.name, info.backend), source })?;
        return Ok((device, queue, info));
    }
    Err(MurkError::NoAdapter(last_error))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An adapter with WebGPU's default of 8 storage buffers per stage is
    /// refused, naming the limit; asked for 10 it opens with them.
    #[test]
    fn limits_name_what_an_adapter_lacks() {
        let adapter =
            wgpu::AdapterInfo { name: "test adapter".into(), ..wgpu::AdapterInfo::new(wgpu::DeviceType::Other, wgpu::Backend::BrowserWebGpu) };
        let webgpu = wgpu::Limits::defaults();
        let error = limits_for(&webgpu, &adapter).expect_err("8 storage buffers are too few").to_string();
        assert!(error.contains("max_storage_buffers_per_shader_stage is 8, murk needs 10") && error.contains("test adapter"), "{error}");
        let asked = wgpu::Limits { max_storage_buffers_per_shader_stage: 10, ..webgpu };
        let got = limits_for(&asked, &adapter).expect("10 are enough");
        assert_eq!(got.max_storage_buffers_per_shader_stage, 10);
        assert_eq!(got.max_storage_buffer_binding_size, asked.max_storage_buffer_binding_size);
    }
}
