//! The visibility pass against its definitions: the march per texel, the
//! kept windows, the incremental changes and the row finish.
//!
//! (Over 600 lines as one concept: every test here holds the pass to the
//! same definition, the march per texel.)

use super::shadowcast::{octants_reading, RayBits, ALL_OCTANTS};
use super::source::source_value_with;
use super::window::{FalloffTable, Shadow, MIN_RECENT};
use super::*;
use murk_core::fixed::hash2;
use murk_core::fixed::HEIGHT_WALL;
use murk_core::BlurKernel;
use murk_core::Grid;
use murk_core::{RayMethod, SourceTexel, TexelRect};
use proptest::prelude::*;

/// A random grid: covered texels rise above `eye` (walls or lower tops),
/// except with `low` some covered texels sit at or below it; uncovered
/// ground has random heights so some targets rise above the eye.
/// With `palette`, covered tops take at most four values (so the
/// shortcut keeps a class per top and decides raised targets too).
fn grid(w: u32, h: u32, seed: i32, density: u32, eye: i32, low: bool, palette: bool) -> (Vec<u8>, Vec<i32>) {
    let (mut cov, mut heights) = (Vec::new(), Vec::new());
    let tops = [HEIGHT_WALL, eye + 1, eye + 1 + (seed.unsigned_abs() % 300) as i32, 2 * eye + 5];
    for i in 0..(w * h) as i32 {
        let r = hash2(i, seed);
        let covered = r % 100 < density;
        cov.push(u8::from(covered));
        heights.push(match (covered, r / 100 % 4) {
            (true, 1) if low => eye - (r / 400 % 50) as i32,
            (true, k) if palette => tops[k as usize],
            (true, 0) => HEIGHT_WALL,
            (true, _) => eye + 1 + (r / 400 % 300) as i32,
            (false, _) => (r / 400 % (2 * eye.max(1) as u32 + 40)) as i32,
        });
    }
    (cov, heights)
}

/// DDA inputs for `sources` over a `w x h` grid (bins of 16 texels), no
/// blur, the given target height and walls rule.
fn dda_input(sources: Vec<SourceTexel>, w: u32, h: u32, target_height: i32, reveal_walls: bool) -> RecomputeInput {
    RecomputeInput {
        bins: murk_core::bin_sources(&sources, w, h, 16),
        sources,
        method: RayMethod::Dda,
        target_height,
        df_scale: 1,
        soft_shadow_k_q8: 0,
        df_jitter: 0,
        blur: BlurKernel::gaussian(0, 1.0, 0),
        forget_step: 0,
        freeze_memory: false,
        fade_in_step: 0,
        relax_step: 0,
        explored_value: 32768,
        mapped_value: 0,
        show_memory_alpha: 65535,
        reveal_walls,
        reuse_visibility: false,
    }
}

/// Ground heights changed in place under kept windows, and covers came
/// and went (the cache told where, as a local occlusion update does):
/// the windows of the sources that stand, worked out again from their
/// old values, and those swept after the sources moved, which read the
/// heights as kept low bits, give the bytes of a cold pass over the
/// new occlusion.
#[test]
fn windows_after_a_local_change_equal_a_cold_pass() {
    let (w, h) = (72u32, 56u32);
    for seed in 0..4 {
        let (mut cov, mut heights) = grid(w, h, seed, 12, 12, false, true);
        let mut accel = Accel::new(&cov, &heights, w, h);
        let src = |x: i32, y: i32| SourceTexel { x: x * 8 + 3, y: y * 8 + 4, radius: 30 * 8, eye: 12, strength: 65535, ..Default::default() };
        let at = |dx: i32| vec![src(20 + dx, 20), src(50 - dx, 30), src(36, 12 + dx)];
        let mut cache = WindowCache::default();
        let mut out = vec![0u16; (w * h) as usize];
        {
            let occ =
                Occlusion { width: w, height: h, coverage: &cov, heights: &heights, mips: &[], distance_field: &Grid::default(), accel: &accel };
            visibility_cached(&dda_input(at(0), w, h, 2, true), &occ, &mut cache, &mut out);
        }
        // Open ground in the rectangle swaps sides of the eye.
        let rect = TexelRect { x0: 24, y0: 14, x1: 50, y1: 40 };
        for y in rect.y0..rect.y1 {
            for x in rect.x0..rect.x1 {
                let i = (y * w + x) as usize;
                if cov[i] == 0 {
                    heights[i] = if heights[i] + 2 <= 12 { 30 + (i as i32 % 7) } else { i as i32 % 9 };
                }
            }
        }
        // A building of walls goes up, trees fall.
        let site = TexelRect { x0: 30 + seed as u32, y0: 24, x1: 33 + seed as u32, y1: 27 };
        for y in site.y0..site.y1 {
            for x in site.x0..site.x1 {
                let i = (y * w + x) as usize;
                (cov[i], heights[i]) = if cov[i] == 0 { (1, HEIGHT_WALL) } else { (0, 3) };
            }
        }
        let same_classes = accel.update(&cov, &heights, w, h, &[rect, site]);
        cache.forget(&[rect, site], !same_classes);
        let occ = Occlusion { width: w, height: h, coverage: &cov, heights: &heights, mips: &[], distance_field: &Grid::default(), accel: &accel };
        for dx in 0..3 {
            let input = dda_input(at(dx), w, h, 2, true);
            visibility_cached(&input, &occ, &mut cache, &mut out);
            let mut cold = vec![0u16; out.len()];
            visibility(&input, &occ, &mut cold);
            assert_eq!(out, cold, "seed {seed}, step {dx}");
        }
    }
}

