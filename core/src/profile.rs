//! Per-instance settings: the profile an instance runs, changeable at run
//! time (`FogSubsystem::apply_profile`).
//!
//! A [`Profile`] is a data asset: it loads from RON, JSON or TOML, every
//! field has a default, and a file may name only the fields it changes.
//! [`Profile::quantize`] validates it and turns it into the integers the
//! passes use ([`ProfileQ`]).

use crate::components::VisionSource;
use crate::error::{in_range, read_document, MurkError, Result};
use crate::fixed::unit_to_mask;
use glam::Vec3;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// How the visibility pass decides whether a texel is occluded.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RayMethod {
    /// No occlusion: every texel in range is visible.
    None,
    /// One texel per step along the major axis (8-connected; leaks through
    /// diagonal gaps, cheapest).
    StepScan,
    /// Every texel the ray passes through (supercover); a ray through a
    /// corner is blocked only when both texels beside it block.
    #[default]
    Dda,
    /// [`RayMethod::Dda`] that skips empty blocks of the coverage mip chain;
    /// the result equals DDA exactly.
    HierarchicalDda,
    /// Sphere tracing over the distance field, height-confirmed on contact,
    /// with optional soft shadows.
    DistanceField,
}

impl RayMethod {
    /// The method's code in [`crate::frame::FrameParams::method`].
    pub fn code(self) -> u32 {
        match self {
            RayMethod::None => 0,
            RayMethod::StepScan => 1,
            RayMethod::Dda => 2,
            RayMethod::HierarchicalDda => 3,
            RayMethod::DistanceField => 4,
        }
    }
    /// Whether the method reads the coverage mip chain.
    pub fn needs_mips(self) -> bool {
        self == RayMethod::HierarchicalDda
    }
    /// Whether the method reads the distance field.
    pub fn needs_distance_field(self) -> bool {
        self == RayMethod::DistanceField
    }
}

