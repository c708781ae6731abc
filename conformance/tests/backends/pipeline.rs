//! Hand-worked expectations for each pass, driven through the public API.

use super::{Make, Test};
use murk_conformance::scene::fog as fog_on;
use murk_core::glam::{Vec2, Vec3};
use murk_core::hecs::World;
use murk_core::{
    AntiVision, Area, Blocker, BlockerShape, Cone, FogSubsystem, HeightLayer, InstanceDesc, Position, Profile, RayMethod, TeamMask, Texture,
    TextureData, VisionSource,
};

/// A profile whose visibility is unblurred and whose composed mask follows it at once.
fn raw_profile() -> Profile {
    Profile { blur_iterations: 0, fade_in_rate: 1.0e4, relax_rate: 1.0e4, ..Profile::default() }
}

fn u16s(img: murk_core::TextureImage) -> Vec<u16> {
    match img.data {
        TextureData::U16(v) => v,
        other => panic!("expected a u16 texture, got {other:?}"),
    }
}

fn vis(fog: &mut FogSubsystem) -> Vec<u16> {
    u16s(fog.read_texture("i", Texture::Visibility).unwrap())
}

fn at(v: &[u16], x: usize, y: usize) -> u16 {
    v[y * 64 + x]
}

pub fn lone_source_on_empty_map_is_a_disk_with_linear_falloff(make: &Make) {
    let mut fog = fog_on(make(), raw_profile());
    let mut world = World::new();
    let mut src = VisionSource::new(20.0);
    src.falloff = Some(0.5);
    world.spawn((Position(Vec3::new(32.5, 32.5, 0.0)), src));
    fog.tick(&mut world, 100_000).unwrap();
    let v = vis(&mut fog);
    for y in 0..64 {
        for x in 0..64 {
            let d = ((x as f64 - 32.0).powi(2) + (y as f64 - 32.0).powi(2)).sqrt();
            let got = f64::from(at(&v, x, y));
            let expected = if d <= 10.0 {
                65535.0
            } else if d >= 20.0 {
                0.0
            } else {
                (20.0 - d) / 10.0 * 65535.0
            };
            // Distances are floored to 1/8 texel: at most 1/80 of the ramp.
            assert!((got - expected).abs() <= 65535.0 / 80.0 + 1.0, "texel {x},{y}: got {got}, expected {expected}");
            if d >= 20.0 {
                assert_eq!(got, 0.0, "outside the radius at {x},{y}");
            }
            if d <= 10.0 {
                assert_eq!(got, 65535.0, "inside the full-strength disk at {x},{y}");
            }
        }
    }
    // The final mask follows at once with these rates and the default cadence.
    assert_eq!(fog.final_mask("i").unwrap(), u16s(fog.read_texture("i", Texture::Compose).unwrap()));
}

/// Whether the segment a-b crosses the axis-aligned box [x0,x1]x[y0,y1] with
/// at least `margin` inside it (sampled finely: an independent check).
fn segment_inside_box(a: (f64, f64), b: (f64, f64), bx: (f64, f64, f64, f64), margin: f64) -> bool {
    (0..=2000).any(|i| {
        let t = f64::from(i) / 2000.0;
        let (x, y) = (a.0 + (b.0 - a.0) * t, a.1 + (b.1 - a.1) * t);
        x > bx.0 + margin && x < bx.1 - margin && y > bx.2 + margin && y < bx.3 - margin
    })
}

