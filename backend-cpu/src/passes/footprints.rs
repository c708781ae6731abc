//! Footprints judged in the sight signal (`Backend::submit_footprints`):
//! the cutoff where a texel of a footprint reaches it, else 0. The signal
//! at a texel is the larger of the raw visibility and the scripted sight
//! reveal there.
//!
//! Most units stand still, so most footprints read as they read the tick
//! before. A footprint's value can change only where the signal under it
//! changed, and the recompute marks the blocks of the visibility it
//! redid; the instance gathers them into tiles ([`TILE_ROWS`] rows of one
//! block) since the last judgment, and a new sight reveal forgets the
//! judgment. A footprint with the texels of a footprint of the last
//! judgment, over tiles not marked since, keeps that footprint's value
//! without reading the signal ([`Judge::judge`]; the bytes are
//! [`judge_all`]'s, a property test holds them equal). The instances that
//! judge one list (one per team over one map) match it with the last list
//! once, in a [`Plan`]: from what the list says it kept of the last one
//! ([`murk_core::KeptFootprints`], the entities that stood still), else
//! by comparing texels. No GPU twin: the GPU samples both planes and
//! reduces each footprint (`gpu/mod.rs`).

use super::dirty::{Blocks, BLOCK};
use murk_core::backend::footprint_value;
use murk_core::{FootprintList, KeptFootprints};
use std::sync::Arc;

/// Rows of a tile; a tile is one block ([`BLOCK`] texels) wide.
pub const TILE_ROWS: usize = 8;

/// What an instance keeps between judgments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Judge {
    /// Tiles per row of tiles.
    pub per_row: usize,
    /// Per tile, whether the signal may have changed there since the last
    /// judgment.
    pub changed: Vec<bool>,
    /// The last judgment (`None`: none since the signal was loaded).
    pub last: Option<Judged>,
}

/// Footprints judged, and what each read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Judged {
    /// The cutoff they were judged against.
    pub cutoff: u16,
    /// The footprints.
    pub list: Arc<FootprintList>,
    /// The tiles under each (its plan's).
    pub tiles: Arc<[Tiles]>,
    /// The value of each.
    pub values: Vec<u16>,
}

/// The tiles under a footprint: its first and last tile column, then row.
pub type Tiles = [u32; 4];

/// The tiles under a footprint's texels.
fn tiles_under(texels: &[[u32; 2]]) -> Tiles {
    let mut rect = [u32::MAX, 0, u32::MAX, 0];
    for &[x, y] in texels {
        let (tx, ty) = (x / BLOCK as u32, y / TILE_ROWS as u32);
        rect = [rect[0].min(tx), rect[1].max(tx), rect[2].min(ty), rect[3].max(ty)];
    }
    rect
}

/// The signal at texels.
#[derive(Clone, Copy)]
pub struct Signal<'a> {
    /// The raw visibility.
    pub visibility: &'a [u16],
    /// The scripted sight reveal, if any.
    pub sight: Option<&'a [u16]>,
    /// Texels a row.
    pub width: usize,
}

/// Every footprint of `list` judged in `signal`: the reference of
/// [`Judge::judge`].
pub fn judge_all(signal: Signal, list: &FootprintList, cutoff: u16) -> Vec<u16> {
    (0..list.ends.len()).map(|i| read(signal, list.footprint(i), cutoff)).collect()
}

/// One footprint read from the signal.
fn read(signal: Signal, texels: &[[u32; 2]], cutoff: u16) -> u16 {
    let at = |x: u32, y: u32| y as usize * signal.width + x as usize;
    let top = match signal.sight {
        None => texels.iter().map(|&[x, y]| signal.visibility[at(x, y)]).max(),
        Some(sight) => texels.iter().map(|&[x, y]| signal.visibility[at(x, y)].max(sight[at(x, y)])).max(),
    };
    footprint_value(top.unwrap_or(0), cutoff)
}

/// How far past its expected place a footprint's match in the previous
/// list is looked for (footprints that left the grid lie between).
const LOOK_AHEAD: usize = 4;

/// No footprint of the previous list has these texels.
const NONE: u32 = KeptFootprints::NONE;

/// What the instances judging one list after one same list share, worked
/// out once: per footprint, a footprint of the list judged before with the
/// same texels, and the tiles under it.
pub struct Plan {
    list: Arc<FootprintList>,
    previous: Option<Arc<FootprintList>>,
    /// Per footprint: the index in `previous` of one with the same texels,
    /// or [`NONE`].
    same: Vec<u32>,
    /// Per footprint: the tiles under it.
    tiles: Arc<[Tiles]>,
}

