//! Time spent in steps of the tick, for the benches: with the `timers`
//! feature, [`FogSubsystem::take_sight_time`] says how long the sight steps
//! (gathering the footprints, updating the sets, judging the footprints)
//! took; without it nothing is measured or stored. A clock is not
//! available on every target (wasm32 in a browser), and nothing in the
//! simulation may depend on one.

/// Time accumulated by a step.
#[derive(Default)]
pub(crate) struct StepTimer {
    #[cfg(feature = "timers")]
    spent: std::time::Duration,
}

/// When a timed stretch started.
pub(crate) struct Started {
    #[cfg(feature = "timers")]
    at: std::time::Instant,
}

impl StepTimer {
    /// Starts a stretch.
    pub(crate) fn start(&self) -> Started {
        Started {
            #[cfg(feature = "timers")]
            at: std::time::Instant::now(),
        }
    }

    /// Adds the stretch since `started`.
    pub(crate) fn stop(&mut self, started: Started) {
        #[cfg(feature = "timers")]
        {
            self.spent += started.at.elapsed();
        }
        let _ = started;
    }
}

#[cfg(feature = "timers")]
impl super::FogSubsystem {
    /// The time the ticks spent in the sight steps since the last call
    /// (feature `timers`).
    pub fn take_sight_time(&mut self) -> std::time::Duration {
        std::mem::take(&mut self.sight_timer.spent)
    }
}
