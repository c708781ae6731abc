//! The textures of an instance, named and typed in one table.
//!
//! Each texture is a variant of [`Texture`] and a row of [`TEXTURES`]:
//! its name, the type of its texels, the resolution it is laid at and the
//! pass that writes it. Everything that lists or sizes textures reads the
//! table: names and parsing, texel types, sizes, which textures are masks
//! ([`crate::texture::Masks`]), the list an instance holds
//! ([`instance_textures`], which snapshots, restores and resamples follow),
//! and what pictures and the conformance goldens show ([`pass_outputs`]).
//!
//! Adding a texture is a variant, its row (in snapshot order) and the pass
//! that writes it; a backend keeps a new mask in its `Masks` without a new
//! field.
//!
//! ```text
//! resolution     size                                      textures
//! Internal       width x height                            coverage, height, visibility .. compose
//! Pyramid        level n: level n-1 halved, rounded up     mip1, mip2, .. down to 1x1
//! DistanceField  internal / scale, rounded up (0 if none)  distance_field
//! Output         out_width x out_height                    upscale, start, final
//! ```

use super::texel::TexelKind;
use crate::pass::Pass;
use serde::{Deserialize, Serialize};

/// Texture sizes of an instance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InstanceDims {
    /// Internal (LOD) width.
    pub width: u32,
    /// Internal (LOD) height.
    pub height: u32,
    /// Output width (the render target).
    pub out_width: u32,
    /// Output height.
    pub out_height: u32,
}

/// One texture of an instance: a row of [`TEXTURES`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Texture {
    /// 0/1 coverage, internal resolution.
    Coverage,
    /// Heights, internal resolution.
    Height,
    /// Level `n >= 1` of the coverage pyramid: each level half the one below, rounded up.
    Mip(u32),
    /// Squared distances to the nearest covered texel, at the distance-field scale.
    DistanceField,
    /// Raw visibility, internal resolution.
    Visibility,
    /// Blurred visibility, internal resolution.
    Blur,
    /// Explored memory, internal resolution.
    Memory,
    /// Mapped knowledge (known from a map, never seen), internal resolution.
    Mapped,
    /// The composed mask, internal resolution.
    Compose,
    /// The composed mask at the output resolution.
    Upscale,
    /// Where the running blend started, output resolution.
    Start,
    /// The final mask materials sample, output resolution.
    Final,
}

/// The grid a texture is laid on, which gives its size (see the module's
/// table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resolution {
    /// The instance's internal (LOD) grid.
    Internal,
    /// The output grid, the render target's.
    Output,
    /// The internal grid divided by the distance-field scale, rounded up;
    /// empty unless a distance field was built.
    DistanceField,
    /// The coverage pyramid: a texture per level, each half the one below.
    Pyramid,
}

/// A texture's row of [`TEXTURES`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TextureRow {
    /// The texture; the pyramid's row holds its first level and stands for
    /// every level.
    pub texture: Texture,
    /// Its stable name, in snapshots, file names and the conformance
    /// manifest. The pyramid's is `mips`, the whole pyramid as pictures
    /// show it; its levels are named `mip1`, `mip2`, ...
    pub name: &'static str,
    /// The type of its texels.
    pub kind: TexelKind,
    /// The grid it is laid on.
    pub resolution: Resolution,
    /// The pass that writes it; `None` for the blend start, which a
    /// recompute copies from the final mask.
    pub pass: Option<Pass>,
}

const fn row(texture: Texture, name: &'static str, kind: TexelKind, resolution: Resolution, pass: Option<Pass>) -> TextureRow {
    TextureRow { texture, name, kind, resolution, pass }
}

