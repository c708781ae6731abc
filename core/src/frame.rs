//! What core hands a backend: inputs already projected to texel space.
//!
//! The `#[repr(C)]` structs here are the GPU-visible layout, defined once; the
//! GPU backend mirrors them in `backend-gpu/shaders/common.wgsl`, and a test
//! there checks sizes and offsets against this file. All fields are integers
//! (see [`crate::fixed`]).

use crate::fixed::Fnv64;
use crate::hash::WordFold;
use crate::profile::RayMethod;

/// A vision source in texel space.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, bytemuck::Pod, bytemuck::Zeroable)]
pub struct SourceTexel {
    /// Position, Q3 texels.
    pub x: i32,
    /// Position, Q3 texels.
    pub y: i32,
    /// Reveal radius, Q3 texels (`<= MAX_RADIUS_TEXELS`).
    pub radius: i32,
    /// Radius inside which the source reveals fully, Q3 texels.
    pub inner_radius: i32,
    /// Eye height, height units.
    pub eye: i32,
    /// Cone direction, Q14 unit vector in texel axes.
    pub cone_x: i32,
    /// Cone direction, Q14 unit vector in texel axes.
    pub cone_y: i32,
    /// Cosine of the cone's half angle, Q14.
    pub cone_cos: i32,
    /// Reveal strength (Z-overlap factor), mask scale.
    pub strength: u32,
    /// Bit flags ([`SOURCE_HAS_CONE`], [`SOURCE_ANTI`], [`SOURCE_SEE_THROUGH`]).
    pub flags: u32,
}

/// [`SourceTexel::flags`]: the cone fields are in use.
pub const SOURCE_HAS_CONE: u32 = 1;
/// [`SourceTexel::flags`]: anti-vision: conceals instead of revealing.
pub const SOURCE_ANTI: u32 = 2;
/// [`SourceTexel::flags`]: sees through occlusion (its reveal ignores the ray method).
pub const SOURCE_SEE_THROUGH: u32 = 4;

impl SourceTexel {
    /// Feeds the source into a hash: its fields in order, two to a word.
    pub fn hash_into(&self, h: &mut WordFold) {
        h.pair(self.x as u32, self.y as u32);
        h.pair(self.radius as u32, self.inner_radius as u32);
        h.pair(self.eye as u32, self.cone_x as u32);
        h.pair(self.cone_y as u32, self.cone_cos as u32);
        h.pair(self.strength, self.flags);
    }
}

/// A circular blocker in texel space.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, bytemuck::Pod, bytemuck::Zeroable)]
pub struct CircleTexel {
    /// Centre, Q3 texels.
    pub x: i32,
    /// Centre, Q3 texels.
    pub y: i32,
    /// Radius, Q3 texels.
    pub radius: i32,
    /// Top height, height units (or `HEIGHT_WALL`).
    pub height: i32,
}

/// A polygon blocker: `count` vertices from `first` in [`OcclusionInput::vertices`].
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, bytemuck::Pod, bytemuck::Zeroable)]
pub struct PolygonTexel {
    /// First vertex index.
    pub first: u32,
    /// Vertex count (>= 3).
    pub count: u32,
    /// Top height, height units (or `HEIGHT_WALL`).
    pub height: i32,
    /// Padding to 16 bytes.
    pub pad: u32,
}

/// Capture texel value for "nothing captured here".
pub const CAPTURE_EMPTY: i32 = i32::MIN;

/// Occlusion inputs of one instance at its internal resolution.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OcclusionInput {
    /// Grid width (internal texels).
    pub width: u32,
    /// Grid height (internal texels).
    pub height: u32,
    /// Circles.
    pub circles: Vec<CircleTexel>,
    /// Polygons (rectangles arrive as 4-vertex polygons).
    pub polygons: Vec<PolygonTexel>,
    /// Polygon vertices, Q3 texels, clipped to the grid.
    pub vertices: Vec<[i32; 2]>,
    /// Captured heights per texel ([`CAPTURE_EMPTY`] where none), if a capture exists.
    pub capture: Option<Vec<i32>>,
    /// Build the coverage mip chain.
    pub build_mips: bool,
    /// Build the distance field at this downscale (0 = do not build).
    pub distance_field_scale: u32,
}

