//! Height captures: a top-down raster of heights that occludes, from a
//! Moving AI `.map` text (as `murk run` loads a scenario's map) or from the
//! caller's own cells.

#![expect(unsafe_code, reason = "the functions here are exported to C unmangled (`#[no_mangle]`); they hold no unsafe block")]

use crate::entity::label;
use crate::guard::call;
use crate::status::{FfiError, Result};
use crate::{raw, registry};
use murk_core::error::finite;
use murk_core::glam::Vec2;
use murk_core::movingai::MovingAiMap;
use murk_core::{CaptureMode, HeightCapture, MurkError};
use std::ffi::c_char;

/// How a capture is recaptured: when marked dirty (`murk_capture_set_cells`,
/// `murk_capture_mark_dirty`), as the scenario runner's map is.
fn mode() -> CaptureMode {
    CaptureMode::ShowOnly { members: Vec::new(), update_only_if_transform_changed: true }
}

/// Checks where a capture lies; errors name `{field}.*`.
fn check_placement(field: &str, origin_x: f32, origin_y: f32, cell_size: f32) -> Result<()> {
    finite(|| format!("{field}.origin.x"), origin_x)?;
    finite(|| format!("{field}.origin.y"), origin_y)?;
    let cell = finite(|| format!("{field}.cell_size"), cell_size)?;
    if cell <= 0.0 {
        return Err(MurkError::invalid(format!("{field}.cell_size"), cell, "must be positive").into());
    }
    Ok(())
}

/// Spawns an entity holding `capture` and writes its handle.
fn spawn(fog: u64, capture: HeightCapture, out_entity: *mut u64) -> Result<()> {
    let e = registry::with_fog(fog, |h| Ok(h.world.spawn((capture,))))?;
    raw::write(out_entity, e.to_bits().get(), "out_entity")
}

/// Spawns a height capture from a Moving AI `.map` file's text
/// (`text_len` bytes): cell (column c, row r) covers world
/// `(origin_x, origin_y) + (c, r) * cell_size`; `@` and `O` are walls
/// nothing sees over, `T` trees `tree_height` above `ground_z`, the rest
/// open ground. Writes the capture's entity to `out_entity` (0 on failure).
#[no_mangle]
pub extern "C" fn murk_capture_add_movingai(
    fog: u64,
    text: *const c_char,
    text_len: usize,
    origin_x: f32,
    origin_y: f32,
    cell_size: f32,
    ground_z: f32,
    tree_height: f32,
    out_entity: *mut u64,
) -> i32 {
    call(|| {
        raw::write(out_entity, 0, "out_entity")?;
        let text = raw::text(text, text_len, "text")?;
        check_placement("map", origin_x, origin_y, cell_size)?;
        finite("map.ground_z", ground_z)?;
        finite("map.tree_height", tree_height)?;
        let map = MovingAiMap::parse(text, "map")?;
        spawn(fog, map.to_capture(Vec2::new(origin_x, origin_y), cell_size, ground_z, tree_height, mode()), out_entity)
    })
}

/// Spawns a height capture of `width` x `height` cells from `cells`
/// (`cells_len` floats, row-major, `cells_len == width * height`): cell
/// (c, r) covers world `(origin_x, origin_y) + (c, r) * cell_size` and
/// holds an absolute world height, `NAN` for nothing there or `INFINITY`
/// for a wall. The cells are copied. Writes the capture's entity to
/// `out_entity` (0 on failure).
#[no_mangle]
pub extern "C" fn murk_capture_add_raster(
    fog: u64,
    origin_x: f32,
    origin_y: f32,
    cell_size: f32,
    width: u32,
    height: u32,
    cells: *const f32,
    cells_len: usize,
    out_entity: *mut u64,
) -> i32 {
    call(|| {
        raw::write(out_entity, 0, "out_entity")?;
        check_placement("capture", origin_x, origin_y, cell_size)?;
        let expected = u64::from(width) * u64::from(height);
        if width == 0 || height == 0 || cells_len as u64 != expected {
            return Err(FfiError::invalid("cells_len", cells_len, format!("must be width * height = {width} * {height} = {expected}, at least 1")));
        }
        let cells = raw::slice(cells, cells_len, "cells")?.to_vec();
        let capture = HeightCapture { origin: Vec2::new(origin_x, origin_y), cell_size, width, height, cells, mode: mode(), enabled: true };
        spawn(fog, capture, out_entity)
    })
}

/// Replaces the cells of a capture entity (`cells_len` must be its width
/// times its height). As with any edit of captured geometry, the change
/// is seen once marked: `murk_capture_mark_dirty` for the rectangle that
/// changed (only its rows are resampled), or `murk_capture_mark_all_dirty`.
#[no_mangle]
pub extern "C" fn murk_capture_set_cells(fog: u64, entity: u64, cells: *const f32, cells_len: usize) -> i32 {
    call(|| {
        let cells = raw::slice(cells, cells_len, "cells")?;
        registry::with_fog(fog, |h| {
            let e = h.entity(entity)?;
            let mut capture = h.world.get::<&mut HeightCapture>(e).map_err(|_| FfiError::invalid("entity", label(e), "holds no height capture"))?;
            let expected = u64::from(capture.width) * u64::from(capture.height);
            if cells.len() as u64 != expected {
                return Err(FfiError::invalid("cells_len", cells.len(), format!("must be the capture's width * height = {expected}")));
            }
            capture.cells.copy_from_slice(cells);
            Ok(())
        })
    })
}

/// Marks the world rectangle (`min_x`, `min_y`) to (`max_x`, `max_y`) of
/// every capture dirty, for cells edited there: the next tick resamples
/// the rows of each instance the rectangle crosses, and rebuilds the
/// occlusion only where a height changed. A bound that is not finite, a
/// minimum above its maximum, or a rectangle that meets no instance's grid
/// is an error naming it.
#[no_mangle]
pub extern "C" fn murk_capture_mark_dirty(fog: u64, min_x: f32, min_y: f32, max_x: f32, max_y: f32) -> i32 {
    call(|| registry::with_fog(fog, |h| Ok(h.fog.mark_capture_dirty_in(Vec2::new(min_x, min_y), Vec2::new(max_x, max_y))?)))
}

/// Marks every capture dirty: the next recompute of each instance
/// captures again from scratch.
#[no_mangle]
pub extern "C" fn murk_capture_mark_all_dirty(fog: u64) -> i32 {
    call(|| {
        registry::with_fog(fog, |h| {
            h.fog.mark_capture_dirty();
            Ok(())
        })
    })
}
