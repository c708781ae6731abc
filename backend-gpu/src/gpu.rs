//! The GPU backend's state on one device: every world's instances, the
//! encoder being recorded, and the readbacks in flight; it implements the
//! `Backend` calls over device-wide keys (`GpuBackend` gives each world
//! its own key space).
//!
//! Nothing here waits on the device inside a tick: a tick's occlusion
//! build, recompute, blend and presentation of an instance are one
//! submission, the recompute's "changed" flag and the stealth samples come
//! back through readbacks that core collects a fixed number of ticks later.
//! Only reading textures (pictures, hashes, snapshots) waits.

use crate::build::{build_occlusion, copy_occlusion, import_all};
use crate::context::{groups, Context};
use crate::error::{unknown_key, GpuError};
use crate::footprints;
use crate::instance::Instance;
use crate::keep;
use crate::lines;
use crate::passes;
use crate::passes::blur::BlurAxis;
use crate::passes::distance_field::DfRegion;
use crate::readback::{InFlight, Wait};
use crate::readout::{hash_sources, read_texture};
use crate::sample;
use murk_core::{
    Backend, FootprintRequest, InstanceDims, InstanceKey, KeptTextures, LineRequest, MurkError, OcclusionInput, Pass, PassTiming, Readback,
    ReadbackHold, RecomputeInput, RecomputeReport, Result, RevealLayer, SampleRequest, TexelRect, Texture, TextureImage, TextureSet,
};
use std::collections::BTreeMap;
use std::sync::{Arc, Weak};

/// The GPU backend's state on one device (behind `GpuBackend`).
pub(crate) struct Gpu {
    pub(crate) ctx: Context,
    instances: BTreeMap<InstanceKey, Instance>,
    /// Samples, footprint values and sight lines in flight: the readback
    /// and how many values it holds.
    samples: BTreeMap<u64, (InFlight, usize)>,
    changed: BTreeMap<u64, InFlight>,
    /// State hashes in flight: the readback and how many values it holds.
    hashes: BTreeMap<u64, (InFlight, usize)>,
    /// An instance each ticket in flight was asked for (device-wide key),
    /// so that a world counts only its own ([`Gpu::readbacks_held_in`]).
    asked_by: BTreeMap<u64, InstanceKey>,
    /// Readbacks rollback states hold ([`Gpu::hold`]), by ticket.
    held: BTreeMap<u64, Held>,
    next_ticket: u64,
    /// Worlds opened on the device so far (each has its own key space).
    pub(crate) worlds: u32,
    /// Work recorded but not yet submitted (an occlusion build, a
    /// recompute): the blend that follows joins it, so an instance's tick is
    /// one submission.
    pending: Option<Pending>,
}

/// An encoder being recorded, the pooled buffers it frees when submitted,
/// and the readback tickets to map once it is on the queue.
struct Pending {
    encoder: wgpu::CommandEncoder,
    recycle: Vec<wgpu::Buffer>,
    maps: Vec<u64>,
}

/// The readbacks in flight of a world (flags, samples, hashes).
type Live<'a> = (&'a BTreeMap<u64, InFlight>, &'a BTreeMap<u64, (InFlight, usize)>, &'a BTreeMap<u64, (InFlight, usize)>);

/// The readback of `ticket` in flight: in `live`, or else the one kept in
/// `held` for the states that hold it.
fn flight_in<'a>((changed, samples, hashes): Live<'a>, held: &'a BTreeMap<u64, Held>, ticket: u64) -> Option<&'a InFlight> {
    let live = changed.get(&ticket).or_else(|| samples.get(&ticket).map(|(r, _)| r)).or_else(|| hashes.get(&ticket).map(|(r, _)| r));
    live.or_else(|| held.get(&ticket).and_then(|h| h.flight.as_ref()))
}

/// What a rollback state's hold on a readback is ([`Gpu::hold`]).
struct HoldToken;

/// A readback that rollback states hold: while a hold lives, every poll
/// of its ticket gets its value (a state loaded again polls it again),
/// whoever polled it first or forgot it.
struct Held {
    token: Weak<HoldToken>,
    /// The instance it was asked for, when one was.
    key: Option<InstanceKey>,
    /// Values it holds (samples and hashes; 1 for a flag).
    count: usize,
    /// The readback, once forgotten by the world that asked for it and
    /// still in flight (until then it stays there).
    flight: Option<InFlight>,
    /// Its bytes, once landed.
    bytes: Option<Vec<u8>>,
}

