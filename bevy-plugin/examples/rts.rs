//! An RTS under fog, in a window: the player's scouts (blue) explore a
//! Dragon Age map, enemy patrols (red) show only while a scout sees them.
//! Press `B` to move murk between the GPU and the CPU while it runs (the
//! state moves over through a snapshot); the window title names the backend.
//!
//! `cargo run --release -p murk-bevy --example rts`

mod scene;

use bevy::prelude::*;
use murk_bevy::prelude::*;

fn main() {
    let map = scene::terrain();
    let instance = scene::instance(&map);
    let camera = scene::camera(&map);
    App::new()
        .add_plugins(DefaultPlugins.set(WindowPlugin {
            primary_window: Some(Window { title: "murk: rts".into(), resolution: (900, 900).into(), ..default() }),
            ..default()
        }))
        .insert_resource(Time::<Fixed>::from_hz(30.0))
        .add_plugins(MurkPlugin::new(BackendChoice::Auto).instance(instance))
        .insert_resource(scene::Terrain(map))
        .add_systems(
            Startup,
            (scene::spawn, move |mut commands: Commands| {
                commands.spawn(camera.clone());
            }),
        )
        .add_systems(FixedUpdate, scene::walk.before(MurkSet::Mirror))
        .add_systems(Update, (switch_backend, show_backend, report_errors))
        .run();
}

fn switch_backend(keys: Res<ButtonInput<KeyCode>>, fog: Res<MurkFog>, mut switch: MessageWriter<SwitchBackend>) {
    if keys.just_pressed(KeyCode::KeyB) {
        let to = if fog.gpu().is_some() { BackendChoice::Cpu } else { BackendChoice::Gpu };
        switch.write(SwitchBackend(to));
    }
}

fn show_backend(fog: Res<MurkFog>, mut windows: Query<&mut Window>) {
    let Some(name) = fog.backend_name() else { return };
    let title = format!("murk: rts on {name} (B switches)");
    for mut w in &mut windows {
        if w.title != title {
            w.title = title.clone();
        }
    }
}

fn report_errors(mut errors: MessageReader<FogError>) {
    for e in errors.read() {
        error!("murk: {e}");
    }
}