impl Plan {
    /// The plan for judging `list` where `previous` (with the tiles under
    /// its footprints) was judged last. When `list` says which of its
    /// footprints it kept from `previous`, that is taken on its word (the
    /// texels are not compared), and those footprints keep their tiles.
    pub fn new(list: &Arc<FootprintList>, previous: Option<(&Arc<FootprintList>, &Arc<[Tiles]>)>) -> Self {
        let n = list.ends.len();
        let (mut same, mut tiles) = (Vec::with_capacity(n), Vec::with_capacity(n));
        let kept = list.kept.as_ref().zip(previous).filter(|(k, (p, t))| k.from == p.id && k.same.len() == n && t.len() == p.ends.len());
        if let Some((kept, (_, old_tiles))) = kept {
            for (i, &k) in kept.same.iter().enumerate() {
                // An index past the old list is not a match (the list's word
                // is taken for the texels, never for a bound).
                match old_tiles.get(k as usize) {
                    Some(t) => {
                        same.push(k);
                        tiles.push(*t);
                    }
                    None => {
                        same.push(NONE);
                        tiles.push(tiles_under(list.footprint(i)));
                    }
                }
            }
        } else {
            let previous = previous.map(|(p, _)| p);
            // A list keeps the order of the one before (murk sends
            // footprints by entity): the footprint at `j` of the previous
            // list is the next one expected, and a match is looked for a
            // little past it. Any match is exact: the texels are compared.
            let mut j = 0;
            for i in 0..n {
                let texels = list.footprint(i);
                let old = |k: usize| previous.filter(|p| k < p.ends.len()).map(|p| p.footprint(k));
                match (j..j + LOOK_AHEAD).find(|&k| old(k) == Some(texels)) {
                    Some(k) => {
                        same.push(k as u32);
                        j = k + 1;
                    }
                    None => {
                        same.push(NONE);
                        // A footprint that moved takes its old one's place;
                        // one that is new (the next one is expected) takes
                        // none.
                        if i + 1 >= n || old(j) != Some(list.footprint(i + 1)) {
                            j += 1;
                        }
                    }
                }
                tiles.push(tiles_under(texels));
            }
        }
        let previous = previous.map(|(p, _)| Arc::clone(p));
        Self { list: Arc::clone(list), previous, same, tiles: tiles.into() }
    }

    /// Whether this is the plan for judging `list` where `previous` was
    /// judged last.
    pub fn fits(&self, list: &Arc<FootprintList>, previous: Option<&Arc<FootprintList>>) -> bool {
        Arc::ptr_eq(&self.list, list) && self.previous.as_ref().map(Arc::as_ptr) == previous.map(Arc::as_ptr)
    }
}

impl Judge {
    /// Every tile marked, nothing judged, over a grid `width` by `height`.
    pub fn new(width: usize, height: usize) -> Self {
        let per_row = width.div_ceil(BLOCK);
        Self { per_row, changed: vec![true; per_row * height.div_ceil(TILE_ROWS)], last: None }
    }

    /// The list judged last, which a [`Plan`] for the next judgment starts
    /// from.
    pub fn previous(&self) -> Option<&Arc<FootprintList>> {
        self.last.as_ref().map(|j| &j.list)
    }

    /// The list judged last with the tiles under its footprints, what
    /// [`Plan::new`] takes.
    pub fn previous_plan(&self) -> Option<(&Arc<FootprintList>, &Arc<[Tiles]>)> {
        self.last.as_ref().map(|j| (&j.list, &j.tiles))
    }

    /// Marks the tiles of the blocks marked in `blocks` (a grid of this
    /// judge's size): the signal may have changed there.
    pub fn mark(&mut self, blocks: &Blocks) {
        for (y, row) in blocks.marks.chunks(blocks.per_row.max(1)).enumerate() {
            let tiles = &mut self.changed[y / TILE_ROWS * self.per_row..][..self.per_row];
            for (t, &m) in tiles.iter_mut().zip(row) {
                *t |= m;
            }
        }
    }