impl Pending {
    /// Nothing recorded yet, on `ctx`'s device.
    fn new(ctx: &Context) -> Self {
        Pending { encoder: ctx.encoder(), recycle: Vec::new(), maps: Vec::new() }
    }
}

impl Gpu {
    /// The state on a device whose pipelines are compiled.
    pub(crate) fn new(ctx: Context) -> Self {
        Self {
            ctx,
            instances: BTreeMap::new(),
            samples: BTreeMap::new(),
            changed: BTreeMap::new(),
            hashes: BTreeMap::new(),
            asked_by: BTreeMap::new(),
            held: BTreeMap::new(),
            next_ticket: 0,
            worlds: 0,
            pending: None,
        }
    }

    /// Submits the recorded work, if any, and maps its readbacks.
    pub(crate) fn flush(&mut self) -> Result<()> {
        if let Some(p) = self.pending.take() {
            self.ctx.forget_staged();
            self.ctx.submit(p.encoder)?;
            for b in p.recycle {
                self.ctx.give(b);
            }
            for ticket in p.maps {
                if let Some(r) = self.flight(ticket) {
                    r.map();
                }
            }
        }
        // A readback no state holds any more is dropped.
        self.held.retain(|_, h| h.token.strong_count() > 0);
        Ok(())
    }

    /// The readback of `ticket` in flight: the asking world's, or else the
    /// one kept for the states that hold it.
    fn flight(&self, ticket: u64) -> Option<&InFlight> {
        flight_in((&self.changed, &self.samples, &self.hashes), &self.held, ticket)
    }

    /// Whether `ticket` is in flight for the world that asked for it.
    fn is_live(&self, ticket: u64) -> bool {
        self.changed.contains_key(&ticket) || self.samples.contains_key(&ticket) || self.hashes.contains_key(&ticket)
    }

    /// Holds the value of readback `ticket` for a rollback state: one hold
    /// for every state that asks while it lives. `None` when the ticket is
    /// neither in flight nor held.
    pub(crate) fn hold(&mut self, ticket: u64) -> Option<ReadbackHold> {
        if let Some(token) = self.held.get(&ticket).and_then(|h| h.token.upgrade()) {
            return Some(ReadbackHold(token));
        }
        let count = match (self.changed.contains_key(&ticket), self.samples.get(&ticket), self.hashes.get(&ticket)) {
            (true, _, _) => 1,
            (_, Some((_, n)), _) | (_, _, Some((_, n))) => *n,
            _ => return None,
        };
        let token = Arc::new(HoldToken);
        let held = Held { token: Arc::downgrade(&token), key: self.asked_by.get(&ticket).copied(), count, flight: None, bytes: None };
        self.held.insert(ticket, held);
        Some(ReadbackHold(token))
    }

    /// The bytes of readback `ticket` for a poll, and how many values they
    /// hold: from the asking world's readback (delivered once: it is then
    /// dropped there), or from the copy kept for the states that hold it.
    /// `None` while in flight and not waited for. With `flush`, the work
    /// recorded so far is submitted first (a flag or a hash is mapped with
    /// the submission of the work that fills it; samples are submitted
    /// when asked for).
    fn collect_ticket(&mut self, ticket: u64, wait: Wait, what: &'static str, flush: bool) -> Result<Option<(Vec<u8>, usize)>> {
        if flush {
            self.flush()?;
        }
        let held = self.held.get(&ticket).filter(|h| h.token.strong_count() > 0);
        let count = match (self.samples.get(&ticket), self.hashes.get(&ticket), held) {
            (Some((_, n)), _, _) | (_, Some((_, n)), _) => *n,
            (_, _, Some(h)) => h.count,
            _ if self.changed.contains_key(&ticket) => 1,
            _ => return Err(MurkError::UnknownTicket { backend: "gpu".into(), what, ticket }),
        };
        let bytes = match held.and_then(|h| h.bytes.clone()) {
            Some(bytes) => bytes,
            None => {
                let flight = flight_in((&self.changed, &self.samples, &self.hashes), &self.held, ticket);
                let flight = flight.ok_or(MurkError::UnknownTicket { backend: "gpu".into(), what, ticket })?;
                let Some(bytes) = self.ctx.collect(flight, wait)? else { return Ok(None) };
                if let Some(h) = self.held.get_mut(&ticket) {
                    (h.bytes, h.flight) = (Some(bytes.clone()), None);
                }
                bytes
            }
        };
        self.changed.remove(&ticket);
        self.samples.remove(&ticket);
        self.hashes.remove(&ticket);
        self.asked_by.remove(&ticket);
        Ok(Some((bytes, count)))
    }