/// Separable blur kernel: integer weights summing to [`BlurKernel::ONE`]
/// (256), the same along both axes.
///
/// A blur step weighs the rows of a column, then the columns of the result,
/// with no rounding in between: `(sum_j w_j * sum_i w_i * v + 32768) >> 16`.
/// That sum is the same whichever axis goes first, so the blur commutes with
/// quarter turns and transposition of the grid; 8-bit weights keep every
/// partial sum inside 32 bits (`65535 * 256 * 256 < 2^32`) for the GPU.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BlurKernel {
    /// Weights for offsets `-radius..=radius`.
    pub weights: Vec<u32>,
    /// How many X-then-Y passes.
    pub iterations: u32,
}

impl BlurKernel {
    /// The sum of the weights.
    pub const ONE: u32 = 256;

    /// A Gaussian of `radius` and `sigma`, quantized so the weights sum to
    /// exactly [`Self::ONE`] (libm for the exponentials, so every platform
    /// agrees; the rounding remainder goes to the centre). Weights below
    /// 1/256 of the total are 0.
    pub fn gaussian(radius: u32, sigma: f32, iterations: u32) -> Self {
        if radius == 0 || iterations == 0 {
            return Self { weights: vec![Self::ONE], iterations: 0 };
        }
        let s = f64::from(sigma);
        let r = radius as i32;
        let raw: Vec<f64> = (-r..=r).map(|i| libm::exp(-f64::from(i * i) / (2.0 * s * s))).collect();
        let total: f64 = raw.iter().sum();
        let mut weights: Vec<u32> = raw.iter().map(|w| (w / total * f64::from(Self::ONE)).floor() as u32).collect();
        let sum: u32 = weights.iter().sum();
        weights[radius as usize] += Self::ONE - sum;
        Self { weights, iterations }
    }
    /// Kernel radius.
    pub fn radius(&self) -> usize {
        self.weights.len() / 2
    }
}

/// How step 5 of the visibility pass judges a ray over an instance's
/// occlusion: the profile's ray method and what it reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RayRule {
    /// Occlusion method.
    pub method: RayMethod,
    /// Height added to a target texel's ground, height units.
    pub target_height: i32,
    /// Distance-field downscale.
    pub df_scale: u32,
    /// Soft-shadow sharpness, Q8 (0 = hard shadows).
    pub soft_shadow_k_q8: u32,
    /// Step jitter amplitude, mask scale.
    pub df_jitter: u16,
}

/// Inputs of one visibility recompute (visibility through upscale).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecomputeInput {
    /// Sources, sorted by entity.
    pub sources: Vec<SourceTexel>,
    /// Tile bins over `sources`.
    pub bins: TileBins,
    /// Occlusion method.
    pub method: RayMethod,
    /// Height added to a target texel's ground, height units.
    pub target_height: i32,
    /// Distance-field downscale.
    pub df_scale: u32,
    /// Soft-shadow sharpness, Q8 (0 = hard shadows).
    pub soft_shadow_k_q8: u32,
    /// Step jitter amplitude, mask scale.
    pub df_jitter: u16,
    /// Blur kernel.
    pub blur: BlurKernel,
    /// Memory decay this recompute, mask units.
    pub forget_step: u32,
    /// Stop accumulating memory.
    pub freeze_memory: bool,
    /// Fade-in this recompute, mask units.
    pub fade_in_step: u32,
    /// Relax this recompute, mask units.
    pub relax_step: u32,
    /// Explored value, mask scale.
    pub explored_value: u16,
    /// Mapped value, mask scale (`<= explored_value`).
    pub mapped_value: u16,
    /// Memory contribution, mask scale.
    pub show_memory_alpha: u16,
    /// Covered texels take the strongest reveal of their uncovered
    /// 8-neighbours (before anti-vision).
    pub reveal_walls: bool,
    /// Visibility and blur of the last recompute still hold (nothing they
    /// read changed, occlusion included): the backend keeps both and runs
    /// memory, compose and upscale only. Core sets it; the bytes are the
    /// same as recomputing.
    pub reuse_visibility: bool,
}

