//! The device and what every dispatch goes through: the compiled
//! pipelines, the buffer pool, uploads, bind groups, dispatches with their
//! timestamps, submissions, and readbacks (with the rehearsal that lets a
//! host that cannot block read without waiting).

use crate::error::GpuError;
use crate::limits::{limits_for, open_device};
use crate::readback::{InFlight, Wait};
use crate::shaders::{Shader, Shaders};
use murk_core::{MurkError, PassTiming, Result};
use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use wgpu::util::DeviceExt;

/// Workgroups for `n` invocations in groups of `size`.
pub(crate) fn groups(n: u32, size: u32) -> u32 {
    n.div_ceil(size)
}

/// The names given to contexts so far (a state kept on a device names the
/// context that made it).
static CONTEXTS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Device, queue, pipelines and pools.
pub struct Context {
    pub(crate) device: wgpu::Device,
    pub(crate) queue: wgpu::Queue,
    pub(crate) adapter: wgpu::AdapterInfo,
    /// Every compute pipeline.
    pub(crate) shaders: Shaders,
    /// This context's name among the process's (what a kept state names).
    pub(crate) id: u64,
    pool: BTreeMap<u64, Vec<wgpu::Buffer>>,
    pub(crate) allocated: usize,
    /// Sync points with the device: see [`Wait`].
    pub(crate) waits: u64,
    /// Times a call blocked until the device was idle (the sync points
    /// that found a readback still in flight, and the explicit waits).
    pub(crate) blocked: u64,
    /// Compute dispatches recorded so far.
    pub(crate) dispatches: std::sync::atomic::AtomicU64,
    /// Bytes copied into buffers to be read back so far.
    pub(crate) read_back: std::sync::atomic::AtomicU64,
    /// Bytes copied on the device to keep rollback states and to load them.
    pub(crate) kept_copies: std::sync::atomic::AtomicU64,
    /// Pass timestamps, once asked for (needs `TIMESTAMP_QUERY`).
    timing: std::sync::Mutex<Option<Timing>>,
    /// Reads being rehearsed: see [`Context::begin_rehearsal`].
    rehearsal: Option<Rehearsal>,
    /// Copies made by the last rehearsal, served to the reads that match
    /// them until new work is recorded ([`Context::forget_staged`]).
    staged: Vec<Staged>,
}

/// Reads recorded instead of made: one copy each into a staging buffer.
struct Rehearsal {
    encoder: wgpu::CommandEncoder,
    staged: Vec<Staged>,
}

/// A copy of a buffer's bytes on its way to the CPU.
struct Staged {
    source: wgpu::Buffer,
    offset: u64,
    bytes: u64,
    readback: InFlight,
}

/// Timestamp queries around each dispatch of a submission, resolved with it.
struct Timing {
    set: wgpu::QuerySet,
    /// Labels of the dispatches recorded since the last submission (each
    /// owns queries `2i` and `2i + 1`).
    recorded: Vec<String>,
    /// Dispatches recorded after the set was full (not timed).
    untimed: u64,
    /// Submitted readbacks of resolved timestamps, with their labels.
    in_flight: Vec<(InFlight, Vec<String>)>,
    /// Nanoseconds per timestamp tick.
    period_ns: f64,
}

/// Dispatches timed in one submission at most.
const TIMED_PER_SUBMISSION: u32 = 256;

impl Context {
    /// Opens murk's own device (see [`open_device`]) and compiles every
    /// pipeline on it. With `hardware`, an adapter that runs on the CPU is
    /// passed over.
    pub fn open(hardware: bool) -> Result<Self> {
        let (device, queue, adapter) = open_device(hardware)?;
        Self::on_device(device, queue, adapter)
    }

    /// Uses a device the host opened: checks that its limits hold what the
    /// pipelines need (naming each one that falls short), then compiles the
    /// pipelines on it.
    pub fn on_device(device: wgpu::Device, queue: wgpu::Queue, adapter: wgpu::AdapterInfo) -> Result<Self> {
        limits_for(&device.limits(), &adapter)?;
        let shaders = Shaders::compile(&device)?;
        Ok(Self {
            device,
            queue,
            adapter,
            shaders,
            id: CONTEXTS.fetch_add(1, Ordering::Relaxed) + 1,
            pool: BTreeMap::new(),
            allocated: 0,
            waits: 0,
            blocked: 0,
            dispatches: Default::default(),
            read_back: Default::default(),
            kept_copies: Default::default(),
            timing: Default::default(),
            rehearsal: None,
            staged: Vec::new(),
        })
    }

