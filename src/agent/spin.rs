//! The short spin before sleeping, for an agent that answers as fast as a pipe round
//! trip, and when the referee gives it up: while its waits outnumber the CPUs.
//!
//! A thread asleep on one CPU takes several microseconds to wake when a line arrives
//! from another, about as long as an instant agent takes to answer; checking instead
//! (a read, then yielding the CPU to whatever else may run on it) catches the line
//! as it comes. That pays only while a CPU is free to run the agent beside the
//! spinning referee. When more games wait on their agents than there are CPUs, every
//! CPU has a bot to run, and the spin only takes turns from them: `referee bench
//! --throughput` measured, with the spin kept at every concurrency, 36–51% more
//! referee CPU per action and 10–20% fewer actions per second at 32 and 64 games
//! at once on 2 CPUs, and 1.4–1.8× the actions per second with it at 1 game.

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
        if WAITING.load(Ordering::Relaxed) > cpus() {
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

/// The CPUs this process may run on, read once: finding out reads files.
fn cpus() -> usize {
    static CPUS: OnceLock<usize> = OnceLock::new();
    *CPUS.get_or_init(|| thread::available_parallelism().map_or(1, |n| n.get()))
}
