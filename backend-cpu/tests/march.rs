//! The hierarchical DDA march against the plain DDA march, ray by ray, with
//! the shadowcast shortcut off (`source_value` marches every ray): skipping
//! the empty blocks of the mip chain must never change whether a ray is
//! blocked.

use murk_core::fixed::{HEIGHT_WALL, TEXEL_ONE};
use murk_core::{BlurKernel, RayMethod, RecomputeInput, SourceTexel, TileBins};
use murk_cpu::passes::mips::build_mips;
use murk_cpu::passes::visibility::{source_value, Accel, Occlusion};
use proptest::prelude::*;

/// A grid with walls and blocks of a few heights, and sources with their eyes.
#[derive(Clone, Debug)]
struct Grid {
    width: u32,
    height: u32,
    /// Per texel: 0 empty, 1 a wall, 2.. a block of height `(v - 1) * 64`.
    cells: Vec<u8>,
    /// Source texel, eye height.
    sources: Vec<(u32, u32, i32)>,
}

/// The inputs the march reads: the method, and targets on the ground.
fn input(method: RayMethod) -> RecomputeInput {
    RecomputeInput {
        sources: Vec::new(),
        bins: TileBins::default(),
        method,
        target_height: 0,
        df_scale: 0,
        soft_shadow_k_q8: 0,
        df_jitter: 0,
        blur: BlurKernel::default(),
        forget_step: 0,
        freeze_memory: false,
        fade_in_step: 0,
        relax_step: 0,
        explored_value: 0,
        mapped_value: 0,
        show_memory_alpha: 0,
        reveal_walls: true,
        reuse_visibility: false,
    }
}

fn grid() -> impl Strategy<Value = Grid> {
    (1u32..40, 1u32..40).prop_flat_map(|(width, height)| {
        let n = (width * height) as usize;
        // Mostly empty, so that the hierarchy has empty blocks to skip.
        let cell = prop_oneof![6 => Just(0u8), 1 => Just(1u8), 1 => 2u8..6];
        (Just(width), Just(height), proptest::collection::vec(cell, n), proptest::collection::vec((0..width, 0..height, -64i32..400), 1..4))
            .prop_map(|(width, height, cells, sources)| Grid { width, height, cells, sources })
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn hierarchical_dda_marches_like_dda(g in grid()) {
        let coverage: Vec<u8> = g.cells.iter().map(|&c| u8::from(c != 0)).collect();
        let heights: Vec<i32> = g.cells.iter().map(|&c| if c == 1 { HEIGHT_WALL } else { i32::from(c.saturating_sub(1)) * 64 }).collect();
        let mips = build_mips(&coverage, g.width, g.height);
        let accel = Accel::new(&coverage, &heights, g.width, g.height);
        let occ = Occlusion { width: g.width, height: g.height, coverage: &coverage, heights: &heights, mips: &mips, distance_field: &murk_core::Grid::default(), accel: &accel };
        let dda = input(RayMethod::Dda);
        let hdda = input(RayMethod::HierarchicalDda);
        for &(sx, sy, eye) in &g.sources {
            let radius = 64 * TEXEL_ONE;
            let s = SourceTexel {
                x: (sx as i32) * TEXEL_ONE + TEXEL_ONE / 2,
                y: (sy as i32) * TEXEL_ONE + TEXEL_ONE / 2,
                radius,
                inner_radius: radius,
                eye,
                strength: u32::from(u16::MAX),
                ..SourceTexel::default()
            };
            for y in 0..g.height {
                for x in 0..g.width {
                    let want = source_value(&dda, &occ, &s, x, y);
                    prop_assert_eq!(source_value(&hdda, &occ, &s, x, y), want, "source ({}, {}) eye {}, texel ({}, {})", sx, sy, eye, x, y);
                }
            }
        }
    }
}

#[test]
fn the_march_property_sees_blocked_rays() {
    // A wall between a source and a texel: both marches block it, and
    // neither blocks the texel beside the source.
    let (width, height) = (16u32, 4u32);
    let mut coverage = vec![0u8; 64];
    let mut heights = vec![0i32; 64];
    for y in 0..4 {
        coverage[y * 16 + 8] = 1;
        heights[y * 16 + 8] = HEIGHT_WALL;
    }
    let mips = build_mips(&coverage, width, height);
    let accel = Accel::new(&coverage, &heights, width, height);
    let occ =
        Occlusion { width, height, coverage: &coverage, heights: &heights, mips: &mips, distance_field: &murk_core::Grid::default(), accel: &accel };
    let s = SourceTexel {
        x: 2 * TEXEL_ONE + 4,
        y: TEXEL_ONE + 4,
        radius: 32 * TEXEL_ONE,
        inner_radius: 32 * TEXEL_ONE,
        strength: 65535,
        ..SourceTexel::default()
    };
    for method in [RayMethod::Dda, RayMethod::HierarchicalDda] {
        let input = input(method);
        assert_eq!(source_value(&input, &occ, &s, 12, 1), 0, "{method:?}: behind the wall");
        assert_eq!(source_value(&input, &occ, &s, 3, 1), u16::MAX, "{method:?}: beside the source");
    }
}
