//! Rendering without a window (replays, servers, CI): Bevy's renderer with
//! no primary window, a camera drawing into an image, and that image read
//! back to the CPU each frame.

use bevy::app::{PluginGroupBuilder, PluginsState};
use bevy::prelude::*;
use bevy::render::gpu_readback::{Readback, ReadbackComplete};
use bevy::render::RenderPlugin;
use bevy::window::ExitCondition;
use std::sync::{Arc, Mutex, PoisonError};
use wgpu::{TextureFormat, TextureUsages};

/// Bevy's default plugins for an app that renders offscreen: no window, no
/// logger (tests run many apps in one process), pipelines compiled before
/// the first frame that uses them.
pub fn render_plugins() -> PluginGroupBuilder {
    let group = DefaultPlugins
        .build()
        .disable::<bevy::log::LogPlugin>()
        .set(WindowPlugin { primary_window: None, exit_condition: ExitCondition::DontExit, close_when_requested: false, ..default() })
        .set(RenderPlugin { synchronous_pipeline_compilation: true, ..default() });
    #[cfg(feature = "window")]
    let group = if group.contains::<bevy::winit::WinitPlugin>() { group.disable::<bevy::winit::WinitPlugin>() } else { group };
    group
}

/// Waits for the renderer to come up (it starts asynchronously), then
/// finishes the app's plugins, as `App::run` would.
pub fn finish_plugins(app: &mut App) {
    while app.plugins_state() == PluginsState::Adding {
        bevy::tasks::tick_global_task_pools_on_main_thread();
    }
    app.finish();
    app.cleanup();
}

/// An image a camera can draw into and the CPU can read back: 8-bit RGBA,
/// not sRGB-encoded (what PNGs hold).
pub fn target_image(width: u32, height: u32) -> Image {
    let mut image = Image::new_target_texture(width, height, TextureFormat::Rgba8Unorm, None);
    image.texture_descriptor.usage |= TextureUsages::COPY_SRC;
    image
}

/// The last picture read back from a target image made by [`target_image`].
#[derive(Clone, Default)]
pub struct Picture {
    slot: Arc<Mutex<Option<Vec<u8>>>>,
    row_bytes: usize,
}

impl Picture {
    /// The RGBA bytes of the last frame read back, rows top to bottom
    /// (without the padding that copies add to each row).
    pub fn latest(&self) -> Option<Vec<u8>> {
        let data = self.slot.lock().unwrap_or_else(PoisonError::into_inner).clone()?;
        let padded = self.row_bytes.next_multiple_of(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT as usize);
        if padded == self.row_bytes {
            return Some(data);
        }
        Some(data.chunks(padded).flat_map(|row| row[..self.row_bytes.min(row.len())].to_vec()).collect())
    }

    /// Reads `image` (`width` pixels wide) back after every frame into the
    /// returned picture.
    pub fn watch(commands: &mut Commands, image: Handle<Image>, width: u32) -> Picture {
        let picture = Picture { slot: Arc::default(), row_bytes: width as usize * 4 };
        let slot = picture.slot.clone();
        commands.spawn(Readback::texture(image)).observe(move |done: On<ReadbackComplete>| {
            *slot.lock().unwrap_or_else(PoisonError::into_inner) = Some(done.data.clone());
        });
        picture
    }
}