pub fn a_wall_casts_the_expected_shadow_and_is_itself_lit(make: &Make) {
    for method in [RayMethod::Dda, RayMethod::HierarchicalDda, RayMethod::StepScan] {
        let mut fog = fog_on(make(), Profile { ray_method: method, ..raw_profile() });
        let mut world = World::new();
        let mut src = VisionSource::new(30.0);
        src.falloff = Some(0.0);
        world.spawn((Position(Vec3::new(32.5, 32.5, 0.0)), src));
        // Wall covering texels x = 40, y = 20..=43.
        world.spawn((Position(Vec3::new(40.5, 32.0, 0.0)), Blocker::wall(BlockerShape::Rect { size: Vec2::new(1.0, 24.0), yaw_degrees: 0.0 })));
        fog.tick(&mut world, 100_000).unwrap();
        let v = vis(&mut fog);
        let wall = (40.0, 41.0, 20.0, 44.0);
        let mut dark = 0;
        for y in 0..64 {
            for x in 0..64 {
                let c = (x as f64 + 0.5, y as f64 + 0.5);
                let d = ((c.0 - 32.5).powi(2) + (c.1 - 32.5).powi(2)).sqrt();
                if d >= 29.0 || x == 40 {
                    continue;
                }
                // DDA visits every texel the segment touches; Step Scan one per
                // major-axis step, so it may clip a corner by up to half a texel.
                let end = if method == RayMethod::StepScan { 0.5 } else { 0.0 };
                if segment_inside_box((32.5, 32.5), c, (wall.0, wall.1, wall.2 + end, wall.3 - end), 0.05) && x > 40 {
                    assert_eq!(at(&v, x, y), 0, "{method:?}: texel {x},{y} is behind the wall");
                    dark += 1;
                } else if !segment_inside_box((32.5, 32.5), c, (wall.0 - 0.75, wall.1 + 0.75, wall.2 - 0.75, wall.3 + 0.75), 0.0) {
                    assert_eq!(at(&v, x, y), 65535, "{method:?}: texel {x},{y} sees the source");
                }
            }
        }
        assert!(dark > 100, "{method:?}: the shadow has {dark} texels");
        // The wall's face toward the source is lit.
        assert_eq!(at(&v, 40, 32), 65535, "{method:?}: wall face");
    }
}

pub fn an_eye_above_a_low_wall_sees_over_it_but_not_over_a_tall_one(make: &Make) {
    // Source at x = 10.5, wall one texel wide at x = 15 (k = 5), targets behind it.
    let cases = [
        // (wall height, eye height, target x, visible?)
        (1.0, 1.5, 18usize, false), // n = 8: the ray is at 1.5 - 1.5*5/8 = 0.94 < 1 at the wall
        (1.0, 1.5, 30, true),       // n = 20: 1.125 > 1
        (1.0, 10.0, 18, true),      // high eye: 3.75 > 1
        (20.0, 10.0, 18, false),    // tall wall
        (20.0, 10.0, 30, false),
    ];
    for (wall_h, eye, tx, visible) in cases {
        let mut fog = fog_on(make(), Profile { ray_method: RayMethod::Dda, ..raw_profile() });
        let mut world = World::new();
        let mut src = VisionSource::new(40.0);
        src.falloff = Some(0.0);
        src.eye_height = eye;
        world.spawn((Position(Vec3::new(10.5, 32.5, 0.0)), src));
        let mut wall = Blocker::wall(BlockerShape::Rect { size: Vec2::new(1.0, 30.0), yaw_degrees: 0.0 });
        wall.height = Some(wall_h);
        world.spawn((Position(Vec3::new(15.5, 32.0, 0.0)), wall));
        fog.tick(&mut world, 100_000).unwrap();
        let v = vis(&mut fog);
        assert_eq!(at(&v, tx, 32) == 65535, visible, "wall {wall_h}, eye {eye}, target x {tx}: got {}", at(&v, tx, 32));
        for m in [RayMethod::HierarchicalDda, RayMethod::StepScan, RayMethod::DistanceField] {
            let mut p = Profile { ray_method: m, ..raw_profile() };
            p.df_jitter = 0.0;
            fog.apply_profile("i", p).unwrap();
            fog.tick(&mut world, 100_000).unwrap();
            let v = vis(&mut fog);
            assert_eq!(at(&v, tx, 32) > 0, visible, "{m:?}: wall {wall_h}, eye {eye}, target x {tx}");
        }
    }
}

