//! The CPU backend's own behaviour: its thread count changes no hash, and
//! core's parallel work and whole ticks run on its pool (the typed-error contract runs per
//! backend in the conformance harness: `robustness::unknown_keys_and_tickets_are_typed_errors`).

use murk_core::scenario::{Scenario, ScenarioFiles, ScenarioRunner, TickRecord};
use murk_core::Backend;
use murk_cpu::CpuBackend;
use std::path::PathBuf;

fn run(threads: usize) -> Vec<TickRecord> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios/infiltration.json");
    let s = Scenario::load(&path).unwrap();
    let files = ScenarioFiles::load(&s, path.parent().unwrap()).unwrap();
    let mut r = ScenarioRunner::new(s, &files, Box::new(CpuBackend::new(threads).unwrap())).unwrap();
    let mut out = Vec::new();
    while !r.finished() {
        out.push(r.step().unwrap());
    }
    out
}

#[test]
fn lockstep_hashes_agree_across_thread_counts() {
    let a = run(1);
    assert_eq!(a, run(4));
    assert!(a.windows(2).any(|w| w[0].lockstep != w[1].lockstep), "the hash follows the state");
}

#[test]
fn core_parallel_work_runs_on_the_backend_pool() {
    // The capture resample runs inside `run_parallel`: on the backend's
    // threads, whose count then holds for the whole tick.
    let cpu = CpuBackend::new(1).unwrap();
    let mut name = None;
    cpu.run_parallel(&mut || name = std::thread::current().name().map(str::to_owned));
    assert_eq!(name.as_deref(), Some("murk-cpu-0"));
}

#[test]
fn a_tick_runs_on_the_backend_pool() {
    // `FogSubsystem::tick` runs its whole tick through the runner: the
    // backend calls inside it start their parallel loops from a worker.
    for threads in [1, 2] {
        let cpu = CpuBackend::new(threads).unwrap();
        let runner = cpu.tick_runner().expect("a pooled backend has a runner");
        let mut name = None;
        runner.run(&mut || name = std::thread::current().name().map(str::to_owned));
        assert!(name.as_deref().is_some_and(|n| n.starts_with("murk-cpu-")), "{threads} threads: ran on {name:?}");
    }
}

/// Footprints come back one value each; a texel outside the grid or ends
/// that do not cover the texels are named.
#[test]
fn footprints_are_one_value_each_and_bad_ones_are_named() {
    use murk_core::{FootprintList, FootprintRequest, InstanceDims};
    use std::sync::Arc;
    let mut b = CpuBackend::new(2).unwrap();
    b.create_instance(1, InstanceDims { width: 32, height: 32, out_width: 32, out_height: 32 }).unwrap();
    let request = |texels: Vec<[u32; 2]>, ends: Vec<u32>| FootprintRequest {
        key: 1,
        cutoff: 1,
        footprints: Arc::new(FootprintList { texels, ends, ..Default::default() }),
    };
    let good = request(vec![[0, 0], [1, 0], [5, 5], [31, 31]], vec![2, 3, 4]);
    let ticket = b.submit_footprints(std::slice::from_ref(&good)).unwrap();
    // A blank mask: nothing reaches the cutoff 1.
    assert_eq!(b.poll_samples(ticket, false).unwrap(), Some(vec![0, 0, 0]));
    // A list that says what it kept of another: one entry per footprint,
    // an index past that list taken as no match (never read).
    let kept = |same: Vec<u32>| {
        let list = FootprintList { texels: vec![[0, 0], [1, 0], [5, 5]], ends: vec![2, 3], id: FootprintList::new_id(), kept: None };
        let kept = Some(murk_core::KeptFootprints { from: good.footprints.id.max(1), same });
        FootprintRequest { key: 1, cutoff: 1, footprints: Arc::new(FootprintList { kept, ..list }) }
    };
    let ticket = b.submit_footprints(&[kept(vec![0, u32::MAX - 1])]).unwrap();
    assert_eq!(b.poll_samples(ticket, false).unwrap(), Some(vec![0, 0]));
    for (bad, needle) in [
        (request(vec![[0, 0], [32, 3]], vec![2]), "(32, 3)"),
        (request(vec![[0, 0], [1, 1]], vec![1]), "footprints.ends"),
        (request(vec![[0, 0], [1, 1]], vec![2, 1]), "footprints.ends"),
        (kept(vec![0]), "footprints.kept"),
    ] {
        let e = b.submit_footprints(&[good.clone(), bad]).unwrap_err().to_string();
        assert!(e.contains(needle), "`{e}` should name `{needle}`");
    }
}

