//! The WGSL mirrors of core's GPU-visible structs have the same size and
//! field offsets, and every shader module parses and validates (naga). No
//! adapter needed.

use murk_core::{CircleTexel, FrameParams, PolygonTexel, SourceTexel};
use std::mem::{offset_of, size_of};
use wgpu::naga;

/// `(size, member offsets)` of a WGSL struct, by name.
fn wgsl_struct(module: &naga::Module, name: &str) -> (u32, Vec<(String, u32)>) {
    for (_, ty) in module.types.iter() {
        if ty.name.as_deref() == Some(name) {
            if let naga::TypeInner::Struct { members, span } = &ty.inner {
                return (*span, members.iter().map(|m| (m.name.clone().unwrap_or_default(), m.offset)).collect());
            }
        }
    }
    panic!("struct {name} not found in the module");
}

#[test]
fn wgsl_structs_match_the_rust_layouts() {
    let src = murk_gpu::wgsl_source("visibility").unwrap();
    let module = naga::front::wgsl::parse_str(&src).unwrap();
    macro_rules! check {
        ($ty:ty, $name:literal, [$($field:ident),*]) => {{
            let (size, members) = wgsl_struct(&module, $name);
            assert_eq!(size as usize, size_of::<$ty>(), "size of {}", $name);
            let rust: Vec<(String, u32)> = vec![$((stringify!($field).to_string(), offset_of!($ty, $field) as u32)),*];
            assert_eq!(members, rust, "fields of {}", $name);
        }};
    }
    check!(SourceTexel, "SourceTexel", [x, y, radius, inner_radius, eye, cone_x, cone_y, cone_cos, strength, flags]);
    check!(CircleTexel, "CircleTexel", [x, y, radius, height]);
    check!(PolygonTexel, "PolygonTexel", [first, count, height, pad]);
    check!(
        FrameParams,
        "FrameParams",
        [
            width,
            height,
            out_width,
            out_height,
            tile_size,
            tiles_x,
            method,
            target_height,
            df_width,
            df_height,
            df_scale,
            soft_shadow_k_q8,
            df_jitter,
            mip_levels,
            blur_radius,
            forget_step,
            fade_in_step,
            relax_step,
            explored_value,
            show_memory_alpha,
            freeze_memory,
            blend_t,
            has_capture,
            lod_scale,
            reveal_walls,
            mapped_value
        ]
    );
}

/// The per-dispatch parameter blocks have one named struct on each side.
#[test]
fn dispatch_parameters_match_their_wgsl_structs() {
    use murk_gpu::passes::{blur::BlurAxis, distance_field::DfRegion, mips::MipStep};
    use murk_gpu::{FootprintRange, SampleRange};
    macro_rules! check {
        ($module:literal, $ty:ty, $name:literal, [$($field:ident),*]) => {{
            let src = murk_gpu::wgsl_source($module).unwrap();
            let module = naga::front::wgsl::parse_str(&src).unwrap();
            let (size, members) = wgsl_struct(&module, $name);
            assert_eq!(size as usize, size_of::<$ty>(), "size of {}", $name);
            let rust: Vec<(String, u32)> = vec![$((stringify!($field).to_string(), offset_of!($ty, $field) as u32)),*];
            assert_eq!(members, rust, "fields of {}", $name);
        }};
    }
    check!("blur", BlurAxis, "BlurAxis", [along_y, pad0, pad1, pad2]);
    check!("mips", MipStep, "MipStep", [source_offset, target_offset, source_width, source_height, region_x, region_y, region_width, region_rows]);
    check!("sample", SampleRange, "SampleRange", [first, count, pad, ends]);
    check!("footprints", FootprintRange, "FootprintRange", [count, pad0, pad1, pad2, starts, ends_at, texels_at, out_at, cutoffs]);
    check!("distance_field", DfRegion, "DfRegion", [x0, y0, x1, y1, full, pad0, pad1, pad2]);
}

