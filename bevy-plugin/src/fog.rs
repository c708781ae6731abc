//! The subsystem in Bevy: its backend, its instances, the fixed tick, and
//! the gameplay answers (messages, queries, snapshots, the lockstep hash).
//!
//! (Longer than most files: the public message and resource types the
//! systems below read and write are documented here beside them, which is
//! about a third of it.)

use crate::error::FogError;
use crate::mirror::FogMirror;
use crate::set::MurkSet;
use bevy::asset::io::Reader;
use bevy::asset::{AssetLoader, LoadContext};
use bevy::ecs::system::SystemParam;
use bevy::prelude::*;
use bevy::render::renderer::{RenderAdapterInfo, RenderDevice, RenderQueue};
use murk_core::{
    Backend, BackendChoice, Explored, FogSubsystem, InstanceDesc, MaskAnswer, MurkError, Profile, QueryHandle, Result, SightAnswer, SightEvent,
    SightLine, StealthEvent, StealthState, TeamMask, TickReport,
};
use murk_cpu::CpuBackend;
use murk_gpu::GpuBackend;
use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};

/// A fog instance for the plugin to create: murk's description, and
/// optionally a profile file (the CLI's `.profile.toml`, `.profile.ron` or
/// `.profile.json`) whose settings replace `desc.profile` once loaded.
#[derive(Clone, Debug)]
pub struct FogInstance {
    /// Name, area, resolution, teams and settings.
    pub desc: InstanceDesc,
    /// A profile asset; the instance waits for it to load, and takes its
    /// settings again whenever it changes.
    pub profile: Option<Handle<FogProfile>>,
}

impl FogInstance {
    /// An instance from its description.
    pub fn new(desc: InstanceDesc) -> Self {
        Self { desc, profile: None }
    }

    /// The same instance with its settings from a profile asset.
    pub fn with_profile(mut self, profile: Handle<FogProfile>) -> Self {
        self.profile = Some(profile);
        self
    }
}

/// The fog instances the game wants, by name. Change it at any time: the
/// next tick creates, destroys, moves (a new area) or reconfigures them.
/// A new resolution, level of detail or team set recreates the instance
/// (its explored memory starts over).
#[derive(Resource, Clone, Debug, Default)]
pub struct FogInstances(pub BTreeMap<String, FogInstance>);

impl FogInstances {
    /// Adds or replaces an instance.
    pub fn insert(&mut self, instance: FogInstance) {
        self.0.insert(instance.desc.name.clone(), instance);
    }

    /// Removes an instance.
    pub fn remove(&mut self, name: &str) -> Option<FogInstance> {
        self.0.remove(name)
    }
}

/// A profile file as an asset: the same files the `murk` CLI reads.
#[derive(Asset, TypePath, Clone, Debug, PartialEq)]
pub struct FogProfile(pub Profile);

/// Loads `*.profile.toml`, `*.profile.ron` and `*.profile.json`.
#[derive(Default, TypePath)]
pub struct FogProfileLoader;

impl AssetLoader for FogProfileLoader {
    type Asset = FogProfile;
    type Settings = ();
    type Error = MurkError;

    async fn load(&self, reader: &mut dyn Reader, _: &(), ctx: &mut LoadContext<'_>) -> Result<FogProfile> {
        let what = ctx.path().to_string();
        let mut bytes = Vec::new();
        reader.read_to_end(&mut bytes).await.map_err(|e| MurkError::Io { path: what.clone(), message: e.to_string() })?;
        let text = String::from_utf8(bytes).map_err(|e| MurkError::Parse { what: what.clone(), message: e.to_string() })?;
        let format = what.rsplit('.').next().unwrap_or_default().to_string();
        Ok(FogProfile(Profile::parse(&text, &format, &what)?))
    }

    fn extensions(&self) -> &[&str] {
        &["profile.toml", "profile.ron", "profile.json"]
    }
}