/// A save takes a mask's changed tile anew only where no other mask holds
/// the same texels at that place: composed, upscaled and final masks equal
/// there share one allocation, a blurred tile equal to the composed one
/// too, and a blend start's tile shares the final one of the state saved
/// before when it holds its texels. Unequal tiles are never shared.
#[test]
fn a_save_shares_the_tiles_masks_hold_in_common() {
    use murk_core::{instance_textures, InstanceDims, Texture, TextureData, TextureImage, TextureSet, TILE};
    let dims = InstanceDims { width: 64, height: 64, out_width: 64, out_height: 64 };
    let mut cpu = CpuBackend::new(2).unwrap();
    cpu.create_instance(7, dims).unwrap();
    let entries = instance_textures(dims, None);
    let pattern =
        |seed: u16| TextureImage { width: 64, height: 64, data: TextureData::U16((0..64 * 64).map(|i| (i as u16).wrapping_mul(seed)).collect()) };
    // Blurred equals composed in tile 0 only.
    let mut blur = pattern(5);
    if let TextureData::U16(v) = &mut blur.data {
        for y in 0..TILE as usize {
            v[y * 64..y * 64 + TILE as usize]
                .copy_from_slice(&(y * 64..y * 64 + TILE as usize).map(|i| (i as u16).wrapping_mul(3)).collect::<Vec<_>>());
        }
    }
    let load = |cpu: &mut CpuBackend, last: TextureImage, blur: &TextureImage, start: TextureImage| {
        let textures = entries
            .iter()
            .map(|e| {
                let image = match e.texture {
                    Texture::Compose | Texture::Upscale | Texture::Final => last.clone(),
                    Texture::Blur => blur.clone(),
                    Texture::Visibility => pattern(11),
                    Texture::Memory | Texture::Mapped => pattern(17),
                    Texture::Start => start.clone(),
                    other => cpu.read_texture(7, other).unwrap(),
                };
                (e.texture, image)
            })
            .collect();
        cpu.write_textures(7, &TextureSet::new(dims, None, textures, "test").unwrap()).unwrap();
    };
    load(&mut cpu, pattern(3), &blur, pattern(13));
    let fresh: Vec<_> = entries.iter().map(|e| (e.texture, None)).collect();
    let first = cpu.save_tiles(7, &fresh).unwrap();
    let image = |saved: &[Option<murk_core::TiledImage>], t: Texture| saved[entries.iter().position(|e| e.texture == t).unwrap()].clone().unwrap();
    let (compose, blurred) = (image(&first, Texture::Compose), image(&first, Texture::Blur));
    for i in 0..4 {
        for twin in [Texture::Upscale, Texture::Final] {
            assert!(image(&first, twin).tiles[i].same(&compose.tiles[i]), "{} tile {i}", twin.name());
        }
        assert_eq!(blurred.tiles[i].same(&compose.tiles[i]), i == 0, "blurred tile {i}");
        for other in [Texture::Visibility, Texture::Start] {
            assert!(!image(&first, other).tiles[i].same(&compose.tiles[i]), "{} tile {i}", other.name());
        }
        let memory = image(&first, Texture::Memory);
        assert!(memory.tiles[i].same(&image(&first, Texture::Mapped).tiles[i]));
        assert!(!memory.tiles[i].same(&image(&first, Texture::Visibility).tiles[i]));
    }
    // Loaded again with the start equal to the final mask before: every
    // tile is new, and the start's are the last final's.
    load(&mut cpu, pattern(23), &pattern(29), pattern(3));
    let bases: Vec<_> = entries.iter().zip(&first).map(|(e, s)| (e.texture, s.as_ref())).collect();
    let second = cpu.save_tiles(7, &bases).unwrap();
    let (start, last_final) = (image(&second, Texture::Start), image(&first, Texture::Final));
    assert!(start.tiles.iter().zip(last_final.tiles.iter()).all(|(s, f)| s.same(f)));
    assert_eq!(start.to_image(), pattern(3));
}