#[test]
fn every_shader_parses_and_validates() {
    for name in murk_gpu::module_names() {
        let src = murk_gpu::wgsl_source(name).unwrap();
        let module = naga::front::wgsl::parse_str(&src).unwrap_or_else(|e| panic!("{name}.wgsl: {}", e.emit_to_string(&src)));
        naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::empty())
            .validate(&module)
            .unwrap_or_else(|e| panic!("{name}.wgsl does not validate: {e:?}"));
    }
}

#[test]
fn every_pass_has_a_twin_on_each_backend() {
    for pass in murk_core::Pass::ALL.map(murk_core::Pass::name) {
        assert_eq!(pass.parse::<murk_core::Pass>().unwrap().name(), pass);
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        assert!(root.join(format!("backend-gpu/shaders/{pass}.wgsl")).exists(), "{pass}.wgsl");
        assert!(root.join(format!("backend-gpu/src/passes/{pass}.rs")).exists(), "gpu {pass}.rs");
        let cpu = root.join("backend-cpu/src/passes");
        assert!(cpu.join(format!("{pass}.rs")).exists() || cpu.join(pass).join("mod.rs").exists(), "cpu {pass}.rs or {pass}/mod.rs");
    }
}

/// The engine include parses and validates (as a library module), and its
/// parameter block matches `ShaderParams`.
#[test]
fn the_engine_include_validates_and_mirrors_shader_params() {
    let src = include_str!("../include/murk_fog.wgsl");
    let module = naga::front::wgsl::parse_str(src).unwrap_or_else(|e| panic!("murk_fog.wgsl: {}", e.emit_to_string(src)));
    naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::empty())
        .validate(&module)
        .unwrap_or_else(|e| panic!("murk_fog.wgsl does not validate: {e:?}"));
    let (size, members) = wgsl_struct(&module, "MurkFogParams");
    assert_eq!(size as usize, size_of::<murk_core::ShaderParams>());
    let rust: Vec<(String, u32)> = [
        ("center", offset_of!(murk_core::ShaderParams, center)),
        ("enabled", offset_of!(murk_core::ShaderParams, enabled)),
        ("size", offset_of!(murk_core::ShaderParams, size)),
        ("yaw_degrees", offset_of!(murk_core::ShaderParams, yaw_degrees)),
        ("visibility_cutoff", offset_of!(murk_core::ShaderParams, visibility_cutoff)),
        ("use_z_layering", offset_of!(murk_core::ShaderParams, use_z_layering)),
        ("explored_value", offset_of!(murk_core::ShaderParams, explored_value)),
        ("mapped_value", offset_of!(murk_core::ShaderParams, mapped_value)),
    ]
    .iter()
    .map(|(n, o)| (n.to_string(), *o as u32))
    .collect();
    assert_eq!(members, rust);
}

/// The fog surface's parameters are uploaded as-is: same size and offsets.
#[test]
fn the_surface_look_mirrors_surface_params() {
    use murk_looks::SurfaceParams;
    let src = murk_gpu::wgsl_source("surface").unwrap();
    let module = naga::front::wgsl::parse_str(&src).unwrap();
    let (size, members) = wgsl_struct(&module, "SurfaceParams");
    assert_eq!(size as usize, size_of::<SurfaceParams>());
    let rust: Vec<(String, u32)> = [
        ("origin", offset_of!(SurfaceParams, origin)),
        ("spacing", offset_of!(SurfaceParams, spacing)),
        ("cols", offset_of!(SurfaceParams, cols)),
        ("rows", offset_of!(SurfaceParams, rows)),
        ("time_s", offset_of!(SurfaceParams, time_s)),
        ("fog_level", offset_of!(SurfaceParams, fog_level)),
        ("amplitude", offset_of!(SurfaceParams, amplitude)),
        ("noise_scale", offset_of!(SurfaceParams, noise_scale)),
        ("speed", offset_of!(SurfaceParams, speed)),
        ("sink", offset_of!(SurfaceParams, sink)),
    ]
    .iter()
    .map(|(n, o)| (n.to_string(), *o as u32))
    .collect();
    assert_eq!(members, rust);
}
