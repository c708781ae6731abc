//! Moving AI benchmark `.map` files as height captures.
//!
//! Format: `type octile`, `height H`, `width W`, `map`, then H rows of W
//! characters. murk reads the terrain as a top-down height raster:
//!
//! | char | meaning (benchmark) | murk                               |
//! |------|---------------------|------------------------------------|
//! | `.` `G` | passable ground  | empty (ground, never blocks)       |
//! | `S`  | swamp               | empty (passable, does not block)   |
//! | `W`  | water               | empty (does not block sight)       |
//! | `T`  | trees               | covered, height `tree_height`      |
//! | `@` `O` | out of bounds    | covered wall (nothing sees over)   |
//!
//! Row `r`, column `c` covers world `origin + (c, r) * cell_size`, so with the
//! default origin and cell size 1 the map's rows are world +Y, and a texel
//! image of an instance over it looks like the map file.

use crate::components::{CaptureMode, HeightCapture};
use crate::error::{MurkError, Result};
use glam::Vec2;

/// A parsed `.map` file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MovingAiMap {
    /// Columns.
    pub width: u32,
    /// Rows.
    pub height: u32,
    /// Row-major terrain characters.
    pub cells: Vec<u8>,
}

impl MovingAiMap {
    /// Parses map text; `what` names the file in errors.
    pub fn parse(text: &str, what: &str) -> Result<Self> {
        let err = |line: usize, message: String| MurkError::Parse { what: what.to_string(), message: format!("line {line}: {message}") };
        let mut lines = text.lines();
        let mut header = |name: &str, line: usize| -> Result<String> {
            let l = lines.next().ok_or_else(|| err(line, format!("missing `{name}` header")))?;
            let mut parts = l.split_whitespace();
            if parts.next() != Some(name) {
                return Err(err(line, format!("expected `{name}`, found `{l}`")));
            }
            Ok(parts.collect::<Vec<_>>().join(" "))
        };
        let kind = header("type", 1)?;
        if kind != "octile" {
            return Err(err(1, format!("type `{kind}` is not supported (only octile)")));
        }
        let height: u32 = header("height", 2)?.parse().map_err(|e| err(2, format!("height: {e}")))?;
        let width: u32 = header("width", 3)?.parse().map_err(|e| err(3, format!("width: {e}")))?;
        header("map", 4)?;
        if width == 0 || height == 0 || width > 8192 || height > 8192 {
            return Err(MurkError::invalid(format!("{what} width x height"), format!("{width}x{height}"), "must be within 1..=8192 each"));
        }
        let mut cells = Vec::with_capacity((width * height) as usize);
        for r in 0..height {
            let line_no = 5 + r as usize;
            let row = lines.next().ok_or_else(|| err(line_no, format!("missing row {r} of {height}")))?;
            let row = row.trim_end_matches('\r');
            if row.len() != width as usize {
                return Err(err(line_no, format!("row {r} has {} characters, expected {width}", row.len())));
            }
            for (c, ch) in row.bytes().enumerate() {
                if !b".G@OTSW".contains(&ch) {
                    return Err(err(line_no, format!("unknown terrain `{}` at column {c}", ch as char)));
                }
                cells.push(ch);
            }
        }
        Ok(Self { width, height, cells })
    }

    /// Whether cell `(c, r)` is passable ground for units (`.`, `G`, `S`).
    pub fn passable(&self, c: u32, r: u32) -> bool {
        c < self.width && r < self.height && matches!(self.cells[(r * self.width + c) as usize], b'.' | b'G' | b'S')
    }

    /// The map as a height capture: walls are `+inf`, trees `tree_height`
    /// above `ground_z`, everything else empty.
    pub fn to_capture(&self, origin: Vec2, cell_size: f32, ground_z: f32, tree_height: f32, mode: CaptureMode) -> HeightCapture {
        let cells = self
            .cells
            .iter()
            .map(|&c| match c {
                b'@' | b'O' => f32::INFINITY,
                b'T' => ground_z + tree_height,
                _ => f32::NAN,
            })
            .collect();
        HeightCapture { origin, cell_size, width: self.width, height: self.height, cells, mode, enabled: true }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_rejects_with_line_numbers() {
        let m = MovingAiMap::parse("type octile\nheight 2\nwidth 3\nmap\n.@T\nSW.\n", "m").unwrap();
        assert_eq!((m.width, m.height), (3, 2));
        assert!(m.passable(0, 0) && !m.passable(1, 0) && !m.passable(2, 0) && m.passable(0, 1) && !m.passable(1, 1));
        let e = MovingAiMap::parse("type octile\nheight 2\nwidth 3\nmap\n.@T\nS\n", "m.map").unwrap_err();
        assert!(e.to_string().contains("m.map") && e.to_string().contains("line 6"), "{e}");
        let e = MovingAiMap::parse("type octile\nheight 1\nwidth 1\nmap\nX\n", "m").unwrap_err();
        assert!(e.to_string().contains("unknown terrain `X`"), "{e}");
        assert!(MovingAiMap::parse("type tile\n", "m").is_err());
        assert!(MovingAiMap::parse("", "m").is_err());
    }

    #[test]
    fn copied_maps_parse() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../assets/maps");
        for name in ["lak303d.map", "AR0011SR.map", "TheFrozenSea.map", "den602d.map"] {
            let text = std::fs::read_to_string(dir.join(name)).unwrap();
            let m = MovingAiMap::parse(&text, name).unwrap();
            assert!(m.width > 100 && m.height > 100, "{name}");
        }
    }
}