/// Sources that come back to where they stood a few updates ago (a unit
/// pacing, a rollback simulating ticks again) take the windows dropped
/// then instead of building them, and the grid is still a cold pass's;
/// after the occlusion changes, the windows dropped before are not reused.
#[test]
fn windows_dropped_lately_are_reused_to_the_same_bytes() {
    let (w, h) = (72u32, 56u32);
    let (mut cov, heights) = grid(w, h, 3, 12, 12, false, true);
    let mut accel = Accel::new(&cov, &heights, w, h);
    let src = |x: i32, y: i32| SourceTexel { x: x * 8 + 3, y: y * 8 + 4, radius: 30 * 8, eye: 12, strength: 65535, ..Default::default() };
    let at = |step: i32| vec![src(20 + step, 20), src(50 - step, 30), src(36, 12)];
    let (mut cache, mut out) = (WindowCache::default(), vec![0u16; (w * h) as usize]);
    let check = |cache: &mut WindowCache, out: &mut Vec<u16>, cov: &[u8], accel: &Accel, step: i32| {
        let occ = Occlusion { width: w, height: h, coverage: cov, heights: &heights, mips: &[], distance_field: &Grid::default(), accel };
        let input = dda_input(at(step), w, h, 2, true);
        let built = visibility_cached(&input, &occ, cache, out);
        let mut cold = vec![0u16; out.len()];
        visibility(&input, &occ, &mut cold);
        assert_eq!(*out, cold, "step {step}");
        built
    };
    assert_eq!(check(&mut cache, &mut out, &cov, &accel, 0), 3, "the first update builds every window");
    for step in 1..5 {
        assert_eq!(check(&mut cache, &mut out, &cov, &accel, step), 2, "two sources walk to step {step}");
    }
    // Back to where they stood: every window was dropped lately.
    for step in [2, 0, 3] {
        assert_eq!(check(&mut cache, &mut out, &cov, &accel, step), 0, "back at step {step}: nothing built");
    }
    // A wall where nothing reaches the third source: the windows dropped
    // before the change are gone, and those over it are built again.
    let i = (40 * w + 70) as usize;
    cov[i] = 1 - cov[i];
    let rect = TexelRect { x0: 70, y0: 40, x1: 71, y1: 41 };
    let same_classes = accel.update(&cov, &heights, w, h, &[rect]);
    cache.forget(&[rect], !same_classes);
    assert_eq!(check(&mut cache, &mut out, &cov, &accel, 1), 2, "dropped before the change: built again");
}

/// A raised target on a diagonal of the source, with a low cover before
/// it on the diagonal and walls on both sides of the last corner: DDA's
/// ray is stopped at that corner, Step Scan's passes (it visits no
/// corner); the sweep answers both as their marches do, every texel.
#[test]
fn the_last_corner_on_a_diagonal_stops_dda_not_step_scan() {
    let (w, h) = (8u32, 8u32);
    let (mut cov, mut heights) = (vec![0u8; 64], vec![0i32; 64]);
    let mut set = |x: usize, y: usize, c: u8, top: i32| (cov[y * 8 + x], heights[y * 8 + x]) = (c, top);
    set(2, 2, 1, 11);
    set(3, 4, 1, HEIGHT_WALL);
    set(4, 3, 1, HEIGHT_WALL);
    set(4, 4, 0, 50);
    let accel = Accel::new(&cov, &heights, w, h);
    let occ = Occlusion { width: w, height: h, coverage: &cov, heights: &heights, mips: &[], distance_field: &Grid::default(), accel: &accel };
    let s = SourceTexel { x: 8 + 4, y: 8 + 4, radius: 40, eye: 10, strength: 65535, ..Default::default() };
    let mut at_target = Vec::new();
    for method in [RayMethod::Dda, RayMethod::StepScan] {
        let input = RecomputeInput { method, ..dda_input(vec![s], w, h, 0, false) };
        let bits = RayBits::build(&s, &occ, method, ALL_OCTANTS).expect("every cover rises above the eye");
        for (x, y) in (0..h).flat_map(|y| (0..w).map(move |x| (x, y))) {
            let march = source_value(&input, &occ, &s, x, y);
            assert_eq!(source_value_with(&input, &occ, &s, Some(&bits), x, y), march, "{method:?}: texel ({x}, {y})");
        }
        at_target.push(source_value(&input, &occ, &s, 4, 4));
    }
    assert_eq!(at_target[0], 0, "DDA stops at the last corner");
    assert_ne!(at_target[1], 0, "Step Scan passes it");
}

