//! The phases of a rollback of eight frames at `rts` (one thread), each
//! ended by a call to `phase`, so that callgrind can count the
//! instructions of each: the load of the state eight ticks back, the first
//! tick after it, the seven ticks simulated again, one steady tick after
//! them, then the save of its state into a ring of eight and the drop of
//! the oldest, round after round.
//!
//! `valgrind --tool=callgrind --dump-before='*rollback_phases*phase*' target/release/examples/rollback_phases [ROUNDS]`
//! (default 3): the dumps `callgrind.out.PID.N` come in that order after the
//! first (the set-up), seven per round with an empty seventh;
//! `grep -m1 ^summary` in each gives its instructions.

use murk_benches::ticks::{Change, RtsTicks};
use std::collections::VecDeque;

/// Marks the end of a phase (callgrind dumps its counts before each call).
#[inline(never)]
fn phase(k: u32) {
    std::hint::black_box(k);
}

fn main() {
    let rounds: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(3);
    let mut t = RtsTicks::new(Box::new(murk_cpu::CpuBackend::new(1).expect("a pool")), Change::Walkers);
    let mut ring = VecDeque::new();
    for _ in 0..9 {
        t.step();
        ring.push_back((t.ticks(), t.fog.save_state(&t.world).expect("save")));
    }
    let (at, state) = ring.pop_front().expect("nine states");
    for _ in 0..rounds {
        phase(0);
        t.rewind(&state, at);
        phase(1);
        t.step();
        phase(2);
        for _ in 0..7 {
            t.step();
        }
        phase(3);
        t.step();
        phase(4);
        ring.push_back((t.ticks(), t.fog.save_state(&t.world).expect("save")));
        phase(5);
        drop(ring.pop_front());
        phase(6);
    }
}
