#define_import_path murk::look

// The three-state look of murk's Bevy materials (`murk_bevy::FogLook`): fog
// colour, and its opacity over explored ground and where nothing was seen.
struct FogLook {
    color: vec4<f32>,
    haze: f32,
    dark: f32,
}