    /// The pending work to record into (a fresh encoder when none).
    fn pending(&mut self) -> &mut Pending {
        self.pending.get_or_insert_with(|| Pending::new(&self.ctx))
    }

    /// Readbacks held for instances whose device-wide keys lie in `keys`
    /// (one world's): those in flight and not yet delivered or forgotten.
    pub(crate) fn readbacks_held_in(&self, keys: std::ops::Range<InstanceKey>) -> usize {
        let for_states = self.held.iter().filter(|(t, h)| !self.is_live(**t) && h.token.strong_count() > 0);
        self.asked_by.values().filter(|k| keys.contains(k)).count() + for_states.filter(|(_, h)| h.key.is_some_and(|k| keys.contains(&k))).count()
    }

    fn ticket(&mut self) -> u64 {
        let t = self.next_ticket;
        self.next_ticket += 1;
        t
    }

    /// Readbacks issued and not yet collected or forgotten.
    pub(crate) fn readbacks_in_flight(&self) -> usize {
        self.changed.len() + self.samples.len() + self.hashes.len()
    }

    /// Whether every readback in flight (flags, samples, hashes and staged
    /// copies) has landed, so that collecting any of them waits for nothing.
    pub(crate) fn readbacks_landed(&self) -> bool {
        self.changed.values().all(InFlight::landed)
            && self.samples.values().all(|(r, _)| r.landed())
            && self.hashes.values().all(|(r, _)| r.landed())
            && self.held.values().filter_map(|h| h.flight.as_ref()).all(InFlight::landed)
            && self.ctx.staged_landed()
    }

    fn instance(&self, key: InstanceKey) -> Result<&Instance> {
        self.instances.get(&key).ok_or_else(|| unknown_key(key))
    }

    /// The final-mask texture of an instance (written after every blend).
    pub(crate) fn mask_texture(&self, key: InstanceKey) -> Result<wgpu::Texture> {
        Ok(self.instance(key)?.mask.clone())
    }

    /// The detail texture of an instance, once asked for with [`Gpu::set_detail`].
    pub(crate) fn detail_texture(&self, key: InstanceKey) -> Result<Option<wgpu::Texture>> {
        Ok(self.instance(key)?.detail.as_ref().map(|(t, _)| t.clone()))
    }

    /// Starts or stops writing the detail texture in each recompute.
    pub(crate) fn set_detail(&mut self, key: InstanceKey, on: bool) -> Result<()> {
        let t = self.instances.get_mut(&key).ok_or_else(|| unknown_key(key))?;
        t.set_detail(&self.ctx, on);
        Ok(())
    }

    /// Takes a recorded batch of sample-like values in flight (samples,
    /// footprint values, sight lines) under a new ticket, asked by `key`,
    /// and submits it.
    fn track_samples(
        &mut self,
        key: Option<InstanceKey>,
        record: impl FnOnce(&mut Context, &mut wgpu::CommandEncoder, &BTreeMap<InstanceKey, Instance>) -> (InFlight, usize, Vec<wgpu::Buffer>),
    ) -> Result<u64> {
        let ticket = self.ticket();
        self.pending();
        let pending = self.pending.as_mut().expect("made above");
        let (readback, count, recycle) = record(&mut self.ctx, &mut pending.encoder, &self.instances);
        pending.recycle.extend(recycle);
        pending.maps.push(ticket);
        self.samples.insert(ticket, (readback, count));
        if let Some(key) = key {
            self.asked_by.insert(ticket, key);
        }
        self.flush()?;
        Ok(ticket)
    }

