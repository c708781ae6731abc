//! Time spent in steps of the tick, for the benches: with the `timers`
//! feature, `FogSubsystem::take_sight_times` says how long the sight
//! steps (gathering the footprints, beside the gathering of the instances'
//! inputs; updating the sets while the backend judges the footprints)
//! took, and what they added to the tick; without it nothing is measured
//! or stored. A clock is
//! not available on every target (wasm32 in a browser), and nothing in the
//! simulation may depend on one.

/// Time accumulated by a step.
#[derive(Default)]
pub(crate) struct StepTimer {
    #[cfg(feature = "timers")]
    pub(crate) spent: std::time::Duration,
}

/// When a timed stretch started.
pub(crate) struct Started {
    #[cfg(feature = "timers")]
    at: std::time::Instant,
}

/// How long a stretch took (nothing without the feature).
#[derive(Clone, Copy, Default)]
pub(crate) struct Elapsed {
    #[cfg(feature = "timers")]
    spent: std::time::Duration,
}

impl Started {
    /// Starts a stretch now.
    pub(crate) fn now() -> Self {
        Started {
            #[cfg(feature = "timers")]
            at: std::time::Instant::now(),
        }
    }

    /// The time since it started.
    pub(crate) fn elapsed(&self) -> Elapsed {
        Elapsed {
            #[cfg(feature = "timers")]
            spent: self.at.elapsed(),
        }
    }
}

impl StepTimer {
    /// Starts a stretch.
    pub(crate) fn start(&self) -> Started {
        Started::now()
    }

    /// Adds the stretch since `started`.
    pub(crate) fn stop(&mut self, started: Started) {
        self.add(started.elapsed());
    }

    /// Adds a stretch.
    pub(crate) fn add(&mut self, elapsed: Elapsed) {
        #[cfg(feature = "timers")]
        {
            self.spent += elapsed.spent;
        }
        let _ = elapsed;
    }
}

/// The timers of the sight steps.
#[derive(Default)]
pub(crate) struct SightTimers {
    /// Gathering the tracked entities and their footprints.
    pub(crate) gather: StepTimer,
    /// The tick's wait for that gathering once its own was done (it runs
    /// beside the gathering of the instances' inputs).
    pub(crate) gather_wait: StepTimer,
    /// Updating the sets from the judgments that landed, while the
    /// backend judges this tick's footprints.
    pub(crate) update: StepTimer,
}

/// Time the ticks spent in each sight step (feature `timers`).
#[cfg(feature = "timers")]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SightTimes {
    /// Gathering the tracked entities and their footprints, on a worker
    /// beside the gathering of the instances' inputs.
    pub gather: std::time::Duration,
    /// The part of `gather` the tick waited for: what it added to the tick.
    pub gather_wait: std::time::Duration,
    /// Updating the sets and their events from the judgments that landed,
    /// while the backend judges this tick's footprints (side by side).
    pub update: std::time::Duration,
}

#[cfg(feature = "timers")]
impl SightTimes {
    /// The steps' own time, wherever they ran.
    pub fn total(&self) -> std::time::Duration {
        self.gather + self.update
    }

    /// What the steps added to the tick: the wait for the gathering, and
    /// the update.
    pub fn added(&self) -> std::time::Duration {
        self.gather_wait + self.update
    }
}
