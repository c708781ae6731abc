//! `murk render`: a camera view of a scenario with a premade fog look
//! (overlay, surface or volume) computed on the chosen backend, as PNG
//! frames and an animated GIF (and, for the surface, the last frame's mesh
//! as glTF).

use crate::scene::{camera_for, Frame, Terrain};
use murk_core::scenario::{Scenario, ScenarioFiles, ScenarioRunner};
use murk_core::{BackendChoice, ShaderParams, Texture, TextureData};
use murk_looks::mesh::{FogMesh, MeshSettings};
use murk_looks::{fog_uv, object_hidden, Look, MaskView, OverlayStyle, SurfaceParams, VolumeFrame, VolumeParams, VolumeScene};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What `murk render --look` draws: a premade look, computed on the chosen
/// backend, or the top view, drawn on the GPU from the mask texture (see
/// `top_view.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RenderLook {
    /// A premade look of `murk-looks`.
    Premade(Look),
    /// The fog from above, as a game's material samples it on the GPU.
    TopView,
}

impl RenderLook {
    /// Its name on the command line and in file names.
    pub fn name(self) -> &'static str {
        match self {
            RenderLook::Premade(look) => look.name(),
            RenderLook::TopView => "top-view",
        }
    }
}

impl clap::ValueEnum for RenderLook {
    fn value_variants<'a>() -> &'a [Self] {
        const ALL: [RenderLook; 4] =
            [RenderLook::Premade(Look::ALL[0]), RenderLook::Premade(Look::ALL[1]), RenderLook::Premade(Look::ALL[2]), RenderLook::TopView];
        &ALL
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(self.name()))
    }
}

/// Options of `murk render`.
pub struct RenderOptions {
    /// Scenario file.
    pub scenario: PathBuf,
    /// What is drawn.
    pub look: RenderLook,
    /// Output folder.
    pub out: PathBuf,
    /// A frame every this many ticks.
    pub every: u32,
    /// Backend of the simulation and the look.
    pub backend: BackendChoice,
    /// Image size.
    pub size: (u32, u32),
}

/// Per-instance state carried between frames.
#[derive(Default)]
struct Track {
    /// The terrain and the area it was sampled for (rebuilt when the area moves).
    terrain: Option<(ShaderParams, Terrain)>,
    gif: Vec<Vec<u8>>,
    history: Option<VolumeFrame>,
    frame: u32,
    last_tick: u32,
}

