//! The `Fog` class: the library API of [`crate::Fog`] for JavaScript.
//! Handles are `BigInt`s (hecs entity bits); objects go in as plain
//! objects or JSON text and are checked by murk (an error names the field
//! and the value); on the GPU nothing waits: `ready()` says when a tick or
//! a prepared read may run.

use super::gpu::{self, WebGpu};
use super::{js, json_text, objects};
use crate::{Fog, Parts, Read};
use murk_core::glam::Vec3;
use wasm_bindgen::prelude::*;

/// One world and its fog subsystem, on the CPU (wasm) or the GPU (WebGPU).
#[wasm_bindgen(js_name = Fog)]
pub struct JsFog {
    inner: Fog,
    /// The browser's device, on the GPU backend.
    gpu: Option<WebGpu>,
}

#[wasm_bindgen(js_class = Fog)]
impl JsFog {
    /// A fog on the CPU backend: wasm, on the page's thread.
    pub fn cpu() -> Result<JsFog, JsError> {
        Ok(Self { inner: Fog::on_cpu().map_err(js)?, gpu: None })
    }

    /// A fog on the GPU backend, on a WebGPU device murk opens with the
    /// limits it needs (an adapter below them is an error naming each).
    pub async fn gpu() -> Result<JsFog, JsError> {
        let web = gpu::open().await?;
        Ok(Self { inner: Fog::on_gpu(web.backend.clone()), gpu: Some(web) })
    }

    /// The backend's name.
    #[wasm_bindgen(getter)]
    pub fn backend(&self) -> String {
        self.inner.backend_name()
    }

    /// Whether the fog runs on the GPU.
    #[wasm_bindgen(getter, js_name = onGpu)]
    pub fn on_gpu(&self) -> bool {
        self.gpu.is_some()
    }

    /// The WebGPU adapter's name (GPU only).
    #[wasm_bindgen(getter)]
    pub fn adapter(&self) -> Option<String> {
        self.gpu.as_ref().map(|g| g.adapter.clone())
    }

    /// Whether the browser marks the WebGPU adapter a software fallback
    /// (GPU only), where the CPU backend is faster.
    #[wasm_bindgen(getter)]
    pub fn software(&self) -> Option<bool> {
        self.gpu.as_ref().map(|g| g.software)
    }

    /// Why the browser took the device away, once it has (GPU only).
    #[wasm_bindgen(getter)]
    pub fn lost(&self) -> Option<String> {
        self.gpu.as_ref().and_then(WebGpu::lost)
    }

    /// murk's `GPUDevice` (GPU only): hand it to a renderer (three.js's
    /// `WebGPURenderer({ device })`) to sample the mask textures there.
    #[wasm_bindgen(getter, unchecked_return_type = "MurkGpuDevice | undefined")]
    pub fn device(&self) -> JsValue {
        let device = self.gpu.as_ref().map(|g| g.backend.device().0);
        device.and_then(|d| d.as_webgpu().map(|d| JsValue::from(d.clone()))).unwrap_or(JsValue::UNDEFINED)
    }

    /// Instance `name`'s mask texture on murk's device (GPU only): an
    /// `rgba16float` 2D texture, `value / 65535` in red, green and blue,
    /// rewritten after every tick; sample it with a filtering sampler.
    #[wasm_bindgen(js_name = maskTexture, unchecked_return_type = "MurkGpuTexture")]
    pub fn mask_texture(&mut self, name: &str) -> Result<JsValue, JsError> {
        let Some(gpu) = self.inner.gpu().cloned() else {
            return Err(js(format!("invalid backend = {}: has no mask texture, it is not the GPU", self.inner.backend_name())));
        };
        let key = self.inner.subsystem().instance_key(name).map_err(js)?;
        let texture = gpu.mask_texture(key).map_err(js)?;
        let handle = texture.as_webgpu().ok_or_else(|| js("the mask texture is not a WebGPU texture"))?;
        Ok(handle.clone().into())
    }

    /// Ticks run so far.
    #[wasm_bindgen(getter)]
    pub fn ticks(&self) -> f64 {
        self.inner.ticks() as f64
    }