/// Settings of one fog instance. Rates are per second, fractions are `0..=1`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Profile {
    /// Updates and presentation of the instance.
    pub enabled: bool,
    /// Presentation flag for materials (exported in the shader parameters).
    pub show_fog: bool,
    /// Stop recomputing; the per-tick blend still runs.
    pub freeze_state: bool,
    /// Whether explored memory shows in the composed mask.
    pub show_memory: bool,
    /// Stop accumulating new exploration.
    pub freeze_memory: bool,
    /// Brightness of explored, unseen areas (`0..=1`).
    pub explored_value: f32,
    /// Brightness of mapped areas (known from a map, never seen) as a share
    /// of [`Self::explored_value`] (`0..=1`), so the mapped state always
    /// lies between unexplored and explored.
    pub mapped_fraction: f32,
    /// Default edge softness for sources that do not set their own (`0..=1`).
    pub smooth_falloff: f32,
    /// Blur passes (each is X then Y).
    pub blur_iterations: u32,
    /// Blur radius in internal texels (0 = no blur).
    pub blur_radius: u32,
    /// Blur Gaussian sigma in internal texels.
    pub blur_sigma: f32,
    /// Mask value (`0..=1`) from which an actor counts as visible.
    pub visibility_cutoff: f32,
    /// Seconds between recomputes (0 = every tick); the blend runs every tick.
    pub update_rate: f32,
    /// Occlusion method.
    pub ray_method: RayMethod,
    /// Distance-field downscale (1, 2 or 4) relative to the internal resolution.
    pub df_scale: u32,
    /// Soft shadows on the distance-field method.
    pub soft_shadows: bool,
    /// Soft-shadow sharpness (larger is harder), `1..=64`.
    pub soft_shadow_k: f32,
    /// Step jitter of the distance-field march (`0..=0.5`), from a hash, never a random generator.
    pub df_jitter: f32,
    /// Tile size of the source binning, in internal texels (8..=256).
    pub tile_size: u32,
    /// How fast newly seen texels rise toward visible (full range per second).
    pub fade_in_rate: f32,
    /// How fast unseen texels fall back toward the explored baseline.
    pub relax_rate: f32,
    /// How fast explored memory decays where unseen (0 = never forgets).
    pub forget_rate: f32,
    /// How much explored memory contributes to the composed mask (`0..=1`).
    pub show_memory_alpha: f32,
    /// Height above the ground at which targets are tested (world units).
    pub target_height: f32,
    /// Z layering: respect the area's height slab.
    pub z_layering: bool,
    /// Scale of the logical slab used for participation (not the visual one), `>= 1`.
    pub z_layering_area_scale: f32,
    /// Walls and other covered texels beside revealed open ground show as
    /// revealed: each covered texel takes the strongest reveal of its
    /// uncovered 8-neighbours (see `docs/determinism.md`).
    pub reveal_walls: bool,
    /// When the area changes (`set_area`, `expand_area_to_include`), resample
    /// explored memory and the fade state into the new area in world space
    /// instead of keeping them in texel space (same size) or starting over
    /// (new size). On by default; off keeps the older texel-space rule.
    pub resample_on_area_change: bool,
    /// Added to every vision source's own eye offset in this instance
    /// (world units, X/Y/Z; X and Y turn with a source's cone as the
    /// source's own offset does): an instance whose eyes all sit higher or
    /// further ahead. Within ±1e6 on each axis. Anti-vision areas are not
    /// eyes and do not move.
    pub eye_offset: Vec3,
    /// Every vision source of this instance sees through occlusion, as if
    /// each had `see_through` set (a radar's or a spectator's view).
    /// Anti-vision areas are unchanged.
    pub see_through: bool,
    /// Every vision source's eye stands on the terrain under it: the
    /// instance's captured height at the source's texel, plus its eye
    /// height and Z offsets, instead of its position's Z plus them (a unit
    /// on a cliff sees over the walls below; a game whose units stay at
    /// Z 0 over a height map gets high ground). Where the instance has no
    /// height capture, or the source stands outside its grid, where no
    /// capture cell lies or on a wall's texel, the position's Z counts as
    /// without it.
    pub eyes_on_terrain: bool,
    /// The sensor layer the instance senses: 0 is sight; another layer
    /// (radar, sonar, air sight: the game names them) takes only the
    /// vision sources and anti-vision areas (jammers) of that layer, so an
    /// instance of it gives that layer's masks. A layer other than sight
    /// judges tracked entities like any instance, and what it sees that
    /// the sight instances of its teams do not are its blips
    /// (`FogSubsystem::blips`).
    pub layer: u8,
    /// How far a blip may stand from its entity, world units (`0..=1e6`):
    /// each blip is moved by an error drawn from a hash of the entity, the
    /// instance and the tick, the same on every machine.
    pub blip_error: f32,
    /// The domains of tracked entities the instance's sight set takes, a
    /// bit set (`Tracked::domains`; every domain by default): a ground
    /// radar sets only the ground bit and sees no aircraft.
    pub domains: u32,
    /// Every vision source and anti-vision area stands at the centre of
    /// the texel under it: coverage moves a whole texel at a time, and a
    /// source that moves over the ground within its texel changes nothing,
    /// so the instance is not recomputed for it (a coarse radar or sonar
    /// grid, whose sensors a game places by cell). A detector's range is
    /// measured from there too. Eyes on terrain read the same texel either
    /// way.
    pub snap_sources: bool,
}

impl Default for Profile {
    fn default() -> Self {
        Self {
            enabled: true,
            show_fog: true,
            freeze_state: false,
            show_memory: true,
            freeze_memory: false,
            explored_value: 0.5,
            mapped_fraction: 0.5,
            smooth_falloff: 0.2,
            blur_iterations: 1,
            blur_radius: 1,
            blur_sigma: 1.0,
            visibility_cutoff: 0.75,
            update_rate: 0.0,
            ray_method: RayMethod::Dda,
            df_scale: 1,
            soft_shadows: false,
            soft_shadow_k: 8.0,
            df_jitter: 0.0,
            tile_size: 32,
            fade_in_rate: 8.0,
            relax_rate: 2.0,
            forget_rate: 0.0,
            show_memory_alpha: 1.0,
            target_height: 0.0,
            z_layering: false,
            z_layering_area_scale: 1.0,
            reveal_walls: true,
            resample_on_area_change: true,
            eye_offset: Vec3::ZERO,
            see_through: false,
            eyes_on_terrain: false,
            layer: 0,
            blip_error: 0.0,
            domains: u32::MAX,
            snap_sources: false,
        }
    }
}