/// The occlusion of a 70x40 instance with one pillar that casts a shadow
/// across the walkers' row.
/// A mask that holds another's tile at every place shares the other's
/// whole list of tiles, under its own versions: the upscaled mask at scale
/// 1 the composed one's, and the final mask, once a blend settled it, the
/// upscaled one's. A later save that changed some tiles shares the others
/// one by one, and still the whole list where the copy is whole.
#[test]
fn a_save_shares_a_whole_copy_as_one_list() {
    use murk_core::{instance_textures, InstanceDims, Texture, TiledImage};
    use std::sync::Arc;
    let dims = InstanceDims { width: 70, height: 40, out_width: 70, out_height: 40 };
    let mut cpu = CpuBackend::new(2).unwrap();
    cpu.create_instance(1, dims).unwrap();
    cpu.build_occlusion(1, &pillar()).unwrap();
    let textures: Vec<Texture> = instance_textures(dims, None).iter().map(|e| e.texture).collect();
    let mut bases: Vec<Option<TiledImage>> = vec![None; textures.len()];
    for (step, x) in [10, 14, 30].into_iter().enumerate() {
        let first = step == 0;
        cpu.recompute(1, &walker_at(x)).unwrap();
        cpu.blend(1, 1 << 16).unwrap();
        let asked: Vec<_> = textures.iter().zip(&bases).map(|(&t, b)| (t, b.as_ref())).collect();
        let saved = cpu.save_tiles(1, &asked).unwrap();
        let images: Vec<TiledImage> = saved.into_iter().zip(&bases).map(|(s, b)| s.or_else(|| b.clone()).unwrap()).collect();
        let image = |t: Texture| &images[textures.iter().position(|&e| e == t).unwrap()];
        let (compose, upscale, last) = (image(Texture::Compose), image(Texture::Upscale), image(Texture::Final));
        assert!(Arc::ptr_eq(&upscale.tiles, &compose.tiles), "walker at {x}: the upscaled mask shares the composed list");
        // (The first save reads the final mask's tiles the blend never
        // wrote, and shares them one by one with the upscaled mask's.)
        if first {
            assert!(last.tiles.iter().zip(upscale.tiles.iter()).all(|(f, u)| f.same(u)), "walker at {x}: each final tile is an upscaled one");
        } else {
            assert!(Arc::ptr_eq(&last.tiles, &upscale.tiles), "walker at {x}: the settled final mask shares the upscaled list");
        }
        assert!(!Arc::ptr_eq(&image(Texture::Blur).tiles, &compose.tiles), "walker at {x}: blurred is not composed");
        // (A texture of no texels has no type to compare.)
        for (&t, image) in textures.iter().zip(&images).filter(|(_, image)| !image.tiles.is_empty()) {
            assert_eq!(image.to_image(), cpu.read_texture(1, t).unwrap(), "walker at {x}: texture `{}`", t.name());
        }
        bases = images.into_iter().map(Some).collect();
    }
}

