//! The process groups of all live agents, so that an interrupted referee can kill them.
//!
//! Normal shutdown goes through [`AgentProcess`](super::AgentProcess); this list exists
//! for the path where the referee is told to stop (SIGINT, SIGTERM) while agents run
//! and there is no time to unwind to each owner.

use std::io;
use std::process::{Child, Command};
use std::sync::{Mutex, MutexGuard};

use nix::errno::Errno;
use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;

/// Process group ids of agents that have been started and not yet shut down.
static LIVE_GROUPS: Mutex<Vec<i32>> = Mutex::new(Vec::new());

/// The list, even if a thread panicked while holding it: it stays a valid list.
fn live_groups() -> MutexGuard<'static, Vec<i32>> {
    LIVE_GROUPS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Spawns `command` (set up to lead its own group) and registers its group.
///
/// Spawning under the lock means [`kill_all_agents`] never runs between the start of
/// an agent and its registration, which would leak that agent.
pub(crate) fn spawn_registered(command: &mut Command) -> io::Result<Child> {
    let mut groups = live_groups();
    let child = command.spawn()?;
    groups.push(pgid_of(&child));
    Ok(child)
}

/// Forgets a group once its owner has killed and reaped it.
pub(crate) fn unregister(pgid: i32) {
    live_groups().retain(|&g| g != pgid);
}

/// The process group id of a child spawned with `process_group(0)`: its own pid.
pub(crate) fn pgid_of(child: &Child) -> i32 {
    // Pids fit in pid_t on every Unix; a failure here would be a kernel contract break.
    i32::try_from(child.id()).expect("pid fits in pid_t")
}

/// SIGKILLs every live agent's process group; for the referee's interrupt handler.
///
/// Takes a mutex, so call it from a normal thread (such as a `signal-hook` iterator
/// thread), not from inside a raw signal handler. Owners still reap their children.
pub fn kill_all_agents() {
    for &pgid in live_groups().iter() {
        let _ = killpg(Pid::from_raw(pgid), Signal::SIGKILL);
    }
}

/// Whether any process (zombies included) is still in process group `pgid`.
pub fn process_group_alive(pgid: i32) -> bool {
    if pgid <= 0 {
        // killpg would read 0 as "our own group": never a live agent group.
        return false;
    }
    match killpg(Pid::from_raw(pgid), None) {
        Ok(()) => true,
        // The group exists but belongs to someone we may not signal.
        Err(Errno::EPERM) => true,
        Err(_) => false,
    }
}
