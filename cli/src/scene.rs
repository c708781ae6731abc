//! The camera view `murk render` draws the looks into: the terrain as a lit
//! heightfield (heights from the scenario's map), rasterized on the CPU with
//! a depth buffer, and the transparent triangles of the fog surface blended
//! over it. Presentation scaffolding: the looks themselves run on the
//! chosen backend.

use crate::picture::terrain_colour;
use murk_core::movingai::MovingAiMap;
use murk_core::scenario::MapSpec;
use murk_core::ShaderParams;
use murk_looks::mesh::Vertex;
use murk_looks::{dot, normalize, Camera};

/// Ground heights and colours on a grid of world points.
pub struct Terrain {
    /// World XY of sample (0, 0).
    pub origin: [f32; 2],
    /// World distance between samples.
    pub step: f32,
    /// Samples along X.
    pub cols: u32,
    /// Samples along Y.
    pub rows: u32,
    /// Height per sample.
    pub heights: Vec<f32>,
    /// Colour per sample (0..255).
    pub colours: Vec<[f32; 3]>,
}

/// Height of a map character above the ground: walls twice the trees,
/// water and swamp slightly sunk.
fn cell_height(cell: u8, tree: f32) -> f32 {
    match cell {
        b'@' | b'O' => 2.0 * tree,
        b'T' => tree,
        b'W' => -0.3,
        b'S' => -0.1,
        _ => 0.0,
    }
}

impl Terrain {
    /// The terrain over the area's bounding box, at most `max_side` samples
    /// a side: from the map where there is one (outside it, wall), flat
    /// ground elsewhere.
    pub fn new(area: &ShaderParams, map: Option<(&MovingAiMap, &MapSpec)>, max_side: u32) -> Self {
        let a = area.yaw_degrees.to_radians();
        let (s, c) = a.sin_cos();
        let half = [0.5 * (area.size[0] * c.abs() + area.size[1] * s.abs()), 0.5 * (area.size[0] * s.abs() + area.size[1] * c.abs())];
        let origin = [area.center[0] - half[0], area.center[1] - half[1]];
        let cell = map.map_or(half[0].max(half[1]) / 64.0, |(_, settings)| settings.cell_size);
        let step = cell.max(2.0 * half[0].max(half[1]) / max_side as f32);
        let (cols, rows) = ((2.0 * half[0] / step).ceil() as u32 + 1, (2.0 * half[1] / step).ceil() as u32 + 1);
        let (mut heights, mut colours) = (Vec::new(), Vec::new());
        for j in 0..rows {
            for i in 0..cols {
                let (x, y) = (origin[0] + i as f32 * step, origin[1] + j as f32 * step);
                let (ch, h) = match map {
                    Some((m, settings)) => {
                        let cx = ((x - settings.origin.x) / settings.cell_size).floor();
                        let cy = ((y - settings.origin.y) / settings.cell_size).floor();
                        let ch = if cx >= 0.0 && cy >= 0.0 && (cx as u32) < m.width && (cy as u32) < m.height {
                            m.cells[(cy as u32 * m.width + cx as u32) as usize]
                        } else {
                            b'@'
                        };
                        (ch, settings.ground_z + cell_height(ch, settings.tree_height))
                    }
                    None => (b'.', 0.0),
                };
                heights.push(h);
                colours.push(terrain_colour(ch).map(|v| v as f32));
            }
        }
        Self { origin, step, cols, rows, heights, colours }
    }

    /// Height at a world point (bilinear between samples, clamped).
    pub fn height_at(&self, x: f32, y: f32) -> f32 {
        let fx = ((x - self.origin[0]) / self.step).clamp(0.0, (self.cols - 1) as f32);
        let fy = ((y - self.origin[1]) / self.step).clamp(0.0, (self.rows - 1) as f32);
        let (i, j) = ((fx as u32).min(self.cols - 2), (fy as u32).min(self.rows - 2));
        let (tx, ty) = (fx - i as f32, fy - j as f32);
        let h = |di: u32, dj: u32| self.heights[((j + dj) * self.cols + i + di) as usize];
        let top = h(0, 0) + (h(1, 0) - h(0, 0)) * tx;
        let bottom = h(0, 1) + (h(1, 1) - h(0, 1)) * tx;
        top + (bottom - top) * ty
    }
}