pub fn cones_reveal_only_inside_their_half_angle(make: &Make) {
    let mut fog = fog_on(make(), raw_profile());
    let mut world = World::new();
    let mut src = VisionSource::new(25.0);
    src.falloff = Some(0.0);
    src.cone = Some(Cone { yaw_degrees: 90.0, half_angle_degrees: 30.0 });
    world.spawn((Position(Vec3::new(32.5, 32.5, 0.0)), src));
    fog.tick(&mut world, 100_000).unwrap();
    let v = vis(&mut fog);
    // World +y is texel +row.
    assert_eq!(at(&v, 32, 50), 65535);
    assert_eq!(at(&v, 32, 15), 0);
    assert_eq!(at(&v, 50, 32), 0);
    // 20 degrees off axis is inside, 40 is outside.
    let p = |deg: f64| (32.5 + 15.0 * (90.0f64 - deg).to_radians().cos(), 32.5 + 15.0 * (90.0f64 - deg).to_radians().sin());
    let (x, y) = p(20.0);
    assert_eq!(at(&v, x as usize, y as usize), 65535);
    let (x, y) = p(40.0);
    assert_eq!(at(&v, x as usize, y as usize), 0);
}

pub fn z_gating_and_overlap_strength(make: &Make) {
    let profile = Profile { z_layering: true, ..raw_profile() };
    let layered = |z: f32| {
        let mut s = VisionSource::new(10.0);
        s.falloff = Some(0.0);
        s.height_layer = Some(HeightLayer { vertical_extent: 2.0 });
        (Position(Vec3::new(32.5, 32.5, z)), s)
    };
    // Above the slab [0, 10]: no contribution.
    let mut fog = fog_on(make(), profile.clone());
    let mut world = World::new();
    world.spawn(layered(20.0));
    fog.tick(&mut world, 100_000).unwrap();
    assert!(vis(&mut fog).iter().all(|&v| v == 0));
    // Half inside: half strength.
    let mut world = World::new();
    world.spawn(layered(9.0));
    fog.tick(&mut world, 100_000).unwrap();
    assert_eq!(at(&vis(&mut fog), 32, 32), 32768);
    // Fully inside: full strength.
    let mut world = World::new();
    world.spawn(layered(3.0));
    fog.tick(&mut world, 100_000).unwrap();
    assert_eq!(at(&vis(&mut fog), 32, 32), 65535);
    // Without the height layer a source behaves as 2D and always participates.
    let mut world = World::new();
    let (p, mut s) = layered(20.0);
    s.height_layer = None;
    world.spawn((p, s));
    fog.tick(&mut world, 100_000).unwrap();
    assert_eq!(at(&vis(&mut fog), 32, 32), 65535);
    // The area scale widens the logical slab: z = 20 participates with scale 5 (slab -20..30).
    let mut fog = fog_on(make(), Profile { z_layering_area_scale: 5.0, ..profile });
    let mut world = World::new();
    world.spawn(layered(20.0));
    fog.tick(&mut world, 100_000).unwrap();
    assert_eq!(at(&vis(&mut fog), 32, 32), 65535);
}

pub fn height_layer_blockers_occlude_only_their_slab(make: &Make) {
    let profile = Profile { z_layering: true, ..raw_profile() };
    for (blocker_z, blocks) in [(0.0, true), (30.0, false)] {
        let mut fog = fog_on(make(), profile.clone());
        let mut world = World::new();
        world.spawn((Position(Vec3::new(20.5, 32.5, 0.0)), VisionSource::new(30.0)));
        let mut wall = Blocker::wall(BlockerShape::Rect { size: Vec2::new(1.0, 20.0), yaw_degrees: 0.0 });
        wall.height = Some(5.0);
        wall.use_height_layer = true;
        world.spawn((Position(Vec3::new(25.5, 32.0, blocker_z)), wall));
        fog.tick(&mut world, 100_000).unwrap();
        let cov = fog.read_texture("i", Texture::Coverage).unwrap();
        let TextureData::U8(cov) = cov.data else { panic!("coverage is u8") };
        assert_eq!(cov[32 * 64 + 25] == 1, blocks, "blocker at z {blocker_z}");
        assert_eq!(at(&vis(&mut fog), 35, 32) == 0, blocks, "behind the blocker at z {blocker_z}");
    }
}

