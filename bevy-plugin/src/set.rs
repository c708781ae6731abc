//! The stages of murk's fixed tick, which every system of the plugin is
//! placed in.

use bevy::prelude::*;

/// The stages of murk's fixed tick, in order.
#[derive(SystemSet, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MurkSet {
    /// Instances and entities are mirrored into murk.
    Mirror,
    /// murk ticks.
    Tick,
    /// Results go back to Bevy: messages, ghosts, hidden entities, images.
    Publish,
}