    /// Starts timing every dispatch with timestamp queries; an error names
    /// the feature when the device was opened without it.
    pub(crate) fn enable_timings(&mut self) -> Result<()> {
        if !self.device.features().contains(wgpu::Features::TIMESTAMP_QUERY) {
            return Err(MurkError::DeviceTooWeak {
                adapter: format!("{} ({:?})", self.adapter.name, self.adapter.backend),
                missing: "the TIMESTAMP_QUERY feature, which pass timings need".into(),
            });
        }
        let mut timing = self.timing.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if timing.is_none() {
            let set = self.device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("murk pass timestamps"),
                ty: wgpu::QueryType::Timestamp,
                count: 2 * TIMED_PER_SUBMISSION,
            });
            let period_ns = f64::from(self.queue.get_timestamp_period());
            *timing = Some(Timing { set, recorded: Vec::new(), untimed: 0, in_flight: Vec::new(), period_ns });
        }
        Ok(())
    }

    /// Device time per pass since timings were enabled or last taken (and a
    /// row counting the dispatches a full query set left untimed); waits for
    /// the work in flight.
    pub(crate) fn take_timings(&mut self) -> Result<Vec<PassTiming>> {
        let Some((in_flight, period_ns, untimed)) = self
            .timing
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .as_mut()
            .map(|t| (std::mem::take(&mut t.in_flight), t.period_ns, std::mem::take(&mut t.untimed)))
        else {
            return Ok(Vec::new());
        };
        let mut totals: BTreeMap<String, (u64, f64)> = BTreeMap::new();
        for (readback, labels) in in_flight {
            let bytes = self.collect(&readback, Wait::IfPending)?.ok_or(GpuError::ReadbackLost("a waited-for timestamp readback did not land"))?;
            let stamps: Vec<u64> = bytes.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes"))).collect();
            for (i, label) in labels.into_iter().enumerate() {
                let ticks = stamps[2 * i + 1].saturating_sub(stamps[2 * i]);
                let entry = totals.entry(label).or_default();
                entry.0 += 1;
                entry.1 += ticks as f64 * period_ns;
            }
        }
        let mut out: Vec<PassTiming> =
            totals.into_iter().map(|(pass, (dispatches, nanos))| PassTiming { pass, dispatches, nanos, untimed: 0 }).collect();
        if untimed > 0 {
            out.push(PassTiming { pass: "(untimed)".into(), dispatches: 0, nanos: 0.0, untimed });
        }
        Ok(out)
    }

    /// A storage buffer of at least `bytes` (rounded up to a power of two,
    /// 64 at least, which holds one of any element), from the pool when one is free.
    pub(crate) fn take(&mut self, bytes: u64) -> wgpu::Buffer {
        let size = bytes.max(64).next_power_of_two();
        if let Some(b) = self.pool.get_mut(&size).and_then(Vec::pop) {
            return b;
        }
        self.allocated += 1;
        self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("murk storage"),
            size,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        })
    }

    /// Returns a buffer to the pool.
    pub(crate) fn give(&mut self, b: wgpu::Buffer) {
        self.pool.entry(b.size()).or_default().push(b);
    }

    /// A pooled buffer holding `data` (zero-padded).
    pub(crate) fn upload(&mut self, data: &[u8]) -> wgpu::Buffer {
        let b = self.take(data.len() as u64);
        if !data.is_empty() {
            self.queue.write_buffer(&b, 0, data);
        }
        b
    }

    /// A small uniform buffer.
    pub(crate) fn uniform(&self, data: &[u8]) -> wgpu::Buffer {
        self.device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("murk uniform"),
            contents: data,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
        })
    }

    /// A bind group of `buffers` at bindings 0.. for `shader`.
    pub(crate) fn bind(&self, shader: &Shader, buffers: &[&wgpu::Buffer]) -> wgpu::BindGroup {
        let resources: Vec<wgpu::BindingResource> = buffers.iter().map(|b| b.as_entire_binding()).collect();
        self.bind_resources(shader, &resources)
    }

    /// A bind group of `resources` at bindings 0.. for `shader`.
    pub(crate) fn bind_resources(&self, shader: &Shader, resources: &[wgpu::BindingResource]) -> wgpu::BindGroup {
        let entries: Vec<wgpu::BindGroupEntry> =
            resources.iter().enumerate().map(|(i, r)| wgpu::BindGroupEntry { binding: i as u32, resource: r.clone() }).collect();
        self.device.create_bind_group(&wgpu::BindGroupDescriptor { label: Some(shader.pass), layout: &shader.layout(), entries: &entries })
    }

    /// Records one dispatch.
    pub(crate) fn dispatch(&self, encoder: &mut wgpu::CommandEncoder, shader: &Shader, group: &wgpu::BindGroup, x: u32, y: u32) {
        let mut timing = self.timing.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let writes = match timing.as_mut() {
            Some(t) if t.recorded.len() < TIMED_PER_SUBMISSION as usize => {
                let first = 2 * t.recorded.len() as u32;
                t.recorded.push(shader.pass.to_string());
                Some(wgpu::ComputePassTimestampWrites {
                    query_set: &t.set,
                    beginning_of_pass_write_index: Some(first),
                    end_of_pass_write_index: Some(first + 1),
                })
            }
            Some(t) => {
                t.untimed += 1;
                None
            }
            None => None,
        };
        self.dispatches.fetch_add(1, Ordering::Relaxed);
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some(shader.pass), timestamp_writes: writes });
        pass.set_pipeline(shader.pipeline());
        pass.set_bind_group(0, group, &[]);
        pass.dispatch_workgroups(x.max(1), y.max(1), 1);
    }

    pub(crate) fn encoder(&self) -> wgpu::CommandEncoder {
        self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("murk frame") })
    }

    /// Submits without waiting: the queue runs submissions in order, so
    /// later uploads and passes see this one's results.
    ///
    /// With timings on, the timestamps of the dispatches recorded since the
    /// last submission are resolved at its end and read back later (only
    /// one encoder with dispatches is open at a time, so they are its own).
    pub(crate) fn submit(&self, encoder: wgpu::CommandEncoder) -> Result<()> {
        let mut encoder = encoder;
        let mut timing = self.timing.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let resolved = match timing.as_mut().filter(|t| !t.recorded.is_empty()) {
            Some(t) => {
                let bytes = 16 * t.recorded.len() as u64;
                let target = self.device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("murk timestamps"),
                    size: bytes,
                    usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                    mapped_at_creation: false,
                });
                encoder.resolve_query_set(&t.set, 0..2 * t.recorded.len() as u32, &target, 0);
                let readback = InFlight::new(self.staging(&mut encoder, &target, bytes), bytes);
                Some((readback, std::mem::take(&mut t.recorded)))
            }
            None => None,
        };
        self.queue.submit([encoder.finish()]);
        if let (Some((readback, labels)), Some(t)) = (resolved, timing.as_mut()) {
            readback.map();
            t.in_flight.push((readback, labels));
        }
        Ok(())
    }

    /// Lets finished work call its callbacks; blocks until the queue is idle
    /// when `wait` (counted in [`Context::waits`]).
    pub(crate) fn poll(&mut self, wait: bool) -> Result<()> {
        let poll = if wait {
            self.waits += 1;
            self.blocked += 1;
            wgpu::PollType::wait_indefinitely()
        } else {
            wgpu::PollType::Poll
        };
        self.device.poll(poll).map(|_| ()).map_err(|e| GpuError::Poll(e).into())
    }

    /// A mappable buffer of `bytes` that `src`'s first bytes are copied into
    /// by `encoder` (map it after the encoder is submitted).
    pub(crate) fn staging(&self, encoder: &mut wgpu::CommandEncoder, src: &wgpu::Buffer, bytes: u64) -> wgpu::Buffer {
        self.staging_at(encoder, src, 0, bytes)
    }

    /// [`Context::staging`] of the bytes of `src` from `offset` on.
    fn staging_at(&self, encoder: &mut wgpu::CommandEncoder, src: &wgpu::Buffer, offset: u64, bytes: u64) -> wgpu::Buffer {
        let size = bytes.next_multiple_of(4).max(4);
        let staging = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("murk readback"),
            size,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        encoder.copy_buffer_to_buffer(src, offset, &staging, 0, size);
        self.read_back.fetch_add(size, Ordering::Relaxed);
        staging
    }

    /// From now on reads are recorded, not made: each returns zeros and
    /// copies its source into a staging buffer, and
    /// [`Context::end_rehearsal`] submits the copies. A host that cannot
    /// block (a browser) runs a reading call (a snapshot) once this way,
    /// lets the copies land while it yields, and runs it again: every read
    /// then finds its bytes landed and nothing waits.
    pub(crate) fn begin_rehearsal(&mut self) {
        self.rehearsal = Some(Rehearsal { encoder: self.encoder(), staged: Vec::new() });
    }

    /// Submits the copies the rehearsal recorded and asks for their mappings.
    pub(crate) fn end_rehearsal(&mut self) -> Result<()> {
        let Some(Rehearsal { encoder, staged }) = self.rehearsal.take() else { return Ok(()) };
        self.submit(encoder)?;
        for s in &staged {
            s.readback.map();
        }
        self.staged = staged;
        Ok(())
    }

    /// Drops the staged copies: work recorded since may have changed their
    /// sources.
    pub(crate) fn forget_staged(&mut self) {
        self.staged.clear();
    }

    /// Whether every staged copy has landed.
    pub(crate) fn staged_landed(&self) -> bool {
        self.staged.iter().all(|s| s.readback.landed())
    }

    /// Copies `bytes` of `src` from `offset` on back to the CPU: from a
    /// landed staged copy of them if there is one, else submitted and
    /// waited for.
    pub(crate) fn read(&mut self, src: &wgpu::Buffer, offset: u64, bytes: u64) -> Result<Vec<u8>> {
        if bytes == 0 {
            return Ok(Vec::new());
        }
        if let Some(mut rehearsal) = self.rehearsal.take() {
            let copy = self.staging_at(&mut rehearsal.encoder, src, offset, bytes);
            rehearsal.staged.push(Staged { source: src.clone(), offset, bytes, readback: InFlight::new(copy, bytes) });
            self.rehearsal = Some(rehearsal);
            return Ok(vec![0; bytes as usize]);
        }
        let staged = |s: &Staged| s.source == *src && (s.offset, s.bytes) == (offset, bytes) && s.readback.landed();
        if let Some(i) = self.staged.iter().position(staged) {
            let staged = self.staged.swap_remove(i);
            return self.collect(&staged.readback, Wait::No)?.ok_or_else(|| GpuError::ReadbackLost("a landed readback was pending").into());
        }
        let mut encoder = self.encoder();
        let readback = InFlight::new(self.staging_at(&mut encoder, src, offset, bytes), bytes);
        self.submit(encoder)?;
        readback.map();
        self.collect(&readback, Wait::Sync)?.ok_or_else(|| GpuError::ReadbackLost("a waited-for readback did not land").into())
    }

    /// Copies a 2D texture back to the CPU (waits): rows of `width *
    /// bytes_per_texel` bytes, without the padding copies need.
    pub(crate) fn read_texture(&mut self, texture: &wgpu::Texture, bytes_per_texel: u32) -> Result<Vec<u8>> {
        let (w, h) = (texture.width(), texture.height());
        let row = w * bytes_per_texel;
        let padded = row.next_multiple_of(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT);
        let buffer = self.take(u64::from(padded * h));
        let mut encoder = self.encoder();
        encoder.copy_texture_to_buffer(
            texture.as_image_copy(),
            wgpu::TexelCopyBufferInfo {
                buffer: &buffer,
                layout: wgpu::TexelCopyBufferLayout { offset: 0, bytes_per_row: Some(padded), rows_per_image: Some(h) },
            },
            texture.size(),
        );
        self.submit(encoder)?;
        let bytes = self.read(&buffer, 0, u64::from(padded * h));
        self.give(buffer);
        Ok(bytes?.chunks(padded as usize).flat_map(|r| r[..row as usize].to_vec()).collect())
    }

    /// The bytes of a readback once it has landed: `None` while it is in
    /// flight with [`Wait::No`]; otherwise blocks until it lands. See
    /// [`Wait`] for what [`Context::waits`] counts.
    pub(crate) fn collect(&mut self, readback: &InFlight, wait: Wait) -> Result<Option<Vec<u8>>> {
        self.poll(false)?;
        if !readback.landed() {
            if wait == Wait::No {
                return Ok(None);
            }
            self.poll(true)?;
        } else if wait == Wait::Sync {
            // The device happened to finish first; the caller still asked
            // for a result now, which is a sync point whatever its speed.
            self.waits += 1;
        }
        readback.bytes().map(Some)
    }

    /// Reads `count` u32 values of `src` from byte `offset` on.
    pub(crate) fn read_u32(&mut self, src: &wgpu::Buffer, offset: u64, count: usize) -> Result<Vec<u32>> {
        Ok(self.read(src, offset, count as u64 * 4)?.chunks(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
    }
}