pub fn memory_decays_at_the_forget_rate_and_freezes(make: &Make) {
    // 100 ms ticks, forget 1/s: 6553 per recompute.
    let mut fog = fog_on(make(), Profile { forget_rate: 1.0, ..raw_profile() });
    let mut world = World::new();
    let mut s = VisionSource::new(5.0);
    s.falloff = Some(0.0);
    let e = world.spawn((Position(Vec3::new(32.5, 32.5, 0.0)), s));
    fog.tick(&mut world, 100_000).unwrap();
    let mem = |fog: &mut FogSubsystem| u16s(fog.read_texture("i", Texture::Memory).unwrap())[32 * 64 + 32];
    assert_eq!(mem(&mut fog), 65535);
    world.despawn(e).unwrap();
    for k in 1..=3u16 {
        fog.tick(&mut world, 100_000).unwrap();
        assert_eq!(mem(&mut fog), 65535 - 6553 * k);
    }
    let mut p = fog.instance("i").unwrap().profile.clone();
    p.freeze_memory = true;
    fog.apply_profile("i", p).unwrap();
    fog.tick(&mut world, 100_000).unwrap();
    assert_eq!(mem(&mut fog), 65535 - 6553 * 3);
}

pub fn fade_in_and_relax_follow_their_rates_over_ticks(make: &Make) {
    // fade 2/s and relax 1/s at 100 ms: +13107 and -6553 per recompute.
    let p = Profile { fade_in_rate: 2.0, relax_rate: 1.0, blur_iterations: 0, explored_value: 0.5, ..Profile::default() };
    let mut fog = fog_on(make(), p);
    let mut world = World::new();
    let mut s = VisionSource::new(5.0);
    s.falloff = Some(0.0);
    let e = world.spawn((Position(Vec3::new(32.5, 32.5, 0.0)), s));
    let composed = |fog: &mut FogSubsystem| u16s(fog.read_texture("i", Texture::Compose).unwrap())[32 * 64 + 32];
    let mut expected = 0u32;
    for _ in 0..6 {
        fog.tick(&mut world, 100_000).unwrap();
        expected = (expected + 13107).min(65535);
        assert_eq!(u32::from(composed(&mut fog)), expected);
    }
    world.despawn(e).unwrap();
    // Relax toward explored * memory = 0.5 (32768).
    for _ in 0..6 {
        fog.tick(&mut world, 100_000).unwrap();
        expected = expected.saturating_sub(6553).max(32768);
        assert_eq!(u32::from(composed(&mut fog)), expected);
    }
    assert_eq!(expected, 32768);
}

pub fn cadence_recomputes_every_update_rate_and_blends_every_tick(make: &Make) {
    // Update every 0.3 s with 0.1 s ticks: recompute on ticks 0, 3, 6; blend in thirds.
    let p = Profile { update_rate: 0.3, fade_in_rate: 1.0e4, blur_iterations: 0, ..Profile::default() };
    let mut fog = fog_on(make(), p);
    let mut world = World::new();
    let mut s = VisionSource::new(5.0);
    s.falloff = Some(0.0);
    world.spawn((Position(Vec3::new(32.5, 32.5, 0.0)), s));
    let mut finals = Vec::new();
    let mut recomputes = Vec::new();
    for _ in 0..4 {
        let r = fog.tick(&mut world, 100_000).unwrap();
        recomputes.push(r.instances["i"].recomputed);
        finals.push(fog.final_mask("i").unwrap()[32 * 64 + 32]);
    }
    assert_eq!(recomputes, [true, false, false, true]);
    // t = 1/3, 2/3, 1 of the way from 0 to 65535 (Q16 t, rounded toward the start).
    assert_eq!(finals[..3], [21844, 43689, 65535]);
    assert_eq!(finals[3], 65535);
}

pub fn teams_filter_sources(make: &Make) {
    let mut fog = fog_on(make(), raw_profile());
    fog.set_observed_teams("i", TeamMask::of(&[1]).unwrap()).unwrap();
    let mut world = World::new();
    let mut a = VisionSource::new(5.0);
    a.team = 0;
    let mut b = VisionSource::new(5.0);
    b.team = 1;
    world.spawn((Position(Vec3::new(10.5, 10.5, 0.0)), a));
    world.spawn((Position(Vec3::new(50.5, 50.5, 0.0)), b));
    fog.tick(&mut world, 100_000).unwrap();
    let v = vis(&mut fog);
    assert_eq!(at(&v, 10, 10), 0);
    assert_eq!(at(&v, 50, 50), 65535);
}