    /// Creates an instance (an object or JSON text).
    #[wasm_bindgen(js_name = createInstance)]
    pub fn create_instance(&mut self, #[wasm_bindgen(unchecked_param_type = "InstanceDesc | string")] desc: JsValue) -> Result<(), JsError> {
        self.inner.create_instance(&json_text(&desc, "instance")?).map_err(js)
    }

    /// Destroys instance `name`.
    #[wasm_bindgen(js_name = destroyInstance)]
    pub fn destroy_instance(&mut self, name: &str) -> Result<(), JsError> {
        self.inner.destroy_instance(name).map_err(js)
    }

    /// The instances, in name order.
    #[wasm_bindgen(getter)]
    pub fn instances(&self) -> Vec<String> {
        self.inner.instance_names()
    }

    /// Applies a profile (an object or JSON text) to instance `name`.
    #[wasm_bindgen(js_name = applyProfile)]
    pub fn apply_profile(&mut self, name: &str, #[wasm_bindgen(unchecked_param_type = "Profile | string")] profile: JsValue) -> Result<(), JsError> {
        self.inner.apply_profile(name, &json_text(&profile, "profile")?).map_err(js)
    }

    /// Loads a Moving AI map (`.map` text) as a height capture; its handle.
    #[wasm_bindgen(js_name = loadMap)]
    pub fn load_map(
        &mut self,
        text: &str,
        #[wasm_bindgen(unchecked_param_type = "MapSettings | string | undefined")] settings: JsValue,
    ) -> Result<u64, JsError> {
        self.inner.load_map(text, &json_text(&settings, "map settings")?).map_err(js)
    }

    /// Spawns an entity at (x, y, z) made of `parts`; its handle.
    pub fn spawn(&mut self, x: f32, y: f32, z: f32, #[wasm_bindgen(unchecked_param_type = "Parts | string")] parts: JsValue) -> Result<u64, JsError> {
        let parts = Parts::parse(&json_text(&parts, "parts")?).map_err(js)?;
        self.inner.spawn(Vec3::new(x, y, z), &parts).map_err(js)
    }

    /// Spawns a vision source; with `transientTicks`, murk removes it after
    /// that many ticks (a flare). Its handle.
    #[wasm_bindgen(js_name = addSource)]
    pub fn add_source(
        &mut self,
        x: f32,
        y: f32,
        z: f32,
        #[wasm_bindgen(unchecked_param_type = "VisionSource")] source: JsValue,
        #[wasm_bindgen(js_name = transientTicks)] transient_ticks: Option<u32>,
    ) -> Result<u64, JsError> {
        self.part(x, y, z, "source", source, transient_ticks)
    }

    /// Spawns a blocker; its handle.
    #[wasm_bindgen(js_name = addBlocker)]
    pub fn add_blocker(
        &mut self,
        x: f32,
        y: f32,
        z: f32,
        #[wasm_bindgen(unchecked_param_type = "Blocker")] blocker: JsValue,
    ) -> Result<u64, JsError> {
        self.part(x, y, z, "blocker", blocker, None)
    }

    /// Spawns a stealth actor; its handle.
    #[wasm_bindgen(js_name = addActor)]
    pub fn add_actor(
        &mut self,
        x: f32,
        y: f32,
        z: f32,
        #[wasm_bindgen(unchecked_param_type = "StealthActor")] actor: JsValue,
    ) -> Result<u64, JsError> {
        self.part(x, y, z, "actor", actor, None)
    }

    /// Spawns a tracked entity with a footprint of that radius (world
    /// units); its handle.
    #[wasm_bindgen(js_name = addTracked)]
    pub fn add_tracked(&mut self, x: f32, y: f32, z: f32, footprint: f32) -> Result<u64, JsError> {
        self.part(x, y, z, "tracked", objects::object(&[("footprint", footprint.into())]), None)
    }

    /// Spawns an entity of one part, `what`.
    fn part(&mut self, x: f32, y: f32, z: f32, what: &str, value: JsValue, transient_ticks: Option<u32>) -> Result<u64, JsError> {
        let text = json_text(&value, what)?;
        let transient = transient_ticks.map_or(String::new(), |n| format!(", \"transient_ticks\": {n}"));
        let parts = Parts::parse(&format!("{{\"{what}\": {text}{transient}}}")).map_err(js)?;
        self.inner.spawn(Vec3::new(x, y, z), &parts).map_err(js)
    }

