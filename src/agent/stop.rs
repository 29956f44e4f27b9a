//! What stopping an agent found, and the reaping of what it left behind.
//!
//! Stopping is where a bot that broke out of its process group shows: its escaped
//! descendants are found orphaned, killed and reaped. The outcome says so, so that
//! the match loop can record it rather than the referee tidying up in silence.

use std::process::ExitStatus;
use std::thread;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
use nix::unistd::Pid;

use super::registry::kill_escaped_children;

/// Pause between checks while waiting for a process to exit.
pub(super) const TICK: Duration = Duration::from_millis(5);

/// What [`AgentProcess::shutdown`](super::AgentProcess::shutdown) found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stopped {
    /// How the agent's own process ended.
    pub ending: Ending,
    /// Processes that had left the agent's process group (`setsid`, `setpgid`) and
    /// were found orphaned and killed while it was stopped, by pid. They cannot be
    /// traced back to their agent for certain once orphaned: one that a bot orphaned
    /// while it still ran may be found when another agent is stopped first. In a
    /// sandbox there are none: its PID namespace takes every descendant with it.
    pub escaped: Vec<i32>,
}

/// How an agent's own process ended when it was stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// It had exited, or exited within the grace (on the end of its input or on
    /// TERM), with this status.
    Exited(ExitStatus),
    /// It was still running when the grace ran out, and was killed (KILL to its
    /// group).
    Killed,
}

/// Reaps the members of group `pgid` that became our children when orphaned.
///
/// They were sent SIGKILL already; this only waits for them to die, up to `until`.
pub(super) fn reap_group(pgid: i32, until: Instant) {
    let group = Pid::from_raw(-pgid);
    loop {
        match waitpid(group, Some(WaitPidFlag::WNOHANG)) {
            Ok(WaitStatus::StillAlive) => {
                if Instant::now() >= until {
                    return;
                }
                thread::sleep(TICK);
            }
            Ok(_) | Err(Errno::EINTR) => {}
            // ECHILD: no child of ours is left in the group.
            Err(_) => return,
        }
    }
}

/// Kills and reaps the children that escaped an agent's process group, again and again
/// (killing one orphans its own children, which then become ours), up to `until`.
/// Returns the pids killed, each once.
pub(super) fn reap_escaped(until: Instant) -> Vec<i32> {
    let mut killed: Vec<i32> = Vec::new();
    loop {
        let mut left = kill_escaped_children();
        if left.is_empty() {
            return killed;
        }
        for &pid in &left {
            if !killed.contains(&pid) {
                killed.push(pid);
            }
        }
        while !left.is_empty() {
            left.retain(|&pid| {
                matches!(
                    waitpid(Pid::from_raw(pid), Some(WaitPidFlag::WNOHANG)),
                    Ok(WaitStatus::StillAlive) | Err(Errno::EINTR)
                )
            });
            if Instant::now() >= until {
                return killed;
            }
            if !left.is_empty() {
                thread::sleep(TICK);
            }
        }
    }
}