/// Every texture of an instance, in the order snapshots list them.
pub static TEXTURES: [TextureRow; 12] = {
    use Resolution::{DistanceField as Field, Internal, Output, Pyramid};
    use TexelKind::{I32, U16, U32, U8};
    [
        row(Texture::Coverage, "coverage", U8, Internal, Some(Pass::Rasterize)),
        row(Texture::Height, "height", I32, Internal, Some(Pass::Rasterize)),
        row(Texture::Mip(1), "mips", U8, Pyramid, Some(Pass::Mips)),
        row(Texture::DistanceField, "distance_field", U32, Field, Some(Pass::DistanceField)),
        row(Texture::Visibility, "visibility", U16, Internal, Some(Pass::Visibility)),
        row(Texture::Blur, "blur", U16, Internal, Some(Pass::Blur)),
        row(Texture::Memory, "memory", U16, Internal, Some(Pass::Memory)),
        row(Texture::Mapped, "mapped", U16, Internal, Some(Pass::Memory)),
        row(Texture::Compose, "compose", U16, Internal, Some(Pass::Compose)),
        row(Texture::Upscale, "upscale", U16, Output, Some(Pass::Upscale)),
        row(Texture::Start, "start", U16, Output, None),
        row(Texture::Final, "final", U16, Output, Some(Pass::Blend)),
    ]
};

/// The start of a pyramid level's name: `mip3` is level 3.
const LEVEL_PREFIX: &str = "mip";

/// The rows of the textures a pass writes, in table order: every texture
/// but the blend start. What `murk run --stages` draws, the conformance
/// goldens record and [`crate::FogSubsystem::read_row`] reads.
pub fn pass_outputs() -> impl Iterator<Item = &'static TextureRow> {
    TEXTURES.iter().filter(|row| row.pass.is_some())
}

impl Texture {
    /// Its row of [`TEXTURES`] (every pyramid level has the pyramid's).
    pub fn row(self) -> &'static TextureRow {
        let variant = std::mem::discriminant(&self);
        TEXTURES
            .iter()
            .find(|row| std::mem::discriminant(&row.texture) == variant)
            .unwrap_or_else(|| panic!("texture {self:?} has no row in TEXTURES: every variant of Texture needs one"))
    }

    /// Its stable name in snapshots (`coverage`, `mip3`, `final`, ...).
    pub fn name(self) -> String {
        match self {
            Texture::Mip(level) => format!("{LEVEL_PREFIX}{level}"),
            other => other.row().name.to_string(),
        }
    }

    /// The texture a snapshot name stands for, `None` for a name no texture
    /// has (`mips` names the pyramid as a picture, not a texture).
    pub fn parse(name: &str) -> Option<Self> {
        TEXTURES.iter().find_map(|row| match row.resolution {
            Resolution::Pyramid => {
                let level = name.strip_prefix(LEVEL_PREFIX)?;
                // Canonical digits only: `mip01` is not `mip1`.
                level.parse::<u32>().ok().filter(|l| *l >= 1 && l.to_string() == level).map(Texture::Mip)
            }
            _ => (row.name == name).then_some(row.texture),
        })
    }

    /// The type of its texels.
    pub fn kind(self) -> TexelKind {
        self.row().kind
    }

    /// The grid it is laid on.
    pub fn resolution(self) -> Resolution {
        self.row().resolution
    }

    /// Whether it belongs to the occlusion (rebuilt from the blockers by
    /// the passes up to the distance field), not to the masks.
    pub fn is_occlusion(self) -> bool {
        self.row().pass.is_some_and(Pass::builds_occlusion)
    }

    /// Whether it is a mask (every texture the occlusion passes do not
    /// write: 16-bit values, 65535 = 1.0).
    pub fn is_mask(self) -> bool {
        !self.is_occlusion()
    }

    /// Its width and height in an instance of `dims` after the occlusion
    /// build `build`; `None` for a pyramid level the build did not make.
    pub fn size(self, dims: InstanceDims, build: OcclusionBuild) -> Option<(u32, u32)> {
        let (w, h) = (dims.width, dims.height);
        match self.resolution() {
            Resolution::Internal => Some((w, h)),
            Resolution::Output => Some((dims.out_width, dims.out_height)),
            Resolution::DistanceField => Some(match build.distance_field_scale {
                0 => (0, 0),
                scale => (w.div_ceil(scale), h.div_ceil(scale)),
            }),
            Resolution::Pyramid => {
                let level = match self {
                    Texture::Mip(level) => level,
                    _ => 1,
                };
                let index = usize::try_from(level.checked_sub(1)?).ok()?;
                build.mips.then(|| mip_sizes(w, h).get(index).copied()).flatten()
            }
        }
    }
}

