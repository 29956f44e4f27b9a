//! The short spin before sleeping, for an agent that answers as fast as a pipe round
//! trip, and when the referee gives it up: while its waits outnumber the CPUs.
//!
//! A thread asleep on one CPU takes several microseconds to wake when a line arrives
//! from another, about as long as an instant agent takes to answer; checking instead
//! (a read, then yielding the CPU to whatever else may run on it) catches the line
//! as it comes. That pays when the agent can run on another CPU meanwhile. When more
//! games wait on their agents than there are CPUs, every CPU has a bot to run, and
//! the spin only takes turns from them. `referee bench --throughput` on 2 CPUs,
//! with the spin kept at every concurrency against this bound (six runs of each,
//! medians): at 32 and 64 games at once, 24% and 28% more actions per second and
//! 19% and 22% less referee CPU per action with the bound; at 1 game the bound never
//! closes; at 2 and 8 games the two were within the noise of each other, so the
//! bound sits where each wait could have a CPU to itself, not lower.

use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::thread;
use std::time::{Duration, Instant};

use super::lines::Output;
use super::Received;

/// How long a wait keeps checking for the line of an agent that answered that fast
/// last time, before it sleeps in `poll`.
///
/// Only an agent whose last answer came this fast is waited for this way, so a bot
/// that thinks never costs the referee a spinning CPU, and an instant one costs it at
/// most this much per decision.
pub(super) const SPIN: Duration = Duration::from_micros(50);

/// Waits for an agent's line in progress in this process, in every match.
static WAITING: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// Set on a thread pinned to one CPU with its agents (`tournament --affinity`).
    static SHARES_CPU: Cell<bool> = const { Cell::new(false) };
}

/// Tells the spin that this thread's agents run on this thread's one CPU: its waits
/// then sleep at once, since a spin could only take turns from the agent it waits
/// for. Measured in the README (Tournament throughput, `--affinity`).
pub fn shares_cpu_with_agents() {
    SHARES_CPU.with(|s| s.set(true));
}

/// One wait for an agent's line, counted while it lasts.
pub(super) struct Waiting(());

impl Waiting {
    /// Counts a wait that begins.
    pub(super) fn begin() -> Waiting {
        WAITING.fetch_add(1, Ordering::Relaxed);
        Waiting(())
    }

    /// Checks `output` for a line for up to [`SPIN`] (never past `deadline`), unless
    /// more waits are in progress than there are CPUs; `None` when no line came.
    pub(super) fn spin(&self, output: &mut Output, deadline: Instant) -> Option<Received> {
        if SHARES_CPU.with(Cell::get) || !spin_pays(WAITING.load(Ordering::Relaxed), available_cpus()) {
            return None;
        }
        let until = deadline.min(Instant::now() + SPIN);
        loop {
            if let Some(received) = output.take() {
                return Some(received);
            }
            if Instant::now() >= until {
                return None;
            }
            // Yield first: an agent on this CPU answers before the read, which then
            // finds the line at once; on another CPU the yield is a no-op.
            thread::yield_now();
            output.fill();
        }
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        WAITING.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Whether a wait spins while `waiting` waits are in progress on `cpus` CPUs.
fn spin_pays(waiting: usize, cpus: usize) -> bool {
    waiting <= cpus
}

/// The CPUs this process may run on, read once: finding out reads files.
pub fn available_cpus() -> usize {
    static CPUS: OnceLock<usize> = OnceLock::new();
    *CPUS.get_or_init(|| thread::available_parallelism().map_or(1, |n| n.get()))
}

#[cfg(test)]
mod tests {
    use super::spin_pays;

    #[test]
    fn the_spin_stops_once_waits_outnumber_the_cpus() {
        assert!(spin_pays(1, 1));
        assert!(spin_pays(2, 2));
        assert!(!spin_pays(3, 2));
        assert!(!spin_pays(64, 2));
    }
}