/// murk's subsystem and its backend.
#[derive(Resource)]
pub struct MurkFog {
    // A mutex because the backend is `Send` but not `Sync`; systems with
    // `ResMut` reach it without locking.
    fog: Mutex<Option<FogSubsystem>>,
    gpu: Option<GpuBackend>,
    choice: BackendChoice,
    /// Instances as created, with the profile they run.
    created: BTreeMap<String, InstanceDesc>,
    /// Descriptions that failed (not retried until they change).
    refused: BTreeMap<String, InstanceDesc>,
    hash_each_tick: bool,
    on_render_device: bool,
    last: Option<TickReport>,
    /// Ticks run on this subsystem.
    ticks: u64,
}

impl MurkFog {
    fn new(choice: BackendChoice, hash_each_tick: bool) -> Self {
        Self {
            fog: Mutex::new(None),
            gpu: None,
            choice,
            created: BTreeMap::new(),
            refused: BTreeMap::new(),
            hash_each_tick,
            on_render_device: false,
            last: None,
            ticks: 0,
        }
    }

    /// The subsystem, once its backend started.
    pub fn subsystem(&mut self) -> Option<&mut FogSubsystem> {
        self.fog.get_mut().unwrap_or_else(PoisonError::into_inner).as_mut()
    }

    fn with<R>(&self, f: impl FnOnce(&FogSubsystem) -> R) -> Option<R> {
        self.fog.lock().unwrap_or_else(PoisonError::into_inner).as_ref().map(f)
    }

    fn running(&mut self) -> Result<&mut FogSubsystem> {
        self.subsystem().ok_or_else(|| MurkError::invalid("murk backend", "none", "did not start (see the FogError messages)"))
    }

    /// The backend in use (`cpu[2 threads]`, `gpu[adapter, Vulkan]`), if one started.
    pub fn backend_name(&self) -> Option<String> {
        self.with(FogSubsystem::backend_name)
    }

    /// The backend asked for.
    pub fn choice(&self) -> BackendChoice {
        self.choice
    }

    /// The GPU backend, when murk runs on the GPU (its mask textures feed
    /// the images on the device).
    pub fn gpu(&self) -> Option<&GpuBackend> {
        self.gpu.as_ref()
    }

    /// Whether murk runs on Bevy's render device (the GPU backend in an
    /// app that renders): its mask textures then reach the images without
    /// leaving the device.
    pub fn on_render_device(&self) -> bool {
        self.on_render_device
    }

    /// What the last tick did.
    pub fn last_report(&self) -> Option<&TickReport> {
        self.last.as_ref()
    }

    /// Ticks run since the plugin started (a backend switch keeps counting).
    pub fn ticks(&self) -> u64 {
        self.ticks
    }

    /// The instances that see tracked entity `entity` after the last tick
    /// (murk's `observers_of`, in name order); empty when it is not
    /// tracked or murk has not ticked.
    pub fn observers_of(&self, mirror: &FogMirror, entity: Entity) -> Vec<String> {
        let Some(h) = mirror.hecs_entity(entity) else { return Vec::new() };
        self.with(|f| f.observers_of(h).unwrap_or_default()).unwrap_or_default()
    }

    /// The tracked entities instance `observer` sees after the last tick, in
    /// murk's entity order; an unknown instance is an error naming it.
    pub fn visible_to(&self, mirror: &FogMirror, observer: &str) -> Result<Vec<Entity>> {
        let seen = self.with(|f| f.visible_to(observer)).unwrap_or_else(|| Err(MurkError::UnknownInstance(observer.to_string())))?;
        Ok(seen.into_iter().filter_map(|h| mirror.bevy_entity(h)).collect())
    }

    /// Whether a stealth actor (by its mirror) was visible at its last check.
    pub fn stealth_visible(&self, actor: hecs::Entity) -> Option<bool> {
        self.with(|f| f.stealth_state(actor).map(|s| s.last_visible)).flatten()
    }

    /// The instances murk runs, as created.
    pub fn instances(&self) -> &BTreeMap<String, InstanceDesc> {
        &self.created
    }
}

/// A stealth transition, about a Bevy entity.
#[derive(Message, Clone, Copy, Debug, PartialEq, Eq)]
pub struct FogStealthEvent {
    /// The actor.
    pub actor: Entity,
    /// What happened.
    pub change: StealthChange,
}

