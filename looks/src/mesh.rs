//! The 3D fog surface as a mesh: two layers (the lit top sheet and a lower,
//! more transparent one in another colour), split into square chunks with a
//! bounding box each (for culling) and a level of detail chosen by camera
//! distance, exported as glTF 2.0 (vertex colours with alpha, blended,
//! double-sided) for engines and drawn by `murk render --variant surface`.

use crate::camera::{dot, normalize, Camera};
use crate::noise::smoothstep;
use crate::surface::{SurfaceGrid, SurfaceParams};
use base64::prelude::{Engine, BASE64_STANDARD};
use serde_json::json;

/// How the mesh is cut and coloured.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MeshSettings {
    /// Quads per chunk side at full detail (a power of two).
    pub chunk: u32,
    /// Camera distance of the first coarser level: a chunk farther than
    /// `lod_distance * 2^k` uses every `2^(k+1)`-th vertex.
    pub lod_distance: f32,
    /// Coarsest level (every `2^max_lod`-th vertex).
    pub max_lod: u32,
    /// Top sheet colour where the fog floats (linear 0..1).
    pub colour: [f32; 3],
    /// Colour the sheet takes as it sinks, and the lower layer's colour.
    pub low_colour: [f32; 3],
    /// Height of the lower layer between the ground (0) and the top (1).
    pub lower_ratio: f32,
    /// Opacity of the lower layer relative to the top's.
    pub lower_alpha: f32,
    /// Unit direction toward the light.
    pub light_dir: [f32; 3],
}

impl Default for MeshSettings {
    fn default() -> Self {
        Self {
            chunk: 16,
            lod_distance: 120.0,
            max_lod: 2,
            colour: [0.78, 0.80, 0.86],
            low_colour: [0.45, 0.50, 0.62],
            lower_ratio: 0.45,
            lower_alpha: 0.45,
            light_dir: normalize([1.0, 1.0, 1.0]),
        }
    }
}

/// One vertex: position, normal and straight-alpha colour.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Vertex {
    /// World position.
    pub position: [f32; 3],
    /// Unit normal.
    pub normal: [f32; 3],
    /// Lit colour and opacity.
    pub colour: [f32; 4],
}

/// A square piece of the sheet.
#[derive(Clone, Debug, PartialEq)]
pub struct Chunk {
    /// Chunk column and row.
    pub cell: [u32; 2],
    /// Level of detail (vertex stride `2^lod`).
    pub lod: u32,
    /// Axis-aligned bounds (min, max) of both layers and the ground below.
    pub bounds: [[f32; 3]; 2],
    /// Triangles of the top layer (indices into [`FogMesh::upper`]).
    pub upper: Vec<u32>,
    /// Triangles of the lower layer (indices into [`FogMesh::lower`]).
    pub lower: Vec<u32>,
    /// Outside the camera's view (not drawn).
    pub culled: bool,
}

/// The fog surface mesh.
#[derive(Clone, Debug, PartialEq)]
pub struct FogMesh {
    /// Top layer vertices, one per grid vertex.
    pub upper: Vec<Vertex>,
    /// Lower layer vertices, one per grid vertex.
    pub lower: Vec<Vertex>,
    /// The chunks.
    pub chunks: Vec<Chunk>,
}

/// The fragment opacity: fully dropped is invisible, floating is opaque.
pub fn drop_alpha(drop: f32) -> f32 {
    smoothstep(0.0, 0.6, 1.0 - drop)
}

