//! Stealth fades on screen: each checked [`FogStealth`] actor carries its
//! [`FogFade`], and the entities marked [`FogHideWhenUnseen`] take it into
//! the alpha of their sprite or built-in material.

use crate::components::{FogFade, FogHideWhenUnseen, FogStealth};
use crate::fog::MurkFog;
use crate::mirror::{publish_entities, FogMirror};
use crate::MurkSet;
use bevy::prelude::*;
use bevy::sprite_render::{AlphaMode2d, ColorMaterial};

/// What an entity looked like before it first faded: the alpha (and blend
/// mode) its fades scale.
#[derive(Component, Clone, Copy, Debug)]
struct FadeBase {
    alpha: f32,
    /// The material's own alpha mode, back once the fade is complete.
    mode: FadeMode,
}

#[derive(Clone, Copy, Debug)]
enum FadeMode {
    /// Sprites always blend.
    Sprite,
    Mesh3d(AlphaMode),
    Mesh2d(AlphaMode2d),
}

/// Writes every checked actor's fade after the tick; hides the entities
/// of [`FogHideWhenUnseen`] that are hidden and faded out, shows the
/// others.
fn publish_fades(
    mut commands: Commands,
    mirror: Res<FogMirror>,
    mut fog: ResMut<MurkFog>,
    mut actors: Query<(Entity, Option<&mut FogFade>), With<FogStealth>>,
    mut hide: Query<(Entity, &mut Visibility), With<FogHideWhenUnseen>>,
) {
    let Some(subsystem) = fog.subsystem() else { return };
    for (e, fade) in &mut actors {
        let Some(state) = mirror.hecs_entity(e).and_then(|h| subsystem.stealth_state(h)) else { continue };
        let now = FogFade::from_murk(state.fade);
        match fade {
            Some(mut f) => {
                f.set_if_neq(now);
            }
            None => {
                commands.entity(e).insert(now);
            }
        }
    }
    for (e, mut vis) in &mut hide {
        let Some(state) = mirror.hecs_entity(e).and_then(|h| subsystem.stealth_state(h)) else { continue };
        let shown = state.last_visible || state.fade > 0;
        vis.set_if_neq(if shown { Visibility::Inherited } else { Visibility::Hidden });
    }
}

/// Entities of [`FogHideWhenUnseen`] whose fade changed.
type Fading = (With<FogHideWhenUnseen>, Changed<FogFade>);

/// A fading entity with its sprite or material `M`, and its alpha before
/// it first faded.
type FadingWith<'a, M> = (Entity, &'a FogFade, &'a mut M, Option<&'a FadeBase>);

/// The alpha of a fading entity: its own alpha scaled by the fade.
fn faded(base: &FadeBase, fade: FogFade) -> f32 {
    base.alpha * fade.0.clamp(0.0, 1.0)
}

fn fade_sprites(mut commands: Commands, mut sprites: Query<FadingWith<Sprite>, Fading>) {
    for (e, fade, mut sprite, base) in &mut sprites {
        let base = base.copied().unwrap_or_else(|| {
            let b = FadeBase { alpha: sprite.color.alpha(), mode: FadeMode::Sprite };
            commands.entity(e).insert(b);
            b
        });
        sprite.color.set_alpha(faded(&base, *fade));
    }
}

fn fade_meshes_3d(
    mut commands: Commands,
    materials: Option<ResMut<Assets<StandardMaterial>>>,
    mut meshes: Query<FadingWith<MeshMaterial3d<StandardMaterial>>, Fading>,
) {
    let Some(mut materials) = materials else { return };
    for (e, fade, mut handle, base) in &mut meshes {
        let base = match base {
            Some(b) => *b,
            None => {
                // Its own copy, so that fading one unit fades no other.
                let Some(own) = materials.get(&handle.0).cloned() else { continue };
                let b = FadeBase { alpha: own.base_color.alpha(), mode: FadeMode::Mesh3d(own.alpha_mode) };
                handle.0 = materials.add(own);
                commands.entity(e).insert(b);
                b
            }
        };
        let FadeMode::Mesh3d(mode) = base.mode else { continue };
        if let Some(mut m) = materials.get_mut(&handle.0) {
            m.base_color.set_alpha(faded(&base, *fade));
            m.alpha_mode = if fade.0 < 1.0 { AlphaMode::Blend } else { mode };
        }
    }
}

fn fade_meshes_2d(
    mut commands: Commands,
    materials: Option<ResMut<Assets<ColorMaterial>>>,
    mut meshes: Query<FadingWith<MeshMaterial2d<ColorMaterial>>, Fading>,
) {
    let Some(mut materials) = materials else { return };
    for (e, fade, mut handle, base) in &mut meshes {
        let base = match base {
            Some(b) => *b,
            None => {
                let Some(own) = materials.get(&handle.0).cloned() else { continue };
                let b = FadeBase { alpha: own.color.alpha(), mode: FadeMode::Mesh2d(own.alpha_mode) };
                handle.0 = materials.add(own);
                commands.entity(e).insert(b);
                b
            }
        };
        let FadeMode::Mesh2d(mode) = base.mode else { continue };
        if let Some(mut m) = materials.get_mut(&handle.0) {
            m.color.set_alpha(faded(&base, *fade));
            m.alpha_mode = if fade.0 < 1.0 { AlphaMode2d::Blend } else { mode };
        }
    }
}

pub(crate) fn build(app: &mut App) {
    app.add_systems(FixedUpdate, publish_fades.in_set(MurkSet::Publish).after(publish_entities))
        .add_systems(PostUpdate, (fade_sprites, fade_meshes_3d, fade_meshes_2d));
}