/// A tracked entity entered or left an observer's sight set (murk's
/// [`murk_core::SightEvent`], about a Bevy entity): what a server sends a
/// team's clients. A despawned entity leaves every set in the tick it is
/// gone, and its `Left` still names it.
#[derive(Message, Clone, Debug, PartialEq, Eq)]
pub struct FogSightEvent {
    /// The observing instance (a team's view).
    pub observer: String,
    /// The tracked entity.
    pub entity: Entity,
    /// Whether it entered (`true`) or left the set.
    pub entered: bool,
}

/// A transition of a per-observer stealth actor, for one observer.
#[derive(Message, Clone, Debug, PartialEq, Eq)]
pub struct FogObserverStealthEvent {
    /// The observing instance.
    pub observer: String,
    /// The actor.
    pub actor: Entity,
    /// What happened, for that observer.
    pub change: StealthChange,
}

/// The kinds of stealth transition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StealthChange {
    /// The actor became visible.
    Revealed,
    /// The actor became hidden.
    Hidden,
    /// A ghost was left where it was last seen (a [`crate::FogGhost`]
    /// entity appears after the tick).
    GhostSpawned,
    /// Its ghost went away.
    GhostRemoved,
}

/// Asks for a snapshot of the whole fog state; answered by [`FogSaved`].
#[derive(Message, Clone, Copy, Debug, Default)]
pub struct SaveFog;

/// A snapshot (murk's checksummed format), taken after the tick.
#[derive(Message, Clone, Debug)]
pub struct FogSaved {
    /// The tick it was taken after.
    pub tick: u64,
    /// The bytes, for [`RestoreFog`].
    pub bytes: Vec<u8>,
}

/// Restores a snapshot after the tick. Stealth states are keyed by the
/// mirror's entities, so restore while the entities it was taken with
/// still exist (a rollback, a resync); answered by [`FogRestored`] or a
/// [`FogError`] (and then nothing changed).
#[derive(Message, Clone, Debug)]
pub struct RestoreFog(pub Vec<u8>);

/// A snapshot was restored.
#[derive(Message, Clone, Copy, Debug)]
pub struct FogRestored;

/// Moves murk to another backend after the tick, through a snapshot, so
/// nothing computed is lost and the bytes go on exactly as before. Refused
/// (a [`FogError`], murk stays where it was) when the backend cannot start.
/// When murk never started (its first backend was refused), it starts on
/// this one.
#[derive(Message, Clone, Copy, Debug)]
pub struct SwitchBackend(pub BackendChoice);

/// The latest lockstep hash of murk's state (with
/// `MurkPlugin::hash_each_tick`): equal on every machine, backend and
/// thread count, so lockstep peers compare it. Each tick hashes the state it
/// leaves, and the hash arrives `READBACK_LATENCY_TICKS` (2) ticks later, so
/// that hashing never waits for the GPU.
#[derive(Resource, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FogHash {
    /// murk's tick count (`FogSubsystem::tick_count`) of the state it hashes.
    pub tick: u64,
    /// The hash; `None` until the first one arrives (after the third tick).
    pub hash: Option<u64>,
}

/// Visibility questions, as a system parameter. Points are in Bevy's
/// coordinates.
#[derive(SystemParam)]
pub struct FogQueries<'w> {
    fog: ResMut<'w, MurkFog>,
    mirror: Res<'w, FogMirror>,
}