/// The cache holds one window per distinct source key: equal sources
/// share one, sources that leave free theirs, and a moved source costs
/// exactly one new window.
#[test]
fn the_window_cache_keeps_one_window_per_distinct_source_and_frees_the_rest() {
    let (w, h) = (48u32, 40u32);
    let (cov, heights) = grid(w, h, 3, 10, 12, false, false);
    let accel = Accel::new(&cov, &heights, w, h);
    let occ = Occlusion { width: w, height: h, coverage: &cov, heights: &heights, mips: &[], distance_field: &Grid::default(), accel: &accel };
    let src = |x: i32, y: i32| SourceTexel { x: x * 8 + 4, y: y * 8 + 4, radius: 80, eye: 12, strength: 65535, ..Default::default() };
    let input = |sources: Vec<SourceTexel>| dda_input(sources, w, h, 0, true);
    let mut cache = WindowCache::default();
    let mut out = vec![0u16; (w * h) as usize];
    let three = input(vec![src(5, 5), src(5, 5), src(20, 30), src(40, 10)]);
    assert_eq!(visibility_cached(&three, &occ, &mut cache, &mut out), 3, "two equal sources share one window");
    assert_eq!(cache.len(), 3);
    let first = out.clone();
    assert_eq!(visibility_cached(&three, &occ, &mut cache, &mut out), 0, "nothing changed: no window is built");
    assert_eq!(out, first);
    let moved = input(vec![src(5, 5), src(21, 30), src(40, 10)]);
    assert_eq!(visibility_cached(&moved, &occ, &mut cache, &mut out), 1, "one source moved: one window");
    assert_eq!(cache.len(), 3, "the old window of the moved source is freed");
    let mut fresh = vec![0u16; out.len()];
    visibility(&moved, &occ, &mut fresh);
    assert_eq!(out, fresh, "kept windows give the bytes of a cold pass");
    visibility_cached(&input(vec![src(40, 10)]), &occ, &mut cache, &mut out);
    assert_eq!(cache.len(), 1);
    // The windows dropped stay for reuse (the moved source's old one and
    // the two dropped now), counted in the bytes...
    assert_eq!(cache.recent.len(), 3);
    assert!(cache.bytes() > 0 && cache.bytes() <= 4 * 2 * 25 * 25);
    // ...and bounded: a source walking over 100 texels keeps at most
    // MIN_RECENT of its old windows.
    for x in 0..100 {
        visibility_cached(&input(vec![src(40, 10), src(x % 48, x / 48 + 20)]), &occ, &mut cache, &mut out);
    }
    assert_eq!(cache.len(), 2);
    assert!(cache.recent.len() <= MIN_RECENT, "{} windows kept for reuse", cache.recent.len());
}