/// A camera for the area: from the south, raised, looking at the centre.
pub fn camera_for(area: &ShaderParams, width: u32, height: u32) -> Camera {
    let span = area.size[0].max(area.size[1]);
    let [cx, cy, _] = area.center;
    Camera { eye: [cx, cy - 0.8 * span, 0.55 * span], target: [cx, cy - 0.02 * span, 0.0], fov_y_degrees: 50.0, width, height }
}

/// Colour (0..255) and view depth per pixel.
pub struct Frame {
    /// The camera.
    pub camera: Camera,
    /// RGB per pixel.
    pub colour: Vec<[f32; 3]>,
    /// Depth along the view direction; infinite for sky.
    pub depth: Vec<f32>,
}

const SKY: [f32; 3] = [150.0, 170.0, 195.0];

impl Frame {
    /// An empty frame (sky).
    pub fn new(camera: Camera) -> Self {
        let n = (camera.width * camera.height) as usize;
        Self { camera, colour: vec![SKY; n], depth: vec![f32::INFINITY; n] }
    }

    /// Draws the terrain (opaque, lit from `light`). `flatten(x, y, h)`
    /// may lower a sample (tall objects hidden by fog).
    pub fn draw_terrain(&mut self, t: &Terrain, light: [f32; 3], flatten: impl Fn(f32, f32, f32) -> f32) {
        let (cols, rows) = (t.cols as usize, t.rows as usize);
        let mut pos = Vec::with_capacity(cols * rows);
        for j in 0..rows {
            for i in 0..cols {
                let (x, y) = (t.origin[0] + i as f32 * t.step, t.origin[1] + j as f32 * t.step);
                pos.push([x, y, flatten(x, y, t.heights[j * cols + i])]);
            }
        }
        let mut verts = Vec::with_capacity(pos.len());
        for j in 0..rows {
            for i in 0..cols {
                let h = |a: usize, b: usize| pos[b.min(rows - 1) * cols + a.min(cols - 1)][2];
                let n = normalize([h(i.saturating_sub(1), j) - h(i + 1, j), h(i, j.saturating_sub(1)) - h(i, j + 1), 2.0 * t.step]);
                let shade = 0.45 + 0.55 * dot(n, light).max(0.0);
                let c = t.colours[j * cols + i].map(|v| v * shade);
                verts.push(Vertex { position: pos[j * cols + i], normal: n, colour: [c[0], c[1], c[2], 1.0] });
            }
        }
        for j in 0..rows - 1 {
            for i in 0..cols - 1 {
                let k = j * cols + i;
                self.triangle([verts[k], verts[k + 1], verts[k + cols + 1]], false);
                self.triangle([verts[k], verts[k + cols + 1], verts[k + cols]], false);
            }
        }
    }

    /// Blends transparent triangles (colours 0..1, straight alpha) over the
    /// frame, farthest first, tested against but not writing the depth.
    pub fn draw_transparent(&mut self, tris: &[[Vertex; 3]]) {
        let cam = self.camera;
        let mut keyed: Vec<(f32, &[Vertex; 3])> =
            tris.iter().filter_map(|t| t.iter().map(|v| cam.project(v.position).map(|p| p[2])).sum::<Option<f32>>().map(|z| (z, t))).collect();
        keyed.sort_by(|a, b| b.0.total_cmp(&a.0));
        for (_, t) in keyed {
            let scaled = t.map(|v| Vertex { colour: [v.colour[0] * 255.0, v.colour[1] * 255.0, v.colour[2] * 255.0, v.colour[3]], ..v });
            self.triangle(scaled, true);
        }
    }