    /// Runs one pass of an instance alone, submitted and waited for: the GPU
    /// rows of the per-pass benches. The instance must have been built and
    /// recomputed once with the same inputs (and with mips and the distance
    /// field, to time those).
    pub(crate) fn run_pass(&mut self, key: InstanceKey, pass: Pass, occlusion: &OcclusionInput, input: &RecomputeInput) -> Result<()> {
        self.flush()?;
        let ctx = &mut self.ctx;
        let t = self.instances.get_mut(&key).ok_or_else(|| unknown_key(key))?;
        if matches!(pass, Pass::Rasterize | Pass::Mips | Pass::DistanceField) {
            // The pass writes the occlusion: no kept copy holds it any more.
            t.occlusion.kept = None;
        }
        let t = &*t;
        let mut enc = ctx.encoder();
        let grid = TexelRect::grid(t.dims.width, t.dims.height);
        let recycle = match pass {
            Pass::Rasterize => passes::rasterize::record(ctx, &mut enc, t, occlusion, occlusion.capture.as_deref(), &grid),
            Pass::Mips if t.frame.mip_levels > 0 => {
                passes::mips::record(ctx, &mut enc, t, &t.occlusion.mips, &t.occlusion.mip_steps, &grid);
                Vec::new()
            }
            Pass::Mips => return Err(GpuError::NotBuilt("the mips pass runs alone only over a Hierarchical DDA build".into()).into()),
            Pass::DistanceField => match &t.occlusion.field_scratch {
                Some(scratch) => {
                    let whole = DfRegion::whole(t.frame.df_width, t.frame.df_height);
                    passes::distance_field::record(ctx, &mut enc, t, scratch, &t.occlusion.distance_field, whole);
                    Vec::new()
                }
                None => return Err(GpuError::NotBuilt("the distance field was not built for this instance".into()).into()),
            },
            Pass::Visibility => passes::visibility::record(ctx, &mut enc, t, input),
            Pass::Blur => passes::blur::record(ctx, &mut enc, t, &input.blur),
            Pass::Memory => {
                passes::memory::record(ctx, &mut enc, t);
                Vec::new()
            }
            Pass::Compose => {
                passes::compose::record(ctx, &mut enc, t);
                Vec::new()
            }
            Pass::Upscale => {
                passes::upscale::record(ctx, &mut enc, t);
                Vec::new()
            }
            Pass::Blend => {
                passes::blend::record(ctx, &mut enc, t);
                Vec::new()
            }
        };
        ctx.submit(enc)?;
        for b in recycle {
            ctx.give(b);
        }
        ctx.poll(true)
    }
}

impl Backend for Gpu {
    fn name(&self) -> String {
        // A browser does not name its adapter.
        let name = if self.ctx.adapter.name.is_empty() { "unnamed adapter" } else { &self.ctx.adapter.name };
        format!("gpu[{name}, {:?}]", self.ctx.adapter.backend)
    }

    fn create_instance(&mut self, key: InstanceKey, dims: InstanceDims) -> Result<()> {
        // One encoder with dispatches at a time (pass timings rely on it).
        self.flush()?;
        let ctx = &mut self.ctx;
        let side = ctx.device.limits().max_texture_dimension_2d;
        if dims.out_width.max(dims.out_height) > side {
            return Err(GpuError::TooLarge { width: dims.out_width, height: dims.out_height, side }.into());
        }
        let mut enc = ctx.encoder();
        let blur_axes = [ctx.uniform(bytemuck::bytes_of(&BlurAxis::X)), ctx.uniform(bytemuck::bytes_of(&BlurAxis::Y))];
        let t = Instance::new(ctx, &mut enc, dims, blur_axes);
        // A new instance shows fog everywhere until its first blend.
        t.present(ctx, &mut enc);
        ctx.submit(enc)?;
        if let Some(old) = self.instances.insert(key, t) {
            for b in old.storage() {
                self.ctx.give(b);
            }
        }
        Ok(())
    }

    fn destroy_instance(&mut self, key: InstanceKey) {
        // A pending build may use this instance's buffers: submit it first. A
        // device error here surfaces on the next call that reads results.
        let _ = self.flush();
        if let Some(t) = self.instances.remove(&key) {
            for b in t.storage() {
                self.ctx.give(b);
            }
        }
    }

    fn build_occlusion(&mut self, key: InstanceKey, input: &OcclusionInput) -> Result<()> {
        // One pending build at a time (another instance's build is submitted first).
        self.flush()?;
        let mut t = self.instances.remove(&key).ok_or_else(|| unknown_key(key))?;
        let mut enc = self.ctx.encoder();
        let result = build_occlusion(&mut self.ctx, &mut enc, &mut t, input, None);
        self.instances.insert(key, t);
        self.pending = Some(Pending { encoder: enc, recycle: result?, maps: Vec::new() });
        Ok(())
    }