pub fn a_crowded_tile_drops_no_source(make: &Make) {
    // 3000 sources of radius 1 in one 32x32 tile, then one more at its far corner.
    let mut fog = fog_on(make(), raw_profile());
    let mut world = World::new();
    for i in 0..3000 {
        let mut s = VisionSource::new(0.6);
        s.falloff = Some(0.0);
        world.spawn((Position(Vec3::new(2.5 + (i % 3) as f32, 2.5, 0.0)), s));
    }
    let mut last = VisionSource::new(0.6);
    last.falloff = Some(0.0);
    world.spawn((Position(Vec3::new(30.5, 30.5, 0.0)), last));
    fog.tick(&mut world, 100_000).unwrap();
    let v = vis(&mut fog);
    assert_eq!(at(&v, 30, 30), 65535);
    assert_eq!(at(&v, 3, 2), 65535);
    assert_eq!(v.iter().filter(|&&x| x > 0).count(), 4);
}

pub fn lod_upscales_bilinearly_to_the_output(make: &Make) {
    let mut fog = FogSubsystem::new(make());
    fog.create_instance(InstanceDesc {
        name: "i".into(),
        area: Area { center: Vec3::new(32.0, 32.0, 5.0), extents: Vec3::new(64.0, 64.0, 10.0), yaw_degrees: 0.0 },
        resolution: 64,
        lod: 1,
        observed_teams: TeamMask::ALL,
        profile: raw_profile(),
    })
    .unwrap();
    let dims = fog.dims("i").unwrap();
    assert_eq!((dims.width, dims.height, dims.out_width, dims.out_height), (32, 32, 64, 64));
    let mut world = World::new();
    world.spawn((Position(Vec3::new(32.0, 32.0, 0.0)), VisionSource::new(20.0)));
    fog.tick(&mut world, 100_000).unwrap();
    let up = u16s(fog.read_texture("i", Texture::Upscale).unwrap());
    let composed = u16s(fog.read_texture("i", Texture::Compose).unwrap());
    // Output texel (2x+1, 2y+1) sits 3/4 of the way from internal (x, y) to (x+1, y+1).
    for (x, y) in [(10usize, 10usize), (20, 12), (5, 25)] {
        let c = |cx: usize, cy: usize| f64::from(composed[cy * 32 + cx]);
        let top = c(x, y) * 0.25 + c(x + 1, y) * 0.75;
        let bottom = c(x, y + 1) * 0.25 + c(x + 1, y + 1) * 0.75;
        let expected = top * 0.25 + bottom * 0.75;
        let got = f64::from(up[(2 * y + 1) * 64 + 2 * x + 1]);
        assert!((got - expected).abs() <= 1.0, "{x},{y}: {got} vs {expected}");
    }
}

/// Every test of this suite, by name.
/// The room these tests look through: a wall between x 30 and 32 across the
/// middle, and a pillar.
fn walled(world: &mut World) {
    world.spawn((Position(Vec3::new(31.0, 32.0, 0.0)), Blocker::wall(BlockerShape::Rect { size: Vec2::new(2.0, 40.0), yaw_degrees: 0.0 })));
    world.spawn((Position(Vec3::new(20.0, 44.0, 0.0)), Blocker::wall(BlockerShape::Circle { radius: 3.0 })));
}

/// One tick of instance `i` with `method` over the walled room and `source`
/// at `at`: its raw visibility.
fn seen(make: &Make, method: RayMethod, at: Vec3, source: VisionSource) -> Vec<u16> {
    seen_with(make, Profile { ray_method: method, ..raw_profile() }, at, source)
}

fn seen_with(make: &Make, profile: Profile, at: Vec3, source: VisionSource) -> Vec<u16> {
    let mut fog = fog_on(make(), profile);
    let mut world = World::new();
    walled(&mut world);
    world.spawn((Position(at), source));
    fog.tick(&mut world, 50_000).unwrap();
    vis(&mut fog)
}