    /// Rasterizes one triangle with perspective-correct colour; opaque
    /// triangles write colour and depth where nearer, blended ones mix by
    /// alpha where not hidden.
    fn triangle(&mut self, v: [Vertex; 3], blend: bool) {
        let cam = self.camera;
        let Some(p) = v.iter().map(|x| cam.project(x.position)).collect::<Option<Vec<_>>>() else { return };
        let (w, h) = (cam.width as i32, cam.height as i32);
        let min_x = p.iter().map(|q| q[0]).fold(f32::INFINITY, f32::min).floor().max(0.0) as i32;
        let max_x = (p.iter().map(|q| q[0]).fold(f32::NEG_INFINITY, f32::max).ceil() as i32).min(w - 1);
        let min_y = p.iter().map(|q| q[1]).fold(f32::INFINITY, f32::min).floor().max(0.0) as i32;
        let max_y = (p.iter().map(|q| q[1]).fold(f32::NEG_INFINITY, f32::max).ceil() as i32).min(h - 1);
        let area = (p[1][0] - p[0][0]) * (p[2][1] - p[0][1]) - (p[2][0] - p[0][0]) * (p[1][1] - p[0][1]);
        if area.abs() < 1e-9 {
            return;
        }
        for y in min_y..=max_y {
            for x in min_x..=max_x {
                let (px, py) = (x as f32 + 0.5, y as f32 + 0.5);
                let edge = |a: usize, b: usize| (p[b][0] - p[a][0]) * (py - p[a][1]) - (px - p[a][0]) * (p[b][1] - p[a][1]);
                let b = [edge(1, 2) / area, edge(2, 0) / area, edge(0, 1) / area];
                if b.iter().any(|&c| c < 0.0) {
                    continue;
                }
                let inv: [f32; 3] = [0, 1, 2].map(|i| b[i] / p[i][2]);
                let sum = inv[0] + inv[1] + inv[2];
                let z = 1.0 / sum;
                let col: [f32; 4] = [0, 1, 2, 3].map(|c| (inv[0] * v[0].colour[c] + inv[1] * v[1].colour[c] + inv[2] * v[2].colour[c]) * z);
                let k = (y * w + x) as usize;
                if blend {
                    if z <= self.depth[k] * 1.0005 {
                        let a = col[3].clamp(0.0, 1.0);
                        for (dst, src) in self.colour[k].iter_mut().zip(col) {
                            *dst += (src - *dst) * a;
                        }
                    }
                } else if z < self.depth[k] {
                    self.depth[k] = z;
                    self.colour[k] = [col[0], col[1], col[2]];
                }
            }
        }
    }

    /// Distance from the eye along each pixel's ray to the surface drawn
    /// there (infinite for sky): the volume look's depth input.
    pub fn ray_distances(&self) -> Vec<f32> {
        let cam = &self.camera;
        let forward = cam.basis()[0];
        let mut out = Vec::with_capacity(self.depth.len());
        for y in 0..cam.height {
            for x in 0..cam.width {
                let d = cam.ray(x as f32 + 0.5, y as f32 + 0.5);
                out.push(self.depth[(y * cam.width + x) as usize] / dot(d, forward));
            }
        }
        out
    }

    /// The world point seen at a pixel, if any.
    pub fn world_at(&self, x: u32, y: u32, distances: &[f32]) -> Option<[f32; 3]> {
        let t = distances[(y * self.camera.width + x) as usize];
        if !t.is_finite() {
            return None;
        }
        let d = self.camera.ray(x as f32 + 0.5, y as f32 + 0.5);
        Some([0, 1, 2].map(|c| self.camera.eye[c] + d[c] * t))
    }

    /// RGB8 bytes.
    pub fn to_rgb8(&self) -> Vec<u8> {
        self.colour.iter().flat_map(|c| c.map(|v| (v + 0.5).floor().clamp(0.0, 255.0) as u8)).collect()
    }
}
