//! Where the CPU backend's work runs: its own rayon pool, whose workers
//! stay awake while a call runs on it (see [`Workers::install`]).

use crate::error::CpuError;
use murk_core::{MurkError, Result, TickRunner};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Where the backend's rows run: its own rayon pool, or, where no thread can
/// be spawned (wasm32 without threads, as in a browser), the calling thread
/// (rayon's work inside then runs on its global pool, which falls back to
/// the calling thread there). The bytes are the same either way.
#[derive(Clone)]
pub(crate) enum Workers {
    Pool(Arc<rayon::ThreadPool>),
    CallingThread,
}

impl TickRunner for Workers {
    fn run(&self, work: &mut (dyn FnMut() + Send)) {
        self.install(work);
    }
}

impl Workers {
    /// `threads` workers (at least 1).
    pub(crate) fn new(threads: usize) -> Result<Self> {
        if cfg!(all(target_family = "wasm", not(target_feature = "atomics"))) {
            return match threads {
                1 => Ok(Workers::CallingThread),
                _ => Err(MurkError::invalid("threads", threads, "must be 1 on a target without threads (wasm32 without atomics)")),
            };
        }
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).thread_name(|i| format!("murk-cpu-{i}")).build().map_err(CpuError::from)?;
        Ok(Workers::Pool(Arc::new(pool)))
    }

    /// Runs `work` on the pool. With more than one worker, the others stay
    /// awake until `work` returns, taking each piece of parallel work as
    /// soon as it is split off: a worker that fell asleep between two
    /// parallel loops is woken by a system call and starts tens of
    /// microseconds late, and a tick runs many short loops.
    pub(crate) fn install<R: Send>(&self, work: impl FnOnce() -> R + Send) -> R {
        match self {
            Workers::Pool(pool) if pool.current_num_threads() > 1 => pool.install(|| {
                let done = AtomicBool::new(false);
                let caller = rayon::current_thread_index();
                rayon::scope(|s| {
                    for _ in 1..rayon::current_num_threads() {
                        s.spawn(|_| help_until(&done, caller));
                    }
                    // (When `work` panics, the helpers end once idle for
                    // their patience.)
                    let result = work();
                    done.store(true, Ordering::Release);
                    result
                })
            }),
            Workers::Pool(pool) => pool.install(work),
            Workers::CallingThread => work(),
        }
    }
}

/// How long a helper waits for work before it leaves the worker to the
/// pool's own idling (which sleeps): far longer than the serial steps
/// between a tick's parallel loops, short enough not to hold a core while
/// the work runs long on one thread, or while cores are oversubscribed.
const HELPER_PATIENCE: Duration = Duration::from_micros(250);

/// Runs the pool's pending work until `done` is set, or until no work came
/// for [`HELPER_PATIENCE`]. A helper taken up by the thread running the
/// work itself (while that thread waits inside the work) returns at once:
/// it would wait on a flag only that thread sets.
fn help_until(done: &AtomicBool, caller: Option<usize>) {
    if rayon::current_thread_index() == caller {
        return;
    }
    let mut idle_since = None;
    while !done.load(Ordering::Acquire) {
        if rayon::yield_now() == Some(rayon::Yield::Executed) {
            idle_since = None;
            continue;
        }
        let since = *idle_since.get_or_insert_with(Instant::now);
        if since.elapsed() > HELPER_PATIENCE {
            return;
        }
        std::thread::yield_now();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rayon::prelude::*;

    /// The helpers that keep the other workers awake end with the work:
    /// a result comes back, a panic in the work comes back as a panic (not a
    /// hang), and an install inside an install runs.
    #[test]
    fn workers_return_results_and_panics() {
        for threads in [1, 2, 3] {
            let workers = Workers::new(threads).expect("a pool");
            let sum: u64 = workers.install(|| (0..10_000u64).into_par_iter().map(|i| i * i).sum());
            assert_eq!(sum, (0..10_000u64).map(|i| i * i).sum::<u64>());
            let nested = workers.install(|| workers.install(|| (0..100u32).into_par_iter().sum::<u32>()));
            assert_eq!(nested, 4950);
            let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                workers.install(|| (0..64u32).into_par_iter().for_each(|i| assert!(i != 40, "work {i} fails")))
            }));
            assert!(caught.is_err(), "{threads} threads: the panic came back");
            // The pool still works after the panic.
            assert_eq!(workers.install(|| (0..10u32).into_par_iter().sum::<u32>()), 45);
        }
    }
}