impl FogQueries<'_> {
    /// The final mask at each point, now (on the GPU this waits for a
    /// readback: prefer [`Self::submit`] in a game's frame).
    pub fn mask_now(&mut self, points: &[Vec3], cutoff_override: Option<f32>) -> Result<Vec<MaskAnswer>> {
        let points: Vec<Vec3> = points.iter().map(|p| self.mirror.axes.to_murk(*p)).collect();
        self.fog.running()?.mask_query_now(&points, cutoff_override)
    }

    /// Whether the point is visible (at its instance's cutoff), now.
    pub fn is_visible_now(&mut self, point: Vec3) -> Result<bool> {
        Ok(matches!(self.mask_now(&[point], None)?.first(), Some(MaskAnswer::Sampled { visible: true, .. })))
    }

    /// Submits a batch of mask queries without waiting.
    pub fn submit(&mut self, points: &[Vec3], cutoff_override: Option<f32>) -> Result<QueryHandle> {
        let points: Vec<Vec3> = points.iter().map(|p| self.mirror.axes.to_murk(*p)).collect();
        self.fog.running()?.submit_mask_query(&points, cutoff_override)
    }

    /// The answers of a submitted batch once its readback landed.
    pub fn poll(&mut self, handle: QueryHandle) -> Result<Option<Vec<MaskAnswer>>> {
        self.fog.running()?.poll_mask_query(handle)
    }

    /// Sight lines in instance `instance`, now (on the GPU this waits for
    /// a readback: prefer [`Self::submit_sight_lines`] in a game's frame).
    /// Each line's ends are in Bevy's coordinates; see
    /// [`murk_core::SightLine`] for what a line asks.
    pub fn sight_lines_now(&mut self, instance: &str, lines: &[SightLine]) -> Result<Vec<SightAnswer>> {
        let lines = self.lines_to_murk(lines);
        self.fog.running()?.sight_lines_now(instance, &lines)
    }

    /// Whether a looker at `from` (its eye `eye_height` above) sees the
    /// ground under `to` in instance `instance`, now.
    pub fn line_of_sight_now(&mut self, instance: &str, from: Vec3, to: Vec3, eye_height: f32) -> Result<bool> {
        Ok(self.sight_lines_now(instance, &[SightLine { from, to, eye_height }])?.first().is_some_and(|a| a.visible))
    }

    /// Submits a batch of sight lines without waiting; poll it with
    /// [`Self::poll_sight_lines`].
    pub fn submit_sight_lines(&mut self, instance: &str, lines: &[SightLine]) -> Result<QueryHandle> {
        let lines = self.lines_to_murk(lines);
        self.fog.running()?.submit_sight_lines(instance, &lines)
    }

    /// The answers of a submitted sight-line batch once its readback landed.
    pub fn poll_sight_lines(&mut self, handle: QueryHandle) -> Result<Option<Vec<SightAnswer>>> {
        self.fog.running()?.poll_sight_lines(handle)
    }

    fn lines_to_murk(&self, lines: &[SightLine]) -> Vec<SightLine> {
        let axes = self.mirror.axes;
        lines.iter().map(|l| SightLine { from: axes.to_murk(l.from), to: axes.to_murk(l.to), ..*l }).collect()
    }

    /// The blips of instance `instance`, an instance of a sensor layer
    /// other than sight: positions (in Bevy's coordinates, moved by the
    /// layer's error) of the tracked entities it senses that the sight
    /// instances of its teams do not see; nothing names the entities (see
    /// [`murk_core::FogSubsystem::blips`]).
    pub fn blips(&mut self, instance: &str) -> Result<Vec<Vec3>> {
        let axes = self.mirror.axes;
        let blips = self.fog.running()?.blips(&self.mirror.world, instance)?;
        Ok(blips.iter().map(|b| axes.to_bevy(b.position)).collect())
    }

    /// How much of instance `instance`'s grid its explored memory covers
    /// (on the GPU this waits for the count: ask it for a statistics
    /// screen, not every frame).
    pub fn explored(&mut self, instance: &str) -> Result<Explored> {
        self.fog.running()?.explored(instance)
    }

    /// Whether a source of `teams` has the point in its radius or cone (no
    /// occlusion, no fade, no latency).
    pub fn in_sight_of(&mut self, point: Vec3, teams: TeamMask) -> Result<bool> {
        let p = self.mirror.axes.to_murk(point);
        let world = &self.mirror.world;
        self.fog.running()?.query_immediate(world, p, teams)
    }

    /// The instance answering for a point, and its texel.
    pub fn locate(&mut self, point: Vec3) -> Option<(String, [u32; 2])> {
        let p = self.mirror.axes.to_murk(point);
        self.fog.subsystem()?.locate(p)
    }

    /// A stealth actor's state.
    pub fn stealth(&mut self, actor: Entity) -> Option<StealthState> {
        let h = self.mirror.hecs_entity(actor)?;
        self.fog.subsystem()?.stealth_state(h).cloned()
    }
}