    fn update_occlusion(&mut self, key: InstanceKey, input: &OcclusionInput, changed: &[TexelRect]) -> Result<()> {
        self.flush()?;
        let mut t = self.instances.remove(&key).ok_or_else(|| unknown_key(key))?;
        let mut enc = self.ctx.encoder();
        let result = build_occlusion(&mut self.ctx, &mut enc, &mut t, input, Some(changed));
        self.instances.insert(key, t);
        self.pending = Some(Pending { encoder: enc, recycle: result?, maps: Vec::new() });
        Ok(())
    }

    fn copy_occlusion(&mut self, from: InstanceKey, to: InstanceKey) -> Result<()> {
        self.flush()?;
        let mut dst = self.instances.remove(&to).ok_or_else(|| unknown_key(to))?;
        let result = match self.instances.get(&from) {
            Some(src) => copy_occlusion(&mut self.ctx, src, &mut dst),
            None => Err(unknown_key(from)),
        };
        self.instances.insert(to, dst);
        result
    }

    fn recompute(&mut self, key: InstanceKey, input: &RecomputeInput) -> Result<RecomputeReport> {
        if !self.instances.contains_key(&key) {
            return Err(unknown_key(key));
        }
        let ticket = self.ticket();
        let Pending { mut encoder, mut recycle, mut maps } =
            self.pending.take().unwrap_or_else(|| Pending { encoder: self.ctx.encoder(), recycle: Vec::new(), maps: Vec::new() });
        let enc = &mut encoder;
        let ctx = &mut self.ctx;
        let t = self.instances.get_mut(&key).expect("checked above");
        t.set_recompute(input);
        t.upload_frame(ctx);
        enc.clear_buffer(&t.flags, 0, None);
        if !input.reuse_visibility {
            recycle.extend(passes::visibility::record(ctx, enc, t, input));
            recycle.extend(passes::blur::record(ctx, enc, t, &input.blur));
        }
        passes::memory::record(ctx, enc, t);
        passes::compose::record(ctx, enc, t);
        passes::upscale::record(ctx, enc, t);
        if let Some((_, group)) = &t.detail {
            ctx.dispatch(enc, &ctx.shaders.present_detail, group, groups(t.dims.width, 8), groups(t.dims.height, 8));
        }
        // The blend starts from the final mask.
        enc.copy_buffer_to_buffer(&t.masks[Texture::Final], 0, &t.masks[Texture::Start], 0, t.out_texels() * 4);
        // The flag comes back with the submission (the blend's, or the next
        // flush); core asks for it a fixed number of ticks later.
        let flag = InFlight::new(ctx.staging(enc, &t.flags, 4), 4);
        self.changed.insert(ticket, flag);
        self.asked_by.insert(ticket, key);
        maps.push(ticket);
        self.pending = Some(Pending { encoder, recycle, maps });
        Ok(RecomputeReport { changed: Readback::Ticket(ticket) })
    }

    fn poll_changed(&mut self, ticket: u64, wait: bool) -> Result<Option<bool>> {
        let bytes = self.collect_ticket(ticket, if wait { Wait::IfPending } else { Wait::No }, "changed-flag", true)?;
        Ok(bytes.map(|(b, _)| b.iter().any(|&x| x != 0)))
    }

    fn set_reveals(&mut self, key: InstanceKey, layer: Option<&RevealLayer>) -> Result<()> {
        // Work already recorded reads the reveals it was recorded with.
        self.flush()?;
        let t = self.instance(key)?;
        let n = t.texels() as usize;
        let (packed, map) = match layer {
            Some(l) => {
                for (name, plane) in [("sight", &l.sight), ("kept", &l.kept), ("map", &l.map)] {
                    if plane.len() != n {
                        return Err(GpuError::size(format!("reveal plane `{name}`"), format!("{} texels", plane.len()), format!("{n} texels")).into());
                    }
                }
                let packed: Vec<u32> = l.sight.iter().zip(&l.kept).map(|(&s, &k)| u32::from(s) | u32::from(k) << 16).collect();
                (packed, l.map.iter().map(|&v| u32::from(v)).collect())
            }
            None => (vec![0u32; n], vec![0u32; n]),
        };
        self.ctx.queue.write_buffer(&t.reveal, 0, bytemuck::cast_slice(&packed));
        self.ctx.queue.write_buffer(&t.reveal_map, 0, bytemuck::cast_slice(&map));
        Ok(())
    }