impl RecomputeInput {
    /// The rule its visibility pass judges rays by.
    pub fn ray_rule(&self) -> RayRule {
        RayRule {
            method: self.method,
            target_height: self.target_height,
            df_scale: self.df_scale,
            soft_shadow_k_q8: self.soft_shadow_k_q8,
            df_jitter: self.df_jitter,
        }
    }

    /// Whether visibility and blur read the same inputs here as in `other`
    /// (over the same occlusion): sources, bins and every setting of the two
    /// passes. The per-recompute steps of the later passes do not count.
    ///
    /// The fields are listed by an exhaustive pattern: a field added to
    /// this struct does not compile here until it is put on one side or the
    /// other, so a new visibility setting cannot be left out and reuse
    /// stale visibility.
    pub fn same_visibility_inputs(&self, other: &RecomputeInput) -> bool {
        let RecomputeInput {
            sources,
            bins,
            method,
            target_height,
            df_scale,
            soft_shadow_k_q8,
            df_jitter,
            blur,
            reveal_walls,
            // Read by memory, compose and upscale only.
            forget_step: _,
            freeze_memory: _,
            fade_in_step: _,
            relax_step: _,
            explored_value: _,
            mapped_value: _,
            show_memory_alpha: _,
            reuse_visibility: _,
        } = self;
        *sources == other.sources
            && *bins == other.bins
            && *method == other.method
            && *target_height == other.target_height
            && *df_scale == other.df_scale
            && *soft_shadow_k_q8 == other.soft_shadow_k_q8
            && *df_jitter == other.df_jitter
            && *blur == other.blur
            && *reveal_walls == other.reveal_walls
    }
}

/// How many ticks after it was asked for core uses a value that lives on
/// the device: a recompute's "changed" flag and the stealth samples of a
/// tick. Every backend follows it, including those that know the value at
/// once, so all give the same bytes, events and hashes on the same tick; a
/// GPU has this many ticks to finish before anyone waits for it.
pub const READBACK_LATENCY_TICKS: u64 = 2;

/// What a recompute reports back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecomputeReport {
    /// Memory or composed changed (the transition has not settled), now or
    /// through a ticket for [`crate::Backend::poll_changed`].
    pub changed: Readback<bool>,
}

impl OcclusionInput {
    /// A hash of everything the occlusion textures depend on: instances whose
    /// inputs hash alike share one build.
    pub fn content_hash(&self) -> u64 {
        let mut h = Fnv64::default();
        for v in [self.width, self.height, u32::from(self.build_mips), self.distance_field_scale] {
            h.write(&v.to_le_bytes());
        }
        for c in &self.circles {
            for v in [c.x, c.y, c.radius, c.height] {
                h.write(&v.to_le_bytes());
            }
        }
        for p in &self.polygons {
            for v in [p.first, p.count, p.height as u32] {
                h.write(&v.to_le_bytes());
            }
        }
        for v in &self.vertices {
            h.write(&v[0].to_le_bytes());
            h.write(&v[1].to_le_bytes());
        }
        match &self.capture {
            Some(c) => {
                h.write(&[1]);
                for v in c {
                    h.write(&v.to_le_bytes());
                }
            }
            None => h.write(&[0]),
        }
        h.finish()
    }
}

/// Per-instance parameters of every GPU pass (one uniform block; WGSL twin:
/// `FrameParams` in `backend-gpu/shaders/common.wgsl`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct FrameParams {
    /// Internal grid width.
    pub width: u32,
    /// Internal grid height.
    pub height: u32,
    /// Output width.
    pub out_width: u32,
    /// Output height.
    pub out_height: u32,
    /// Tile side of the bins.
    pub tile_size: u32,
    /// Tiles along X.
    pub tiles_x: u32,
    /// Ray method code ([`RayMethod::code`]).
    pub method: u32,
    /// Target height, height units.
    pub target_height: i32,
    /// Distance-field width.
    pub df_width: u32,
    /// Distance-field height.
    pub df_height: u32,
    /// Distance-field downscale.
    pub df_scale: u32,
    /// Soft-shadow sharpness, Q8 (0 = hard).
    pub soft_shadow_k_q8: u32,
    /// Distance-field jitter, mask scale.
    pub df_jitter: u32,
    /// Mip levels above level 0.
    pub mip_levels: u32,
    /// Blur kernel radius.
    pub blur_radius: u32,
    /// Memory decay this recompute.
    pub forget_step: u32,
    /// Fade-in this recompute.
    pub fade_in_step: u32,
    /// Relax this recompute.
    pub relax_step: u32,
    /// Explored value, mask scale.
    pub explored_value: u32,
    /// Memory contribution, mask scale.
    pub show_memory_alpha: u32,
    /// 1 when memory is frozen.
    pub freeze_memory: u32,
    /// Blend factor, Q16.
    pub blend_t: u32,
    /// 1 when a capture is bound.
    pub has_capture: u32,
    /// Output texels per internal texel along each axis (`1 << lod`).
    pub lod_scale: u32,
    /// 1 when covered texels take the reveal of their uncovered neighbours.
    pub reveal_walls: u32,
    /// Mapped value, mask scale.
    pub mapped_value: u32,
}

