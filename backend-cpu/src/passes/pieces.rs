//! A parallel loop that hands its items out a few at a time, and whose
//! threads wait for each other's last item awake.
//!
//! Rayon's iterators split a loop into a few large pieces up front (about
//! two per thread, more only for pieces another thread steals), and the
//! loop ends in joins: a thread that runs out of work waits for the piece
//! another took, and after about 32 rounds of finding nothing (a few
//! microseconds) falls asleep; waking it added 18–36 µs to such a join on
//! the KVM guest the benchmarks run on. The tick's loops cost very different amounts per
//! row (only the blocks that changed are worked), so on two threads one of
//! them was often left idle, then asleep, at the end of each loop.
//!
//! [`each`] keeps the items in one shared list. The calling thread takes
//! them from the front and the other threads from the back, `batch` at a
//! time: each thread keeps to the rows it read in the loop before, and the
//! last take is short. A thread that finds the list empty waits for the
//! items still running by spinning, then yielding the core. Which thread
//! runs an item changes nothing it writes: each item owns its slices, and
//! every item runs exactly once.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

/// Rows of a grid a thread takes at a time: a sixty-fourth of a 1024-row
/// grid, so the last take is short.
pub const ROWS_TAKEN: usize = 16;

/// Spins before a waiting puller yields its core on each round: a few
/// tens of microseconds, longer than the last item of a loop usually runs.
const SPINS: u32 = 1 << 10;

/// Runs `f(state, i, item)` for every item of `items` (`i`: its place in
/// the list), on every thread of the current rayon pool, each thread
/// taking `batch` items at a time and making its `state` with `init` when
/// it takes its first. Returns once every item ran; a panic in `f` is
/// raised here once the other threads are done.
pub fn each<T: Send, S>(
    items: impl IntoIterator<Item = T, IntoIter: DoubleEndedIterator + ExactSizeIterator + Send>,
    batch: usize,
    init: impl Fn() -> S + Sync,
    f: impl Fn(&mut S, usize, T) + Sync,
) {
    let items = items.into_iter();
    if items.len() == 0 {
        return;
    }
    let list = Mutex::new(items.enumerate());
    let running = AtomicUsize::new(0);
    let pull = |front: bool| {
        // Counted before the first take, so a waiting puller that finds
        // the list empty also sees every item still running.
        running.fetch_add(1, Ordering::AcqRel);
        let _leave = Leave(&running);
        let (mut state, mut taken) = (None, Vec::with_capacity(batch));
        loop {
            {
                let mut list = list.lock().unwrap_or_else(PoisonError::into_inner);
                for _ in 0..batch.max(1) {
                    match if front { list.next() } else { list.next_back() } {
                        Some(item) => taken.push(item),
                        None => break,
                    }
                }
            }
            if !front {
                // Each take runs in the list's order (memory read forward).
                taken.reverse();
            }
            if taken.is_empty() {
                return;
            }
            let state = state.get_or_insert_with(&init);
            for (i, item) in taken.drain(..) {
                f(state, i, item);
            }
        }
    };
    let threads = rayon::current_num_threads();
    if threads == 1 {
        pull(true);
        return;
    }
    rayon::scope(|s| {
        for _ in 1..threads {
            s.spawn(|_| pull(false));
        }
        pull(true);
        let mut spins = 0;
        while running.load(Ordering::Acquire) != 0 {
            if spins < SPINS {
                spins += 1;
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
    });
}

/// Takes a puller off the count when it returns or unwinds.
struct Leave<'a>(&'a AtomicUsize);

impl Drop for Leave<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_item_runs_once_with_its_place_on_any_thread_count() {
        for threads in [1, 2, 3, 5] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("pool");
            for (n, batch) in [(0, 1), (1, 1), (7, 3), (1000, 8), (64, 1)] {
                let mut out = vec![usize::MAX; n];
                let inits = AtomicUsize::new(0);
                pool.install(|| {
                    each(
                        out.iter_mut(),
                        batch,
                        || inits.fetch_add(1, Ordering::Relaxed),
                        |_, i, slot| {
                            assert_eq!(*slot, usize::MAX, "item {i} ran twice");
                            *slot = i * i;
                        },
                    )
                });
                assert_eq!(out, (0..n).map(|i| i * i).collect::<Vec<_>>(), "{threads} threads, {n} items");
                assert!(inits.load(Ordering::Relaxed) <= threads.min(n), "a state per thread that took an item");
            }
        }
    }

    #[test]
    fn a_panic_in_an_item_reaches_the_caller_after_the_others_finish() {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().expect("pool");
        let done = AtomicUsize::new(0);
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            pool.install(|| {
                each(
                    0..100,
                    1,
                    || (),
                    |_, i, _| {
                        assert!(i != 40, "item 40 fails");
                        done.fetch_add(1, Ordering::Relaxed);
                    },
                )
            })
        }));
        assert!(result.is_err(), "the panic is raised");
        assert_eq!(done.load(Ordering::Relaxed), 99, "every other item still ran");
    }
}