/// Render resources, when the app renders.
#[derive(SystemParam)]
pub(crate) struct RenderHandles<'w> {
    device: Option<Res<'w, RenderDevice>>,
    queue: Option<Res<'w, RenderQueue>>,
    adapter: Option<Res<'w, RenderAdapterInfo>>,
}

impl RenderHandles<'_> {
    /// A GPU backend on Bevy's render device when there is one, else on
    /// murk's own.
    /// The GPU backend on Bevy's render device, or on murk's own; with
    /// `hardware`, an adapter that runs on the CPU is an error naming it.
    fn gpu(&self, hardware: bool) -> Result<GpuBackend> {
        match (&self.device, &self.queue, &self.adapter) {
            (Some(d), Some(q), Some(a)) => {
                let queue: &wgpu::Queue = q;
                let adapter: &wgpu::AdapterInfo = a;
                if hardware && adapter.device_type == wgpu::DeviceType::Cpu {
                    return Err(MurkError::NoAdapter(format!("Bevy renders on a software adapter, {} ({:?})", adapter.name, adapter.backend)));
                }
                GpuBackend::from_device(d.wgpu_device().clone(), queue.clone(), adapter.clone())
            }
            _ if hardware => GpuBackend::new_hardware(),
            _ => GpuBackend::new(),
        }
    }

    /// Whether `gpu` runs on Bevy's render device.
    pub(crate) fn is_render_device(&self, gpu: &GpuBackend) -> bool {
        self.device.as_ref().is_some_and(|d| gpu.device().0 == *d.wgpu_device())
    }

    /// A backend for `choice`, and the GPU handle when it is one: the CPU
    /// on every core, or the GPU on Bevy's render device when the app
    /// renders (murk's own device otherwise); `Auto` falls back to the CPU
    /// and logs why.
    fn backend(&self, choice: BackendChoice) -> Result<(Box<dyn Backend>, Option<GpuBackend>)> {
        let cpu = || -> Result<(Box<dyn Backend>, Option<GpuBackend>)> {
            let threads = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
            Ok((Box::new(CpuBackend::new(threads)?), None))
        };
        let gpu = |hardware| -> Result<(Box<dyn Backend>, Option<GpuBackend>)> {
            let gpu = self.gpu(hardware)?;
            Ok((Box::new(gpu.clone()), Some(gpu)))
        };
        let opened = choice.open(cpu, gpu)?;
        match (&opened.fallback, &opened.backend.1) {
            (Some(e), _) => info!("murk: auto: no usable GPU ({e}); running on the CPU"),
            (None, Some(gpu)) => info!("murk: {}gpu on {}", if choice == BackendChoice::Auto { "auto: " } else { "" }, gpu.adapter()),
            (None, None) => info!("murk: cpu"),
        }
        Ok(opened.backend)
    }
}

/// What every subsystem the plugin opens is set up with before it ticks
/// (the ghost payloads of `FogGhostPayloadPlugin`), in order.
#[derive(Resource, Default)]
pub(crate) struct FogSetup(pub(crate) Vec<SetupStep>);

/// One step of [`FogSetup`].
pub(crate) type SetupStep = Box<dyn Fn(&mut FogSubsystem) -> Result<()> + Send + Sync>;

impl FogSetup {
    fn apply(&self, fog: &mut FogSubsystem) -> Result<()> {
        self.0.iter().try_for_each(|f| f(fog))
    }
}

fn start(mut fog: ResMut<MurkFog>, setup: Res<FogSetup>, render: RenderHandles, mut errors: MessageWriter<FogError>, mut started: Local<bool>) {
    if std::mem::replace(&mut *started, true) {
        return;
    }
    match render.backend(fog.choice).and_then(|(backend, gpu)| {
        let mut subsystem = FogSubsystem::new(backend);
        setup.apply(&mut subsystem)?;
        Ok((subsystem, gpu))
    }) {
        Ok((mut subsystem, gpu)) => {
            subsystem.set_hash_every_tick(fog.hash_each_tick);
            info!("murk runs on {}", subsystem.backend_name());
            *fog.fog.get_mut().unwrap_or_else(PoisonError::into_inner) = Some(subsystem);
            fog.on_render_device = gpu.as_ref().is_some_and(|g| render.is_render_device(g));
            fog.gpu = gpu;
        }
        Err(e) => {
            error!("murk did not start: {e}");
            errors.write(FogError::from(e));
        }
    }
}