    fn blend(&mut self, key: InstanceKey, t_q16: u32) -> Result<()> {
        if !self.instances.contains_key(&key) {
            return Err(unknown_key(key));
        }
        self.pending();
        let (ctx, pending) = (&mut self.ctx, self.pending.as_mut().expect("made above"));
        let t = self.instances.get_mut(&key).expect("checked above");
        t.frame.blend_t = t_q16;
        t.upload_frame(ctx);
        passes::blend::record(ctx, &mut pending.encoder, t);
        t.present(ctx, &mut pending.encoder);
        self.flush()
    }

    fn submit_samples(&mut self, batch: &[SampleRequest]) -> Result<u64> {
        let indices = sample::texel_indices(&self.instances, batch)?;
        let count = indices.len();
        self.track_samples(batch.first().map(|r| r.key), |ctx, enc, instances| {
            let (readback, recycle) = sample::record(ctx, enc, instances, batch, indices);
            (readback, count, recycle)
        })
    }

    fn submit_footprints(&mut self, batch: &[FootprintRequest]) -> Result<u64> {
        // Each footprint is reduced to its one value on the device, up to
        // three observers a dispatch: one word per footprint comes back.
        let lists = footprints::lay_out(&self.instances, batch)?;
        self.track_samples(batch.first().map(|r| r.key), |ctx, enc, instances| {
            let (readback, recycle) = footprints::record(ctx, enc, instances, batch, &lists);
            (readback, lists.footprints, recycle)
        })
    }

    fn submit_lines(&mut self, request: &LineRequest) -> Result<u64> {
        // Checked before anything is recorded: a bad line changes nothing.
        let t = self.instances.get(&request.key).ok_or_else(|| unknown_key(request.key))?;
        let (w, h) = (t.dims.width, t.dims.height);
        if let Some([x, y]) = request.lines.iter().flat_map(|l| [l.from, l.to]).find(|&[x, y]| x >= w || y >= h) {
            return Err(MurkError::invalid("texel", format!("({x}, {y})"), format!("must lie inside {w}x{h}")));
        }
        self.track_samples(Some(request.key), |ctx, enc, instances| {
            let (readback, recycle) = lines::record(ctx, enc, &instances[&request.key], request);
            (readback, request.lines.len(), recycle)
        })
    }

