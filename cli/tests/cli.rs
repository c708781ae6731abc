//! The `murk` binary, end to end.

use murk_conformance::harness::{read_png, read_png16};
use murk_looks::Look;
use std::path::{Path, PathBuf};
use std::process::Command;

fn murk() -> Command {
    Command::new(env!("CARGO_BIN_EXE_murk"))
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn temp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("murk-cli-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

#[test]
fn run_writes_final_masks_stages_and_a_summary() {
    let out = temp("outpost");
    let st = murk()
        .args(["run", "scenarios/outpost.json", "--threads", "2", "--ticks", "12", "--stages", "--out"])
        .arg(&out)
        .current_dir(repo())
        .output()
        .unwrap();
    assert!(st.status.success(), "{}", String::from_utf8_lossy(&st.stderr));
    let (w, h, px) = read_png16(&out.join("ground.final.png")).unwrap();
    assert_eq!((w, h), (216, 224));
    assert!(px.iter().any(|&v| v > 60000) && px.contains(&0), "visible and unseen texels");
    for pass in ["coverage", "height", "mips", "visibility", "blur", "memory", "compose", "upscale", "final"] {
        assert!(out.join(format!("ground.{pass}.png")).exists(), "{pass}");
        assert!(out.join(format!("minimap.{pass}.png")).exists(), "{pass}");
    }
    let summary: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["ticks"], 12);
    assert_eq!(
        summary["format"], 6,
        "explored counts and sight lines, sight sets and events, the block state hash of square leaves, mapped state included"
    );
    assert_eq!(summary["per_tick"].as_array().unwrap().len(), 12);
    assert_eq!(summary["per_tick"][11]["hashes"]["ground"].as_str().unwrap().len(), 16);
    assert_eq!(summary["settings"]["instances"][0]["profile"]["explored_value"], 0.4);
    // The explored count: the memory texels above 0 of the run's end.
    let (mw, mh, memory) = read_png16(&out.join("ground.memory.png")).unwrap();
    let explored = &summary["settings"]["instances"][0]["explored"];
    assert_eq!(explored["of"], u64::from(mw * mh));
    assert_eq!(explored["texels"], memory.iter().filter(|&&m| m > 0).count() as u64);
    // The same run on one thread gives the same hashes.
    let out1 = temp("outpost-1");
    let st =
        murk().args(["run", "scenarios/outpost.json", "--threads", "1", "--ticks", "12", "--out"]).arg(&out1).current_dir(repo()).output().unwrap();
    assert!(st.status.success());
    let s1: serde_json::Value = serde_json::from_slice(&std::fs::read(out1.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["per_tick"], s1["per_tick"]);
    let _ = std::fs::remove_dir_all(out);
    let _ = std::fs::remove_dir_all(out1);
}

#[test]
fn ron_scenarios_run_too() {
    let dir = temp("ron");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("s.ron");
    std::fs::write(
        &file,
        r#"(name: "x", ticks: 4, instances: [(name: "i", area: (center: (0.0, 0.0, 5.0), extents: (64.0, 64.0, 10.0)), resolution: 64)],
            sources: [(id: "a", position: (1.0, 2.0, 0.0), source: (radius: 8.0))],
            events: [(tick: 3, action: despawn(id: "a")), (tick: 2, action: mark_capture_dirty)])"#,
    )
    .unwrap();
    let st = murk().args(["run"]).arg(&file).arg("--out").arg(dir.join("out")).output().unwrap();
    assert!(st.status.success(), "{}", String::from_utf8_lossy(&st.stderr));
    assert!(dir.join("out/i.final.png").exists());
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn bad_input_is_a_clear_error_not_a_panic() {
    let dir = temp("bad");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("bad.json");
    std::fs::write(&file, "{\"name\": \"x\", \"ticks\": 1,\n\"instances\": [ }").unwrap();
    let st = murk().arg("run").arg(&file).output().unwrap();
    assert!(!st.status.success());
    let err = String::from_utf8_lossy(&st.stderr);
    assert!(err.contains("cannot parse") && err.contains("line 2"), "{err}");
    assert!(!err.contains("panicked"));
    let st = murk().args(["run", "scenarios/outpost.json", "--threads", "0"]).current_dir(repo()).output().unwrap();
    let err = String::from_utf8_lossy(&st.stderr);
    assert!(err.contains("'0'") && err.contains("--threads"), "{err}");
    let st = murk().args(["run", "scenarios/outpost.json", "--backend", "quantum"]).current_dir(repo()).output().unwrap();
    let err = String::from_utf8_lossy(&st.stderr);
    assert!(err.contains("'quantum'") && err.contains("--backend") && err.contains("cpu, gpu or auto"), "{err}");
    let st = murk().args(["run", "missing.json"]).output().unwrap();
    assert!(String::from_utf8_lossy(&st.stderr).contains("missing.json"));
    // Tick counts out of bounds are refused before anything runs or is
    // allocated, naming the option and its bound.
    for (ticks, shown) in [("1000000000", "'1000000000'"), ("-1", "'-1'"), ("0", "'0'")] {
        let st = murk().args(["run", "scenarios/outpost.json", "--ticks", ticks]).current_dir(repo()).output().unwrap();
        assert!(!st.status.success());
        let err = String::from_utf8_lossy(&st.stderr);
        assert!(err.contains(shown) && err.contains("--ticks") && err.contains("1..=1000000"), "{err}");
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn the_demo_writes_its_pictures() {
    let dir = temp("demo");
    std::fs::create_dir_all(&dir).unwrap();
    let st = murk().current_dir(&dir).output().unwrap();
    assert!(st.status.success(), "{}", String::from_utf8_lossy(&st.stderr));
    let stdout = String::from_utf8_lossy(&st.stdout);
    for f in ["demo.visibility.png", "demo.memory.png", "demo.final.png", "demo.overlay.png"] {
        assert!(dir.join("murk-out/demo").join(f).exists(), "{f}");
        assert!(stdout.contains(f), "the demo says where {f} is");
    }
    let (w, h, px) = read_png16(&dir.join("murk-out/demo/demo.final.png")).unwrap();
    assert_eq!((w, h), (388, 388));
    let explored = px.iter().filter(|&&v| v > 0).count();
    assert!(explored > 20_000 && explored < 140_000, "{explored} explored texels");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn snapshot_at_and_resume_continue_the_same_run() {
    let full = temp("infil-full");
    let st = murk().args(["run", "scenarios/infiltration.json", "--snapshot-at", "19", "--out"]).arg(&full).current_dir(repo()).output().unwrap();
    assert!(st.status.success(), "{}", String::from_utf8_lossy(&st.stderr));
    let snap = full.join("snapshot-19.murk");
    assert!(snap.exists());
    let resumed = temp("infil-resumed");
    let st = murk().arg("resume").arg(&snap).arg("--threads").arg("1").arg("--out").arg(&resumed).output().unwrap();
    assert!(st.status.success(), "{}", String::from_utf8_lossy(&st.stderr));
    let a: serde_json::Value = serde_json::from_slice(&std::fs::read(full.join("summary.json")).unwrap()).unwrap();
    let b: serde_json::Value = serde_json::from_slice(&std::fs::read(resumed.join("summary.json")).unwrap()).unwrap();
    let (a, b) = (a["per_tick"].as_array().unwrap(), b["per_tick"].as_array().unwrap());
    assert_eq!(b.len(), 25);
    assert_eq!(&a[20..], &b[..], "ticks 20.. agree, lockstep hashes and stealth events included");
    let events: Vec<&str> = a.iter().flat_map(|t| t["events"].as_array().into_iter().flatten()).map(|e| e["event"].as_str().unwrap()).collect();
    assert_eq!(events, ["revealed", "hidden", "ghost_spawned", "ghost_removed", "revealed"]);
    assert_eq!(a[20]["queries"][0]["id"], "where-is-the-thief");
    // A damaged snapshot is a clear error.
    let mut bytes = std::fs::read(&snap).unwrap();
    bytes.truncate(bytes.len() - 3);
    let bad = resumed.join("bad.murk");
    std::fs::write(&bad, bytes).unwrap();
    let st = murk().arg("resume").arg(&bad).output().unwrap();
    assert!(!st.status.success());
    assert!(String::from_utf8_lossy(&st.stderr).contains("truncated"), "{}", String::from_utf8_lossy(&st.stderr));
    let _ = std::fs::remove_dir_all(full);
    let _ = std::fs::remove_dir_all(resumed);
}

#[test]
#[ignore = "needs a GPU adapter: cargo test -p murk-cli -- --ignored"]
fn gpu_compare_cpu_agrees() {
    let st =
        murk().args(["run", "scenarios/outpost.json", "--backend", "gpu", "--compare", "cpu", "--ticks", "15"]).current_dir(repo()).output().unwrap();
    let out = String::from_utf8_lossy(&st.stdout);
    assert!(st.status.success(), "{}", String::from_utf8_lossy(&st.stderr));
    assert!(out.contains("agree: every pass of every instance, byte for byte, for 15 ticks"), "{out}");
}

#[test]
fn gpu_without_an_adapter_is_a_clear_error_and_auto_falls_back() {
    // With only Vulkan allowed and no Vulkan driver visible, `gpu` fails
    // clearly and `auto` runs on the CPU.
    let st = murk()
        .args(["run", "scenarios/infiltration.json", "--backend", "gpu", "--ticks", "2"])
        .env("MURK_WGPU_BACKEND", "vulkan")
        .env("VK_ICD_FILENAMES", "/nonexistent.json")
        .env("VK_DRIVER_FILES", "/nonexistent.json")
        .current_dir(repo())
        .output()
        .unwrap();
    assert!(!st.status.success());
    let err = String::from_utf8_lossy(&st.stderr);
    assert!(err.contains("--backend gpu") && err.contains("no GPU adapter"), "{err}");
    let dir = temp("fallback");
    let st = murk()
        .args(["run", "scenarios/infiltration.json", "--backend", "auto", "--ticks", "2", "--out"])
        .arg(&dir)
        .env("MURK_WGPU_BACKEND", "vulkan")
        .env("VK_ICD_FILENAMES", "/nonexistent.json")
        .env("VK_DRIVER_FILES", "/nonexistent.json")
        .current_dir(repo())
        .output()
        .unwrap();
    assert!(st.status.success(), "{}", String::from_utf8_lossy(&st.stderr));
    assert!(String::from_utf8_lossy(&st.stderr).contains("auto: no usable GPU"), "{}", String::from_utf8_lossy(&st.stderr));
    let _ = std::fs::remove_dir_all(dir);
}

/// `auto` never runs on a software adapter: where the only adapter runs on
/// the CPU (lavapipe in CI), it runs the CPU backend and says why; `gpu`
/// still runs there. Where the adapter is hardware, `auto` runs on it.
#[cfg(feature = "gpu")]
#[test]
#[ignore = "needs a GPU adapter: cargo test -p murk-cli -- --ignored"]
fn auto_never_runs_on_a_software_adapter() {
    let software = murk_gpu::GpuBackend::new().unwrap_or_else(|e| panic!("the GPU test did not run: {e}")).is_software();
    let dir = temp("auto-software");
    let run = |backend: &str| {
        let st = murk()
            .args(["run", "scenarios/infiltration.json", "--backend", backend, "--ticks", "3", "--out"])
            .arg(&dir)
            .current_dir(repo())
            .output()
            .unwrap();
        assert!(st.status.success(), "{}", String::from_utf8_lossy(&st.stderr));
        format!("{}{}", String::from_utf8_lossy(&st.stdout), String::from_utf8_lossy(&st.stderr))
    };
    let backend = || -> String {
        let summary: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("summary.json")).unwrap()).unwrap();
        summary["backend"].as_str().unwrap().to_string()
    };
    let auto = run("auto");
    if software {
        assert!(auto.contains("auto: no usable GPU") && auto.contains("software") && auto.contains("running on the cpu"), "{auto}");
        assert!(backend().starts_with("cpu"), "{}", backend());
    } else {
        assert!(auto.contains("auto: gpu on"), "{auto}");
        assert!(backend().starts_with("gpu["), "{}", backend());
    }
    assert!(run("gpu").contains("gpu on"), "`gpu` runs on any adapter");
    assert!(backend().starts_with("gpu["), "{}", backend());
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
#[ignore = "needs a GPU adapter: cargo test -p murk-cli -- --ignored"]
fn gpu_timings_print_the_device_time_of_each_pass() {
    let dir = temp("timings");
    let st = murk()
        .args(["run", "scenarios/infiltration.json", "--backend", "gpu", "--ticks", "12", "--timings", "--out"])
        .arg(&dir)
        .current_dir(repo())
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&st.stdout);
    assert!(st.status.success(), "{}", String::from_utf8_lossy(&st.stderr));
    assert!(out.contains("device time per pass over 12 ticks on gpu["), "{out}");
    let blend = out.lines().find(|l| l.trim_start().starts_with("blend")).unwrap_or_else(|| panic!("{out}"));
    assert_eq!(blend.split_whitespace().nth(1), Some("12"), "one blend a tick: {blend}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
#[ignore = "needs a GPU adapter: cargo test -p murk-cli -- --ignored"]
fn the_top_view_renders_from_the_gpu_texture() {
    let dir = temp("top-view");
    let st = render("top-view", "gpu", &dir);
    assert!(st.status.success(), "{}", String::from_utf8_lossy(&st.stderr));
    let last = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "png"))
        .max()
        .expect("frames were written");
    let (w, h, rgb) = read_rgb8(&last);
    assert_eq!((w, h), (96, 54));
    // The guard's view is clear ground (green over 100), never-seen fog is near black.
    let greens: Vec<u8> = rgb.chunks(3).map(|p| p[1]).collect();
    assert!(greens.iter().any(|&g| g > 100) && greens.iter().any(|&g| g < 30), "{last:?} is not clear and fogged");
    assert!(dir.join("guard-view.top-view.gif").exists());
    let st = render("top-view", "cpu", &dir);
    assert!(!st.status.success());
    assert!(String::from_utf8_lossy(&st.stderr).contains("use --backend gpu"));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn timings_need_a_backend_that_times_its_passes() {
    let st =
        murk().args(["run", "scenarios/infiltration.json", "--backend", "cpu", "--ticks", "1", "--timings"]).current_dir(repo()).output().unwrap();
    assert!(!st.status.success());
    let err = String::from_utf8_lossy(&st.stderr);
    assert!(err.contains("--timings") && err.contains("does not time its passes"), "{err}");
}

#[test]
fn an_unknown_wgpu_backend_is_named() {
    let st = murk()
        .args(["run", "scenarios/infiltration.json", "--backend", "gpu", "--ticks", "1"])
        .env("MURK_WGPU_BACKEND", "glide")
        .current_dir(repo())
        .output()
        .unwrap();
    assert!(!st.status.success());
    let err = String::from_utf8_lossy(&st.stderr);
    assert!(err.contains("MURK_WGPU_BACKEND = glide") && err.contains("names no wgpu backend"), "{err}");
}

fn read_rgb8(path: &Path) -> (u32, u32, Vec<u8>) {
    read_png(path, png::ColorType::Rgb, png::BitDepth::Eight).unwrap()
}

fn render(variant: &str, backend: &str, dir: &Path) -> std::process::Output {
    murk()
        .args(["render", "scenarios/infiltration.json", "--look", variant, "--backend", backend, "--every", "20", "--size", "96x54", "--out"])
        .arg(dir)
        .current_dir(repo())
        .output()
        .unwrap()
}

#[test]
fn render_writes_frames_a_gif_and_a_mesh_for_every_variant() {
    let mut last_frames = Vec::new();
    for variant in Look::ALL.map(Look::name) {
        let dir = temp(&format!("render-{variant}"));
        let st = render(variant, "cpu", &dir);
        assert!(st.status.success(), "{variant}: {}", String::from_utf8_lossy(&st.stderr));
        let files: Vec<String> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
        for tick in ["0000", "0020", "0040", "0044"] {
            assert!(files.contains(&format!("guard-view.{variant}.{tick}.png")), "{variant} {tick}: {files:?}");
        }
        let (w, h, px) = read_rgb8(&dir.join(format!("guard-view.{variant}.0044.png")));
        assert_eq!((w, h), (96, 54));
        let gif = std::fs::read(dir.join(format!("guard-view.{variant}.gif"))).unwrap();
        assert_eq!(&gif[..6], b"GIF89a", "{variant}: an animated GIF");
        assert_eq!(u16::from_le_bytes([gif[6], gif[7]]), 96);
        if variant == Look::Surface.name() {
            let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("guard-view.surface.gltf")).unwrap()).unwrap();
            assert_eq!(doc["asset"]["version"], "2.0");
            assert!(doc["nodes"].as_array().unwrap().len() > 1, "chunks");
        }
        last_frames.push(px);
        let _ = std::fs::remove_dir_all(dir);
    }
    assert!(last_frames[0] != last_frames[1] && last_frames[1] != last_frames[2], "three different looks");
    let st = murk().args(["render", "scenarios/infiltration.json", "--look", "smoke"]).current_dir(repo()).output().unwrap();
    assert!(!st.status.success());
    let err = String::from_utf8_lossy(&st.stderr);
    assert!(err.contains("'smoke'") && err.contains("--look") && err.contains("overlay, surface, volume"), "{err}");
    let st = murk().args(["render", "scenarios/infiltration.json", "--look", "volume", "--size", "8x8"]).current_dir(repo()).output().unwrap();
    assert!(!st.status.success());
    assert!(String::from_utf8_lossy(&st.stderr).contains("--size = 8x8"));
}

#[test]
#[ignore = "needs a GPU adapter: cargo test -p murk-cli -- --ignored"]
fn render_on_the_gpu_matches_the_cpu_within_tolerance() {
    for variant in Look::ALL.map(Look::name) {
        let (cpu, gpu) = (temp(&format!("render-cpu-{variant}")), temp(&format!("render-gpu-{variant}")));
        for (dir, backend) in [(&cpu, "cpu"), (&gpu, "gpu")] {
            let st = render(variant, backend, dir);
            assert!(st.status.success(), "{variant} on {backend}: {}", String::from_utf8_lossy(&st.stderr));
        }
        for tick in ["0000", "0020", "0044"] {
            let name = format!("guard-view.{variant}.{tick}.png");
            let (_, _, a) = read_rgb8(&cpu.join(&name));
            let (_, _, b) = read_rgb8(&gpu.join(&name));
            let worst = a.iter().zip(&b).map(|(x, y)| x.abs_diff(*y)).max().unwrap();
            assert!(worst <= 3, "{name}: CPU and GPU frames differ by {worst} in an 8-bit channel");
        }
        let _ = std::fs::remove_dir_all(cpu);
        let _ = std::fs::remove_dir_all(gpu);
    }
}

#[test]
fn a_bare_file_name_runs_from_its_folder() {
    // `murk run outpost.json` inside scenarios/: the base folder is the current one.
    let out = temp("bare");
    let st = murk()
        .args(["run", "outpost.json", "--threads", "1", "--ticks", "2", "--snapshot-at", "1", "--out"])
        .arg(&out)
        .current_dir(repo().join("scenarios"))
        .output()
        .unwrap();
    assert!(st.status.success(), "{}", String::from_utf8_lossy(&st.stderr));
    assert!(out.join("summary.json").exists() && out.join("snapshot-1.murk").exists());
    let st = murk().args(["run", "outpost.json", "--ticks", "0"]).current_dir(repo().join("scenarios")).output().unwrap();
    let err = String::from_utf8_lossy(&st.stderr);
    assert!(err.contains("'0'") && err.contains("--ticks"), "{err}");
    let _ = std::fs::remove_dir_all(out);
}

#[test]
fn help_lists_every_command_and_option() {
    let st = murk().arg("--help").output().unwrap();
    assert!(st.status.success());
    let out = String::from_utf8_lossy(&st.stdout);
    for word in ["run", "resume", "render", "demo"] {
        assert!(out.contains(word), "`murk --help` names {word}: {out}");
    }
    let st = murk().args(["run", "--help"]).output().unwrap();
    let out = String::from_utf8_lossy(&st.stdout);
    for flag in ["--backend <cpu|gpu|auto>", "--compare", "--threads <N>", "--ticks <N>", "--stages", "--snapshot-at <TICK>", "--out <DIR>"] {
        assert!(out.contains(flag), "`murk run --help` lists {flag}: {out}");
    }
    let st = murk().args(["render", "--help"]).output().unwrap();
    let out = String::from_utf8_lossy(&st.stdout);
    assert!(out.contains("--look <LOOK>") && out.contains("overlay, surface, volume"), "{out}");
}

/// Tracked entities in a scenario: each observer's set, the sight events
/// and the per-observer stealth events land in `summary.json` tick by tick
/// (`scenarios/patrol.json`: a red runner crosses blue's sight and leaves
/// it; a per-observer spy is revealed to red and then to blue); a negative
/// footprint is refused by its path.
#[test]
fn tracked_entities_and_their_sets_reach_the_summary() {
    let dir = temp("patrol");
    let st = murk().args(["run", "scenarios/patrol.json", "--out"]).arg(&dir).current_dir(repo()).output().unwrap();
    assert!(st.status.success(), "{}", String::from_utf8_lossy(&st.stderr));
    let summary: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["format"], 6);
    let ticks = summary["per_tick"].as_array().unwrap();
    let events = |observer: &str, entity: &str| -> Vec<(u64, String)> {
        ticks
            .iter()
            .flat_map(|t| {
                t["sight_events"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|e| e["observer"] == observer && e["entity"] == entity)
                    .map(move |e| (t["tick"].as_u64().unwrap(), e["event"].as_str().unwrap().to_string()))
            })
            .collect()
    };
    let runner = events("blue", "red-runner");
    assert!(runner.len() >= 2 && runner[0].1 == "entered" && runner[1].1 == "left", "{runner:?}");
    // Between the two events blue's set holds the runner, and not before.
    let (entered, left) = (runner[0].0 as usize, runner[1].0 as usize);
    let holds = |t: usize| ticks[t]["sight"]["blue"].as_array().is_some_and(|s| s.iter().any(|e| e == "red-runner"));
    assert!((entered..left).all(holds) && !(0..entered).any(holds), "blue's set follows its events");
    assert!(ticks[..2].iter().all(|t| t.get("sight").is_none()), "nothing is judged in the first two ticks");
    let spy: Vec<&serde_json::Value> =
        ticks.iter().flat_map(|t| t["observer_events"].as_array().into_iter().flatten()).filter(|e| e["actor"] == "spy").collect();
    for observer in ["red", "blue"] {
        assert!(spy.iter().any(|e| e["observer"] == observer && e["event"] == "revealed"), "{spy:?}");
        assert!(events(observer, "spy").first().is_some_and(|e| e.1 == "entered"), "the spy enters {observer}'s set");
    }
    // A negative footprint is named and runs nothing.
    let text = std::fs::read_to_string(repo().join("scenarios/patrol.json")).unwrap().replace("\"footprint\": 0.5", "\"footprint\": -0.5");
    let bad = dir.join("bad.json");
    std::fs::write(&bad, text).unwrap();
    let st = murk().args(["run"]).arg(&bad).arg("--out").arg(dir.join("bad")).current_dir(repo()).output().unwrap();
    assert!(!st.status.success());
    let err = String::from_utf8_lossy(&st.stderr);
    assert!(err.contains("sources[2].tracked.footprint = -0.5"), "{err}");
    let _ = std::fs::remove_dir_all(dir);
}

/// A cloaked actor in a scenario (`scenarios/cloak.json`): both teams see
/// the ground it crosses, only blue has a detector that gets it in sight,
/// so only blue is shown it; a scripted sight line from blue's detector
/// lands in the summary.
#[test]
fn cloaked_actors_show_only_to_the_team_that_detects_them() {
    let dir = temp("cloak");
    let st = murk().args(["run", "scenarios/cloak.json", "--out"]).arg(&dir).current_dir(repo()).output().unwrap();
    assert!(st.status.success(), "{}", String::from_utf8_lossy(&st.stderr));
    let summary: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("summary.json")).unwrap()).unwrap();
    let ticks = summary["per_tick"].as_array().unwrap();
    let shade: Vec<&serde_json::Value> =
        ticks.iter().flat_map(|t| t["observer_events"].as_array().into_iter().flatten()).filter(|e| e["actor"] == "shade").collect();
    assert!(shade.iter().any(|e| e["observer"] == "blue" && e["event"] == "revealed"), "{shade:?}");
    assert!(!shade.iter().any(|e| e["observer"] == "red" && e["event"] == "revealed"), "{shade:?}");
    let lines = ticks[30]["queries"][0]["lines"].as_array().expect("the sight lines of the query");
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["visible"], true, "open ground beside the detector");
    assert_eq!(lines[1]["visible"], false, "behind the wall");
    let _ = std::fs::remove_dir_all(dir);
}

