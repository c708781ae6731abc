//! The page's interface (wasm-bindgen): a WebGPU device with the canvas it
//! draws into, and the running scenario. JavaScript owns the loop: it ticks
//! when [`Page::ready`] says so and yields to the browser in between, so
//! no call here ever waits for the device.

use crate::Session;
use murk_core::{Backend, MurkError};
use murk_cpu::CpuBackend;
use murk_gpu::{GpuBackend, TopView};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};
use wasm_bindgen::prelude::*;
use web_sys::{HtmlCanvasElement, ImageData};

/// Sends a panic's message to the console: without it a panic in wasm is
/// only "unreachable".
#[wasm_bindgen(start)]
pub fn start() {
    std::panic::set_hook(Box::new(|info| web_sys::console::error_1(&info.to_string().into())));
}

fn js(e: impl std::fmt::Display) -> JsError {
    JsError::new(&e.to_string())
}

/// The browser's WebGPU device, opened with the limits murk needs, and the
/// canvas it draws the overlay into.
#[wasm_bindgen]
pub struct WebGpu {
    device: wgpu::Device,
    queue: wgpu::Queue,
    info: wgpu::AdapterInfo,
    surface: wgpu::Surface<'static>,
    top_view: TopView,
    limits: String,
    /// Why the browser took the device away, once it has.
    lost: Arc<Mutex<Option<String>>>,
}

/// Opens the browser's WebGPU adapter for `canvas`. An adapter below what
/// murk needs is an error naming each limit that falls short.
#[wasm_bindgen(js_name = openGpu)]
pub async fn open_gpu(canvas: HtmlCanvasElement) -> Result<WebGpu, JsError> {
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
    desc.backends = wgpu::Backends::BROWSER_WEBGPU;
    let instance = wgpu::Instance::new(desc);
    let (width, height) = (canvas.width(), canvas.height());
    let surface = instance.create_surface(wgpu::SurfaceTarget::Canvas(canvas)).map_err(js)?;
    let options = wgpu::RequestAdapterOptions { compatible_surface: Some(&surface), ..Default::default() };
    let adapter = instance.request_adapter(&options).await.map_err(|e| js(format!("no WebGPU adapter: {e}")))?;
    let info = adapter.get_info();
    let have = adapter.limits();
    let required_limits = murk_gpu::limits_for(&have, &info).map_err(js)?;
    let limits = format!(
        "{} storage buffers and {} storage textures per stage, storage bindings of {} bytes",
        have.max_storage_buffers_per_shader_stage, have.max_storage_textures_per_shader_stage, have.max_storage_buffer_binding_size
    );
    let (device, queue) =
        adapter.request_device(&wgpu::DeviceDescriptor { label: Some("murk"), required_limits, ..Default::default() }).await.map_err(js)?;
    let lost = Arc::new(Mutex::new(None));
    let record = lost.clone();
    device.set_device_lost_callback(move |reason, message| {
        *record.lock().unwrap_or_else(PoisonError::into_inner) = Some(format!("the browser took the WebGPU device away ({reason:?}): {message}"));
    });
    let config = surface.get_default_config(&adapter, width, height).ok_or_else(|| js("the canvas cannot be drawn by this adapter"))?;
    surface.configure(&device, &config);
    let top_view = TopView::new(&device, config.format);
    Ok(WebGpu { device, queue, info, surface, top_view, limits, lost })
}

#[wasm_bindgen]
impl WebGpu {
    /// The adapter's name, where the browser gives one.
    #[wasm_bindgen(getter)]
    pub fn adapter(&self) -> String {
        if self.info.name.is_empty() {
            "the browser's WebGPU adapter (unnamed)".into()
        } else {
            format!("{} (WebGPU)", self.info.name)
        }
    }