/// The description an instance should run now; `None` while its profile
/// asset is loading.
fn wanted(instance: &FogInstance, profiles: Option<&Assets<FogProfile>>) -> Option<InstanceDesc> {
    let mut desc = instance.desc.clone();
    if let Some(handle) = &instance.profile {
        desc.profile = profiles?.get(handle)?.0.clone();
    }
    Some(desc)
}

fn sync_instances(
    mut fog: ResMut<MurkFog>,
    instances: Res<FogInstances>,
    profiles: Option<Res<Assets<FogProfile>>>,
    mut errors: MessageWriter<FogError>,
) {
    let fog = &mut *fog;
    let Some(subsystem) = fog.fog.get_mut().unwrap_or_else(PoisonError::into_inner).as_mut() else { return };
    let gone: Vec<String> = fog.created.keys().filter(|n| !instances.0.contains_key(*n)).cloned().collect();
    for name in gone {
        fog.created.remove(&name);
        if let Err(e) = subsystem.destroy_instance(&name) {
            errors.write(e.into());
        }
    }
    fog.refused.retain(|n, _| instances.0.contains_key(n));
    for (name, instance) in &instances.0 {
        let Some(desc) = wanted(instance, profiles.as_deref()) else { continue };
        if fog.created.get(name) == Some(&desc) || fog.refused.get(name) == Some(&desc) {
            continue;
        }
        let outcome = match fog.created.get(name) {
            None => subsystem.create_instance(desc.clone()),
            Some(old) if old.resolution == desc.resolution && old.lod == desc.lod && old.observed_teams == desc.observed_teams => {
                let area = if old.area == desc.area { Ok(()) } else { subsystem.set_area(name, desc.area) };
                area.and_then(|()| if old.profile == desc.profile { Ok(()) } else { subsystem.apply_profile(name, desc.profile.clone()) })
            }
            Some(_) => subsystem.destroy_instance(name).and_then(|()| {
                fog.created.remove(name);
                subsystem.create_instance(desc.clone())
            }),
        };
        match outcome {
            Ok(()) => {
                fog.refused.remove(name);
                fog.created.insert(name.clone(), desc);
            }
            Err(e) => {
                errors.write(FogError::Instance { name: name.clone(), source: e });
                fog.refused.insert(name.clone(), desc);
            }
        }
    }
}

/// Game-side control of murk from a system: scripted reveals and hides,
/// explored memory as save data, and in-memory rollback states, on the
/// running subsystem and the plugin's mirror of the world. Positions and
/// areas are in murk's coordinates ([`crate::FogAxes::to_murk`] converts
/// Bevy's). Every call is an error while murk has not started.
#[derive(SystemParam)]
pub struct FogControl<'w> {
    fog: ResMut<'w, MurkFog>,
    mirror: ResMut<'w, FogMirror>,
}