/// A profile in integers, as the passes use it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ProfileQ {
    /// See [`Profile::explored_value`], mask scale.
    pub explored_value: u16,
    /// The mapped value ([`Profile::mapped_fraction`] of the explored
    /// value), mask scale.
    pub mapped_value: u16,
    /// See [`Profile::visibility_cutoff`], mask scale.
    pub visibility_cutoff: u16,
    /// See [`Profile::show_memory_alpha`] (0 when memory is hidden), mask scale.
    pub show_memory_alpha: u16,
    /// See [`Profile::smooth_falloff`], mask scale.
    pub smooth_falloff: u16,
    /// Recompute interval in microseconds.
    pub update_interval_us: u64,
    /// Fade-in in mask units per second.
    pub fade_in_per_s: u32,
    /// Relax in mask units per second.
    pub relax_per_s: u32,
    /// Forget in mask units per second.
    pub forget_per_s: u32,
    /// Soft shadow sharpness, Q8.
    pub soft_shadow_k_q8: u32,
    /// Jitter amplitude, mask scale.
    pub df_jitter: u16,
}

impl Profile {
    /// Validates every field (errors name the field as `{prefix}.field`) and
    /// converts it to integers.
    pub fn quantize(&self, prefix: &str) -> Result<ProfileQ> {
        let f = |name: &str| format!("{prefix}.{name}");
        let explored = in_range(&f("explored_value"), self.explored_value, 0.0, 1.0)?;
        let mapped = in_range(&f("mapped_fraction"), self.mapped_fraction, 0.0, 1.0)?;
        let cutoff = in_range(&f("visibility_cutoff"), self.visibility_cutoff, 0.0, 1.0)?;
        let alpha = in_range(&f("show_memory_alpha"), self.show_memory_alpha, 0.0, 1.0)?;
        let falloff = in_range(&f("smooth_falloff"), self.smooth_falloff, 0.0, 1.0)?;
        let update = in_range(&f("update_rate"), self.update_rate, 0.0, 3600.0)?;
        let rate = |name: &str, v: f32| -> Result<u32> {
            let x = in_range(&f(name), v, 0.0, 1.0e4)?;
            Ok((x * 65535.0).round() as u32)
        };
        let fade_in = rate("fade_in_rate", self.fade_in_rate)?;
        let relax = rate("relax_rate", self.relax_rate)?;
        let forget = rate("forget_rate", self.forget_rate)?;
        in_range(&f("blur_sigma"), self.blur_sigma, 0.05, 64.0)?;
        if self.blur_radius > 32 {
            return Err(MurkError::invalid(f("blur_radius"), self.blur_radius, "must be within 0..=32"));
        }
        if self.blur_iterations > 16 {
            return Err(MurkError::invalid(f("blur_iterations"), self.blur_iterations, "must be within 0..=16"));
        }
        if ![1, 2, 4].contains(&self.df_scale) {
            return Err(MurkError::invalid(f("df_scale"), self.df_scale, "must be 1, 2 or 4"));
        }
        if !(8..=256).contains(&self.tile_size) {
            return Err(MurkError::invalid(f("tile_size"), self.tile_size, "must be within 8..=256"));
        }
        let k = in_range(&f("soft_shadow_k"), self.soft_shadow_k, 1.0, 64.0)?;
        let jitter = in_range(&f("df_jitter"), self.df_jitter, 0.0, 0.5)?;
        in_range(&f("target_height"), self.target_height, -1.0e6, 1.0e6)?;
        in_range(&f("z_layering_area_scale"), self.z_layering_area_scale, 1.0, 1.0e3)?;
        in_range(&f("blip_error"), self.blip_error, 0.0, 1.0e6)?;
        for (axis, v) in ["x", "y", "z"].into_iter().zip(self.eye_offset.to_array()) {
            in_range(&f(&format!("eye_offset.{axis}")), v, -1.0e6, 1.0e6)?;
        }
        Ok(ProfileQ {
            explored_value: unit_to_mask(explored),
            mapped_value: crate::fixed::mask_mul(unit_to_mask(explored), unit_to_mask(mapped)),
            visibility_cutoff: unit_to_mask(cutoff),
            show_memory_alpha: if self.show_memory { unit_to_mask(alpha) } else { 0 },
            smooth_falloff: unit_to_mask(falloff),
            update_interval_us: (update * 1.0e6).round() as u64,
            fade_in_per_s: fade_in,
            relax_per_s: relax,
            forget_per_s: forget,
            soft_shadow_k_q8: (k * 256.0).round() as u32,
            df_jitter: unit_to_mask(jitter),
        })
    }