    /// Judges every footprint of the plan's list in `signal`: a footprint
    /// with the texels of a footprint of the last judgment (same cutoff),
    /// over tiles not marked since, keeps that one's value; any other is
    /// read from the mask. Clears the marks and keeps the judgment. A plan
    /// made from another previous list keeps nothing.
    pub fn judge(&mut self, signal: Signal, plan: &Plan, cutoff: u16) -> &[u16] {
        let last = self.last.take().filter(|old| old.cutoff == cutoff && plan.fits(&plan.list, Some(&old.list)));
        let list = &plan.list;
        let (mut values, mut unread) = (vec![0u16; list.ends.len()], Vec::new());
        match &last {
            None => unread.extend(0..list.ends.len()),
            Some(old) => {
                let (changed, per_row) = (&self.changed[..], self.per_row);
                let marked = |ty: u32, tx: u32| changed[ty as usize * per_row + tx as usize];
                for (i, ((&same, &[x0, x1, y0, y1]), v)) in plan.same.iter().zip(plan.tiles.iter()).zip(values.iter_mut()).enumerate() {
                    // Most footprints lie in one tile: one mark to read.
                    let clean =
                        same != NONE && if (x0, y0) == (x1, y1) { !marked(y0, x0) } else { (y0..=y1).all(|ty| (x0..=x1).all(|tx| !marked(ty, tx))) };
                    if clean {
                        *v = old.values[same as usize];
                    } else {
                        unread.push(i);
                    }
                }
            }
        }
        // The signal is read after every check, one footprint after the
        // other: their loads, mostly misses, overlap.
        for i in unread {
            values[i] = read(signal, list.footprint(i), cutoff);
        }
        self.changed.fill(false);
        &self.last.insert(Judged { cutoff, list: Arc::clone(list), tiles: Arc::clone(&plan.tiles), values }).values
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Over a visibility that changes in blocks (each marked as the
        /// recompute marks it), with or without a sight plane, footprints
        /// that stay, move, come and go and a cutoff that may change, the
        /// kept judgments equal reading every footprint, and the rule (a
        /// texel of it whose larger plane reaches the cutoff); also for an
        /// instance that judges on some ticks only, sharing the plan when
        /// it can.
        #[test]
        fn kept_judgments_equal_judging_all(w in 1usize..40, h in 1usize..20, seed in any::<u64>(), steps in 1usize..8, cutoffs in any::<[u16; 2]>()) {
            let mut rng = seed;
            let mut next = move || { rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407); (rng >> 33) as usize };
            let values = [0u16, cutoffs[0], cutoffs[0].saturating_sub(1), 65535, cutoffs[1]];
            let mut mask: Vec<u16> = (0..w * h).map(|_| values[next() % 5]).collect();
            let sight: Option<Vec<u16>> = (next() % 2 == 0).then(|| (0..w * h).map(|_| values[next() % 5] / 2).collect());
            let top = |mask: &[u16], i: usize| mask[i].max(sight.as_ref().map_or(0, |s| s[i]));
            let footprint = |next: &mut dyn FnMut() -> usize| -> Vec<[u32; 2]> {
                let (x, y) = (next() % w, next() % h);
                (0..1 + next() % 6).map(|_| [((x + next() % 3).min(w - 1)) as u32, ((y + next() % 3).min(h - 1)) as u32]).collect()
            };
            let mut footprints: Vec<Vec<[u32; 2]>> = (0..1 + next() % 12).map(|_| footprint(&mut next)).collect();
            // A second instance judges the same lists on some steps only:
            // it shares the plan when it judged the same list before.
            let (mut judge, mut other) = (Judge::new(w, h), Judge::new(w, h));
            for step in 0..steps {
                // Some blocks change, marked as the recompute marks them.
                let mut blocks = Blocks::new(w, h, false);
                for _ in 0..next() % 4 {
                    let (row, k) = (next() % h, next() % w.div_ceil(BLOCK));
                    let span = row * w + k * BLOCK..row * w + ((k + 1) * BLOCK).min(w);
                    for v in &mut mask[span] {
                        *v = values[next() % 5];
                    }
                    blocks.marks[row * blocks.per_row + k] = true;
                }
                judge.mark(&blocks);
                other.mark(&blocks);
                // Some footprints move; one may come or go. Each remembers
                // where it stood in the last list while it stays.
                let mut from: Vec<u32> = (0..footprints.len() as u32).collect();
                for (f, k) in footprints.iter_mut().zip(from.iter_mut()) {
                    if next() % 3 == 0 {
                        *f = footprint(&mut next);
                        *k = NONE;
                    }
                }
                match next() % 4 {
                    0 if footprints.len() > 1 => { let at = next() % footprints.len(); footprints.remove(at); from.remove(at); }
                    1 => { let at = next() % (footprints.len() + 1); footprints.insert(at, footprint(&mut next)); from.insert(at, NONE); }
                    _ => {}
                }
                let mut list = FootprintList { id: FootprintList::new_id(), ..Default::default() };
                for f in &footprints {
                    list.texels.extend_from_slice(f);
                    list.ends.push(list.texels.len() as u32);
                }
                // The maker says what it kept of the list before on most
                // steps (as murk does), and nothing on others.
                if let (Some(last), true) = (judge.previous(), next() % 4 != 0) {
                    list.kept = Some(KeptFootprints { from: last.id, same: from });
                }
                let cutoff = cutoffs[usize::from(next() % 5 == 0)];
                let list = Arc::new(list);
                let plan = Plan::new(&list, judge.previous_plan());
                let signal = Signal { visibility: &mask, sight: sight.as_deref(), width: w };
                let got = judge.judge(signal, &plan, cutoff).to_vec();
                prop_assert_eq!(&got, &judge_all(signal, &list, cutoff), "step {}", step);
                let rule: Vec<u16> = footprints.iter().map(|f| if f.iter().any(|&[x, y]| top(&mask, y as usize * w + x as usize) >= cutoff) { cutoff } else { 0 }).collect();
                prop_assert_eq!(&got, &rule, "step {}: the rule", step);
                if next() % 2 == 0 {
                    let own;
                    let plan = if plan.fits(&list, other.previous()) { &plan } else { own = Plan::new(&list, other.previous_plan()); &own };
                    prop_assert_eq!(other.judge(signal, plan, cutoff), &rule[..], "step {}: the other instance", step);
                }
            }
        }
    }
}