impl FogControl<'_> {
    /// Starts a scripted reveal (`FogSubsystem::reveal`).
    pub fn reveal(&mut self, target: &murk_core::FogTarget, reveal: murk_core::Reveal) -> Result<murk_core::RevealId> {
        self.fog.running()?.reveal(target, reveal)
    }

    /// Reveals everything a target covers (`FogSubsystem::reveal_all`).
    pub fn reveal_all(&mut self, target: &murk_core::FogTarget) -> Result<murk_core::RevealId> {
        self.fog.running()?.reveal_all(target)
    }

    /// Ends a reveal early (`FogSubsystem::end_reveal`).
    pub fn end_reveal(&mut self, id: murk_core::RevealId) -> Result<()> {
        self.fog.running()?.end_reveal(id)
    }

    /// Forgets an area (`FogSubsystem::hide`).
    pub fn hide(&mut self, target: &murk_core::FogTarget, area: &murk_core::RevealArea) -> Result<()> {
        self.fog.running()?.hide(target, area)
    }

    /// Forgets everything and ends every reveal of a target
    /// (`FogSubsystem::hide_all`).
    pub fn hide_all(&mut self, target: &murk_core::FogTarget) -> Result<()> {
        self.fog.running()?.hide_all(target)
    }

    /// An instance's explored memory as save data
    /// (`FogSubsystem::export_memory`).
    pub fn export_memory(&mut self, instance: &str) -> Result<Vec<u8>> {
        self.fog.running()?.export_memory(instance)
    }

    /// Replaces an instance's memory with a blob (`FogSubsystem::import_memory`).
    pub fn import_memory(&mut self, instance: &str, blob: &[u8]) -> Result<()> {
        self.fog.running()?.import_memory(instance, blob)
    }

    /// Adds what a blob knew to an instance's mapped state
    /// (`FogSubsystem::import_memory_as_map`).
    pub fn import_memory_as_map(&mut self, instance: &str, blob: &[u8]) -> Result<()> {
        self.fog.running()?.import_memory_as_map(instance, blob)
    }

    /// The fog state after the last tick, in memory, for a rollback
    /// library (`FogSubsystem::save_state`, over the mirror).
    pub fn save_state(&mut self) -> Result<murk_core::SaveState> {
        let FogControl { fog, mirror } = self;
        fog.running()?.save_state(&mirror.world)
    }

    /// Puts back a state of [`Self::save_state`] (`FogSubsystem::load_state`):
    /// the entities the state was saved with must still be mirrored.
    pub fn load_state(&mut self, state: &murk_core::SaveState) -> Result<()> {
        let FogControl { fog, mirror } = self;
        fog.running()?.load_state(&mut mirror.world, state)
    }

    /// The lockstep hash of the state after the last tick.
    pub fn lockstep_hash(&mut self) -> Result<u64> {
        self.fog.running()?.lockstep_hash()
    }
}

/// What a tick reports to the game, as messages.
#[derive(SystemParam)]
struct TickMessages<'w> {
    events: MessageWriter<'w, FogStealthEvent>,
    observer_events: MessageWriter<'w, FogObserverStealthEvent>,
    sight: MessageWriter<'w, FogSightEvent>,
    errors: MessageWriter<'w, FogError>,
}

fn tick(mut fog: ResMut<MurkFog>, mut mirror: ResMut<FogMirror>, time: Res<Time<Fixed>>, messages: TickMessages, mut hash: ResMut<FogHash>) {
    let TickMessages { mut events, mut observer_events, mut sight, mut errors } = messages;
    let fog = &mut *fog;
    let Some(subsystem) = fog.fog.get_mut().unwrap_or_else(PoisonError::into_inner).as_mut() else { return };
    let step = time.timestep().as_micros();
    let Ok(dt_us) = u32::try_from(step) else {
        errors.write(FogError::Timestep { micros: step });
        return;
    };
    let mirror = &mut *mirror;
    match subsystem.tick(&mut mirror.world, dt_us) {
        Ok(report) => {
            for e in &report.events {
                let Some(actor) = mirror.bevy_entity(e.actor()) else { continue };
                events.write(FogStealthEvent { actor, change: StealthChange::of(e) });
            }
            for (observer, e) in &report.observer_events {
                let Some(actor) = mirror.bevy_entity_or_departed(e.actor()) else { continue };
                observer_events.write(FogObserverStealthEvent { observer: observer.clone(), actor, change: StealthChange::of(e) });
            }
            for e in &report.sight {
                let (observer, entity, entered) = match e {
                    SightEvent::Entered { observer, entity } => (observer, entity, true),
                    SightEvent::Left { observer, entity } => (observer, entity, false),
                };
                let Some(entity) = mirror.bevy_entity_or_departed(*entity) else { continue };
                sight.write(FogSightEvent { observer: observer.clone(), entity, entered });
            }
            if let Some(landed) = report.lockstep {
                *hash = FogHash { tick: landed.ticks, hash: Some(landed.hash) };
            }
            fog.last = Some(report);
            fog.ticks += 1;
        }
        Err(e) => {
            errors.write(e.into());
        }
    }
    mirror.departed.clear();
}

