//! The contact sheet: every case's final masks on one page, labelled, so a
//! person can review all goldens at a glance.

use murk_core::TextureImage;

/// Thumbnail side in pixels.
const THUMB: u32 = 128;
/// Cell size (thumbnail plus label).
const CELL_W: u32 = 168;
const CELL_H: u32 = THUMB + 22;
/// Cells per row.
const COLUMNS: u32 = 8;

/// A 3x5 pixel font for labels (upper-case shapes for letters).
fn glyph(c: char) -> [&'static str; 5] {
    match c.to_ascii_uppercase() {
        'A' => ["###", "#.#", "###", "#.#", "#.#"],
        'B' => ["##.", "#.#", "##.", "#.#", "##."],
        'C' => ["###", "#..", "#..", "#..", "###"],
        'D' => ["##.", "#.#", "#.#", "#.#", "##."],
        'E' => ["###", "#..", "##.", "#..", "###"],
        'F' => ["###", "#..", "##.", "#..", "#.."],
        'G' => ["###", "#..", "#.#", "#.#", "###"],
        'H' => ["#.#", "#.#", "###", "#.#", "#.#"],
        'I' => ["###", ".#.", ".#.", ".#.", "###"],
        'J' => ["..#", "..#", "..#", "#.#", "###"],
        'K' => ["#.#", "#.#", "##.", "#.#", "#.#"],
        'L' => ["#..", "#..", "#..", "#..", "###"],
        'M' => ["#.#", "###", "###", "#.#", "#.#"],
        'N' => ["##.", "#.#", "#.#", "#.#", "#.#"],
        'O' | '0' => ["###", "#.#", "#.#", "#.#", "###"],
        'P' => ["###", "#.#", "###", "#..", "#.."],
        'Q' => ["###", "#.#", "#.#", "###", "..#"],
        'R' => ["##.", "#.#", "##.", "#.#", "#.#"],
        'S' | '5' => ["###", "#..", "###", "..#", "###"],
        'T' => ["###", ".#.", ".#.", ".#.", ".#."],
        'U' => ["#.#", "#.#", "#.#", "#.#", "###"],
        'V' => ["#.#", "#.#", "#.#", "#.#", ".#."],
        'W' => ["#.#", "#.#", "###", "###", "#.#"],
        'X' => ["#.#", "#.#", ".#.", "#.#", "#.#"],
        'Y' => ["#.#", "#.#", ".#.", ".#.", ".#."],
        'Z' | '2' => ["###", "..#", ".#.", "#..", "###"],
        '1' => [".#.", "##.", ".#.", ".#.", "###"],
        '3' => ["###", "..#", "###", "..#", "###"],
        '4' => ["#.#", "#.#", "###", "..#", "..#"],
        '6' => ["###", "#..", "###", "#.#", "###"],
        '7' => ["###", "..#", "..#", "..#", "..#"],
        '8' => ["###", "#.#", "###", "#.#", "###"],
        '9' => ["###", "#.#", "###", "..#", "###"],
        '-' => ["...", "...", "###", "...", "..."],
        '.' => ["...", "...", "...", "...", ".#."],
        '/' => ["..#", "..#", ".#.", "#..", "#.."],
        _ => ["...", "...", "...", "...", "..."],
    }
}

fn draw_text(px: &mut [u8], width: u32, x0: u32, y0: u32, text: &str, max_chars: usize) {
    for (i, c) in text.chars().take(max_chars).enumerate() {
        for (row, bits) in glyph(c).iter().enumerate() {
            for (col, b) in bits.bytes().enumerate() {
                if b == b'#' {
                    let (x, y) = (x0 + i as u32 * 4 + col as u32, y0 + row as u32);
                    px[(y * width + x) as usize] = 255;
                }
            }
        }
    }
}

/// Renders labelled thumbnails (`label`, final mask) into an 8-bit grayscale page.
pub fn contact_sheet(items: &[(String, TextureImage)]) -> (u32, u32, Vec<u8>) {
    let rows = (items.len() as u32).div_ceil(COLUMNS).max(1);
    let (w, h) = (COLUMNS * CELL_W, rows * CELL_H);
    let mut px = vec![24u8; (w * h) as usize];
    for (i, (label, img)) in items.iter().enumerate() {
        let (cx, cy) = ((i as u32 % COLUMNS) * CELL_W, (i as u32 / COLUMNS) * CELL_H);
        let gray = img.to_gray16();
        let scale = f64::from(THUMB) / f64::from(img.width.max(img.height).max(1));
        let (tw, th) = ((f64::from(img.width) * scale) as u32, (f64::from(img.height) * scale) as u32);
        let (ox, oy) = (cx + (CELL_W - tw) / 2, cy + 2 + (THUMB - th) / 2);
        for y in 0..th {
            for x in 0..tw {
                let sx = ((f64::from(x) / scale) as u32).min(img.width - 1);
                let sy = ((f64::from(y) / scale) as u32).min(img.height - 1);
                px[((oy + y) * w + ox + x) as usize] = (gray[(sy * img.width + sx) as usize] >> 8) as u8;
            }
        }
        let (case, rest) = label.split_once('/').unwrap_or((label, ""));
        draw_text(&mut px, w, cx + 2, cy + THUMB + 4, case, 41);
        draw_text(&mut px, w, cx + 2, cy + THUMB + 11, rest, 41);
    }
    (w, h, px)
}

/// An HTML page listing every golden image with its case and description.
pub fn contact_html(items: &[(String, String, String)]) -> String {
    let mut s = String::from(
        "<!doctype html>\n<meta charset=\"utf-8\">\n<title>murk conformance goldens</title>\n<style>body{background:#181818;color:#ddd;font:13px sans-serif}figure{display:inline-block;margin:6px;width:260px;vertical-align:top}img{width:256px;image-rendering:pixelated;background:#000}</style>\n<h1>murk conformance goldens: final masks at the last recorded tick</h1>\n",
    );
    for (path, case, description) in items {
        s.push_str(&format!("<figure><img src=\"{path}\" alt=\"{case}\"><figcaption><b>{case}</b><br>{description}</figcaption></figure>\n"));
    }
    s
}