impl FogMesh {
    /// Builds the mesh of `grid` (heights from a backend) over `ground`;
    /// with a camera, chunks get their level of detail by distance and are
    /// culled outside the view (without one, full detail and nothing culled).
    pub fn build(grid: &SurfaceGrid, params: &SurfaceParams, ground: &[f32], settings: &MeshSettings, camera: Option<&Camera>) -> Self {
        let (cols, rows) = (grid.cols as usize, grid.rows as usize);
        let at = |i: usize, j: usize| grid.z[j.min(rows - 1) * cols + i.min(cols - 1)];
        let mut upper = Vec::with_capacity(cols * rows);
        let mut lower = Vec::with_capacity(cols * rows);
        for j in 0..rows {
            for i in 0..cols {
                let [x, y] = params.vertex_xy(i as u32, j as u32);
                let k = j * cols + i;
                let (z, d, g) = (grid.z[k], grid.drop[k], ground[k]);
                // Central differences of the sheet's height give its normal.
                let dzx = (at(i + 1, j) - at(i.saturating_sub(1), j)) / (2.0 * params.spacing[0]);
                let dzy = (at(i, j + 1) - at(i, j.saturating_sub(1))) / (2.0 * params.spacing[1]);
                let normal = normalize([-dzx, -dzy, 1.0]);
                let light = dot(normal, settings.light_dir).max(0.0) + 0.3;
                let base: [f32; 3] = [0, 1, 2].map(|c| settings.colour[c] + (settings.low_colour[c] - settings.colour[c]) * d);
                let a = drop_alpha(d);
                upper.push(Vertex {
                    position: [x, y, z],
                    normal,
                    colour: [base[0] * light, base[1] * light, base[2] * light, a].map(|c| c.min(1.0)),
                });
                // The lower layer stays under the top, also where the ground
                // (a wall) rises above the sheet.
                let floor = g.min(z);
                let zl = floor + (z - floor) * settings.lower_ratio;
                lower.push(Vertex {
                    position: [x, y, zl],
                    normal: [0.0, 0.0, 1.0],
                    colour: [settings.low_colour[0], settings.low_colour[1], settings.low_colour[2], a * settings.lower_alpha],
                });
            }
        }
        let chunk = settings.chunk.max(1) as usize;
        let (cx, cy) = ((cols - 1).div_ceil(chunk), (rows - 1).div_ceil(chunk));
        let mut chunks = Vec::with_capacity(cx * cy);
        for ty in 0..cy {
            for tx in 0..cx {
                let (i0, j0) = (tx * chunk, ty * chunk);
                let (i1, j1) = ((i0 + chunk).min(cols - 1), (j0 + chunk).min(rows - 1));
                let mut bounds = [[f32::INFINITY; 3], [f32::NEG_INFINITY; 3]];
                for j in j0..=j1 {
                    for i in i0..=i1 {
                        let k = j * cols + i;
                        for p in [upper[k].position, [upper[k].position[0], upper[k].position[1], ground[k]]] {
                            for c in 0..3 {
                                bounds[0][c] = bounds[0][c].min(p[c]);
                                bounds[1][c] = bounds[1][c].max(p[c]);
                            }
                        }
                    }
                }
                let (lod, culled) = match camera {
                    Some(cam) => (lod_for(&bounds, cam, settings), outside_view(&bounds, cam)),
                    None => (0, false),
                };
                let stride = 1usize << lod;
                let steps = |a: usize, b: usize| {
                    let mut v: Vec<usize> = (a..b).step_by(stride).collect();
                    v.push(b);
                    v
                };
                let (xs, ys) = (steps(i0, i1), steps(j0, j1));
                let (mut up, mut low) = (Vec::new(), Vec::new());
                for w in ys.windows(2) {
                    for v in xs.windows(2) {
                        let quad = [w[0] * cols + v[0], w[0] * cols + v[1], w[1] * cols + v[1], w[1] * cols + v[0]];
                        for tri in [[quad[0], quad[1], quad[2]], [quad[0], quad[2], quad[3]]] {
                            // Fully dropped fragments are invisible; a
                            // triangle with every corner dropped is left out.
                            if tri.iter().all(|&k| grid.drop[k] > 0.995) {
                                continue;
                            }
                            up.extend(tri.map(|k| k as u32));
                            low.extend(tri.map(|k| k as u32));
                        }
                    }
                }
                chunks.push(Chunk { cell: [tx as u32, ty as u32], lod, bounds, upper: up, lower: low, culled });
            }
        }
        Self { upper, lower, chunks }
    }

    /// The triangles to draw (both layers of every chunk not culled), the
    /// lower layer first.
    pub fn draw_list(&self) -> Vec<[Vertex; 3]> {
        let mut out = Vec::new();
        for (layer, verts) in [(1, &self.lower), (0, &self.upper)] {
            for c in self.chunks.iter().filter(|c| !c.culled) {
                let idx = if layer == 0 { &c.upper } else { &c.lower };
                out.extend(idx.chunks(3).map(|t| [verts[t[0] as usize], verts[t[1] as usize], verts[t[2] as usize]]));
            }
        }
        out
    }

    /// Triangle count of the drawn chunks.
    pub fn drawn_triangles(&self) -> usize {
        self.chunks.iter().filter(|c| !c.culled).map(|c| (c.upper.len() + c.lower.len()) / 3).sum()
    }