    /// Moves the entity of `handle` to (x, y, z).
    #[wasm_bindgen(js_name = "move")]
    pub fn move_to(&mut self, handle: u64, x: f32, y: f32, z: f32) -> Result<(), JsError> {
        self.inner.move_to(handle, Vec3::new(x, y, z)).map_err(js)
    }

    /// Replaces the parts of the entity of `handle`; its position stays.
    #[wasm_bindgen(js_name = setParts)]
    pub fn set_parts(&mut self, handle: u64, #[wasm_bindgen(unchecked_param_type = "Parts | string")] parts: JsValue) -> Result<(), JsError> {
        let parts = Parts::parse(&json_text(&parts, "parts")?).map_err(js)?;
        self.inner.set_parts(handle, &parts).map_err(js)
    }

    /// Removes the entity or capture of `handle`: the handle is stale from
    /// now on.
    pub fn remove(&mut self, handle: u64) -> Result<(), JsError> {
        self.inner.remove(handle).map_err(js)
    }

    /// Whether a tick or a prepared read may run now without waiting:
    /// always on the CPU; on the GPU once the device answered, which
    /// happens only while the page yields (`await` a timeout or a frame).
    pub fn ready(&self) -> Result<bool, JsError> {
        if let Some(why) = self.lost() {
            return Err(js(why));
        }
        self.inner.ready().map_err(js)
    }

    /// Runs one tick of `dtUs` microseconds (on the GPU only when
    /// `ready()` holds); what it did.
    #[wasm_bindgen(unchecked_return_type = "TickReport")]
    pub fn tick(&mut self, #[wasm_bindgen(js_name = dtUs)] dt_us: u32) -> Result<JsValue, JsError> {
        let outcome = self.inner.tick(dt_us).map_err(js)?;
        Ok(objects::tick_report(&outcome))
    }

    /// GPU: records the reads of `finalMask(name)`; read it once `ready()`
    /// holds again, before the next tick. Nothing on the CPU.
    #[wasm_bindgen(js_name = prepareMask)]
    pub fn prepare_mask(&mut self, name: &str) -> Result<(), JsError> {
        self.inner.prepare(&Read::Mask(name.into())).map_err(js)
    }

    /// GPU: records the reads of `snapshot()` (as `prepareMask`).
    #[wasm_bindgen(js_name = prepareSnapshot)]
    pub fn prepare_snapshot(&mut self) -> Result<(), JsError> {
        self.inner.prepare(&Read::Snapshot).map_err(js)
    }

    /// GPU: records the reads of `exportMemory(name)` (as `prepareMask`).
    #[wasm_bindgen(js_name = prepareMemory)]
    pub fn prepare_memory(&mut self, name: &str) -> Result<(), JsError> {
        self.inner.prepare(&Read::Memory(name.into())).map_err(js)
    }

    /// Instance `name`'s final mask (on the GPU, `prepareMask` it first).
    #[wasm_bindgen(js_name = finalMask, unchecked_return_type = "Mask")]
    pub fn final_mask(&mut self, name: &str) -> Result<JsValue, JsError> {
        let (width, height, texels) = self.inner.final_mask(name).map_err(js)?;
        Ok(objects::mask(width, height, &texels))
    }

    /// What a material samples instance `name`'s mask with.
    #[wasm_bindgen(js_name = maskParams, unchecked_return_type = "MaskParams")]
    pub fn mask_params(&self, name: &str) -> Result<JsValue, JsError> {
        Ok(objects::mask_params(&self.inner.shader_params(name).map_err(js)?))
    }

    /// The handles of the tracked entities observer `name` sees, ascending.
    #[wasm_bindgen(js_name = visibleTo)]
    pub fn visible_to(&self, name: &str) -> Result<Vec<u64>, JsError> {
        self.inner.visible_to(name).map_err(js)
    }

