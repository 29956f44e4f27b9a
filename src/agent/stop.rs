//! What stopping an agent found, and the reaping of what it left behind.
//!
//! Stopping is where a bot that broke out of its process group shows: its escaped
//! descendants are found orphaned, killed and reaped. The outcome says so, so that
//! the match loop can record it rather than the referee tidying up in silence.

use std::os::fd::{AsFd, FromRawFd, OwnedFd};
use std::process::ExitStatus;
use std::thread;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
use nix::unistd::Pid;

use super::registry::{kill_escaped_children, orphans_held};

/// Pause between checks while waiting for a process to exit, where the kernel offers
/// no pidfd (before Linux 5.3, other Unixes).
pub(super) const TICK: Duration = Duration::from_millis(5);

/// Waits until the child `pid` has exited (it stays a zombie: nothing is reaped), or
/// until `until`. `exited` says whether it has; it is asked again after each wait.
///
/// A pidfd becomes readable the moment the process exits, so an agent that quits at
/// once costs one `poll` rather than a 5 ms sleep; without one, this sleeps by [`TICK`].
pub(super) fn await_exit(pid: u32, until: Instant, mut exited: impl FnMut() -> bool) {
    if exited() {
        return;
    }
    let Some(pidfd) = pidfd_open(pid) else {
        while !exited() && Instant::now() < until {
            thread::sleep(TICK);
        }
        return;
    };
    loop {
        let left = until.saturating_duration_since(Instant::now());
        let millis = u16::try_from(left.as_millis()).unwrap_or(u16::MAX);
        let mut fds = [PollFd::new(pidfd.as_fd(), PollFlags::POLLIN)];
        // A wait longer than `u16::MAX` ms is split: the loop comes back here.
        let ready = matches!(poll(&mut fds, PollTimeout::from(millis)), Ok(n) if n > 0);
        if exited() || (!ready && left.is_zero()) {
            return;
        }
    }
}

/// A pidfd for the child `pid` (Linux 5.3 and later), `None` where there is none.
fn pidfd_open(pid: u32) -> Option<OwnedFd> {
    #[cfg(target_os = "linux")]
    {
        let pid = libc::pid_t::try_from(pid).ok()?;
        // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor or -1;
        // it touches no memory of ours.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
        let fd = i32::try_from(fd).ok().filter(|&fd| fd >= 0)?;
        // SAFETY: the kernel just returned this descriptor, and nothing else owns it.
        Some(unsafe { OwnedFd::from_raw_fd(fd) })
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = pid;
        None
    }
}

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
/// Each reap holds the registry's orphan lock, as every reap of an orphan does.
pub(super) fn reap_group(pgid: i32, until: Instant) {
    let group = Pid::from_raw(-pgid);
    loop {
        let reaped = {
            let _orphans = orphans_held();
            waitpid(group, Some(WaitPidFlag::WNOHANG))
        };
        match reaped {
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

/// Reaps a sandbox's first process if it became this process's child, waiting for it
/// up to `until`, given the read end of bubblewrap's `--info-fd` (non-blocking).
/// Returns false when the pid is not known (bubblewrap did not say it before it died):
/// then the caller must look for it another way.
///
/// It is waited for only while it is a child of this process: bubblewrap reaps it
/// when it exits first, so "no such child" means there is nothing to reap.
pub(super) fn reap_sandbox_init(info: &mut impl std::io::Read, until: Instant) -> bool {
    let mut text = Vec::new();
    // What bubblewrap wrote is in the pipe; a writer still there gives no end of file.
    let _ = info.read_to_end(&mut text);
    let Some(pid) = child_pid(&text) else {
        return false;
    };
    // It was killed with bubblewrap (`--die-with-parent`): the wait is its death.
    await_exit(pid.unsigned_abs(), until, || reaped(pid));
    true
}

/// Reaps `pid` if it is a child of this process that has exited; true when it is
/// gone (reaped now, or no child of ours), false while it lives.
fn reaped(pid: i32) -> bool {
    let _orphans = orphans_held();
    !matches!(
        waitpid(Pid::from_raw(pid), Some(WaitPidFlag::WNOHANG)),
        Ok(WaitStatus::StillAlive) | Err(Errno::EINTR)
    )
}

/// The `"child-pid"` member of bubblewrap's `--info-fd` JSON.
fn child_pid(info: &[u8]) -> Option<i32> {
    let text = std::str::from_utf8(info).ok()?;
    let rest = &text[text.find("\"child-pid\"")? + "\"child-pid\"".len()..];
    let digits = rest.trim_start_matches([' ', ':', '\t', '\n']);
    let end = digits.find(|c: char| !c.is_ascii_digit()).unwrap_or(digits.len());
    digits[..end].parse().ok().filter(|&pid| pid > 0)
}

/// Kills and reaps the children that escaped an agent's process group, again and again
/// (killing one orphans its own children, which then become ours), up to `until`.
/// Returns the pids killed, each once.
///
/// Each is awaited by its pidfd, not by polling: a sandbox's first process is
/// orphaned here at every stop (bubblewrap exits as soon as it has its status, while
/// the kernel is still taking down the sandbox's PID namespace), and a 5 ms sleep
/// for it was most of a sandboxed game's stop.
pub(crate) fn reap_escaped(until: Instant) -> Vec<i32> {
    let mut killed: Vec<i32> = Vec::new();
    loop {
        let left = kill_escaped_children();
        if left.is_empty() {
            return killed;
        }
        for &pid in &left {
            if !killed.contains(&pid) {
                killed.push(pid);
            }
            await_exit(pid.unsigned_abs(), until, || reaped(pid));
        }
        if Instant::now() >= until {
            return killed;
        }
    }
}