    /// Why the device was lost, once it has been: the page stops using it
    /// (a GPU tick would fail anyway).
    #[wasm_bindgen(getter)]
    pub fn lost(&self) -> Option<String> {
        self.lost.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// What the adapter offers of the limits murk needs.
    #[wasm_bindgen(getter)]
    pub fn limits(&self) -> String {
        self.limits.clone()
    }

    /// Why `auto` leaves this adapter for the CPU backend, when it does:
    /// the browser marks it a fallback (software) adapter, which murk's
    /// wasm CPU backend outruns. `None` for a hardware adapter.
    #[wasm_bindgen(getter)]
    pub fn software(&self) -> Option<String> {
        (self.info.device_type == wgpu::DeviceType::Cpu).then(|| format!("{} is a software adapter (the browser's fallback)", self.adapter()))
    }

    fn backend(&self) -> Result<GpuBackend, JsError> {
        GpuBackend::from_device(self.device.clone(), self.queue.clone(), self.info.clone()).map_err(js)
    }
}

/// A scenario running in the page.
#[wasm_bindgen]
pub struct Page {
    session: Session,
}

fn files(names: Vec<String>, texts: Vec<String>) -> BTreeMap<String, String> {
    names.into_iter().zip(texts).collect()
}

fn cpu() -> Result<Box<dyn Backend>, JsError> {
    Ok(Box::new(CpuBackend::new(1).map_err(js)?))
}

#[wasm_bindgen]
impl Page {
    /// The scenario `name` (`.json` or `.ron`) on the CPU backend, with the
    /// files dropped beside it: the map and profile files it may name (file
    /// names and texts, in the same order).
    #[wasm_bindgen(js_name = onCpu)]
    pub fn on_cpu(name: &str, text: &str, file_names: Vec<String>, file_texts: Vec<String>) -> Result<Page, JsError> {
        Ok(Self { session: Session::new(name, text, &files(file_names, file_texts), cpu()?, None).map_err(js)? })
    }

    /// The same on the GPU backend, on `gpu`'s device.
    #[wasm_bindgen(js_name = onGpu)]
    pub fn on_gpu(name: &str, text: &str, file_names: Vec<String>, file_texts: Vec<String>, gpu: &WebGpu) -> Result<Page, JsError> {
        let backend = gpu.backend()?;
        Ok(Self { session: Session::new(name, text, &files(file_names, file_texts), Box::new(backend.clone()), Some(backend)).map_err(js)? })
    }

    /// The scenario's instances (its teams' views), in the file's order.
    #[wasm_bindgen(getter)]
    pub fn instances(&self) -> Vec<String> {
        self.session.instances()
    }

    /// The instance the page shows.
    #[wasm_bindgen(getter)]
    pub fn view(&self) -> String {
        self.session.view().to_string()
    }

    /// Shows instance `name` from the next frame on; an unknown name is an
    /// error naming the instances, and the view stays.
    #[wasm_bindgen(js_name = setView)]
    pub fn set_view(&mut self, name: &str) -> Result<(), JsError> {
        self.session.set_view(name).map_err(js)
    }

    /// Each tick's multiplayer answers as JSON, `[[tick, {…}], …]`: the
    /// `events`, `observer_events`, `sight`, `sight_events` and `blips`
    /// fields of `murk run`'s `per_tick` records, empty ones left out as
    /// there.
    pub fn answers(&self) -> String {
        let list: Vec<_> = self.session.answers().iter().collect();
        serde_json::to_string(&list).unwrap_or_default()
    }

    /// The backend's name.
    #[wasm_bindgen(getter, js_name = backendName)]
    pub fn backend_name(&self) -> String {
        self.session.backend_name()
    }

    /// Whether the run is on the GPU.
    #[wasm_bindgen(getter, js_name = onGpuNow)]
    pub fn on_gpu_now(&self) -> bool {
        self.session.on_gpu()
    }

    /// Ticks run so far.
    #[wasm_bindgen(getter, js_name = ticksDone)]
    pub fn ticks_done(&self) -> u32 {
        self.session.ticks_done()
    }

    /// Whether a tick (or the second step of a switch) can run without
    /// waiting: yield to the browser until it holds.
    pub fn ready(&self) -> Result<bool, JsError> {
        self.session.ready().map_err(js)
    }

    /// Runs one tick (only when [`Page::ready`] holds).
    pub fn tick(&mut self) -> Result<(), JsError> {
        self.session.tick().map_err(js)
    }

    /// The lockstep hashes landed so far as JSON: `[[tick, "hex"], …]`,
    /// tick indices from 0 as in `murk run`'s `summary.json`.
    pub fn hashes(&self) -> String {
        let list: Vec<(u64, String)> = self.session.hashes().iter().map(|(t, h)| (*t, format!("{h:016x}"))).collect();
        serde_json::to_string(&list).unwrap_or_default()
    }

