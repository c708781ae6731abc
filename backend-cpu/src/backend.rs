//! [`CpuBackend`]: the instances, the pool their passes run on, and the
//! answers held for a later poll; each `Backend` call finds its instance
//! and runs there.

use crate::error::unknown_key;
use crate::instance::{check_inside, instance, CpuInstance, CpuNotes};
use crate::passes;
use crate::passes::footprints::{Judge, Plan};
use crate::workers::Workers;
use murk_core::{
    Backend, BackendNotes, FootprintList, FootprintRequest, InstanceDims, InstanceKey, LineRequest, MurkError, OcclusionInput, Readback,
    RecomputeInput, RecomputeReport, Result, RevealLayer, SampleRequest, TexelRect, Texture, TextureImage, TextureSet, TickRunner, TiledImage,
};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Sight lines one job of the pool traces (a line is tens to hundreds of
/// texel steps).
const LINES_PER_JOB: usize = 256;

/// The CPU reference backend.
pub struct CpuBackend {
    pool: Workers,
    threads: usize,
    instances: BTreeMap<InstanceKey, CpuInstance>,
    samples: BTreeMap<u64, Vec<u16>>,
    next_ticket: u64,
}

impl CpuBackend {
    /// A backend running on `threads` worker threads (at least 1).
    pub fn new(threads: usize) -> Result<Self> {
        if threads == 0 {
            return Err(MurkError::invalid("threads", 0, "must be at least 1"));
        }
        Ok(Self { pool: Workers::new(threads)?, threads, instances: BTreeMap::new(), samples: BTreeMap::new(), next_ticket: 0 })
    }

    /// Splits the backend into its pool and one instance's textures, with
    /// the blend start a recompute left pending made.
    fn parts(&mut self, key: InstanceKey) -> Result<(&Workers, &mut CpuInstance)> {
        let inst = instance(&mut self.instances, key)?;
        inst.make_pending_start(&self.pool);
        Ok((&self.pool, inst))
    }

    /// A ticket holding `values` for the next poll.
    fn hold(&mut self, values: Vec<u16>) -> u64 {
        let ticket = self.next_ticket;
        self.next_ticket += 1;
        self.samples.insert(ticket, values);
        ticket
    }
}

impl Backend for CpuBackend {
    fn name(&self) -> String {
        format!("cpu[threads={}]", self.threads)
    }

    fn run_parallel(&self, work: &mut (dyn FnMut() + Send)) {
        self.pool.install(work);
    }

    fn tick_runner(&self) -> Option<Arc<dyn TickRunner>> {
        match &self.pool {
            Workers::Pool(_) => Some(Arc::new(self.pool.clone())),
            Workers::CallingThread => None,
        }
    }

    fn create_instance(&mut self, key: InstanceKey, dims: InstanceDims) -> Result<()> {
        self.instances.insert(key, CpuInstance::new(dims));
        Ok(())
    }

    fn destroy_instance(&mut self, key: InstanceKey) {
        self.instances.remove(&key);
    }

    fn build_occlusion(&mut self, key: InstanceKey, input: &OcclusionInput) -> Result<()> {
        let (pool, inst) = self.parts(key)?;
        inst.occlusion.check_size(input)?;
        pool.install(|| inst.occlusion.build(input));
        inst.windows.clear();
        Ok(())
    }

    fn update_occlusion(&mut self, key: InstanceKey, input: &OcclusionInput, changed: &[TexelRect]) -> Result<()> {
        let (pool, inst) = self.parts(key)?;
        inst.occlusion.check_size(input)?;
        inst.occlusion.check_changed(changed)?;
        if !inst.occlusion.built_as(input) {
            // What is built differs from what is asked: built whole.
            return self.build_occlusion(key, input);
        }
        let forget = pool.install(|| inst.occlusion.update(input, changed));
        inst.windows.forget(&forget.rects, forget.shadows);
        Ok(())
    }

    fn copy_occlusion(&mut self, from: InstanceKey, to: InstanceKey) -> Result<()> {
        let src = self.instances.get(&from).ok_or_else(|| unknown_key(from))?.occlusion.clone();
        let (_, dst) = self.parts(to)?;
        dst.occlusion.copy_from(&src)?;
        dst.windows.clear();
        Ok(())
    }

    fn recompute(&mut self, key: InstanceKey, input: &RecomputeInput) -> Result<RecomputeReport> {
        let (pool, inst) = self.parts(key)?;
        Ok(RecomputeReport { changed: Readback::Ready(inst.recompute(pool, input)) })
    }

    fn set_reveals(&mut self, key: InstanceKey, layer: Option<&RevealLayer>) -> Result<()> {
        self.parts(key)?.1.set_reveals(layer)
    }

    fn blend(&mut self, key: InstanceKey, t: u32) -> Result<()> {
        // The blend makes a pending start itself, block by block.
        let inst = instance(&mut self.instances, key)?;
        inst.blend(&self.pool, t);
        Ok(())
    }

    fn submit_samples(&mut self, batch: &[SampleRequest]) -> Result<u64> {
        // The CPU answers at once; the ticket is ready on the first poll.
        // (In turn: a batch is a few thousand texels, less work than handing
        // it to the pool's threads costs.)
        let mut values = Vec::with_capacity(batch.iter().map(|r| r.texels.len()).sum());
        for r in batch {
            values.extend(self.instances.get(&r.key).ok_or_else(|| unknown_key(r.key))?.sample_final(&r.texels)?);
        }
        Ok(self.hold(values))
    }

    fn submit_footprints(&mut self, batch: &[FootprintRequest]) -> Result<u64> {
        // Checked before anything is judged: a bad footprint changes nothing.
        // Instances over one grid share a list: it is checked once.
        let mut checked: Option<(&Arc<FootprintList>, (u32, u32))> = None;
        for r in batch {
            let (_, inst) = self.parts(r.key)?;
            let size = (inst.dims.width, inst.dims.height);
            if checked.is_some_and(|(list, s)| Arc::ptr_eq(list, &r.footprints) && s == size) {
                continue;
            }
            checked = Some((&r.footprints, size));
            check_inside(size, &r.footprints.texels)?;
            r.footprints.check()?;
        }
        // Instances that share a list and judged one same list before (one
        // per team over one map) share the work of comparing the two.
        let mut plans: Vec<Plan> = Vec::new();
        let mut plan_of = Vec::with_capacity(batch.len());
        for r in batch {
            let (_, inst) = self.parts(r.key)?;
            let (w, h) = (inst.dims.width as usize, inst.dims.height as usize);
            let judge = inst.judge.get_or_insert_with(|| Judge::new(w, h));
            plan_of.push(match plans.iter().position(|p| p.fits(&r.footprints, judge.previous())) {
                Some(at) => at,
                None => {
                    plans.push(Plan::new(&r.footprints, judge.previous_plan()));
                    plans.len() - 1
                }
            });
        }
        // Each instance's footprints are judged in its own signal: the
        // instances are judged side by side, each into its part of the
        // values (a batch that names an instance twice is judged in order).
        let mut values = vec![0u16; batch.iter().map(|r| r.footprints.ends.len()).sum()];
        let mut parts = Vec::with_capacity(batch.len());
        let mut rest = &mut values[..];
        for r in batch {
            let (part, tail) = std::mem::take(&mut rest).split_at_mut(r.footprints.ends.len());
            parts.push(part);
            rest = tail;
        }
        let mut keys: Vec<InstanceKey> = batch.iter().map(|r| r.key).collect();
        keys.sort_unstable();
        keys.dedup();
        if keys.len() == batch.len() {
            let mut instances: BTreeMap<InstanceKey, &mut CpuInstance> =
                self.instances.iter_mut().filter(|(k, _)| keys.binary_search(k).is_ok()).map(|(k, inst)| (*k, inst)).collect();
            let work: Vec<_> = batch
                .iter()
                .zip(parts)
                .zip(&plan_of)
                .map(|((r, part), &at)| (instances.remove(&r.key).expect("every key of the batch is an instance"), r.cutoff, part, &plans[at]))
                .collect();
            self.pool.install(|| passes::pieces::each(work, 1, || (), |_, _, (inst, cutoff, part, plan)| inst.judge_into(plan, cutoff, part)));
        } else {
            for ((r, part), &at) in batch.iter().zip(parts).zip(&plan_of) {
                let inst = instance(&mut self.instances, r.key)?;
                inst.judge_into(&plans[at], r.cutoff, part);
            }
        }
        Ok(self.hold(values))
    }

    fn submit_lines(&mut self, request: &LineRequest) -> Result<u64> {
        let (pool, inst) = self.parts(request.key)?;
        let (w, h) = (inst.dims.width, inst.dims.height);
        if let Some([x, y]) = request.lines.iter().flat_map(|l| [l.from, l.to]).find(|&[x, y]| x >= w || y >= h) {
            return Err(MurkError::invalid("texel", format!("({x}, {y})"), format!("must lie inside {w}x{h}")));
        }
        let occ = inst.occlusion.view();
        // Lines are independent: chunks of them on the pool's threads, in
        // order.
        let values = pool.install(|| {
            use rayon::prelude::*;
            request
                .lines
                .par_chunks(LINES_PER_JOB)
                .flat_map_iter(|chunk| chunk.iter().map(|l| passes::visibility::line_light(&request.rule, &occ, l)))
                .collect()
        });
        Ok(self.hold(values))
    }

    fn poll_samples(&mut self, ticket: u64, _wait: bool) -> Result<Option<Vec<u16>>> {
        match self.samples.remove(&ticket) {
            Some(v) => Ok(Some(v)),
            None => Err(MurkError::UnknownTicket { backend: "cpu".into(), what: "sample", ticket }),
        }
    }

    fn readbacks_held(&self) -> usize {
        self.samples.len()
    }

    fn forget_readback(&mut self, ticket: u64) {
        // Samples are the only answers the CPU holds for a later poll.
        self.samples.remove(&ticket);
    }

    fn read_texture(&mut self, key: InstanceKey, texture: Texture) -> Result<TextureImage> {
        let (_, inst) = self.parts(key)?;
        let (width, height, texels) = inst.texels(texture)?;
        Ok(texels.image(width, height))
    }

    fn save_tiles(&mut self, key: InstanceKey, textures: &[(Texture, Option<&TiledImage>)]) -> Result<Vec<Option<TiledImage>>> {
        let (pool, inst) = self.parts(key)?;
        inst.save_tiles(pool, textures)
    }

    fn save_notes(&mut self, key: InstanceKey) -> Result<Option<BackendNotes>> {
        let (_, inst) = self.parts(key)?;
        Ok(Some(BackendNotes(Arc::new(CpuNotes { dims: inst.dims, settling: inst.settling.clone() }))))
    }

    fn write_textures(&mut self, key: InstanceKey, set: &TextureSet) -> Result<()> {
        let (pool, inst) = self.parts(key)?;
        inst.load(pool, set)
    }

    fn hash_textures(&mut self, key: InstanceKey, textures: &[Texture]) -> Result<Readback<Vec<u64>>> {
        let (pool, inst) = self.parts(key)?;
        Ok(Readback::Ready(inst.hash_textures(pool, textures)?))
    }

    fn count_explored(&mut self, key: InstanceKey) -> Result<Readback<u64>> {
        let (pool, inst) = self.parts(key)?;
        Ok(Readback::Ready(inst.count_explored(pool)?))
    }

    fn poll_hashes(&mut self, ticket: u64, _wait: bool) -> Result<Option<Vec<u64>>> {
        // Every hash is answered at once: no ticket is ever given out.
        Err(MurkError::UnknownTicket { backend: "cpu".into(), what: "hash", ticket })
    }

    fn sample_final(&mut self, key: InstanceKey, texels: &[[u32; 2]]) -> Result<Vec<u16>> {
        self.parts(key)?.1.sample_final(texels)
    }
}