/// States saved tick after tick over a grid of 16x8 tiles, where a walker
/// changes a few tiles a tick and loads of earlier states come between:
/// each state shares the tiles no pass wrote since the state before, and
/// holds its textures' bytes when saved, and again when loaded back after
/// later states were saved over it.
#[test]
fn states_saved_over_states_hold_their_bytes() {
    use murk_core::{instance_textures, InstanceDims, OcclusionInput, Texture, TextureSet, TiledImage};
    use std::sync::Arc;
    let (w, h) = (512, 256);
    let dims = InstanceDims { width: w, height: h, out_width: w, out_height: h };
    let mut cpu = CpuBackend::new(2).unwrap();
    cpu.create_instance(1, dims).unwrap();
    let pillar = murk_core::CircleTexel { x: 120 * 8, y: 140 * 8, radius: 24, height: murk_core::fixed::HEIGHT_WALL };
    cpu.build_occlusion(1, &OcclusionInput { width: w, height: h, circles: vec![pillar], ..OcclusionInput::default() }).unwrap();
    let textures: Vec<Texture> = instance_textures(dims, None).iter().map(|e| e.texture).collect();
    let mut states: Vec<Vec<(Texture, Arc<TiledImage>)>> = Vec::new();
    let mut bases: Option<Vec<(Texture, Arc<TiledImage>)>> = None;
    for step in 0..40 {
        if step % 13 == 12 {
            // Back to an earlier state: the next saves share from it.
            let state = states[step / 2].clone();
            cpu.write_textures(1, &TextureSet::tiled(dims, None, state.clone(), "state").unwrap()).unwrap();
            bases = Some(state);
        } else {
            cpu.recompute(1, &walker_on(100 + step as i32, 130, w, h)).unwrap();
            cpu.blend(1, if step % 3 == 0 { 1 << 16 } else { 20_000 }).unwrap();
        }
        let base = |t: Texture| bases.as_ref().and_then(|b| b.iter().find(|(bt, _)| *bt == t)).map(|(_, i)| &**i);
        let state = save_state(&mut cpu, &textures, bases.as_deref());
        let visibility = &state.iter().find(|(t, _)| *t == Texture::Visibility).unwrap().1;
        if let Some(before) = base(Texture::Visibility).filter(|_| step % 13 != 12) {
            // A walker's step rewrites a few of the 128 tiles: the rest are
            // the state before's.
            let shared = visibility.tiles.iter().zip(before.tiles.iter()).filter(|(a, b)| a.same(b)).count();
            assert!((100..128).contains(&shared), "step {step}: {shared} of 128 visibility tiles shared");
        }
        for (t, image) in state.iter().filter(|(_, image)| !image.tiles.is_empty()) {
            assert_eq!(image.to_image(), cpu.read_texture(1, *t).unwrap(), "step {step}: texture `{}`", t.name());
        }
        bases = Some(state.clone());
        states.push(state);
    }
    for (k, state) in states.iter().enumerate() {
        cpu.write_textures(1, &TextureSet::tiled(dims, None, state.clone(), "state").unwrap()).unwrap();
        for (t, image) in state.iter().filter(|(_, image)| !image.tiles.is_empty()) {
            assert_eq!(cpu.read_texture(1, *t).unwrap(), image.to_image(), "state {k} loaded: texture `{}`", t.name());
        }
    }
}

/// A rollback state of instance 1 as the subsystem keeps one: `textures`
/// saved in tiles over `bases` (the state saved or loaded before), a
/// texture the backend gave no tiles for taken whole from its base.
fn save_state(
    cpu: &mut CpuBackend,
    textures: &[murk_core::Texture],
    bases: Option<&[(murk_core::Texture, std::sync::Arc<murk_core::TiledImage>)]>,
) -> Vec<(murk_core::Texture, std::sync::Arc<murk_core::TiledImage>)> {
    let base = |t| bases.and_then(|b| b.iter().find(|(bt, _)| *bt == t)).map(|(_, i)| &**i);
    let asked: Vec<_> = textures.iter().map(|&t| (t, base(t))).collect();
    let saved = cpu.save_tiles(1, &asked).unwrap();
    asked
        .iter()
        .zip(saved)
        .map(|(&(t, base), image)| (t, std::sync::Arc::new(image.unwrap_or_else(|| base.expect("a texture without tiles has a base").clone()))))
        .collect()
}