/// Runs the scenario and writes `<instance>.<look>.<tick>.png` frames,
/// `<instance>.<look>.gif`, and for the surface `<instance>.surface.gltf`.
pub fn render(opts: &RenderOptions, look: Look) -> Result<Vec<PathBuf>, String> {
    let (w, h) = check_size(opts)?;
    let scenario = Scenario::load(&opts.scenario).map_err(|e| e.to_string())?;
    let base = crate::scenario_base(&opts.scenario);
    let files = ScenarioFiles::load(&scenario, base).map_err(|e| e.to_string())?;
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let murk_cli::Renderer { backend, looks: mut renderer, line } = murk_cli::select_renderer(opts.backend, threads).map_err(|e| e.to_string())?;
    println!("{line}");
    let mut runner = ScenarioRunner::new(scenario, &files, backend).map_err(|e| e.to_string())?;
    std::fs::create_dir_all(&opts.out).map_err(|e| format!("cannot create {}: {e}", opts.out.display()))?;
    let map = files.map.as_ref().zip(runner.scenario().map.clone());
    let tick_s = runner.scenario().tick_us as f32 / 1.0e6;
    let mut written = Vec::new();
    let mut tracks: BTreeMap<String, Track> = BTreeMap::new();
    let mut last_mesh: BTreeMap<String, String> = BTreeMap::new();
    run_frames(&mut runner, opts.every, |runner, tick| {
        for name in runner.fog().instance_names() {
            let area = runner.fog().shader_params(&name).map_err(|e| e.to_string())?;
            let img = runner.fog().read_texture(&name, Texture::Final).map_err(|e| e.to_string())?;
            let TextureData::U16(texels) = &img.data else { return Err("the final mask is u16".into()) };
            let mask = MaskView { width: img.width, height: img.height, texels, explored: area.explored_value, mapped: area.mapped_value };
            let camera = camera_for(&area, w, h);
            let mut frame = Frame::new(camera);
            let track = tracks.entry(name.clone()).or_default();
            if track.terrain.as_ref().is_none_or(|(sampled, _)| *sampled != area) {
                track.terrain = Some((area, Terrain::new(&area, map.as_ref().map(|(m, s)| (*m, s)), 256)));
            }
            let terrain = &track.terrain.as_ref().expect("sampled just above").1;
            let time = tick as f32 * tick_s;
            let light = VolumeParams::ground_fog(1.0).light_dir;
            let span = area.size[0].max(area.size[1]);
            let tree = map.as_ref().map_or(0.04 * span, |(_, s)| s.tree_height);
            match look {
                Look::Overlay => {
                    frame.draw_terrain(terrain, light, |_, _, h| h);
                    let fog = renderer.overlay(&mask, None, time, &OverlayStyle::default()).map_err(|e| e.to_string())?;
                    let distances = frame.ray_distances();
                    for y in 0..h {
                        for x in 0..w {
                            let Some(p) = frame.world_at(x, y, &distances) else { continue };
                            let uv = fog_uv(p, &area);
                            if !(0.0..1.0).contains(&uv[0]) || !(0.0..1.0).contains(&uv[1]) {
                                continue;
                            }
                            let (fx, fy) = ((uv[0] * fog.width as f32) as u32, (uv[1] * fog.height as f32) as u32);
                            let px = &fog.pixels[((fy * fog.width + fx) * 4) as usize..][..4];
                            let a = f32::from(px[3]) / 255.0;
                            let c = &mut frame.colour[(y * w + x) as usize];
                            for k in 0..3 {
                                c[k] += (f32::from(px[k]) - c[k]) * a;
                            }
                        }
                    }
                }
                Look::Surface => {
                    let fog_level = 1.25 * tree;
                    // Tall objects under never-seen fog are hidden: drawn no
                    // taller than the sheet.
                    frame.draw_terrain(terrain, light, |x, y, hgt| {
                        if hgt > fog_level && object_hidden(&mask, &area, [x, y, hgt]) {
                            0.8 * fog_level
                        } else {
                            hgt
                        }
                    });
                    let cells = (span / terrain.step).ceil() as u32 + 1;
                    let (cols, rows) = (cells.clamp(2, 257), cells.clamp(2, 257));
                    let mut params = SurfaceParams::over([area.center[0], area.center[1]], [span, span], cols, rows, fog_level);
                    params.time_s = time;
                    let ground: Vec<f32> = (0..rows)
                        .flat_map(|j| (0..cols).map(move |i| (i, j)))
                        .map(|(i, j)| {
                            let [x, y] = params.vertex_xy(i, j);
                            terrain.height_at(x, y)
                        })
                        .collect();
                    let grid = renderer.surface(&mask, &area, &ground, &params).map_err(|e| e.to_string())?;
                    let settings = MeshSettings { lod_distance: 0.9 * span, light_dir: light, ..MeshSettings::default() };
                    let mesh = FogMesh::build(&grid, &params, &ground, &settings, Some(&camera));
                    frame.draw_transparent(&mesh.draw_list());
                    last_mesh.insert(name.clone(), mesh.to_gltf());
                }
                Look::Volume => {
                    frame.draw_terrain(terrain, light, |_, _, h| h);
                    let distances = frame.ray_distances();
                    let mut params = VolumeParams { time_s: time, frame: track.frame, ..VolumeParams::ground_fog(0.5 * tree) };
                    // The history is the last frame drawn, `elapsed` ticks ago:
                    // the blend of one tick applied that many times.
                    let elapsed = tick - track.last_tick;
                    params.temporal_blend = 1.0 - (1.0 - params.temporal_blend).powi(elapsed.min(1000) as i32);
                    let scene = VolumeScene { camera: &camera, depth: &distances, history: track.history.as_ref() };
                    let (half, full) = renderer.volume(&mask, &area, &scene, &params).map_err(|e| e.to_string())?;
                    for (c, f) in frame.colour.iter_mut().zip(&full.texels) {
                        for k in 0..3 {
                            c[k] = c[k] * f[3] + f[k] * 255.0;
                        }
                    }
                    track.history = Some(half);
                    track.frame += 1;
                    track.last_tick = tick;
                }
            }
            let rgb = frame.to_rgb8();
            let path = opts.out.join(format!("{name}.{look}.{tick:04}.png"));
            crate::picture::write_rgb8(&path, w, h, &rgb)?;
            written.push(path);
            track.gif.push(rgb);
        }
        Ok(())
    })?;
    for (name, track) in &tracks {
        let path = opts.out.join(format!("{name}.{look}.gif"));
        write_gif(&path, w, h, &track.gif)?;
        written.push(path);
    }
    for (name, doc) in &last_mesh {
        let path = opts.out.join(format!("{name}.surface.gltf"));
        std::fs::write(&path, doc).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        written.push(path);
    }
    Ok(written)
}

/// Steps the runner to its end, calling `frame` after every `every`-th tick
/// and after the last one.
/// The picture size, within 16..=4096 on each side.
pub(crate) fn check_size(opts: &RenderOptions) -> Result<(u32, u32), String> {
    let (w, h) = opts.size;
    if !(16..=4096).contains(&w) || !(16..=4096).contains(&h) {
        return Err(format!("invalid --size = {w}x{h}: each side must be within 16..=4096"));
    }
    Ok((w, h))
}

pub(crate) fn run_frames(
    runner: &mut ScenarioRunner,
    every: u32,
    mut frame: impl FnMut(&mut ScenarioRunner, u32) -> Result<(), String>,
) -> Result<(), String> {
    let ticks = runner.scenario().ticks;
    while !runner.finished() {
        let tick = runner.ticks_done();
        runner.step().map_err(|e| format!("tick {tick}: {e}"))?;
        if tick.is_multiple_of(every) || tick + 1 == ticks {
            frame(runner, tick)?;
        }
    }
    Ok(())
}

/// Writes RGB8 frames as a looping GIF, a tenth of a second each.
pub(crate) fn write_gif(path: &Path, w: u32, h: u32, frames: &[Vec<u8>]) -> Result<(), String> {
    let err = |e: gif::EncodingError| format!("cannot write {}: {e}", path.display());
    let file = std::fs::File::create(path).map_err(|e| format!("cannot create {}: {e}", path.display()))?;
    let mut enc = gif::Encoder::new(std::io::BufWriter::new(file), w as u16, h as u16, &[]).map_err(err)?;
    enc.set_repeat(gif::Repeat::Infinite).map_err(err)?;
    for rgb in frames {
        let mut frame = gif::Frame::from_rgb_speed(w as u16, h as u16, rgb, 10);
        frame.delay = 10;
        enc.write_frame(&frame).map_err(err)?;
    }
    Ok(())
}