/// What an occlusion build made besides coverage and heights.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OcclusionBuild {
    /// The coverage pyramid (the hierarchical DDA reads it).
    pub mips: bool,
    /// The distance field's downscale: 0 (none), 1, 2 or 4.
    pub distance_field_scale: u32,
}

/// A texture of an instance and its size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TextureSpec {
    /// Which texture.
    pub texture: Texture,
    /// Width in texels.
    pub width: u32,
    /// Height in texels.
    pub height: u32,
}

/// The sizes of the coverage pyramid over a `width x height` grid: levels
/// 1.. in order, each half the one below rounded up, down to 1x1.
pub fn mip_sizes(width: u32, height: u32) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    let (mut w, mut h) = (width, height);
    while w > 1 || h > 1 {
        (w, h) = (w.div_ceil(2), h.div_ceil(2));
        out.push((w, h));
    }
    out
}

/// The textures an instance of `dims` holds after the occlusion build
/// `build` (`None`: nothing built yet), in table order: every row, the
/// pyramid as the levels the build made (none without mips).
pub fn instance_textures(dims: InstanceDims, build: Option<OcclusionBuild>) -> Vec<TextureSpec> {
    let build = build.unwrap_or_default();
    let sized = |texture: Texture| texture.size(dims, build).map(|(width, height)| TextureSpec { texture, width, height });
    let mut out = Vec::new();
    for row in &TEXTURES {
        match row.resolution {
            Resolution::Pyramid => out.extend((1..).map(Texture::Mip).map_while(sized)),
            _ => out.extend(sized(row.texture)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dims() -> InstanceDims {
        InstanceDims { width: 5, height: 3, out_width: 10, out_height: 6 }
    }

    /// Every row is found by its own texture and sits in the enum's order;
    /// names are unique; a mask holds 16-bit texels (what `Masks` of the
    /// backends hold).
    #[test]
    fn every_texture_has_one_row_in_the_enums_order() {
        for (i, row) in TEXTURES.iter().enumerate() {
            assert!(std::ptr::eq(row.texture.row(), row), "{:?} finds another row", row.texture);
            assert!(TEXTURES[..i].iter().all(|other| other.name != row.name && other.texture < row.texture), "{:?} is out of order", row.texture);
            if row.texture.is_mask() {
                assert_eq!(row.kind, TexelKind::U16, "{:?} is a mask", row.texture);
            }
        }
        assert_eq!(
            pass_outputs().map(|r| r.name).collect::<Vec<_>>().join(" "),
            "coverage height mips distance_field visibility blur memory mapped compose upscale final"
        );
    }

    #[test]
    fn names_round_trip_and_reject_what_no_texture_is_called() {
        for entry in instance_textures(dims(), Some(OcclusionBuild { mips: true, distance_field_scale: 2 })) {
            assert_eq!(Texture::parse(&entry.texture.name()), Some(entry.texture));
        }
        for bad in ["mip0", "mip01", "mip", "mips", "Final", ""] {
            assert_eq!(Texture::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_list_follows_the_build() {
        let names = |build| instance_textures(dims(), build).iter().map(|s| s.texture.name()).collect::<Vec<_>>().join(" ");
        assert_eq!(names(None), "coverage height distance_field visibility blur memory mapped compose upscale start final");
        assert_eq!(
            names(Some(OcclusionBuild { mips: true, distance_field_scale: 0 })),
            "coverage height mip1 mip2 mip3 distance_field visibility blur memory mapped compose upscale start final"
        );
        let specs = instance_textures(dims(), Some(OcclusionBuild { mips: false, distance_field_scale: 2 }));
        let df = specs.iter().find(|s| s.texture == Texture::DistanceField).unwrap();
        assert_eq!((df.width, df.height), (3, 2));
        assert_eq!(mip_sizes(5, 3), vec![(3, 2), (2, 1), (1, 1)]);
        let built = OcclusionBuild { mips: true, distance_field_scale: 0 };
        assert_eq!(Texture::Mip(3).size(dims(), built), Some((1, 1)));
        assert_eq!(Texture::Mip(4).size(dims(), built), None);
        assert_eq!(Texture::Mip(1).size(dims(), OcclusionBuild::default()), None);
        assert_eq!(Texture::Final.size(dims(), built), Some((10, 6)));
    }
}
