//! The process groups of all live agents, so that an interrupted referee can kill them.
//!
//! Normal shutdown goes through [`AgentProcess`](super::AgentProcess); this list exists
//! for the path where the referee is told to stop (SIGINT, SIGTERM) while agents run
//! and there is no time to unwind to each owner.

use super::launch::{Child, Command};
use std::io;
use std::sync::{Mutex, MutexGuard, RwLock};

use nix::errno::Errno;
use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;

/// Process group ids of agents that have been started and not yet shut down.
static LIVE_GROUPS: Mutex<Vec<i32>> = Mutex::new(Vec::new());

/// Held shared while an agent is spawned and registered, and exclusively by
/// [`kill_all_agents`]: agents start side by side, and none is between its start and
/// its registration when they are all killed.
static STARTING: RwLock<()> = RwLock::new(());

/// Held while this process's orphaned children are listed, killed, or reaped, so
/// that none of them is reaped by one thread while another lists or signals them.
///
/// The kernel lists a thread's children one at a time, finding the next from the
/// last by count once that one is gone: a child reaped during a listing would hide
/// another. And a pid looked at just before it is killed must still be that child:
/// a pid that was reaped can be given to a new process. Orphans are only ever
/// reaped under this lock (see `stop`); agents themselves are reaped by their own
/// owner without it: a live agent is never a candidate, and its reaping changes only
/// the list of the thread that started it. That is the listed one, the main
/// thread's, only where the main thread plays (`referee match`, the bench), and
/// then the thread that lists is the one that reaps. Should another thread list
/// while the main thread reaps an agent, an orphan the listing misses is found by
/// the next.
static ORPHANS: Mutex<()> = Mutex::new(());

/// Takes [`ORPHANS`] (a panic elsewhere leaves nothing to repair: it guards no data).
pub(super) fn orphans_held() -> MutexGuard<'static, ()> {
    ORPHANS.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The list, even if a thread panicked while holding it: it stays a valid list.
fn live_groups() -> MutexGuard<'static, Vec<i32>> {
    LIVE_GROUPS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Spawns `command` (set up to lead its own group) and registers its group.
///
/// Spawning under [`STARTING`] means [`kill_all_agents`] never runs between the start
/// of an agent and its registration, which would leak that agent; the list itself is
/// locked only to add the group, so a slow start (a sandbox's) holds up no other.
pub(crate) fn spawn_registered(command: &mut Command) -> io::Result<Child> {
    let _starting = STARTING.read().unwrap_or_else(|poisoned| poisoned.into_inner());
    let child = command.spawn()?;
    live_groups().push(pgid_of(&child));
    Ok(child)
}

/// Forgets a group once its owner has killed and reaped it.
pub(crate) fn unregister(pgid: i32) {
    live_groups().retain(|&g| g != pgid);
}

/// The process group id of a child (each leads a group of its own): its own pid.
pub(crate) fn pgid_of(child: &Child) -> i32 {
    // Pids fit in pid_t on every Unix; a failure here would be a kernel contract break.
    i32::try_from(child.id()).expect("pid fits in pid_t")
}