/// `murk memory export` writes an instance's memory after a run; `murk
/// memory import` runs with it imported before tick 0, into an instance's
/// memory or (`--as-map`) its mapped state, which the state hash of the
/// first tick shows; an unknown instance, a file that is no memory blob and
/// another instance's memory imported as one's own are named, and nothing
/// runs.
#[test]
fn memory_is_exported_and_imported_from_the_command_line() {
    let dir = temp("memory");
    let blob = dir.join("red.mem");
    let st = murk()
        .args(["memory", "export", "scenarios/patrol.json", "--instance", "red", "--to"])
        .arg(&blob)
        .arg("--out")
        .arg(dir.join("export"))
        .current_dir(repo())
        .output()
        .unwrap();
    assert!(st.status.success(), "{}", String::from_utf8_lossy(&st.stderr));
    assert!(std::fs::read(&blob).unwrap().starts_with(b"MURKMEM\0"), "a memory blob");
    let first_hash = |out: &Path, instance: &str| -> String {
        let summary: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
        summary["per_tick"][0]["hashes"][instance].as_str().unwrap().to_string()
    };
    let run = |args: &[&str], out: &Path| {
        let st = murk().args(args).arg("--ticks").arg("1").arg("--out").arg(out).current_dir(repo()).output().unwrap();
        (st.status.success(), String::from_utf8_lossy(&st.stderr).to_string())
    };
    let plain = dir.join("plain");
    assert!(run(&["run", "scenarios/patrol.json"], &plain).0);
    // Red's own memory goes back into red; blue takes it as an ally's map.
    for (instance, as_map) in [("blue", true), ("red", false), ("red", true)] {
        let out = dir.join(format!("import-{instance}-{as_map}"));
        let mut args = vec!["memory", "import", "scenarios/patrol.json", "--instance", instance, "--from", blob.to_str().unwrap()];
        if as_map {
            args.push("--as-map");
        }
        let (ok, err) = run(&args, &out);
        assert!(ok, "{err}");
        assert!(err.contains(&format!("imported {} into `{instance}`", blob.display())), "{err}");
        assert_ne!(first_hash(&out, instance), first_hash(&plain, instance), "{instance} (as map: {as_map}) starts from the imported memory");
    }
    let (ok, err) = run(&["memory", "import", "scenarios/patrol.json", "--instance", "nowhere", "--from", blob.to_str().unwrap()], &dir.join("bad1"));
    assert!(!ok && err.contains("nowhere"), "{err}");
    let (ok, err) = run(&["memory", "export", "scenarios/patrol.json", "--instance", "nowhere", "--to", "unused.mem"], &dir.join("bad2"));
    assert!(!ok && err.contains("--instance nowhere"), "{err}");
    let (ok, err) = run(&["memory", "import", "scenarios/patrol.json", "--instance", "blue", "--from", blob.to_str().unwrap()], &dir.join("bad4"));
    assert!(!ok && err.contains("memory.instance = red") && err.contains("`blue`"), "red's memory is not blue's: {err}");
    let junk = dir.join("junk.mem");
    std::fs::write(&junk, b"not a memory blob at all, just text").unwrap();
    let (ok, err) = run(&["memory", "import", "scenarios/patrol.json", "--instance", "red", "--from", junk.to_str().unwrap()], &dir.join("bad3"));
    assert!(!ok && err.contains("--from") && err.contains("magic"), "{err}");
    for bad in ["bad1", "bad3", "bad4"] {
        assert!(!dir.join(bad).join("summary.json").exists(), "{bad}: nothing ran");
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// A local terrain edit as a scenario event: the rock around the
/// watchtower blown open changes the masks from that tick on and not
/// before, the same as a whole recapture would give; an edit in a scenario
/// without a map is named.
#[test]
fn terrain_edits_are_scenario_events() {
    let dir = temp("terrain");
    let base: serde_json::Value = serde_json::from_slice(&std::fs::read(repo().join("scenarios/outpost.json")).unwrap()).unwrap();
    let with = |action: serde_json::Value, name: &str| -> Vec<String> {
        let mut s = base.clone();
        s["map"]["file"] = serde_json::json!(repo().join("assets/maps/AR0011SR.map").to_str().unwrap());
        s["instances"][0]["profile_file"] = serde_json::json!(repo().join("scenarios/outpost.profile.toml").to_str().unwrap());
        if !action.is_null() {
            s["events"].as_array_mut().unwrap().push(serde_json::json!({ "tick": 10, "action": action }));
        }
        let file = dir.join(format!("{name}.json"));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(&file, s.to_string()).unwrap();
        let st = murk().arg("run").arg(&file).arg("--out").arg(dir.join(name)).current_dir(repo()).output().unwrap();
        assert!(st.status.success(), "{name}: {}", String::from_utf8_lossy(&st.stderr));
        let summary: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join(name).join("summary.json")).unwrap()).unwrap();
        summary["per_tick"].as_array().unwrap().iter().map(|t| t["lockstep"].as_str().unwrap().to_string()).collect()
    };
    let plain = with(serde_json::Value::Null, "plain");
    let open = serde_json::json!({ "edit_terrain": { "min": [90.0, 100.0], "max": [110.0, 120.0], "to": "open" } });
    let edited = with(open, "edited");
    assert_eq!(plain[..10], edited[..10], "nothing changes before the edit");
    assert_ne!(plain[12..], edited[12..], "the opened ground changes what the watchtower sees");
    // The local resample gives what a whole recapture gives after the same edit.
    let both = serde_json::json!({ "edit_terrain": { "min": [90.0, 100.0], "max": [110.0, 120.0], "to": "open" } });
    let mut s = base.clone();
    s["map"]["file"] = serde_json::json!(repo().join("assets/maps/AR0011SR.map").to_str().unwrap());
    s["instances"][0]["profile_file"] = serde_json::json!(repo().join("scenarios/outpost.profile.toml").to_str().unwrap());
    s["events"].as_array_mut().unwrap().push(serde_json::json!({ "tick": 10, "action": both }));
    s["events"].as_array_mut().unwrap().push(serde_json::json!({ "tick": 10, "action": "mark_capture_dirty" }));
    let file = dir.join("full.json");
    std::fs::write(&file, s.to_string()).unwrap();
    let st = murk().arg("run").arg(&file).arg("--out").arg(dir.join("full")).current_dir(repo()).output().unwrap();
    assert!(st.status.success(), "{}", String::from_utf8_lossy(&st.stderr));
    let summary: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("full").join("summary.json")).unwrap()).unwrap();
    let full: Vec<String> = summary["per_tick"].as_array().unwrap().iter().map(|t| t["lockstep"].as_str().unwrap().to_string()).collect();
    assert_eq!(full, edited, "the local resample equals a whole recapture");
    // Without a map the edit is named before tick 0.
    let mut s = base.clone();
    s.as_object_mut().unwrap().remove("map");
    s["instances"][0]["profile_file"] = serde_json::json!(repo().join("scenarios/outpost.profile.toml").to_str().unwrap());
    s["events"] = serde_json::json!([{ "tick": 1, "action": { "edit_terrain": { "min": [0.0, 0.0], "max": [1.0, 1.0], "to": { "height": 3.0 } } } }]);
    let file = dir.join("nomap.json");
    std::fs::write(&file, s.to_string()).unwrap();
    let st = murk().arg("run").arg(&file).arg("--out").arg(dir.join("nomap")).current_dir(repo()).output().unwrap();
    assert!(!st.status.success());
    let err = String::from_utf8_lossy(&st.stderr);
    assert!(err.contains("edit_terrain") && err.contains("needs the scenario's `map`"), "{err}");
    let _ = std::fs::remove_dir_all(dir);
}
