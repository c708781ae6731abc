//! Premade looks over the final mask (presentation: floats allowed; gameplay
//! never reads these). CPU references; the GPU twins are still to come.

pub mod overlay;
