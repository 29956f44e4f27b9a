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

/// Kills the children of this process that escaped an agent's process group and were
/// orphaned, and returns their pids (so the caller can reap them).
///
/// A bot can leave its group (`setsid`, `setpgid`), and then signals to the group miss
/// that process. Once its parent in the bot has died, it is a child of this process
/// (a child subreaper on Linux, see `AgentProcess::spawn`). A child counts as escaped
/// when it is not the leader of a live agent, and is in neither this process's group
/// nor a live agent's group: this process starts no other children in groups of their
/// own. An escaped child that leads a group takes its group with it. Linux only (it
/// reads `/proc`); elsewhere it finds nothing.
///
/// `/proc` is read without the list lock, which is taken only to sort out what was
/// found: spawns elsewhere do not wait for the scan. That is still exact, because an
/// agent is registered under the lock before its spawner lets go of it, so any agent
/// whose process the scan saw is in the list by the time the lock is held here.
pub(crate) fn kill_escaped_children() -> Vec<i32> {
    let candidates = orphaned_children();
    if candidates.is_empty() {
        return Vec::new();
    }
    let groups = live_groups();
    let mut killed = Vec::new();
    for (pid, pgrp) in candidates {
        if groups.contains(&pgrp) || groups.contains(&pid) {
            continue;
        }
        if pgrp == pid {
            let _ = killpg(Pid::from_raw(pgrp), Signal::SIGKILL);
        }
        let _ = nix::sys::signal::kill(Pid::from_raw(pid), Signal::SIGKILL);
        killed.push(pid);
    }
    killed
}

/// The children of this process outside its own process group, as (pid, group).
fn orphaned_children() -> Vec<(i32, i32)> {
    let me = i32::try_from(std::process::id()).expect("pid fits in pid_t");
    let own_group = nix::unistd::getpgrp().as_raw();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut found = Vec::new();
    let mut path = String::new();
    let mut stat = [0u8; 1024];
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.parse::<i32>().ok()) else {
            continue;
        };
        path.clear();
        path.push_str("/proc/");
        path.push_str(name.to_str().unwrap_or_default());
        path.push_str("/stat");
        // One open and one read into a buffer: the scan reads every process on the
        // machine, and `read_to_string` would add a `statx` and a second read to
        // each. The process may be gone already; then there is nothing to do.
        let Ok(n) = std::fs::File::open(&path).and_then(|mut f| std::io::Read::read(&mut f, &mut stat))
        else {
            continue;
        };
        match parent_and_group(&stat[..n]) {
            Some((ppid, pgrp)) if ppid == me && pgrp != own_group => found.push((pid, pgrp)),
            _ => {}
        }
    }
    found
}

/// The parent pid and process group of a `/proc/<pid>/stat` line. The command name
/// in parentheses may hold anything, not even UTF-8, so the fields are read after
/// its last `)`, and only they need be text.
fn parent_and_group(stat: &[u8]) -> Option<(i32, i32)> {
    let after = stat.iter().rposition(|&b| b == b')')? + 1;
    let mut fields = std::str::from_utf8(stat.get(after..)?).ok()?.split_whitespace();
    let _state = fields.next()?;
    let ppid = fields.next()?.parse().ok()?;
    let pgrp = fields.next()?.parse().ok()?;
    Some((ppid, pgrp))
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

#[cfg(test)]
mod tests {
    use super::parent_and_group;

    #[test]
    fn a_stat_line_is_read_after_the_last_parenthesis_whatever_the_name() {
        let line = b"4242 (a) b\xff) c) S 17 4242 17 0 -1 4194560 99 0 0 0";
        assert_eq!(parent_and_group(line), Some((17, 4242)));
        assert_eq!(parent_and_group(b"4242 (cut"), None);
    }
}
