//! The TypeScript shapes of what crosses the boundary as plain objects:
//! the JSON of murk's components, profiles and instances (snake_case, as
//! in scenario files) and the objects a tick returns. wasm-bindgen puts
//! them into the package's `.d.ts` beside the classes it generates.

use wasm_bindgen::prelude::*;

#[wasm_bindgen(typescript_custom_section)]
const TYPES: &str = r#"
/** A world position or size, `[x, y, z]`. */
export type Vec3 = [number, number, number];
/** A ground-plane point or size, `[x, y]`. */
export type Vec2 = [number, number];

/** The box an instance covers (world units; `extents` is the full size). */
export interface Area { center: Vec3; extents: Vec3; yaw_degrees?: number }

/** How the visibility pass decides occlusion. */
export type RayMethod = "none" | "step_scan" | "dda" | "hierarchical_dda" | "distance_field";

/** An instance's settings (`docs/scenario.md`); absent fields take murk's defaults. */
export interface Profile {
  enabled?: boolean; show_fog?: boolean; freeze_state?: boolean; show_memory?: boolean; freeze_memory?: boolean;
  explored_value?: number; mapped_fraction?: number; smooth_falloff?: number;
  blur_iterations?: number; blur_radius?: number; blur_sigma?: number; visibility_cutoff?: number;
  update_rate?: number; ray_method?: RayMethod; df_scale?: number; soft_shadows?: boolean; soft_shadow_k?: number;
  df_jitter?: number; tile_size?: number; fade_in_rate?: number; relax_rate?: number; forget_rate?: number;
  show_memory_alpha?: number; target_height?: number; z_layering?: boolean; z_layering_area_scale?: number;
  reveal_walls?: boolean; resample_on_area_change?: boolean; eye_offset?: Vec3; see_through?: boolean; eyes_on_terrain?: boolean;
  /** The sensor layer it senses (0: sight), how far its blips may stray, and the domains its sight set takes (a bit set). */
  layer?: number; blip_error?: number; domains?: number;
  /** Every source and anti-vision area stands at the centre of its texel (a coarse radar grid). */
  snap_sources?: boolean;
}

/** A fog instance: one observer (a team's view). */
export interface InstanceDesc {
  name: string; area: Area; resolution: number; lod?: number;
  /** Teams 0..=63 whose sources reveal it; every team when absent. */
  observed_teams?: number[];
  profile?: Profile;
}

/** How a Moving AI map becomes a height capture. */
export interface MapSettings { cell_size?: number; origin?: Vec2; ground_z?: number; tree_height?: number }

/** A vision source. */
export interface VisionSource {
  radius: number; falloff?: number | null; eye_height?: number;
  cone?: { yaw_degrees: number; half_angle_degrees: number } | null;
  team?: number; height_layer?: { vertical_extent: number } | null; eye_offset?: Vec3; see_through?: boolean;
  detects?: "none" | "in_range" | "in_sight"; layer?: number;
}

/** An occluder's outline, relative to its position. */
export type BlockerShape =
  | { circle: { radius: number } }
  | { rect: { size: Vec2; yaw_degrees?: number } }
  | { polygon: { points: Vec2[] } };

/** An occluder; no `height` is a wall nothing sees over. */
export interface Blocker { shape: BlockerShape; height?: number | null; use_height_layer?: boolean; mobility?: "static" | "dynamic" }

/** An actor whose visibility follows the fog. */
export interface StealthActor {
  hide_mode?: "hide" | "freeze_with_ghost"; policy?: "fog_driven" | "always_visible" | "always_hidden";
  cutoff_override?: number; fade_seconds?: number; instance?: string | null; per_observer?: boolean; cloaked?: boolean;
}

/** An area hidden from the teams it targets (`targets`: a bit set of teams, bit `t` for team `t`; a JavaScript number holds teams 0..=52 exactly, so leave it out for every team). */
export interface AntiVision { radius: number; falloff?: number; targets?: number; layer?: number }

/** What an entity is made of; at least one part. */
export interface Parts {
  source?: VisionSource;
  /** With a source: murk removes the entity after this many ticks. */
  transient_ticks?: number;
  blocker?: Blocker; actor?: StealthActor; anti_vision?: AntiVision;
  /** Tracked for the sight sets (`visibleTo`), with this footprint radius. */
  tracked?: { footprint: number; domains?: number };
}

/** A stealth transition; `observer` for per-observer actors. */
export interface StealthEvent { event: "revealed" | "hidden" | "ghost_spawned" | "ghost_removed"; actor: bigint; observer?: string }

/** A tracked entity entering or leaving an observer's sight set. */
export interface SightEvent { event: "entered" | "left"; observer: string; entity: bigint }

/** What one tick did. */
export interface TickReport {
  /** The tick's index (0 for the first). */
  tick: number;
  /** The lockstep hash that landed in this tick: of the state after tick `tick - 2`. */
  hash?: { tick: number; hash: string };
  events: StealthEvent[];
  observerEvents: StealthEvent[];
  sightEvents: SightEvent[];
  /** Instances that recomputed visibility this tick. */
  recomputed: string[];
}

/** A stealth actor's state. */
export interface StealthState { visible: boolean; fade: number; lastKnown?: Vec3; ghost: boolean }

/** How much of an instance's grid its explored memory covers: `texels` of `of`, and their `fraction`. */
export interface Explored { texels: number; of: number; fraction: number }

/** An instance's final mask: `0..=65535` per texel, row 0 at the area's local -Y edge. */
export interface Mask { width: number; height: number; texels: Uint16Array }

/** What a material samples a mask with (world to texture); `block` is murk_fog.wgsl's 48-byte uniform. */
export interface MaskParams {
  center: Vec3; size: Vec3; yawDegrees: number; enabled: boolean; visibilityCutoff: number;
  zLayering: boolean; exploredValue: number; mappedValue: number; block: Float32Array;
}

/** The versions this build speaks. */
export interface Versions {
  /** The package and crate version. */
  package: string;
  /** Snapshot container format: snapshots and memory blobs of this format restore here. */
  snapshotFormat: number;
  /** Hash definition: builds of the same version give the same lockstep hash of the same state. */
  hashFormat: number;
}

/** The browser's `GPUDevice` where WebGPU types are known (lib.dom or @webgpu/types), else `object`. */
export type MurkGpuDevice = typeof globalThis extends { GPUDevice: { prototype: infer D } } ? D : object;
/** The browser's `GPUTexture` where WebGPU types are known, else `object`. */
export type MurkGpuTexture = typeof globalThis extends { GPUTexture: { prototype: infer T } } ? T : object;
"#;