/// Windows wider than 64 texels (bit rows of several words, runs
/// copied across word edges, reversed or not), and windows of sources
/// outside the grid, hold the first-class bit of every texel and build
/// the bytes of the march.
#[test]
fn wide_windows_lay_out_the_sweep_across_words() {
    let (w, h) = (230u32, 190u32);
    for seed in 0..6 {
        let (cov, heights) = grid(w, h, seed, 4 + seed as u32, 12, false, seed % 2 == 0);
        let accel = Accel::new(&cov, &heights, w, h);
        let occ = Occlusion { width: w, height: h, coverage: &cov, heights: &heights, mips: &[], distance_field: &Grid::default(), accel: &accel };
        // Inside the grid, at its edges and (seeds 1 and 4) outside it.
        let (px, py) = ([115, -25, 200, 70, 150, 229][seed as usize], [95, 180, 10, 60, 205, 0][seed as usize]);
        let s = SourceTexel { x: px * 8 + 5, y: py * 8 + 2, radius: (70 + 9 * seed) * 8, eye: 12, strength: 65535, ..Default::default() };
        let bits = RayBits::build(&s, &occ, RayMethod::Dda, ALL_OCTANTS).expect("every cover rises above the eye");
        let input = dda_input(vec![s], w, h, 3 * seed, false);
        let win = Window::build(&input, &occ, &s, None, Shadow::build(&input, &s, &occ, None).as_ref());
        assert!(seed != 0 || win.width > 128, "the window spans three words");
        let rows = win.values.len() / win.width;
        let laid = bits.first_class(win.x0, win.y0, win.width, rows, ALL_OCTANTS);
        for (k, &v) in win.values.iter().enumerate() {
            let (i, r) = (k % win.width, k / win.width);
            let (x, y) = (win.x0 + i as i32, win.y0 + r as i32);
            let bit = laid[r * win.width.div_ceil(64) + i / 64] >> (i % 64) & 1 != 0;
            assert_eq!(bit, bits.blocked(&occ, x, y, 12, 12) == Some(true), "seed {seed}: first-class bit of ({x}, {y})");
            if k % 7 == 0 {
                assert_eq!(v, source_value(&input, &occ, &s, x as u32, y as u32), "seed {seed}: texel ({x}, {y})");
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]
    /// A kept combination updated tick by tick (sources moved, added,
    /// dropped, shared, anti-vision among them; every third tick a cache
    /// emptied over the grid it finished) gives the bytes of a cold pass
    /// at every tick, on 1 and 3 threads; the blocks it gives as changed
    /// are those holding a changed texel, and the blocks it gives as
    /// within the blur's reach along a row are those within the blur's
    /// radius of a changed texel on that row (radii under and over a
    /// block).
    #[test]
    fn kept_combination_equals_a_cold_pass(
        seed in any::<i32>(), density in 0u32..30, (w, h) in (20u32..90, 20u32..90), ticks in 2usize..7, reveal_walls in any::<bool>(),
        blur_radius in prop_oneof![0u32..4, 14u32..20],
    ) {
        let (cov, heights) = grid(w, h, seed, density, 12, false, true);
        let accel = Accel::new(&cov, &heights, w, h);
        let occ = Occlusion { width: w, height: h, coverage: &cov, heights: &heights, mips: &[], distance_field: &Grid::default(), accel: &accel };
        let source = |k: u32, tick: u32| {
            let r = hash2(k as i32, seed);
            // One source in five steps each tick, the others stand.
            let step = if k.is_multiple_of(5) { tick * (1 + r % 5) } else { 0 };
            let (x, y) = ((r >> 4) % (w * 8) + step, (r >> 14) % (h * 8) + 2 * step);
            let flags = if r.is_multiple_of(7) { SOURCE_ANTI } else { 0 };
            SourceTexel { x: (x % (w * 8)) as i32, y: (y % (h * 8)) as i32, radius: 40 + (r >> 24) as i32 % 80, eye: 12, strength: 65535, flags, ..Default::default() }
        };
        // Source k appears at tick k % 4; every sixth leaves again at tick 2 + k % 3.
        let alive = |k: u32, tick: u32| tick >= k % 4 && (!k.is_multiple_of(6) || tick < 2 + k % 3);
        for threads in [1, 3] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("pool");
            let mut cache = WindowCache::default();
            let mut out = vec![0u16; (w * h) as usize];
            for tick in 0..ticks as u32 {
                if tick % 3 == 2 {
                    // Nothing kept (an occlusion rebuilt): a cold
                    // combination over a grid finished for other sources.
                    cache = WindowCache::default();
                }
                // Two equal sources share a window throughout.
                let sources: Vec<SourceTexel> = (0..40u32).filter(|&k| alive(k, tick)).map(|k| source(k, tick)).chain([source(99, 0), source(99, 0)]).collect();
                let mut input = dda_input(sources, w, h, 0, reveal_walls);
                input.blur = BlurKernel::gaussian(blur_radius, 2.0, 1);
                let before = out.clone();
                let (_, changed, reach) = pool.install(|| visibility_changes(&input, &occ, &mut cache, &mut out));
                // The blocks marked are exactly those holding a texel
                // that changed, and those within the radius of one
                // along its row.
                let (mut want, mut within) = (Blocks::new(w as usize, h as usize, false), Blocks::new(w as usize, h as usize, false));
                let r = input.blur.radius();
                for (i, (a, b)) in before.iter().zip(&out).enumerate() {
                    if a != b {
                        let (x, y) = (i % w as usize, i / w as usize);
                        want.mark(texel_rect(x, y, x + 1, y + 1), 0);
                        within.mark(texel_rect(x.saturating_sub(r), y, x + r + 1, y + 1), 0);
                    }
                }
                prop_assert_eq!(&changed, &want, "tick {}: changed blocks", tick);
                prop_assert_eq!(&reach, &within, "tick {}: blocks within the blur's reach", tick);
                let mut cold = vec![0u16; out.len()];
                visibility(&input, &occ, &mut cold);
                prop_assert_eq!(&out, &cold, "tick {} on {} threads", tick, threads);
            }
        }
    }
}

/// A source wider than any window the shortcut once kept (half side over
/// 512) is swept too, and agrees with the march on sampled texels.
#[test]
fn a_long_sighted_source_is_swept_and_agrees_with_the_march() {
    let (w, h) = (1100u32, 1100u32);
    let (cov, heights) = grid(w, h, 7, 1, 12, false, false);
    let accel = Accel::new(&cov, &heights, w, h);
    let occ = Occlusion { width: w, height: h, coverage: &cov, heights: &heights, mips: &[], distance_field: &Grid::default(), accel: &accel };
    let s = SourceTexel { x: 550 * 8 + 3, y: 540 * 8 + 5, radius: 530 * 8, inner_radius: 100 * 8, eye: 12, strength: 65535, ..Default::default() };
    let input = dda_input(vec![s], w, h, 0, false);
    let bits = RayBits::build(&s, &occ, RayMethod::Dda, ALL_OCTANTS).expect("every cover rises above the eye: the window is swept");
    let (mut lit, mut dark) = (0, 0);
    for k in 0..4000 {
        // Half the samples anywhere, half within 120 texels of the source.
        let (x, y) = if k % 2 == 0 { (hash2(k, 1) % w, hash2(k, 2) % h) } else { (430 + hash2(k, 1) % 240, 420 + hash2(k, 2) % 240) };
        let fast = source_value_with(&input, &occ, &s, Some(&bits), x, y);
        assert_eq!(fast, source_value(&input, &occ, &s, x, y), "texel ({x}, {y})");
        if fast > 0 {
            lit += 1
        } else {
            dark += 1
        }
    }
    assert!(lit > 100 && dark > 100, "the sample sees both light and shadow ({lit} lit, {dark} dark)");
}

/// The occlusion tables built texel by texel, one bit at a time: what
/// the parallel, transposing [`Accel::new`] must reproduce.
fn accel_reference(coverage: &[u8], heights: &[i32], width: u32, height: u32) -> Accel {
    let (w, h) = (width as usize, height as usize);
    let tops: Vec<i32> = coverage.iter().zip(heights).map(|(&c, &ht)| if c != 0 { ht } else { i32::MIN }).collect();
    let (mut levels, mut lowest_top) = (Vec::new(), i32::MAX);
    for &t in tops.iter().filter(|&&t| t != i32::MIN) {
        lowest_top = lowest_top.min(t);
        if levels.len() <= MAX_CLASSES && !levels.contains(&t) {
            levels.push(t);
        }
    }
    let classes_complete = levels.len() <= MAX_CLASSES;
    levels = if classes_complete { levels } else { vec![lowest_top] };
    levels.sort_unstable();
    let (words_per_row, words_per_column) = (w.div_ceil(64), h.div_ceil(64));
    let mut classes: Vec<(i32, Vec<u64>)> = levels.iter().map(|&l| (l, vec![0u64; words_per_row * h])).collect();
    let mut classes_by_column: Vec<Vec<u64>> = classes.iter().map(|_| vec![0u64; words_per_column * w]).collect();
    for (i, &t) in tops.iter().enumerate().filter(|(_, &t)| t != i32::MIN) {
        let (x, y) = (i % w, i / w);
        for ((level, bits), by_column) in classes.iter_mut().zip(classes_by_column.iter_mut()) {
            if *level <= t {
                bits[y * words_per_row + x / 64] |= 1 << (x % 64);
                by_column[x * words_per_column + y / 64] |= 1 << (y % 64);
            }
        }
    }
    let mut sums = vec![0u32; (w + 1) * (h + 1)];
    for y in 0..h {
        for x in 0..w {
            sums[(y + 1) * (w + 1) + x + 1] =
                sums[y * (w + 1) + x + 1] + sums[(y + 1) * (w + 1) + x] - sums[y * (w + 1) + x] + u32::from(coverage[y * w + x] != 0);
        }
    }
    // Here `sums` holds the whole summed-area table, which the built
    // tables give through `covered_before` (see `summed_area`).
    Accel { sums, tops, classes, words_per_row, classes_by_column, words_per_column, classes_complete, lowest_top, ..Accel::default() }
}

/// The whole summed-area table of built tables, entry by entry.
fn summed_area(accel: &Accel, w: u32, h: u32) -> Vec<u32> {
    let (w, h) = (w as usize, h as usize);
    (0..=h).flat_map(|y| (0..=w).map(move |x| accel.covered_before(w, x, y))).collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]
    /// The tables built in parallel by words are the tables built bit by
    /// bit, for widths and heights on both sides of 64 and 128, with few
    /// distinct tops (one class each) and with many (one class), on 1
    /// and 3 threads, built fresh, over the tables of another grid, or
    /// from rows written by a fill.
    #[test]
    fn accel_equals_its_texel_by_texel_twin(w in 1u32..140, h in 1u32..140, seed in any::<i32>(), density in 0u32..80, palette in any::<bool>()) {
        let (cov, heights) = grid(w, h, seed, density, 30, true, palette);
        let want = accel_reference(&cov, &heights, w, h);
        for threads in [1, 3] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("pool");
            // Built fresh, and rebuilt over the tables of another grid
            // (another size, other tops).
            let (other_cov, other_heights) = grid(h + 3, w, seed ^ 5, 40, 30, false, !palette);
            let mut reused = Accel::new(&other_cov, &other_heights, h + 3, w);
            pool.install(|| reused.rebuild(&cov, &heights, w, h));
            let fresh = pool.install(|| Accel::new(&cov, &heights, w, h));
            // Written row by row by a fill (as the rasterizer does) over
            // other values, then built from what it wrote.
            let (mut filled_cov, mut filled_heights) = (vec![1u8; cov.len()], vec![-3; heights.len()]);
            let mut filled = Accel::new(&other_cov, &other_heights, h + 3, w);
            pool.install(|| {
                filled.fill_and_rebuild(&mut filled_cov, &mut filled_heights, w, h, |row, c, hs| {
                    let at = row as usize * w as usize;
                    c.copy_from_slice(&cov[at..at + c.len()]);
                    hs.copy_from_slice(&heights[at..at + hs.len()]);
                })
            });
            prop_assert_eq!((&filled_cov, &filled_heights), (&cov, &heights));
            for got in [fresh, reused, filled] {
            prop_assert_eq!(&summed_area(&got, w, h), &want.sums);
            prop_assert_eq!(&got.tops, &want.tops);
            prop_assert_eq!(&got.classes, &want.classes);
            prop_assert_eq!(&got.classes_by_column, &want.classes_by_column);
            prop_assert_eq!((got.words_per_row, got.words_per_column), (want.words_per_row, want.words_per_column));
            prop_assert_eq!((got.classes_complete, got.lowest_top), (want.classes_complete, want.lowest_top));
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]
    /// Tables brought up to date over changed rectangles are the tables
    /// of the changed grid built bit by bit, on 1 and 3 threads: tops
    /// that appear and vanish, class sets that grow, shrink or overflow.
    #[test]
    fn an_updated_accel_equals_its_texel_by_texel_twin(w in 1u32..140, h in 1u32..140, seed in any::<i32>(), density in 0u32..80,
        palettes in (any::<bool>(), any::<bool>()), rects in prop::collection::vec((0u32..140, 0u32..140, 1u32..40, 1u32..40), 1..4)) {
        let (before_cov, before_heights) = grid(w, h, seed, density, 30, true, palettes.0);
        let (other_cov, other_heights) = grid(w, h, seed ^ 9, 80 - density, 30, true, palettes.1);
        let rects: Vec<TexelRect> = rects.iter().map(|&(x, y, rw, rh)| {
            let (x0, y0) = (x % w, y % h);
            TexelRect { x0, y0, x1: (x0 + rw).min(w), y1: (y0 + rh).min(h) }
        }).collect();
        let (mut cov, mut heights) = (before_cov.clone(), before_heights.clone());
        for r in &rects {
            for y in r.y0..r.y1 {
                for x in r.x0..r.x1 {
                    let i = (y * w + x) as usize;
                    (cov[i], heights[i]) = (other_cov[i], other_heights[i]);
                }
            }
        }
        let want = accel_reference(&cov, &heights, w, h);
        for threads in [1, 3] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("pool");
            let mut got = Accel::new(&before_cov, &before_heights, w, h);
            pool.install(|| got.update(&cov, &heights, w, h, &rects));
            prop_assert_eq!(&summed_area(&got, w, h), &want.sums);
            prop_assert_eq!(&got.tops, &want.tops);
            prop_assert_eq!(&got.classes, &want.classes);
            prop_assert_eq!(&got.classes_by_column, &want.classes_by_column);
            prop_assert_eq!((got.classes_complete, got.lowest_top), (want.classes_complete, want.lowest_top));
            // What a later update reads (per band) is a rebuild's too.
            let rebuilt = Accel::new(&cov, &heights, w, h);
            prop_assert_eq!(&got.column_counts, &rebuilt.column_counts);
            prop_assert_eq!((&got.sums, &got.band_sums), (&rebuilt.sums, &rebuilt.band_sums));
            prop_assert_eq!(got.levels(), rebuilt.levels());
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]
    /// A shadowcast is shared by the sources of one texel, radius and
    /// eye whatever their sub-texel position and falloff: a window built
    /// with another such source's shadowcast holds the march's values.
    #[test]
    fn a_shadowcast_serves_every_source_of_its_key(
        seed in any::<i32>(), density in 0u32..40, (px, py) in (0i32..40, 0i32..40), (a, b) in (0i32..64, 0i32..64), reach8 in 2i32..12, r in 0i32..8, (ia, ib) in (0i32..90, 0i32..90),
    ) {
        let (w, h) = (40u32, 40u32);
        let (cov, heights) = grid(w, h, seed, density, 12, false, true);
        let accel = Accel::new(&cov, &heights, w, h);
        let occ = Occlusion { width: w, height: h, coverage: &cov, heights: &heights, mips: &[], distance_field: &Grid::default(), accel: &accel };
        let radius = reach8 * 8 + r;
        let src = |sub: i32, inner: i32| SourceTexel { x: px * 8 + sub % 8, y: py * 8 + sub / 8, radius, inner_radius: radius * inner / 100, eye: 12, strength: 65535, ..Default::default() };
        let (one, other) = (src(a, ia), src(b, ib));
        prop_assert_eq!(Shadow::key(&one), Shadow::key(&other));
        let input = dda_input(vec![other], w, h, 0, false);
        let shadow = Shadow::build(&input, &one, &occ, None);
        let win = Window::build(&input, &occ, &other, None, shadow.as_ref());
        for (k, &v) in win.values.iter().enumerate() {
            let (x, y) = (win.x0 + (k % win.width) as i32, win.y0 + (k / win.width) as i32);
            prop_assert_eq!(v, source_value(&input, &occ, &other, x as u32, y as u32), "texel ({}, {})", x, y);
        }
    }
}

proptest! {
    /// The span of a pair's row holds every texel where the new value
    /// is below the old one and the old one is the combined value, and
    /// is `None` only where there is none (widths on both sides of 16).
    #[test]
    fn pair_span_holds_every_texel_to_combine_anew(
        texels in prop::collection::vec((prop_oneof![Just(0u16), Just(65535), 0u16..40], prop_oneof![Just(0u16), Just(65535), 0u16..40], any::<bool>()), 0..70),
    ) {
        let old: Vec<u16> = texels.iter().map(|t| t.0).collect();
        let new: Vec<u16> = texels.iter().map(|t| t.1).collect();
        // The combined value is the old one, or above it.
        let painted: Vec<u16> = texels.iter().map(|t| if t.2 { t.0 } else { t.0.saturating_add(5) }).collect();
        let needs: Vec<usize> = (0..old.len()).filter(|&i| new[i] < old[i] && old[i] == painted[i]).collect();
        match pair_span(&old, &new, &painted) {
            None => prop_assert!(needs.is_empty()),
            Some((a, b)) => {
                prop_assert!(!needs.is_empty() && a < b && b <= old.len());
                prop_assert!(needs.iter().all(|i| (a..b).contains(i)));
            }
        }
    }
}

proptest! {
    /// The `wide` finish of a row or of any span of it (walls lit,
    /// anti-vision applied) gives the bytes of the per-texel reference,
    /// edges and all lanes.
    #[test]
    fn finish_row_equals_its_scalar_twin(
        (w, h, texels) in (1u32..40, 1u32..12).prop_flat_map(|(w, h)| (Just(w), Just(h), prop::collection::vec((any::<bool>(), any::<u16>(), prop_oneof![Just(0u16), any::<u16>()]), (w * h) as usize))),
        reveal_walls in any::<bool>(), cut in (any::<u16>(), any::<u16>()),
    ) {
        let cov: Vec<u8> = texels.iter().map(|t| u8::from(t.0)).collect();
        let painted: Vec<u16> = texels.iter().map(|t| t.1).collect();
        let conceal: Vec<u16> = texels.iter().map(|t| t.2).collect();
        let heights = vec![0; cov.len()];
        let accel = Accel::default();
        let occ = Occlusion { width: w, height: h, coverage: &cov, heights: &heights, mips: &[], distance_field: &Grid::default(), accel: &accel };
        let mut near = Vec::new();
        // Per run of BLOCK texels from x0, a bit for each of its texels whose values in `before` and `after` differ.
        let runs = |x0: usize, x1: usize, before: &[u16], after: &[u16]| -> Vec<u16> {
            (x0..x1).step_by(BLOCK).map(|a| (a..(a + BLOCK).min(x1)).fold(0, |bits, x| bits | u16::from(before[x] != after[x]) << (x - a))).collect()
        };
        for y in 0..h as usize {
            let row = y * w as usize..(y + 1) * w as usize;
            let (mut a, mut b) = (vec![0u16; w as usize], vec![1u16; w as usize]);
            finish_row_scalar(&occ, &painted, reveal_walls, &conceal[row.clone()], y, &mut a);
            let mut changed = vec![0u16; (w as usize).div_ceil(BLOCK)];
            finish_span(&occ, &painted, reveal_walls, Some(&conceal[row.clone()]), y, (0, w as usize), &mut near, &mut b, &mut changed);
            prop_assert_eq!(&a, &b, "row {}", y);
            // No concealment given: the bytes of a row concealed nowhere.
            let (mut open, mut none) = (vec![0u16; w as usize], vec![1u16; w as usize]);
            finish_row_scalar(&occ, &painted, reveal_walls, &vec![0u16; w as usize], y, &mut open);
            finish_span(&occ, &painted, reveal_walls, None, y, (0, w as usize), &mut near, &mut none, &mut vec![0u16; (w as usize).div_ceil(BLOCK)]);
            prop_assert_eq!(&open, &none, "row {} without concealment", y);
            prop_assert_eq!(changed, runs(0, w as usize, &a, &vec![1u16; w as usize]), "row {}: changed runs", y);
            // Any span of the row: its texels as the whole row's, the others untouched.
            let (x0, x1) = (cut.0 as usize % (w as usize + 1), cut.1 as usize % (w as usize + 1));
            let (x0, x1) = (x0.min(x1), x0.max(x1));
            // A texel already holding its value is not a change.
            let mut c: Vec<u16> = (0..w as usize).map(|x| if x % 3 == 0 { a[x] } else { 7 }).collect();
            let before = c.clone();
            let mut changed = vec![0u16; (x1 - x0).div_ceil(BLOCK)];
            finish_span(&occ, &painted, reveal_walls, Some(&conceal[row]), y, (x0, x1), &mut near, &mut c, &mut changed);
            for x in 0..w as usize {
                prop_assert_eq!(c[x], if (x0..x1).contains(&x) { a[x] } else { before[x] }, "row {} span {}..{} texel {}", y, x0, x1, x);
            }
            prop_assert_eq!(changed, runs(x0, x1, &before, &c), "row {} span {}..{}: changed runs", y, x0, x1);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]
    /// The shadowcast shortcut gives exactly what the DDA march (or the
    /// Step Scan march) gives, for every texel of the window, whether
    /// the target is below or above the eye.
    #[test]
    fn shadowcast_equals_the_march(
        w in 4u32..40, h in 4u32..40, seed in any::<i32>(), density in 0u32..60,
        px in 0u32..320, py in 0u32..320, radius in 8i32..200, eye in 1i32..400, low in any::<bool>(), palette in any::<bool>(),
        target_height in -20i32..60, step_scan in any::<bool>(),
    ) {
        let (cov, heights) = grid(w, h, seed, density, eye, low, palette);
        let accel = Accel::new(&cov, &heights, w, h);
        let occ = Occlusion { width: w, height: h, coverage: &cov, heights: &heights, mips: &[], distance_field: &Grid::default(), accel: &accel };
        let s = SourceTexel { x: (px % (w * 8)) as i32, y: (py % (h * 8)) as i32, radius, eye, strength: 65535, ..Default::default() };
        let method = if step_scan { RayMethod::StepScan } else { RayMethod::Dda };
        let input = RecomputeInput { method, ..dda_input(vec![s], w, h, target_height, false) };
        let bits = RayBits::build(&s, &occ, method, ALL_OCTANTS);
        let any_low = cov.iter().zip(&heights).any(|(&c, &t)| c != 0 && t <= eye);
        if !any_low {
            prop_assert!(bits.is_some(), "every cover is above the eye: the shortcut applies");
        }
        for y in 0..h {
            for x in 0..w {
                let fast = source_value_with(&input, &occ, &s, bits.as_ref(), x, y);
                let march = source_value(&input, &occ, &s, x, y);
                prop_assert_eq!(fast, march, "texel ({}, {})", x, y);
            }
        }
        // The sweep's first-class bits laid out as window rows agree, texel
        // by texel, with what `blocked` reads first (for a target at the eye).
        if let Some(b) = &bits {
            let (sx, sy, reach) = (s.x >> 3, s.y >> 3, (s.radius >> 3) + 2);
            let (x0, x1) = ((sx - reach).max(0), (sx + reach).min(w as i32 - 1));
            let (y0, y1) = ((sy - reach).max(0), (sy + reach).min(h as i32 - 1));
            if x0 <= x1 && y0 <= y1 {
                let width = (x1 - x0 + 1) as usize;
                let rows = b.first_class(x0, y0, width, (y1 - y0 + 1) as usize, ALL_OCTANTS);
                for y in y0..=y1 {
                    for x in x0..=x1 {
                        let (row, i) = ((y - y0) as usize * width.div_ceil(64), (x - x0) as usize);
                        let laid = rows.get(row + i / 64).is_some_and(|word| word >> (i % 64) & 1 != 0);
                        prop_assert_eq!(laid, b.blocked(&occ, x, y, eye, eye) == Some(true), "first-class bit of texel ({}, {})", x, y);
                    }
                }
            }
        }
        // The window as visibility builds it (falloff table, the sweep's
        // clear texels laid out at once) holds the same values.
        let table = FalloffTable::new(&FalloffTable::key(&s));
        let shadow = Shadow::build(&input, &s, &occ, None);
        for falloff in [Some(&table), None] {
            let win = Window::build(&input, &occ, &s, falloff, shadow.as_ref());
            for (k, &v) in win.values.iter().enumerate() {
                let (x, y) = (win.x0 + (k % win.width) as i32, win.y0 + (k / win.width) as i32);
                prop_assert_eq!(v, source_value(&input, &occ, &s, x as u32, y as u32), "window texel ({}, {})", x, y);
            }
        }
    }

    /// The octants said to read a rectangle are exactly those whose
    /// sweep reads one of its texels, texel by texel.
    #[test]
    fn octants_reading_are_those_whose_sweep_reads_the_rectangle(
        sx in -4i32..30, sy in -4i32..30, half in 1i32..12, r in (0u32..32, 0u32..32, 1u32..8, 1u32..8),
    ) {
        let rect = TexelRect { x0: r.0, y0: r.1, x1: r.0 + r.2, y1: r.1 + r.3 };
        let octants = [(1, 0, 0, 1), (0, 1, 1, 0), (0, -1, 1, 0), (-1, 0, 0, 1), (-1, 0, 0, -1), (0, -1, -1, 0), (0, 1, -1, 0), (1, 0, 0, -1)];
        let mut want = 0u8;
        for (o, (a, b, c, d)) in octants.into_iter().enumerate() {
            for j in 0..=half {
                for i in 0..=j + 1 {
                    let (x, y) = (sx + j * a + i * b, sy + j * c + i * d);
                    if x >= rect.x0 as i32 && x < rect.x1 as i32 && y >= rect.y0 as i32 && y < rect.y1 as i32 {
                        want |= 1 << o;
                    }
                }
            }
        }
        prop_assert_eq!(octants_reading(sx, sy, half, &rect), want);
    }

    /// A window worked out again from its old values after the
    /// occlusion changed in a rectangle (covers come, go or change
    /// height, ground rises or sinks) holds the values of one built
    /// whole over the new occlusion, for DDA and Step Scan, targets
    /// below and above the eye, anti-vision and see-through sources.
    #[test]
    fn a_window_redone_after_a_local_change_equals_one_built_whole(
        w in 4u32..48, h in 4u32..48, seed in any::<i32>(), seed2 in any::<i32>(), density in 0u32..50,
        px in 0u32..384, py in 0u32..384, radius in 8i32..160, eye in 1i32..400, palette in any::<bool>(),
        target_height in -20i32..60, step_scan in any::<bool>(), flags in prop_oneof![6 => Just(0u32), 1 => Just(SOURCE_ANTI), 1 => Just(murk_core::frame::SOURCE_SEE_THROUGH)],
        rect in (0u32..48, 0u32..48, 1u32..12, 1u32..12), rects in 1usize..3,
    ) {
        let (mut cov, mut heights) = grid(w, h, seed, density, eye, false, palette);
        let mut accel = Accel::new(&cov, &heights, w, h);
        let s = SourceTexel { x: (px % (w * 8)) as i32, y: (py % (h * 8)) as i32, radius, eye, strength: 65535, flags, ..Default::default() };
        let method = if step_scan { RayMethod::StepScan } else { RayMethod::Dda };
        let input = RecomputeInput { method, ..dda_input(vec![s], w, h, target_height, false) };
        let table = FalloffTable::new(&FalloffTable::key(&s));
        let old = {
            let occ = Occlusion { width: w, height: h, coverage: &cov, heights: &heights, mips: &[], distance_field: &Grid::default(), accel: &accel };
            Window::build(&input, &occ, &s, Some(&table), Shadow::build(&input, &s, &occ, None).as_ref())
        };
        // One or two rectangles take the texels of another grid.
        let (cov2, heights2) = grid(w, h, seed2, density + 10, eye, false, palette);
        let mut changed = Vec::new();
        for k in 0..rects as u32 {
            let (x0, y0) = ((rect.0 + 7 * k) % w, (rect.1 + 5 * k) % h);
            let r = TexelRect { x0, y0, x1: (x0 + rect.2).min(w), y1: (y0 + rect.3).min(h) };
            for y in r.y0..r.y1 {
                for x in r.x0..r.x1 {
                    let i = (y * w + x) as usize;
                    (cov[i], heights[i]) = (cov2[i], heights2[i]);
                }
            }
            changed.push(r);
        }
        accel.update(&cov, &heights, w, h, &changed);
        let occ = Occlusion { width: w, height: h, coverage: &cov, heights: &heights, mips: &[], distance_field: &Grid::default(), accel: &accel };
        let whole = |falloff| Window::build(&input, &occ, &s, falloff, Shadow::build(&input, &s, &occ, None).as_ref());
        let any_low = cov.iter().zip(&heights).any(|(&c, &t)| c != 0 && t <= eye);
        for falloff in [Some(&table), None] {
            let redone = Window::redo(&input, &occ, &s, falloff, (&old, &changed), None);
            prop_assert!(redone.is_some() || any_low, "every cover is above the eye: the window is redone");
            if let Some(redone) = redone {
                prop_assert_eq!((redone.x0, redone.y0, redone.width, redone.rows), (old.x0, old.y0, old.width, old.rows));
                prop_assert_eq!(redone.values, whole(falloff).values);
            }
        }
    }
}