/// SIGKILLs every live agent's process group; for the referee's interrupt handler.
///
/// Takes a mutex, so call it from a normal thread (such as a `signal-hook` iterator
/// thread), not from inside a raw signal handler. Owners still reap their children.
pub fn kill_all_agents() {
    let _no_start = STARTING.write().unwrap_or_else(|poisoned| poisoned.into_inner());
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
/// The children are listed under [`ORPHANS`] only: starts elsewhere do not wait for
/// the listing. What it found is sorted out with [`STARTING`] held exclusively, so
/// no start is then in progress, and any agent whose process the listing saw is in
/// the list by then; and with [`ORPHANS`] held again, so that each process looked
/// at just before it is killed is still the unreaped child the listing found.
pub(crate) fn kill_escaped_children() -> Vec<i32> {
    let candidates = {
        // The agents listed (each leads its registered group) are not read: a stop
        // in a match played on the main thread lists every other agent of it.
        let agents = live_groups().clone();
        let _orphans = orphans_held();
        let listed = children_of_main_thread().unwrap_or_else(every_process);
        orphaned_among(listed.into_iter().filter(|pid| !agents.contains(pid)))
    };
    if candidates.is_empty() {
        return Vec::new();
    }
    let _no_start = STARTING.write().unwrap_or_else(|poisoned| poisoned.into_inner());
    let groups = live_groups().clone();
    let _orphans = orphans_held();
    let mut killed = Vec::new();
    let mut stat = StatReader::new();
    for (pid, pgrp) in candidates {
        if groups.contains(&pgrp) || groups.contains(&pid) {
            continue;
        }
        // Another stop may have killed and reaped it since the listing.
        if stat.parent_and_group(pid) != Some((own_pid(), pgrp)) {
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

/// This process's pid.
fn own_pid() -> i32 {
    i32::try_from(std::process::id()).expect("pid fits in pid_t")
}

/// Those of `pids` that are children of this process outside its own process
/// group, as (pid, group).
fn orphaned_among(pids: impl IntoIterator<Item = i32>) -> Vec<(i32, i32)> {
    let me = own_pid();
    let own_group = nix::unistd::getpgrp().as_raw();
    let mut stat = StatReader::new();
    pids.into_iter()
        .filter_map(|pid| match stat.parent_and_group(pid) {
            Some((ppid, pgrp)) if ppid == me && pgrp != own_group => Some((pid, pgrp)),
            _ => None,
        })
        .collect()
}

/// The children of this process's main thread, from
/// `/proc/self/task/<pid>/children`; `None` where the kernel has no such file (built
/// without `CONFIG_PROC_CHILDREN`) or the list is longer than one read takes.
///
/// Orphans are what the scan looks for, and the kernel gives each to the first live
/// thread of its subreaper: the main thread, which lives as long as the process. An
/// agent's own process is a child of the thread that started it and never counts as
/// escaped (it leads its registered group), so no other thread's list need be read:
/// one small file however many games run at once, where reading every thread's list
/// was some 200 files and a `stat` of every agent at 64 games at once. Call it with
/// [`ORPHANS`] held: see there why.
fn children_of_main_thread() -> Option<Vec<i32>> {
    const PAGE: usize = 4096;
    if !orphans_go_to_the_main_thread() {
        return None;
    }
    let mut buf = vec![0u8; PAGE];
    let path = format!("/proc/self/task/{}/children", own_pid());
    let n = match std::fs::File::open(&path).and_then(|mut f| std::io::Read::read(&mut f, &mut buf)) {
        // A full page may be a part: the rest would be read from a new walk.
        Ok(n) if n >= PAGE - 16 => return None,
        Ok(n) => n,
        // The kernel does not offer the list.
        Err(_) => return None,
    };
    Some(
        std::str::from_utf8(&buf[..n])
            .ok()?
            .split_whitespace()
            .filter_map(|p| p.parse::<i32>().ok())
            .collect(),
    )
}

/// Whether this kernel gives a subreaper's orphans to its first live thread, as
/// Linux does since 3.19; before, they went to the thread that had started their
/// ancestor, and the main thread's list would miss them.
fn orphans_go_to_the_main_thread() -> bool {
    static SINCE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *SINCE.get_or_init(|| {
        let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
        kernel_at_least(&release, (3, 19))
    })
}

/// Whether a kernel release such as `6.1.0-13-amd64` is `wanted` (major, minor) or
/// later; an unreadable one is not.
fn kernel_at_least(release: &str, wanted: (u32, u32)) -> bool {
    let mut numbers = release
        .trim()
        .split(|c: char| !c.is_ascii_digit())
        .map(|n| n.parse::<u32>().ok());
    match (numbers.next().flatten(), numbers.next().flatten()) {
        (Some(major), Some(minor)) => (major, minor) >= wanted,
        _ => false,
    }
}

/// Every process id in `/proc`: what [`children_of_main_thread`] falls back to.
fn every_process() -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()))
        .collect()
}

/// Reads processes' `/proc/<pid>/stat`, reusing its buffers: the scan reads every
/// process on the machine.
struct StatReader {
    path: String,
    buf: [u8; 1024],
}

impl StatReader {
    /// A reader with empty buffers.
    fn new() -> StatReader {
        StatReader {
            path: String::new(),
            buf: [0; 1024],
        }
    }

    /// The parent and process group of process `pid`; `None` when it is gone (or
    /// unreadable).
    fn parent_and_group(&mut self, pid: i32) -> Option<(i32, i32)> {
        use std::fmt::Write;
        self.path.clear();
        let _ = write!(self.path, "/proc/{pid}/stat");
        // One open and one read: `read_to_string` would add a `statx` and a second
        // read to each process.
        let mut file = std::fs::File::open(&self.path).ok()?;
        let n = std::io::Read::read(&mut file, &mut self.buf).ok()?;
        parent_and_group(&self.buf[..n])
    }
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
    use super::{
        children_of_main_thread, every_process, orphaned_among, parent_and_group, pgid_of, spawn_registered,
        unregister,
    };

    #[test]
    fn an_orphan_is_found_by_the_main_threads_listing_and_the_scan() {
        super::super::spawn::become_subreaper();
        // Started from this test's thread, not the main one: a shell that leaves a
        // `sleep` in a session of its own and exits once told, orphaning it to this
        // process.
        let mut command = super::super::launch::Command::new("sh");
        command
            .args([
                "-c",
                "setsid sleep 30 </dev/null >/dev/null 2>&1 & echo $!; read go",
            ])
            .env(&[("PATH".to_string(), "/bin:/usr/bin".to_string())]);
        let mut shell = spawn_registered(&mut command).expect("sh starts");
        let mut said = String::new();
        let mut out = std::io::BufReader::new(shell.stdout.take().unwrap());
        std::io::BufRead::read_line(&mut out, &mut said).unwrap();
        let orphan: i32 = said.trim().parse().expect("the shell says the pid");
        // Its group is registered, as an agent's is, so that another test's escape
        // scan leaves it be.
        super::live_groups().push(orphan);
        drop(shell.stdin.take());
        shell.wait().unwrap();
        unregister(pgid_of(&shell));
        // Both ways of listing: the main thread's children where the kernel has
        // the list, and every process in /proc.
        let mut sources = vec![every_process()];
        if let Some(listed) = children_of_main_thread() {
            assert!(listed.contains(&orphan), "{listed:?} lacks {orphan}");
            sources.push(listed);
        }
        for pids in sources {
            assert_eq!(
                orphaned_among(pids).iter().filter(|&&(p, _)| p == orphan).count(),
                1
            );
        }
        let orphan = nix::unistd::Pid::from_raw(orphan);
        nix::sys::signal::kill(orphan, nix::sys::signal::Signal::SIGKILL).unwrap();
        nix::sys::wait::waitpid(orphan, None).unwrap();
        unregister(orphan.as_raw());
        assert!(!orphaned_among(every_process())
            .iter()
            .any(|&(p, _)| p == orphan.as_raw()));
    }

    #[test]
    fn a_kernel_release_is_compared_by_major_and_minor() {
        assert!(super::kernel_at_least("6.1.0-13-amd64\n", (3, 19)));
        assert!(super::kernel_at_least("3.19.0", (3, 19)));
        assert!(!super::kernel_at_least("3.10.0-1160.el7.x86_64", (3, 19)));
        assert!(!super::kernel_at_least("2.6.32", (3, 19)));
        assert!(!super::kernel_at_least("", (3, 19)));
    }

    #[test]
    fn a_stat_line_is_read_after_the_last_parenthesis_whatever_the_name() {
        let line = b"4242 (a) b\xff) c) S 17 4242 17 0 -1 4194560 99 0 0 0";
        assert_eq!(parent_and_group(line), Some((17, 4242)));
        assert_eq!(parent_and_group(b"4242 (cut"), None);
    }
}
