//! Materials that sample the mask images through murk's WGSL include
//! (`murk_fog.wgsl`, registered as the WESL module `murk::fog`, so Bevy
//! shaders `import murk::fog::{...}`): a 2D
//! overlay drawn over the play area, and a `StandardMaterial` extension for
//! terrain under fog, both with the three-state look (clear, explored haze,
//! unexplored dark).

use crate::mask::FogImages;
use bevy::asset::uuid_handle;
use bevy::pbr::{ExtendedMaterial, MaterialExtension, MaterialPlugin, StandardMaterial};
use bevy::prelude::*;
use bevy::render::render_resource::{AsBindGroup, ShaderType};
use bevy::render::RenderApp;
use bevy::shader::ShaderRef;
use bevy::sprite_render::{AlphaMode2d, Material2d, Material2dPlugin};
use murk_core::ShaderParams;

/// The include, as the shader module `murk::fog`.
const INCLUDE: Handle<Shader> = uuid_handle!("3c6f0d52-4b8e-4f0a-9d7e-8a1e2f6b5c01");
const OVERLAY: Handle<Shader> = uuid_handle!("3c6f0d52-4b8e-4f0a-9d7e-8a1e2f6b5c02");
const TERRAIN: Handle<Shader> = uuid_handle!("3c6f0d52-4b8e-4f0a-9d7e-8a1e2f6b5c03");
/// The look's uniform, as the shader module `murk::look`.
const LOOK: Handle<Shader> = uuid_handle!("3c6f0d52-4b8e-4f0a-9d7e-8a1e2f6b5c04");

/// `murk_core::ShaderParams` as a uniform (the include's `MurkFogParams`).
#[derive(ShaderType, Clone, Copy, Debug, Default, PartialEq)]
pub struct FogParamsUniform {
    /// Area centre (murk's world).
    pub center: Vec3,
    /// 1 when the instance shows fog.
    pub enabled: f32,
    /// Area size as the texture covers it.
    pub size: Vec3,
    /// Area yaw in degrees.
    pub yaw_degrees: f32,
    /// Mask value from which actors count as visible.
    pub visibility_cutoff: f32,
    /// 1 when materials respect the slab's height edges.
    pub use_z_layering: f32,
    /// Explored value, for the three-state look.
    pub explored_value: f32,
    /// Mapped value, for the fourth state (known from a map, never seen).
    pub mapped_value: f32,
}

impl From<ShaderParams> for FogParamsUniform {
    fn from(p: ShaderParams) -> Self {
        Self {
            center: Vec3::from_array(p.center),
            enabled: p.enabled,
            size: Vec3::from_array(p.size),
            yaw_degrees: p.yaw_degrees,
            visibility_cutoff: p.visibility_cutoff,
            use_z_layering: p.use_z_layering,
            explored_value: p.explored_value,
            mapped_value: p.mapped_value,
        }
    }
}

/// The look: fog colour, and its opacity over explored ground (`haze`),
/// over mapped ground (known from a map, never seen: `mapped`) and where
/// nothing was ever seen or mapped (`dark`).
#[derive(ShaderType, Clone, Copy, Debug, PartialEq)]
pub struct FogLook {
    /// Fog colour (linear RGB); alpha scales the opacity.
    pub color: Vec4,
    /// Opacity over explored ground.
    pub haze: f32,
    /// Opacity over mapped ground.
    pub mapped: f32,
    /// Opacity where nothing was ever seen.
    pub dark: f32,
}

impl Default for FogLook {
    fn default() -> Self {
        Self { color: Vec4::new(0.02, 0.02, 0.04, 1.0), haze: 0.6, mapped: 0.8, dark: 1.0 }
    }
}

/// The 2D overlay: put it on a mesh covering the play area (murk's ground
/// is Bevy's X/Y plane), above the scene, e.g. a `Rectangle` of the area's
/// size at its centre. Its parameters and image follow the instance.
#[derive(Asset, TypePath, AsBindGroup, Clone, Debug)]
pub struct FogOverlayMaterial {
    /// The instance's parameters (kept up to date by the plugin).
    #[uniform(0)]
    pub params: FogParamsUniform,
    /// The instance's mask image (kept up to date by the plugin).
    #[texture(1)]
    #[sampler(2)]
    pub mask: Handle<Image>,
    /// The look.
    #[uniform(3)]
    pub look: FogLook,
    /// The instance it shows.
    pub instance: String,
}

impl FogOverlayMaterial {
    /// An overlay of `instance` with the default look.
    pub fn new(instance: impl Into<String>) -> Self {
        Self { params: FogParamsUniform::default(), mask: Handle::default(), look: FogLook::default(), instance: instance.into() }
    }
}