fn pillar() -> murk_core::OcclusionInput {
    let pillar = murk_core::CircleTexel { x: 24 * 8, y: 22 * 8, radius: 16, height: murk_core::fixed::HEIGHT_WALL };
    murk_core::OcclusionInput { width: 70, height: 40, circles: vec![pillar], ..murk_core::OcclusionInput::default() }
}

/// A recompute of a 70x40 instance with one source of radius 12 walking
/// along row 20, at column `x`, and a slow fade.
fn walker_at(x: i32) -> murk_core::RecomputeInput {
    walker_on(x, 20, 70, 40)
}

/// A recompute of a `width x height` instance with one source of radius 12
/// at texel `(x, y)`, and a slow fade.
fn walker_on(x: i32, y: i32, width: u32, height: u32) -> murk_core::RecomputeInput {
    use murk_core::{bin_sources, BlurKernel, RayMethod, RecomputeInput, SourceTexel};
    let source = SourceTexel { x: x * 8 + 4, y: y * 8 + 4, radius: 12 * 8, strength: 65535, ..SourceTexel::default() };
    RecomputeInput {
        sources: vec![source],
        bins: bin_sources(&[source], width, height, 16),
        method: RayMethod::Dda,
        target_height: 0,
        df_scale: 0,
        soft_shadow_k_q8: 0,
        df_jitter: 0,
        blur: BlurKernel::default(),
        forget_step: 300,
        freeze_memory: false,
        fade_in_step: 9000,
        relax_step: 4000,
        explored_value: 20000,
        mapped_value: 0,
        show_memory_alpha: 65535,
        reveal_walls: true,
        reuse_visibility: false,
    }
}

/// A recompute makes the final mask the start of the next blend. Whether
/// the start is read between the recompute and the blend (the copy is then
/// made at once) or not (the blend makes it as it goes), it is the final
/// mask the recompute found, and the blend gives the same bytes: the lerp
/// of that start toward the upscaled mask.
#[test]
fn the_blend_start_is_the_final_mask_a_recompute_found() {
    use murk_core::{InstanceDims, Texture};
    use murk_cpu::passes::blend::blend;
    let dims = InstanceDims { width: 70, height: 40, out_width: 70, out_height: 40 };
    let u16s = |cpu: &mut CpuBackend, t: Texture| match cpu.read_texture(1, t).unwrap().data {
        murk_core::TextureData::U16(v) => v,
        other => panic!("{} is {other:?}", t.name()),
    };
    let mut finals = Vec::new();
    for read_between in [false, true] {
        let mut cpu = CpuBackend::new(2).unwrap();
        cpu.create_instance(1, dims).unwrap();
        cpu.build_occlusion(1, &pillar()).unwrap();
        let mut run = Vec::new();
        // The source walks; blends stop halfway, so each recompute finds a
        // final mask between its start and its target.
        for (step, x) in [10, 14, 30, 31, 50, 20].into_iter().enumerate() {
            let found = u16s(&mut cpu, Texture::Final);
            cpu.recompute(1, &walker_at(x)).unwrap();
            if read_between && step % 2 == 1 {
                assert_eq!(u16s(&mut cpu, Texture::Start), found, "step {step}: the start read before the blend");
            }
            for t in [20000, 45000] {
                cpu.blend(1, t).unwrap();
                let mut want = vec![0u16; found.len()];
                blend(&found, &u16s(&mut cpu, Texture::Upscale), t, &mut want);
                assert_eq!(u16s(&mut cpu, Texture::Final), want, "step {step}, t {t}: the final mask");
            }
            assert_eq!(u16s(&mut cpu, Texture::Start), found, "step {step}: the start after the blend");
            run.push(u16s(&mut cpu, Texture::Final));
        }
        assert!(run.windows(2).all(|w| w[0] != w[1]), "every step moves the final mask");
        finals.push(run);
    }
    assert_eq!(finals[0], finals[1]);
}