    /// The mesh as a self-contained glTF 2.0 document (buffers embedded as a
    /// data URI): one node per chunk named `chunk_<x>_<y>_lod<n>`, each with
    /// a `fog_top` and a `fog_lower` primitive sharing two vertex sets.
    pub fn to_gltf(&self) -> String {
        let mut bin: Vec<u8> = Vec::new();
        let mut views = Vec::new();
        let mut accessors = Vec::new();
        let mut push_view = |bin: &mut Vec<u8>, bytes: &[u8], target: u32| {
            while !bin.len().is_multiple_of(4) {
                bin.push(0);
            }
            views.push(json!({ "buffer": 0, "byteOffset": bin.len(), "byteLength": bytes.len(), "target": target }));
            bin.extend_from_slice(bytes);
            views.len() - 1
        };
        let mut layer_accessors = Vec::new();
        for verts in [&self.upper, &self.lower] {
            let mut min = [f32::INFINITY; 3];
            let mut max = [f32::NEG_INFINITY; 3];
            let (mut pos, mut nor, mut col) = (Vec::new(), Vec::new(), Vec::new());
            for v in verts.iter() {
                for c in 0..3 {
                    min[c] = min[c].min(v.position[c]);
                    max[c] = max[c].max(v.position[c]);
                }
                pos.extend(v.position.iter().flat_map(|f| f.to_le_bytes()));
                nor.extend(v.normal.iter().flat_map(|f| f.to_le_bytes()));
                col.extend(v.colour.iter().flat_map(|f| f.to_le_bytes()));
            }
            let n = verts.len();
            let p = push_view(&mut bin, &pos, ARRAY_BUFFER);
            accessors.push(json!({ "bufferView": p, "componentType": FLOAT, "count": n, "type": "VEC3", "min": min, "max": max }));
            let q = push_view(&mut bin, &nor, ARRAY_BUFFER);
            accessors.push(json!({ "bufferView": q, "componentType": FLOAT, "count": n, "type": "VEC3" }));
            let r = push_view(&mut bin, &col, ARRAY_BUFFER);
            accessors.push(json!({ "bufferView": r, "componentType": FLOAT, "count": n, "type": "VEC4" }));
            layer_accessors.push(accessors.len() - 3);
        }
        let (mut meshes, mut nodes) = (Vec::new(), Vec::new());
        for c in &self.chunks {
            let mut prims = Vec::new();
            for (layer, idx) in [(0usize, &c.upper), (1, &c.lower)] {
                if idx.is_empty() {
                    continue;
                }
                let bytes: Vec<u8> = idx.iter().flat_map(|i| i.to_le_bytes()).collect();
                let v = push_view(&mut bin, &bytes, ELEMENT_ARRAY_BUFFER);
                accessors.push(json!({ "bufferView": v, "componentType": UNSIGNED_INT, "count": idx.len(), "type": "SCALAR" }));
                let a = layer_accessors[layer];
                prims.push(json!({
                    "attributes": { "POSITION": a, "NORMAL": a + 1, "COLOR_0": a + 2 },
                    "indices": accessors.len() - 1,
                    "material": layer,
                }));
            }
            if prims.is_empty() {
                continue;
            }
            let name = format!("chunk_{}_{}_lod{}", c.cell[0], c.cell[1], c.lod);
            meshes.push(json!({ "name": name, "primitives": prims }));
            nodes.push(json!({ "name": name, "mesh": meshes.len() - 1 }));
        }
        let material = |name: &str| {
            json!({
                "name": name,
                "alphaMode": "BLEND",
                "doubleSided": true,
                "pbrMetallicRoughness": { "baseColorFactor": [1, 1, 1, 1], "metallicFactor": 0, "roughnessFactor": 1 },
            })
        };
        let uri = format!("data:application/octet-stream;base64,{}", BASE64_STANDARD.encode(&bin));
        json!({
            "asset": { "version": "2.0", "generator": "murk" },
            "scene": 0,
            "scenes": [{ "nodes": (0..nodes.len()).collect::<Vec<_>>() }],
            "nodes": nodes,
            "meshes": meshes,
            "materials": [material("fog_top"), material("fog_lower")],
            "accessors": accessors,
            "bufferViews": views,
            "buffers": [{ "byteLength": bin.len(), "uri": uri }],
        })
        .to_string()
    }
}

/// glTF buffer-view targets and accessor component types (the OpenGL enums).
const ARRAY_BUFFER: u32 = 34962;
const ELEMENT_ARRAY_BUFFER: u32 = 34963;
const FLOAT: u32 = 5126;
const UNSIGNED_INT: u32 = 5125;

fn lod_for(bounds: &[[f32; 3]; 2], cam: &Camera, s: &MeshSettings) -> u32 {
    let centre: [f32; 3] = [0, 1, 2].map(|c| 0.5 * (bounds[0][c] + bounds[1][c]));
    let d = [0, 1, 2].map(|c| centre[c] - cam.eye[c]);
    let dist = dot(d, d).sqrt();
    let mut lod = 0;
    while lod < s.max_lod && dist > s.lod_distance * (1u32 << lod) as f32 {
        lod += 1;
    }
    lod
}