    /// What the viewed instance knows after the last tick, as text: the
    /// tracked units in its sight set, by scenario id, and for an instance
    /// of a sensor layer (radar) the blips it has, at their positions.
    #[wasm_bindgen(getter, js_name = viewSeen)]
    pub fn view_seen(&self) -> String {
        let Some((_, last)) = self.session.answers().last_key_value() else { return String::new() };
        let view = self.session.view();
        let set = last.sight.get(view).map_or_else(|| "nobody".to_string(), |ids| ids.join(", "));
        match last.blips.get(view) {
            Some(blips) => {
                let at: Vec<String> = blips.iter().map(|[x, y, _]| format!("({x:.1}, {y:.1})")).collect();
                format!("{set}; blips at {}", at.join(", "))
            }
            None => set,
        }
    }

    /// The newest landed hash, hex.
    #[wasm_bindgen(getter, js_name = latestHash)]
    pub fn latest_hash(&self) -> Option<String> {
        self.session.hashes().last_key_value().map(|(_, h)| format!("{h:016x}"))
    }

    /// First step of a switch: on the GPU, rehearses the snapshot's reads
    /// (then wait for [`Page::ready`]); nothing on the CPU.
    #[wasm_bindgen(js_name = prepareSwitch)]
    pub fn prepare_switch(&mut self) -> Result<(), JsError> {
        self.session.prepare_switch().map_err(js)
    }

    /// Moves the run onto the CPU backend through a snapshot.
    #[wasm_bindgen(js_name = switchToCpu)]
    pub fn switch_to_cpu(&mut self) -> Result<(), JsError> {
        self.session.switch(cpu()?, None).map_err(js)
    }

    /// Moves the run onto `gpu`'s device through a snapshot.
    #[wasm_bindgen(js_name = switchToGpu)]
    pub fn switch_to_gpu(&mut self, gpu: &WebGpu) -> Result<(), JsError> {
        let backend = gpu.backend()?;
        self.session.switch(Box::new(backend.clone()), Some(backend)).map_err(js)
    }

    /// Draws the viewed instance's overlay into `gpu`'s canvas from its
    /// mask texture on the device: nothing is read back.
    #[wasm_bindgen(js_name = drawGpu)]
    pub fn draw_gpu(&mut self, gpu: &WebGpu) -> Result<(), JsError> {
        if !self.session.on_gpu() {
            return Err(js(MurkError::invalid("backend", self.session.backend_name(), "draws on the device only when the run is on the GPU")));
        }
        let key = self.session.view_key().map_err(js)?;
        let params = self.session.view_params().map_err(js)?;
        let mask = self.session.gpu_mask_texture(key).map_err(js)?;
        let frame = match gpu.surface.get_current_texture() {
            wgpu::CurrentSurfaceTexture::Success(t) | wgpu::CurrentSurfaceTexture::Suboptimal(t) => t,
            _ => return Ok(()), // No frame to draw into now; the next one will be.
        };
        let view = frame.texture.create_view(&wgpu::TextureViewDescriptor::default());
        let mut encoder = gpu.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("murk page") });
        gpu.top_view.draw(&gpu.device, &gpu.queue, &mut encoder, &view, &mask, &params);
        gpu.queue.submit([encoder.finish()]);
        gpu.queue.present(frame);
        Ok(())
    }

    /// The viewed instance's overlay drawn on the CPU from its final mask,
    /// one pixel a texel (the page scales it). The pixels are copied into
    /// an array JavaScript owns: an `ImageData` keeps the array it is given,
    /// and a view of wasm memory would show whatever is allocated there
    /// next.
    #[wasm_bindgen(js_name = pictureCpu)]
    pub fn picture_cpu(&mut self) -> Result<ImageData, JsValue> {
        let picture = self.session.picture().map_err(js)?;
        let pixels = js_sys::Uint8ClampedArray::from(picture.rgba.as_slice());
        ImageData::new_with_js_u8_clamped_array_and_sh(&pixels, picture.width, picture.height)
    }
}