impl StealthChange {
    fn of(e: &StealthEvent) -> Self {
        match e {
            StealthEvent::Revealed { .. } => StealthChange::Revealed,
            StealthEvent::Hidden { .. } => StealthChange::Hidden,
            StealthEvent::GhostSpawned { .. } => StealthChange::GhostSpawned,
            StealthEvent::GhostRemoved { .. } => StealthChange::GhostRemoved,
        }
    }
}

fn snapshots(
    mut fog: ResMut<MurkFog>,
    mut mirror: ResMut<FogMirror>,
    mut save: MessageReader<SaveFog>,
    mut restore: MessageReader<RestoreFog>,
    mut saved: MessageWriter<FogSaved>,
    mut restored: MessageWriter<FogRestored>,
    mut errors: MessageWriter<FogError>,
) {
    let fog = &mut *fog;
    let ticks = fog.ticks;
    let mirror = &mut *mirror;
    for _ in save.read() {
        match fog.running().and_then(|f| f.snapshot(&mirror.world)) {
            Ok(bytes) => {
                saved.write(FogSaved { tick: ticks, bytes });
            }
            Err(e) => {
                errors.write(e.into());
            }
        }
    }
    for RestoreFog(bytes) in restore.read() {
        match fog.running().and_then(|f| f.restore(&mut mirror.world, bytes)) {
            Ok(()) => {
                // The snapshot's instances are the ones that run now.
                fog.created = fog
                    .with(|f| f.instance_names().into_iter().filter_map(|n| Some((n.clone(), f.instance(&n).ok()?.clone()))).collect())
                    .unwrap_or_default();
                restored.write(FogRestored);
            }
            Err(e) => {
                errors.write(e.into());
            }
        }
    }
}

fn switch_backend(
    mut fog: ResMut<MurkFog>,
    mut mirror: ResMut<FogMirror>,
    render: RenderHandles,
    setup: Res<FogSetup>,
    mut switch: MessageReader<SwitchBackend>,
    mut errors: MessageWriter<FogError>,
) {
    let fog = &mut *fog;
    let mirror = &mut *mirror;
    let hash_each_tick = fog.hash_each_tick;
    for SwitchBackend(choice) in switch.read() {
        let moved = (|| -> Result<(FogSubsystem, Option<GpuBackend>)> {
            let (backend, gpu) = render.backend(*choice)?;
            let mut next = FogSubsystem::new(backend);
            setup.apply(&mut next)?;
            next.set_hash_every_tick(hash_each_tick);
            // murk never started (its backend was refused): start afresh.
            let Some(current) = fog.subsystem() else { return Ok((next, gpu)) };
            next.take_over(&mut mirror.world, current)?;
            Ok((next, gpu))
        })();
        match moved {
            Ok((next, gpu)) => {
                info!("murk moved to {}", next.backend_name());
                *fog.fog.get_mut().unwrap_or_else(PoisonError::into_inner) = Some(next);
                fog.on_render_device = gpu.as_ref().is_some_and(|g| render.is_render_device(g));
                fog.gpu = gpu;
                fog.choice = *choice;
            }
            Err(e) => {
                errors.write(FogError::Switch { to: *choice, source: e });
            }
        }
    }
}

pub(crate) fn build(app: &mut App, choice: BackendChoice, hash_each_tick: bool) {
    app.insert_resource(MurkFog::new(choice, hash_each_tick)).init_resource::<FogSetup>();
    if app.world().contains_resource::<AssetServer>() {
        app.init_asset::<FogProfile>().register_asset_loader(FogProfileLoader);
    }
    app.add_systems(
        FixedUpdate,
        ((start, sync_instances).chain().in_set(MurkSet::Mirror).before(crate::mirror::mirror_entities), tick.in_set(MurkSet::Tick)),
    )
    .add_systems(FixedUpdate, (snapshots, switch_backend).chain().in_set(MurkSet::Publish).before(crate::mirror::publish_entities));
}