/// One step of [`saved_tiles_hold_their_textures_bytes`].
#[derive(Clone, Debug)]
enum Step {
    /// A recompute with the source at column `x`, the blend start read
    /// before the blend or not, then blends at each fraction of `ts`.
    Tick { x: i32, read_between: bool, ts: Vec<u32> },
    /// Blends with no recompute before them.
    Blend(u32),
    /// Loads a state saved before (the `k`-th of those saved, wrapping).
    Load(usize),
}

use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]
    /// What a save shares is what the textures hold: after recomputes of a
    /// walking source, blends that stop short of their target, settle it or
    /// run with nothing recomputed, a start read before the blend, and
    /// loads of earlier states, every tile of every texture saved (shared
    /// from the state before, from another mask the backend knows the
    /// texture copies, or taken anew) holds the texture's bytes, on 1 and 3
    /// threads, at output scale 1 and 2.
    #[test]
    fn saved_tiles_hold_their_textures_bytes(
        steps in proptest::collection::vec(
            prop_oneof![
                4 => (0i32..60, any::<bool>(), proptest::collection::vec(prop_oneof![Just(65536u32), 1u32..65536], 1..3))
                    .prop_map(|(x, read_between, ts)| Step::Tick { x, read_between, ts }),
                1 => prop_oneof![Just(65536u32), 1u32..65536].prop_map(Step::Blend),
                1 => (0usize..8).prop_map(Step::Load),
            ],
            1..12,
        ),
        threads in prop_oneof![Just(1usize), Just(3)],
        scale in 1u32..3,
    ) {
        use murk_core::{instance_textures, InstanceDims, Texture, TextureSet, TiledImage};
        use std::sync::Arc;
        let dims = InstanceDims { width: 70, height: 40, out_width: 70 * scale, out_height: 40 * scale };
        let mut cpu = CpuBackend::new(threads).unwrap();
        cpu.create_instance(1, dims).unwrap();
        cpu.build_occlusion(1, &pillar()).unwrap();
        let textures: Vec<Texture> = instance_textures(dims, None).iter().map(|e| e.texture).collect();
        let mut states: Vec<Vec<(Texture, Arc<TiledImage>)>> = Vec::new();
        // The images the next save shares from: the last state saved or loaded.
        let mut bases: Option<Vec<(Texture, Arc<TiledImage>)>> = None;
        for (n, step) in steps.iter().enumerate() {
            match step {
                Step::Tick { x, read_between, ts } => {
                    cpu.recompute(1, &walker_at(*x)).unwrap();
                    if *read_between {
                        cpu.read_texture(1, Texture::Start).unwrap();
                    }
                    for &t in ts {
                        cpu.blend(1, t).unwrap();
                    }
                }
                Step::Blend(t) => cpu.blend(1, *t).unwrap(),
                Step::Load(k) => {
                    if let Some(state) = states.get(k % states.len().max(1)) {
                        cpu.write_textures(1, &TextureSet::tiled(dims, None, state.clone(), "state").unwrap()).unwrap();
                        bases = Some(state.clone());
                    }
                }
            }
            let state = save_state(&mut cpu, &textures, bases.as_deref());
            // (A texture of no texels has no type to compare.)
            for (t, image) in state.iter().filter(|(_, image)| !image.tiles.is_empty()) {
                let want = cpu.read_texture(1, *t).unwrap();
                prop_assert!(image.to_image() == want, "step {} ({:?}): texture `{}` saved other bytes", n, step, t.name());
            }
            bases = Some(state.clone());
            states.push(state);
        }
    }
}
