//! The plain JavaScript objects the interface returns (a tick's report,
//! a mask, stealth states, shader parameters), built field by field; their
//! TypeScript shapes are in `types.rs`.

use crate::{StealthView, TickOutcome};
use js_sys::{Array, Object, Reflect};
use murk_core::{Explored, ShaderParams, SightEvent, StealthEvent};
use wasm_bindgen::prelude::*;

/// An object with these fields.
pub(super) fn object(fields: &[(&str, JsValue)]) -> JsValue {
    let o = Object::new();
    for (k, v) in fields {
        // Setting a field of a fresh plain object cannot fail.
        let _ = Reflect::set(&o, &JsValue::from_str(k), v);
    }
    o.into()
}

fn array(items: impl IntoIterator<Item = JsValue>) -> JsValue {
    items.into_iter().collect::<Array>().into()
}

fn stealth_event(e: &StealthEvent, observer: Option<&str>) -> JsValue {
    let kind = match e {
        StealthEvent::Revealed { .. } => "revealed",
        StealthEvent::Hidden { .. } => "hidden",
        StealthEvent::GhostSpawned { .. } => "ghost_spawned",
        StealthEvent::GhostRemoved { .. } => "ghost_removed",
    };
    let mut fields = vec![("event", kind.into()), ("actor", e.actor().to_bits().get().into())];
    if let Some(o) = observer {
        fields.push(("observer", o.into()));
    }
    object(&fields)
}

/// A tick's report (`TickReport` in TypeScript).
pub(super) fn tick_report(t: &TickOutcome) -> JsValue {
    let r = &t.report;
    let mut fields = vec![
        ("tick", (t.tick as f64).into()),
        ("events", array(r.events.iter().map(|e| stealth_event(e, None)))),
        ("observerEvents", array(r.observer_events.iter().map(|(o, e)| stealth_event(e, Some(o))))),
        (
            "sightEvents",
            array(r.sight.iter().map(|e| {
                let (kind, observer, entity) = match e {
                    SightEvent::Entered { observer, entity } => ("entered", observer, entity),
                    SightEvent::Left { observer, entity } => ("left", observer, entity),
                };
                object(&[("event", kind.into()), ("observer", observer.as_str().into()), ("entity", entity.to_bits().get().into())])
            })),
        ),
        ("recomputed", array(r.instances.iter().filter(|(_, i)| i.recomputed).map(|(n, _)| JsValue::from_str(n)))),
    ];
    if let Some((tick, hash)) = t.landed_hash() {
        fields.push(("hash", object(&[("tick", (tick as f64).into()), ("hash", hex(hash).into())])));
    }
    object(&fields)
}

/// A hash as murk writes it: 16 lowercase hex digits.
pub(super) fn hex(hash: u64) -> String {
    format!("{hash:016x}")
}

fn vec3(v: [f32; 3]) -> JsValue {
    array(v.map(JsValue::from))
}

/// A stealth state (`StealthState` in TypeScript).
pub(super) fn stealth_state(s: &StealthView) -> JsValue {
    let mut fields = vec![("visible", s.visible.into()), ("fade", s.fade.into()), ("ghost", s.ghost.into())];
    if let Some(p) = s.last_known {
        fields.push(("lastKnown", vec3(p.to_array())));
    }
    object(&fields)
}

/// A final mask (`Mask` in TypeScript); the texels are copied into an
/// array JavaScript owns (a view of wasm memory would move under it).
pub(super) fn mask(width: u32, height: u32, texels: &[u16]) -> JsValue {
    object(&[("width", width.into()), ("height", height.into()), ("texels", js_sys::Uint16Array::from(texels).into())])
}

/// An explored count (`Explored` in TypeScript).
pub(super) fn explored(e: &Explored) -> JsValue {
    // Texel counts stay below 2^53: numbers hold them exactly.
    object(&[("texels", (e.texels as f64).into()), ("of", (e.of as f64).into()), ("fraction", e.fraction().into())])
}

/// Shader parameters (`MaskParams` in TypeScript).
pub(super) fn mask_params(p: &ShaderParams) -> JsValue {
    let block: &[f32] = bytemuck::cast_slice(std::slice::from_ref(p));
    object(&[
        ("center", vec3(p.center)),
        ("size", vec3(p.size)),
        ("yawDegrees", p.yaw_degrees.into()),
        ("enabled", (p.enabled > 0.5).into()),
        ("visibilityCutoff", p.visibility_cutoff.into()),
        ("zLayering", (p.use_z_layering > 0.5).into()),
        ("exploredValue", p.explored_value.into()),
        ("mappedValue", p.mapped_value.into()),
        ("block", js_sys::Float32Array::from(block).into()),
    ])
}