    /// A vision source as this instance sees it: [`Self::eye_offset`] added
    /// to its own and [`Self::see_through`] joined to its flag.
    pub fn source_in_instance(&self, s: &VisionSource) -> VisionSource {
        VisionSource { eye_offset: s.eye_offset + self.eye_offset, see_through: s.see_through || self.see_through, ..*s }
    }

    /// Parses a profile; `format` is `json`, `ron` or `toml`.
    pub fn parse(text: &str, format: &str, what: &str) -> Result<Profile> {
        let parse_err = |message: String| MurkError::Parse { what: what.to_string(), message };
        let p: Profile = match format {
            "json" => serde_json::from_str(text).map_err(|e| parse_err(e.to_string()))?,
            "ron" => ron::from_str(text).map_err(|e| parse_err(e.to_string()))?,
            "toml" => toml::from_str(text).map_err(|e| parse_err(e.to_string()))?,
            other => return Err(MurkError::invalid(format!("{what} format"), other, "must be json, ron or toml")),
        };
        p.quantize(what)?;
        Ok(p)
    }

    /// Loads a profile file, choosing the format by extension.
    pub fn load(path: &Path) -> Result<Profile> {
        let (text, ext, what) = read_document(path)?;
        Self::parse(&text, &ext, &what)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_three_formats_load_the_same_profile() {
        let json = r#"{"explored_value": 0.4, "ray_method": "distance_field", "blur_radius": 3, "z_layering": true}"#;
        let ron = "(explored_value: 0.4, ray_method: distance_field, blur_radius: 3, z_layering: true)";
        let toml = "explored_value = 0.4\nray_method = \"distance_field\"\nblur_radius = 3\nz_layering = true\n";
        let a = Profile::parse(json, "json", "p.json").unwrap();
        let b = Profile::parse(ron, "ron", "p.ron").unwrap();
        let c = Profile::parse(toml, "toml", "p.toml").unwrap();
        assert_eq!(a, b);
        assert_eq!(b, c);
        assert_eq!(a.ray_method, RayMethod::DistanceField);
        assert_eq!(a.fade_in_rate, Profile::default().fade_in_rate);
    }

    #[test]
    fn malformed_and_out_of_range_profiles_name_the_field() {
        let e = Profile::parse(r#"{"explored_value": 1.5}"#, "json", "p.json").unwrap_err();
        assert!(e.to_string().contains("p.json.explored_value = 1.5"), "{e}");
        let e = Profile::parse(r#"{"blur_radiuss": 1}"#, "json", "p.json").unwrap_err();
        assert!(e.to_string().contains("blur_radiuss"), "{e}");
        let e = Profile::parse("tile_size = 3", "toml", "p.toml").unwrap_err();
        assert!(e.to_string().contains("tile_size = 3"), "{e}");
        let e = Profile::parse("(df_scale: 3)", "ron", "p.ron").unwrap_err();
        assert!(e.to_string().contains("df_scale = 3"), "{e}");
        assert!(Profile::parse("{", "json", "p").is_err());
    }
}