/// Whether a box is certainly outside the camera's view: every corner in
/// front of the eye and all of them beyond the same image edge (a box with
/// a corner behind the eye is kept).
fn outside_view(bounds: &[[f32; 3]; 2], cam: &Camera) -> bool {
    let mut pts = Vec::with_capacity(8);
    for k in 0..8 {
        let p = [bounds[k & 1][0], bounds[(k >> 1) & 1][1], bounds[(k >> 2) & 1][2]];
        match cam.project(p) {
            Some(q) => pts.push(q),
            None => return false,
        }
    }
    let (w, h) = (cam.width as f32, cam.height as f32);
    pts.iter().all(|p| p[0] < 0.0) || pts.iter().all(|p| p[0] > w) || pts.iter().all(|p| p[1] < 0.0) || pts.iter().all(|p| p[1] > h)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flat(cols: u32, rows: u32, drop: impl Fn(u32, u32) -> f32) -> (SurfaceGrid, SurfaceParams, Vec<f32>) {
        let params = SurfaceParams::over([32.0, 32.0], [64.0, 64.0], cols, rows, 4.0);
        let mut grid = SurfaceGrid { cols, rows, z: Vec::new(), drop: Vec::new() };
        for j in 0..rows {
            for i in 0..cols {
                let d = drop(i, j);
                grid.drop.push(d);
                grid.z.push(4.0 * (1.0 - d));
            }
        }
        (grid, params, vec![0.0; (cols * rows) as usize])
    }

    #[test]
    fn dropped_triangles_are_left_out_and_alpha_follows_the_drop() {
        let (grid, params, ground) = flat(33, 33, |i, _| if i < 16 { 1.0 } else { 0.0 });
        let mesh = FogMesh::build(&grid, &params, &ground, &MeshSettings::default(), None);
        assert_eq!(mesh.chunks.len(), 4);
        // Quad columns 0..15 have every corner dropped; column 15 touches
        // vertex column 16, which floats: 17 of 32 quad columns are drawn.
        assert_eq!(mesh.drawn_triangles(), 2 * 2 * 32 * 17);
        assert_eq!(mesh.upper[0].colour[3], 0.0, "sunk: invisible");
        assert_eq!(mesh.upper[20].colour[3], 1.0, "floating: opaque");
        assert!(mesh.lower[20].colour[3] < mesh.upper[20].colour[3], "the lower layer is more transparent");
    }

    #[test]
    fn far_chunks_are_coarser_and_off_screen_chunks_are_culled() {
        let (grid, params, ground) = flat(65, 65, |_, _| 0.0);
        let cam = Camera { eye: [32.0, -10.0, 20.0], target: [32.0, 10.0, 0.0], fov_y_degrees: 40.0, width: 160, height: 90 };
        let settings = MeshSettings { lod_distance: 30.0, ..MeshSettings::default() };
        let mesh = FogMesh::build(&grid, &params, &ground, &settings, Some(&cam));
        let near = mesh.chunks.iter().find(|c| c.cell == [1, 0]).unwrap();
        let far = mesh.chunks.iter().find(|c| c.cell == [1, 3]).unwrap();
        assert!(near.lod < far.lod, "near {} far {}", near.lod, far.lod);
        assert!(far.upper.len() < near.upper.len());
        assert!(mesh.chunks.iter().any(|c| c.culled) && mesh.chunks.iter().any(|c| !c.culled));
        let all = FogMesh::build(&grid, &params, &ground, &settings, None);
        assert!(mesh.drawn_triangles() < all.drawn_triangles());
    }

    #[test]
    fn gltf_is_json_with_one_node_per_drawn_chunk() {
        let (grid, params, ground) = flat(17, 17, |i, _| if i < 4 { 1.0 } else { 0.2 });
        let mesh = FogMesh::build(&grid, &params, &ground, &MeshSettings { chunk: 8, ..MeshSettings::default() }, None);
        let doc: serde_json::Value = serde_json::from_str(&mesh.to_gltf()).unwrap();
        assert_eq!(doc["asset"]["version"], "2.0");
        assert_eq!(doc["nodes"].as_array().unwrap().len(), 4);
        assert_eq!(doc["accessors"][0]["count"], 17 * 17);
        let len = doc["buffers"][0]["byteLength"].as_u64().unwrap() as usize;
        let uri = doc["buffers"][0]["uri"].as_str().unwrap();
        assert_eq!(uri.len() - "data:application/octet-stream;base64,".len(), len.div_ceil(3) * 4);
    }
}
