//! The JavaScript interface (wasm-bindgen): the `Fog` class, opening the
//! browser's WebGPU device, the plain objects a tick and the reads return,
//! and their TypeScript shapes. Every murk error becomes a JavaScript
//! `Error` carrying murk's message, which names the field and the value.

mod fog;
mod gpu;
mod objects;
mod types;

use wasm_bindgen::prelude::*;

/// Sends a panic's message to the console: without it a panic in wasm is
/// only "unreachable".
#[wasm_bindgen(start)]
pub fn start() {
    std::panic::set_hook(Box::new(|info| web_sys::console::error_1(&info.to_string().into())));
}

/// A murk error (or any message) as a JavaScript `Error`.
fn js(e: impl std::fmt::Display) -> JsError {
    JsError::new(&e.to_string())
}

/// JSON text of a value given as an object or as JSON text already.
fn json_text(value: &JsValue, what: &str) -> Result<String, JsError> {
    if let Some(text) = value.as_string() {
        return Ok(text);
    }
    if value.is_undefined() || value.is_null() {
        return Ok("{}".into());
    }
    js_sys::JSON::stringify_with_replacer(value, &bigint_as_number())
        .map_err(|_| js(format!("invalid {what}: cannot be written as JSON")))?
        .as_string()
        .ok_or_else(|| js(format!("invalid {what}: cannot be written as JSON")))
}

/// A `JSON.stringify` replacer that writes BigInts as numbers (team masks
/// given as `0xffffffffn`); everything else as it is.
fn bigint_as_number() -> JsValue {
    js_sys::Function::new_with_args("key, value", "return typeof value === 'bigint' ? Number(value) : value").into()
}

/// The versions this build speaks: the package's, the snapshot format and
/// the hash definition.
#[wasm_bindgen(unchecked_return_type = "Versions")]
pub fn versions() -> JsValue {
    let v = crate::VERSIONS;
    objects::object(&[("package", v.package.into()), ("snapshotFormat", v.snapshot_format.into()), ("hashFormat", v.hash_format.into())])
}

/// The ticks the fog state of a snapshot had run (a fog snapshot, or the
/// fog state of a `murk run --snapshot-at` run snapshot): where a restored
/// run goes on from. A damaged snapshot is an error naming what is wrong.
#[wasm_bindgen(js_name = snapshotTicks)]
pub fn snapshot_ticks(bytes: &[u8]) -> Result<f64, JsError> {
    Ok(crate::Fog::snapshot_ticks(bytes).map_err(js)? as f64)
}