/// A source that sees through occlusion reveals, on every ray method, what
/// the same source reveals with no ray method at all (radius, cone and
/// falloff alone); the others still stop at the wall.
pub fn a_see_through_source_ignores_every_blocker(make: &Make) {
    let eye = Vec3::new(20.375, 30.125, 0.0);
    let cone = Some(Cone { yaw_degrees: 10.0, half_angle_degrees: 70.0 });
    let plain = VisionSource { cone, ..VisionSource::new(24.0) };
    let unblocked = seen(make, RayMethod::None, eye, plain);
    for method in [RayMethod::StepScan, RayMethod::Dda, RayMethod::HierarchicalDda, RayMethod::DistanceField] {
        assert_eq!(seen(make, method, eye, VisionSource { see_through: true, ..plain }), unblocked, "{method:?}");
        let blocked = seen(make, method, eye, plain);
        assert!(at(&blocked, 40, 30) == 0 && at(&unblocked, 40, 30) > 0, "{method:?}: the wall hides (40, 30) from an ordinary source");
    }
}

/// An eye offset sees from the offset point: the same bytes as a source
/// standing there with the offset's Z added to its eye, in world axes
/// without a cone and turned with the cone's yaw with one.
pub fn an_eye_offset_sees_from_the_offset_point(make: &Make) {
    let offset = Vec3::new(4.5, -2.25, 1.0);
    let at = Vec3::new(16.125, 30.375, 0.0);
    let moved = VisionSource { eye_height: 2.5, ..VisionSource::new(20.0) };
    let offset_source = VisionSource { eye_offset: offset, ..VisionSource::new(20.0) };
    assert_eq!(seen(make, RayMethod::Dda, at, offset_source), seen(make, RayMethod::Dda, at + Vec3::new(4.5, -2.25, 0.0), moved));
    // Facing +Y: the offset's X (forward) is world +Y, its Y (left) world -X.
    let cone = Some(Cone { yaw_degrees: 90.0, half_angle_degrees: 60.0 });
    let turned = seen(make, RayMethod::Dda, at, VisionSource { cone, ..offset_source });
    assert_eq!(turned, seen(make, RayMethod::Dda, at + Vec3::new(2.25, 4.5, 0.0), VisionSource { cone, ..moved }));
    // The immediate query asks from the eye too.
    let mut world = World::new();
    world.spawn((Position(at), VisionSource { eye_offset: Vec3::new(10.0, 0.0, 0.0), ..VisionSource::new(4.0) }));
    let fog = fog_on(make(), raw_profile());
    assert!(fog.query_immediate(&world, at + Vec3::new(12.0, 0.0, 0.0), TeamMask::ALL).unwrap());
    assert!(!fog.query_immediate(&world, at, TeamMask::ALL).unwrap());
    // A NaN offset is named.
    world.spawn((Position(at), VisionSource { eye_offset: Vec3::new(0.0, f32::NAN, 0.0), ..VisionSource::new(4.0) }));
    let mut fog = fog_on(make(), raw_profile());
    let e = fog.tick(&mut world, 50_000).unwrap_err().to_string();
    assert!(e.contains("source.eye_offset.y = NaN"), "{e}");
}