    /// The blips of instance `name`, of a sensor layer (a radar): tracked
    /// entities it senses that no sight instance of its teams sees, as
    /// positions only, `x, y, z` one after the other, ordered by position.
    pub fn blips(&self, name: &str) -> Result<Vec<f32>, JsError> {
        Ok(self.inner.blips(name).map_err(js)?.into_iter().flatten().collect())
    }

    /// Submits sight lines in instance `name`, seven numbers a line (the
    /// looker's `x, y, z`, the target's `x, y, z`, the looker's eye
    /// height): a handle for `pollLines`. A bad line is an error naming it,
    /// and nothing is submitted.
    #[wasm_bindgen(js_name = submitLines)]
    pub fn submit_lines(&mut self, name: &str, lines: &[f32]) -> Result<u64, JsError> {
        self.inner.submit_lines(name, lines).map_err(js)
    }

    /// The answers of a sight-line batch once landed (undefined while in
    /// flight, on the GPU until the browser has yielded), two numbers a
    /// line: the light through (`0..=65535`) and 1 where it reaches the
    /// visibility cutoff, else 0. Each batch is answered once.
    #[wasm_bindgen(js_name = pollLines)]
    pub fn poll_lines(&mut self, handle: u64) -> Result<Option<Vec<u16>>, JsError> {
        self.inner.poll_lines(handle).map_err(js)
    }

    /// How much of instance `name`'s grid its explored memory covers, as
    /// the last tick left it: on the CPU at once; on the GPU undefined
    /// until the count asked by an earlier call has landed (yield to the
    /// browser in between), never waiting for the device.
    #[wasm_bindgen(unchecked_return_type = "Explored | undefined")]
    pub fn explored(&mut self, name: &str) -> Result<JsValue, JsError> {
        Ok(self.inner.explored(name).map_err(js)?.map_or(JsValue::UNDEFINED, |e| objects::explored(&e)))
    }

    /// Whether observer `name` sees the tracked entity of `handle`.
    pub fn sees(&self, name: &str, handle: u64) -> Result<bool, JsError> {
        self.inner.sees(name, handle).map_err(js)
    }

    /// The stealth state of the actor of `handle` (for `observer`, for a
    /// per-observer actor); undefined before its first check.
    #[wasm_bindgen(unchecked_return_type = "StealthState | undefined")]
    pub fn stealth(&self, handle: u64, observer: Option<String>) -> Result<JsValue, JsError> {
        let state = self.inner.stealth(handle, observer.as_deref()).map_err(js)?;
        Ok(state.as_ref().map_or(JsValue::UNDEFINED, objects::stealth_state))
    }

    /// The lockstep hash of the state now, 16 hex digits, on the CPU (on
    /// the GPU an error: each tick's hash lands in its report two ticks
    /// later).
    #[wasm_bindgen(js_name = hashNow)]
    pub fn hash_now(&mut self) -> Result<String, JsError> {
        Ok(objects::hex(self.inner.hash_now().map_err(js)?))
    }

    /// The whole fog state (on the GPU, `prepareSnapshot` it first).
    pub fn snapshot(&mut self) -> Result<Vec<u8>, JsError> {
        self.inner.snapshot().map_err(js)
    }

    /// Restores a fog snapshot (this package's or native murk's), or the fog
    /// state of a `murk run --snapshot-at` run snapshot; the entities stay
    /// the caller's.
    pub fn restore(&mut self, bytes: &[u8]) -> Result<(), JsError> {
        self.inner.restore(bytes).map_err(js)
    }

    /// Instance `name`'s explored memory as save data (on the GPU,
    /// `prepareMemory` it first).
    #[wasm_bindgen(js_name = exportMemory)]
    pub fn export_memory(&mut self, name: &str) -> Result<Vec<u8>, JsError> {
        self.inner.export_memory(name).map_err(js)
    }

    /// Imports explored memory into instance `name`: as its own, or with
    /// `asMap` as mapped ground (an ally's map).
    #[wasm_bindgen(js_name = importMemory)]
    pub fn import_memory(&mut self, name: &str, blob: &[u8], #[wasm_bindgen(js_name = asMap)] as_map: Option<bool>) -> Result<(), JsError> {
        self.inner.import_memory(name, blob, as_map.unwrap_or(false)).map_err(js)
    }
}