    fn poll_samples(&mut self, ticket: u64, wait: bool) -> Result<Option<Vec<u16>>> {
        if self.changed.contains_key(&ticket) || self.hashes.contains_key(&ticket) {
            return Err(MurkError::UnknownTicket { backend: "gpu".into(), what: "sample", ticket });
        }
        let Some((bytes, count)) = self.collect_ticket(ticket, if wait { Wait::IfPending } else { Wait::No }, "sample", false)? else {
            return Ok(None);
        };
        Ok(Some(bytes.chunks(4).take(count).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]) as u16).collect()))
    }

    fn blocking_waits(&self) -> u64 {
        self.ctx.waits
    }

    fn readbacks_held(&self) -> usize {
        let for_states = self.held.iter().filter(|(t, h)| !self.is_live(**t) && h.token.strong_count() > 0);
        self.samples.len() + self.changed.len() + self.hashes.len() + for_states.count()
    }

    fn forget_readback(&mut self, ticket: u64) {
        let flight = self
            .changed
            .remove(&ticket)
            .or_else(|| self.samples.remove(&ticket).map(|(r, _)| r))
            .or_else(|| self.hashes.remove(&ticket).map(|(r, _)| r));
        self.asked_by.remove(&ticket);
        // A state holds it: kept until it lands for them.
        if let Some(h) = self.held.get_mut(&ticket).filter(|h| h.bytes.is_none()) {
            h.flight = h.flight.take().or(flight);
        }
    }

    fn hash_textures(&mut self, key: InstanceKey, textures: &[Texture]) -> Result<Readback<Vec<u64>>> {
        let t = self.instances.get(&key).ok_or_else(|| unknown_key(key))?;
        let sources = hash_sources(t, textures)?;
        let ticket = self.next_ticket;
        self.next_ticket += 1;
        let ctx = &mut self.ctx;
        let pending = self.pending.get_or_insert_with(|| Pending { encoder: ctx.encoder(), recycle: Vec::new(), maps: Vec::new() });
        let bytes = (textures.len().max(1) * 8) as u64;
        let roots = ctx.take(bytes);
        pending.recycle.extend(crate::hash::record(ctx, &mut pending.encoder, &sources, &roots));
        let readback = InFlight::new(ctx.staging(&mut pending.encoder, &roots, bytes), bytes);
        pending.recycle.push(roots);
        pending.maps.push(ticket);
        self.hashes.insert(ticket, (readback, textures.len()));
        self.asked_by.insert(ticket, key);
        // Submitted now: the values come back while the game goes on.
        self.flush()?;
        Ok(Readback::Ticket(ticket))
    }

    fn count_explored(&mut self, key: InstanceKey) -> Result<Readback<u64>> {
        let t = self.instances.get(&key).ok_or_else(|| unknown_key(key))?;
        let ticket = self.next_ticket;
        self.next_ticket += 1;
        let ctx = &mut self.ctx;
        let pending = self.pending.get_or_insert_with(|| Pending { encoder: ctx.encoder(), recycle: Vec::new(), maps: Vec::new() });
        let (readback, recycle) = crate::count::record(ctx, &mut pending.encoder, t);
        pending.recycle.extend(recycle);
        pending.maps.push(ticket);
        self.hashes.insert(ticket, (readback, 1));
        self.asked_by.insert(ticket, key);
        self.flush()?;
        Ok(Readback::Ticket(ticket))
    }

    fn poll_hashes(&mut self, ticket: u64, wait: bool) -> Result<Option<Vec<u64>>> {
        if self.changed.contains_key(&ticket) || self.samples.contains_key(&ticket) {
            return Err(MurkError::UnknownTicket { backend: "gpu".into(), what: "hash", ticket });
        }
        // Waiting is asking for the values now: a sync point, counted even
        // when the device had finished (core polls a due hash without
        // waiting first).
        let Some((bytes, count)) = self.collect_ticket(ticket, if wait { Wait::Sync } else { Wait::No }, "hash", true)? else { return Ok(None) };
        Ok(Some(bytes.chunks_exact(8).take(count).map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes"))).collect()))
    }

    fn enable_timings(&mut self) -> Result<()> {
        self.ctx.enable_timings()
    }

    fn take_timings(&mut self) -> Result<Vec<PassTiming>> {
        self.flush()?;
        self.ctx.take_timings()
    }

    fn read_texture(&mut self, key: InstanceKey, texture: Texture) -> Result<TextureImage> {
        self.flush()?;
        let t = self.instances.get(&key).ok_or_else(|| unknown_key(key))?;
        read_texture(&mut self.ctx, t, texture)
    }

    fn write_textures(&mut self, key: InstanceKey, set: &TextureSet) -> Result<()> {
        self.flush()?;
        self.ctx.forget_staged();
        let mut t = self.instances.remove(&key).ok_or_else(|| unknown_key(key))?;
        let result = import_all(&mut self.ctx, &mut t, set);
        self.instances.insert(key, t);
        result
    }

    fn keep_textures(&mut self, key: InstanceKey) -> Result<Option<KeptTextures>> {
        // Copied behind the work recorded so far, submitted, not waited for.
        let t = self.instances.get_mut(&key).ok_or_else(|| unknown_key(key))?;
        let pending = self.pending.get_or_insert_with(|| Pending::new(&self.ctx));
        let kept = keep::keep(&self.ctx, &mut pending.encoder, t);
        self.flush()?;
        Ok(Some(kept))
    }

    fn check_kept(&self, kept: &KeptTextures, dims: InstanceDims) -> Result<()> {
        keep::check(self.ctx.id, kept, dims)
    }

    fn load_kept(&mut self, key: InstanceKey, kept: &KeptTextures) -> Result<()> {
        self.flush()?;
        self.ctx.forget_staged();
        let t = self.instances.get_mut(&key).ok_or_else(|| unknown_key(key))?;
        keep::load(&mut self.ctx, t, kept)
    }
}