impl Material2d for FogOverlayMaterial {
    fn fragment_shader() -> ShaderRef {
        ShaderRef::Handle(OVERLAY)
    }

    fn alpha_mode(&self) -> AlphaMode2d {
        AlphaMode2d::Blend
    }
}

/// Terrain under fog: extends a `StandardMaterial` (Y-up worlds, see
/// [`crate::FogAxes::YUp`]); the lit colour is mixed toward the fog colour
/// by the three-state opacity.
#[derive(Asset, TypePath, AsBindGroup, Clone, Debug)]
pub struct FogTerrainExtension {
    /// The instance's parameters (kept up to date by the plugin).
    #[uniform(100)]
    pub params: FogParamsUniform,
    /// The instance's mask image (kept up to date by the plugin).
    #[texture(101)]
    #[sampler(102)]
    pub mask: Handle<Image>,
    /// The look.
    #[uniform(103)]
    pub look: FogLook,
    /// The instance it shows.
    pub instance: String,
}

impl FogTerrainExtension {
    /// Terrain fog of `instance` with the default look.
    pub fn new(instance: impl Into<String>) -> Self {
        Self { params: FogParamsUniform::default(), mask: Handle::default(), look: FogLook::default(), instance: instance.into() }
    }
}

impl MaterialExtension for FogTerrainExtension {
    fn fragment_shader() -> ShaderRef {
        ShaderRef::Handle(TERRAIN)
    }
}

/// A `StandardMaterial` under fog.
pub type FogTerrainMaterial = ExtendedMaterial<StandardMaterial, FogTerrainExtension>;

/// Keeps each material's parameters and image those of its instance
/// (touching a material only when they differ, so bind groups are rebuilt
/// only then).
fn follow_instances(
    fog: Res<FogImages>,
    mut overlays: Option<ResMut<Assets<FogOverlayMaterial>>>,
    mut terrains: Option<ResMut<Assets<FogTerrainMaterial>>>,
) {
    let wanted = |instance: &str| -> Option<(FogParamsUniform, Handle<Image>)> {
        Some((FogParamsUniform::from(*fog.params.get(instance)?), fog.images.get(instance)?.clone()))
    };
    if let Some(overlays) = overlays.as_mut() {
        let stale: Vec<_> =
            overlays.iter().filter_map(|(id, m)| wanted(&m.instance).filter(|(p, h)| *p != m.params || *h != m.mask).map(|w| (id, w))).collect();
        for (id, (params, mask)) in stale {
            if let Some(mut m) = overlays.get_mut(id) {
                m.params = params;
                m.mask = mask;
            }
        }
    }
    if let Some(terrains) = terrains.as_mut() {
        let stale: Vec<_> = terrains
            .iter()
            .filter_map(|(id, m)| wanted(&m.extension.instance).filter(|(p, h)| *p != m.extension.params || *h != m.extension.mask).map(|w| (id, w)))
            .collect();
        for (id, (params, mask)) in stale {
            if let Some(mut m) = terrains.get_mut(id) {
                m.extension.params = params;
                m.extension.mask = mask;
            }
        }
    }
}

pub(crate) fn build(app: &mut App) {
    if app.get_sub_app(RenderApp).is_none() || !app.world().contains_resource::<Assets<Shader>>() {
        return;
    }
    let mut shaders = app.world_mut().resource_mut::<Assets<Shader>>();
    // Bevy composes shaders as WESL: a module's import path comes from its
    // `embedded://` path (`murk/fog.wesl` is `murk::fog`). The include is
    // plain WGSL, which is WESL without imports.
    let _ = shaders.insert(&INCLUDE, Shader::from_wesl(murk_gpu::FOG_INCLUDE, "embedded://murk/fog.wesl"));
    let _ = shaders.insert(&LOOK, Shader::from_wesl(include_str!("shaders/fog_look.wesl"), "embedded://murk/look.wesl"));
    let _ = shaders.insert(&OVERLAY, Shader::from_wesl(include_str!("shaders/fog_overlay.wesl"), "embedded://murk_bevy/fog_overlay.wesl"));
    let _ = shaders.insert(&TERRAIN, Shader::from_wesl(include_str!("shaders/fog_terrain.wesl"), "embedded://murk_bevy/fog_terrain.wesl"));
    if app.is_plugin_added::<bevy::sprite_render::SpriteRenderPlugin>() {
        app.add_plugins(Material2dPlugin::<FogOverlayMaterial>::default());
    }
    if app.is_plugin_added::<bevy::pbr::PbrPlugin>() {
        app.add_plugins(MaterialPlugin::<FogTerrainMaterial>::default());
    }
    app.add_systems(PostUpdate, follow_instances);
}
