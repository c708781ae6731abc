//! # murk-web
//!
//! murk in a browser. [`Session`] runs a scenario the way a page must: one
//! tick per call and never a wait for the device (on the GPU backend a page
//! ticks only once every readback has landed, which happens while it
//! yields to the browser), each tick's lockstep hash kept as it lands, and
//! a switch between the CPU and GPU backends through a snapshot while the
//! scenario runs. On `wasm32` the crate also exports the page's interface
//! (wasm-bindgen): the CPU backend runs in wasm on the page's thread, the
//! GPU backend on the browser's WebGPU device, and the overlay is drawn
//! into a canvas (from the mask texture on the device, on the GPU).
//!
//! `web/build.sh` builds the page into `web/dist/`; `docs/web.md` says how
//! it works and how it is tested in headless Chromium.

mod session;

#[cfg(target_arch = "wasm32")]
mod page;

pub use session::{Picture, Session};