/// What engine materials need to sample an instance's final mask in world
/// space: whether it shows fog, the area's centre, size and yaw, the cutoff
/// from which actors count as visible, and whether materials respect the
/// slab's height edges. Presentation data: floats are fine here. WGSL twin:
/// `MurkFogParams` in `backend-gpu/include/murk_fog.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct ShaderParams {
    /// Area centre, world XYZ.
    pub center: [f32; 3],
    /// 1.0 when the instance updates and shows fog, else 0.0.
    pub enabled: f32,
    /// Full area size, world XYZ, as the texture covers it (Y is a whole
    /// number of texels); Z is the visual slab, not widened by the Z-layering
    /// area scale.
    pub size: [f32; 3],
    /// Yaw in degrees.
    pub yaw_degrees: f32,
    /// Mask value (0..1) from which actors count as visible.
    pub visibility_cutoff: f32,
    /// 1.0 when materials should respect the slab's height edges (Z layering).
    pub use_z_layering: f32,
    /// Explored value (0..1), for three-state looks.
    pub explored_value: f32,
    /// Mapped value (0..1, at most the explored value), for the fourth
    /// state: known from a map, never seen.
    pub mapped_value: f32,
}

/// The scripted reveals of one instance at its internal resolution, as core
/// hands them to a backend ([`crate::Backend::set_reveals`]): three planes
/// of mask values, row by row. `sight` shows as visible while it lasts,
/// `kept` is the part of it that explored memory takes in (at most
/// `sight`), `map` raises the mapped texture.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RevealLayer {
    /// Scripted sight, mask scale.
    pub sight: Vec<u16>,
    /// Sight that memory remembers, mask scale.
    pub kept: Vec<u16>,
    /// Mapped knowledge to add, mask scale.
    pub map: Vec<u16>,
}

/// Sources per tile, in source order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TileBins {
    /// Tile side in texels.
    pub tile_size: u32,
    /// Tiles along X.
    pub tiles_x: u32,
    /// Tiles along Y.
    pub tiles_y: u32,
    /// `tiles_x * tiles_y + 1` offsets into `indices`.
    pub offsets: Vec<u32>,
    /// Source indices.
    pub indices: Vec<u32>,
}

impl TileBins {
    /// The sources of the tile holding texel `(x, y)`.
    pub fn sources_at(&self, x: u32, y: u32) -> &[u32] {
        let t = (y / self.tile_size * self.tiles_x + x / self.tile_size) as usize;
        &self.indices[self.offsets[t] as usize..self.offsets[t + 1] as usize]
    }
}

/// A rollback state's hold on a value in flight
/// ([`crate::Backend::hold_readback`]): what it holds is the backend's
/// own; the value is kept while a clone lives.
#[derive(Clone)]
pub struct ReadbackHold(pub std::sync::Arc<dyn std::any::Any + Send + Sync>);

impl std::fmt::Debug for ReadbackHold {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ReadbackHold")
    }
}

/// A value a backend has now or will have later.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Readback<T> {
    /// Known at once (backends computing on the calling thread).
    Ready(T),
    /// In flight: poll the backend with this ticket.
    Ticket(u64),
}

impl<T> Readback<T> {
    /// Its ticket, while in flight.
    pub fn ticket(&self) -> Option<u64> {
        match self {
            Readback::Ready(_) => None,
            Readback::Ticket(t) => Some(*t),
        }
    }
}
