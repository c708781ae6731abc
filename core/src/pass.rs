//! The passes of the pipeline, named once: every backend implements each
//! one, in files of the pass's name, and the texture table names the pass
//! that writes each texture.

use crate::error::{MurkError, Result};

/// A pass of the pipeline, in order; both backends implement each one (the
/// CPU in `backend-cpu/src/passes/<name>.rs`, the GPU in
/// `backend-gpu/shaders/<name>.wgsl` set up by `backend-gpu/src/passes/<name>.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Pass {
    /// Blockers and captures into coverage and heights.
    Rasterize,
    /// The coverage max pyramid (Hierarchical DDA).
    Mips,
    /// Squared distances to cover (Distance Field).
    DistanceField,
    /// Every source's view, combined.
    Visibility,
    /// The Gaussian blur of visibility.
    Blur,
    /// Explored memory.
    Memory,
    /// The composed mask, fading toward its target.
    Compose,
    /// The composed mask at the output resolution.
    Upscale,
    /// The per-tick blend into the final mask.
    Blend,
}

impl Pass {
    /// Every pass, in pipeline order.
    pub const ALL: [Pass; 9] =
        [Pass::Rasterize, Pass::Mips, Pass::DistanceField, Pass::Visibility, Pass::Blur, Pass::Memory, Pass::Compose, Pass::Upscale, Pass::Blend];

    /// Whether it builds the occlusion (from the blockers and the height
    /// capture) rather than the masks.
    pub const fn builds_occlusion(self) -> bool {
        matches!(self, Pass::Rasterize | Pass::Mips | Pass::DistanceField)
    }

    /// The name of its files and bench rows (`distance_field`).
    pub fn name(self) -> &'static str {
        match self {
            Pass::Rasterize => "rasterize",
            Pass::Mips => "mips",
            Pass::DistanceField => "distance_field",
            Pass::Visibility => "visibility",
            Pass::Blur => "blur",
            Pass::Memory => "memory",
            Pass::Compose => "compose",
            Pass::Upscale => "upscale",
            Pass::Blend => "blend",
        }
    }
}

impl std::str::FromStr for Pass {
    type Err = MurkError;
    fn from_str(s: &str) -> Result<Self> {
        Pass::ALL.into_iter().find(|p| p.name() == s).ok_or_else(|| {
            let names: Vec<&str> = Pass::ALL.iter().map(|p| p.name()).collect();
            MurkError::invalid("pass", s, format!("must be one of {}", names.join(", ")))
        })
    }
}
