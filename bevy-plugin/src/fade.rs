//! Stealth fades on screen: each checked [`FogStealth`] actor carries its
//! [`FogFade`], and the entities marked [`FogHideWhenUnseen`] take it into
//! the alpha of their sprite or built-in material.

use crate::components::{FogFade, FogGhost, FogGhostObserver, FogHideWhenUnseen, FogStealth, FogViewer};
use crate::error::FogError;
use crate::fog::MurkFog;
use crate::mirror::{publish_entities, FogMirror};
use crate::set::MurkSet;
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

/// The entities of [`FogHideWhenUnseen`] (never ghosts), with their actor
/// and visibility.
type Hidden<'w, 's> = Query<'w, 's, (Entity, &'static FogStealth, &'static mut Visibility), (With<FogHideWhenUnseen>, Without<FogGhost>)>;

/// What is drawn by the stealth states: actors that hide, and ghosts.
#[derive(bevy::ecs::system::SystemParam)]
struct Drawn<'w, 's> {
    hide: Hidden<'w, 's>,
    ghosts: Ghosts<'w, 's>,
}

/// Ghosts, with the observer they stand in for and their visibility.
type Ghosts<'w, 's> =
    Query<'w, 's, (Entity, Option<&'static FogGhostObserver>, Option<&'static mut Visibility>), (With<FogGhost>, Without<FogHideWhenUnseen>)>;

/// Writes every checked actor's fade after the tick; hides the entities
/// of [`FogHideWhenUnseen`] that are hidden and faded out, shows the
/// others. A per-observer actor follows the [`FogViewer`]'s state for it,
/// and ghosts of other observers than the viewer are hidden.
fn publish_fades(
    mut commands: Commands,
    mirror: Res<FogMirror>,
    mut fog: ResMut<MurkFog>,
    viewer: Res<FogViewer>,
    mut actors: Query<(Entity, &FogStealth, Option<&mut FogFade>)>,
    drawn: Drawn,
    mut errors: MessageWriter<FogError>,
) {
    let Drawn { mut hide, mut ghosts } = drawn;
    let Some(subsystem) = fog.subsystem() else { return };
    let viewer = viewer.0.as_deref();
    if let Some(v) = viewer.filter(|v| subsystem.instance(v).is_err()) {
        errors.write(FogError::UnknownViewer(v.to_string()));
        return;
    }
    // The state an actor is drawn by here: its own, or the viewer's for a
    // per-observer actor (none without a viewer).
    let state_of = |e: Entity, actor: &FogStealth| {
        let h = mirror.hecs_entity(e)?;
        match (actor.0.per_observer, viewer) {
            (false, _) => subsystem.stealth_state(h),
            (true, Some(v)) => subsystem.stealth_state_for(h, v),
            (true, None) => None,
        }
    };
    for (e, actor, fade) in &mut actors {
        let Some(state) = state_of(e, actor) else { continue };
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
    for (e, actor, mut vis) in &mut hide {
        let Some(state) = state_of(e, actor) else { continue };
        let shown = state.last_visible || state.fade > 0;
        vis.set_if_neq(if shown { Visibility::Inherited } else { Visibility::Hidden });
    }
    for (e, observer, vis) in &mut ghosts {
        let shown = match (viewer, observer) {
            (Some(v), Some(o)) => o.0 == v,
            _ => true,
        };
        let want = if shown { Visibility::Inherited } else { Visibility::Hidden };
        match vis {
            Some(mut vis) => {
                vis.set_if_neq(want);
            }
            None => {
                commands.entity(e).insert(want);
            }
        }
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

/// A built-in material whose alpha a fade scales.
trait FadeMaterial: Asset + Clone {
    /// The material's handle on an entity.
    type On: Component<Mutability = bevy::ecs::component::Mutable> + std::ops::DerefMut<Target = Handle<Self>>;
    /// Its alpha and its own blend mode, before it first faded.
    fn base(&self) -> FadeBase;
    /// Sets the alpha, blending while `partly` faded, else the own mode.
    fn set_faded(&mut self, alpha: f32, partly: bool, base: &FadeBase);
}

impl FadeMaterial for StandardMaterial {
    type On = MeshMaterial3d<StandardMaterial>;
    fn base(&self) -> FadeBase {
        FadeBase { alpha: self.base_color.alpha(), mode: FadeMode::Mesh3d(self.alpha_mode) }
    }
    fn set_faded(&mut self, alpha: f32, partly: bool, base: &FadeBase) {
        self.base_color.set_alpha(alpha);
        if let FadeMode::Mesh3d(own) = base.mode {
            self.alpha_mode = if partly { AlphaMode::Blend } else { own };
        }
    }
}

impl FadeMaterial for ColorMaterial {
    type On = MeshMaterial2d<ColorMaterial>;
    fn base(&self) -> FadeBase {
        FadeBase { alpha: self.color.alpha(), mode: FadeMode::Mesh2d(self.alpha_mode) }
    }
    fn set_faded(&mut self, alpha: f32, partly: bool, base: &FadeBase) {
        self.color.set_alpha(alpha);
        if let FadeMode::Mesh2d(own) = base.mode {
            self.alpha_mode = if partly { AlphaMode2d::Blend } else { own };
        }
    }
}

/// Fades the material `M` of each fading entity; the first time, the entity
/// is given its own copy, so that fading one unit fades no other.
fn fade_meshes<M: FadeMaterial>(mut commands: Commands, materials: Option<ResMut<Assets<M>>>, mut meshes: Query<FadingWith<M::On>, Fading>) {
    let Some(mut materials) = materials else { return };
    for (e, fade, mut handle, base) in &mut meshes {
        let base = match base {
            Some(b) => *b,
            None => {
                let Some(own) = materials.get(&**handle).cloned() else { continue };
                let b = own.base();
                **handle = materials.add(own);
                commands.entity(e).insert(b);
                b
            }
        };
        if let Some(mut m) = materials.get_mut(&**handle) {
            m.set_faded(faded(&base, *fade), fade.0 < 1.0, &base);
        }
    }
}

pub(crate) fn build(app: &mut App) {
    app.init_resource::<FogViewer>()
        .add_systems(FixedUpdate, publish_fades.in_set(MurkSet::Publish).after(publish_entities))
        .add_systems(PostUpdate, (fade_sprites, fade_meshes::<StandardMaterial>, fade_meshes::<ColorMaterial>));
}