/// An instance's profile offset and see-through give the bytes of the
/// same settings on the source itself (the offsets add, turning with the
/// cone); anti-vision areas do not move; a bad profile offset is named and
/// the instance keeps its settings.
pub fn a_profile_offset_and_see_through_act_on_every_source(make: &Make) {
    let eye = Vec3::new(18.125, 29.375, 0.0);
    let cone = Some(Cone { yaw_degrees: 20.0, half_angle_degrees: 60.0 });
    let own = VisionSource { cone, eye_offset: Vec3::new(1.0, 0.5, 0.25), ..VisionSource::new(22.0) };
    let offset = Vec3::new(3.5, -1.25, 2.0);
    let from_profile = seen_with(make, Profile { eye_offset: offset, ..raw_profile() }, eye, own);
    assert_eq!(from_profile, seen(make, RayMethod::Dda, eye, VisionSource { eye_offset: own.eye_offset + offset, ..own }));
    assert_ne!(from_profile, seen(make, RayMethod::Dda, eye, own), "the profile's offset moved the eye");
    for method in [RayMethod::Dda, RayMethod::DistanceField] {
        let through = seen_with(make, Profile { see_through: true, ray_method: method, ..raw_profile() }, eye, own);
        assert_eq!(through, seen(make, RayMethod::None, eye, own), "{method:?}");
        assert_ne!(through, seen(make, method, eye, own), "{method:?}: the wall hides something from an ordinary source");
    }
    // An anti-vision area stays where it stands.
    let anti = |profile: Profile| {
        let mut fog = fog_on(make(), profile);
        let mut world = World::new();
        world.spawn((Position(Vec3::new(32.0, 32.0, 0.0)), VisionSource::new(30.0)));
        world.spawn((Position(Vec3::new(40.0, 32.0, 0.0)), AntiVision { radius: 6.0, falloff: 0.0, targets: TeamMask::ALL, layer: 0 }));
        fog.tick(&mut world, 50_000).unwrap();
        vis(&mut fog)
    };
    let hidden = anti(Profile { ray_method: RayMethod::None, ..raw_profile() });
    assert_eq!(at(&hidden, 40, 32), 0);
    let moved_eyes = anti(Profile { ray_method: RayMethod::None, eye_offset: Vec3::new(2.0, 0.0, 0.0), ..raw_profile() });
    assert_eq!(at(&moved_eyes, 40, 32), 0, "the anti-vision area did not move with the eyes");
    assert!(at(&moved_eyes, 3, 32) == 0 && at(&hidden, 3, 32) > 0, "the eye moved by the profile's offset");
    // A bad offset is named and changes nothing.
    let mut fog = fog_on(make(), raw_profile());
    for (axis, bad) in [("x", Vec3::new(f32::NAN, 0.0, 0.0)), ("z", Vec3::new(0.0, 0.0, 2.0e6))] {
        let e = fog.apply_profile("i", Profile { eye_offset: bad, ..raw_profile() }).unwrap_err().to_string();
        assert!(e.contains(&format!("profile.eye_offset.{axis}")), "{e}");
    }
    assert_eq!(fog.instance("i").unwrap().profile, raw_profile());
}

pub const TESTS: &[Test] = &[
    ("a_profile_offset_and_see_through_act_on_every_source", a_profile_offset_and_see_through_act_on_every_source),
    ("a_see_through_source_ignores_every_blocker", a_see_through_source_ignores_every_blocker),
    ("an_eye_offset_sees_from_the_offset_point", an_eye_offset_sees_from_the_offset_point),
    ("lone_source_on_empty_map_is_a_disk_with_linear_falloff", lone_source_on_empty_map_is_a_disk_with_linear_falloff),
    ("a_wall_casts_the_expected_shadow_and_is_itself_lit", a_wall_casts_the_expected_shadow_and_is_itself_lit),
    ("an_eye_above_a_low_wall_sees_over_it_but_not_over_a_tall_one", an_eye_above_a_low_wall_sees_over_it_but_not_over_a_tall_one),
    ("cones_reveal_only_inside_their_half_angle", cones_reveal_only_inside_their_half_angle),
    ("z_gating_and_overlap_strength", z_gating_and_overlap_strength),
    ("height_layer_blockers_occlude_only_their_slab", height_layer_blockers_occlude_only_their_slab),
    ("memory_decays_at_the_forget_rate_and_freezes", memory_decays_at_the_forget_rate_and_freezes),
    ("fade_in_and_relax_follow_their_rates_over_ticks", fade_in_and_relax_follow_their_rates_over_ticks),
    ("cadence_recomputes_every_update_rate_and_blends_every_tick", cadence_recomputes_every_update_rate_and_blends_every_tick),
    ("teams_filter_sources", teams_filter_sources),
    ("a_crowded_tile_drops_no_source", a_crowded_tile_drops_no_source),
    ("lod_upscales_bilinearly_to_the_output", lod_upscales_bilinearly_to_the_output),
];
